/**
 * `wats mcp token` run as real processes at the same time on one data dir: every token made is
 * in the file and opens a session at the endpoint, and a revoke racing the creates removes only
 * its own token (src/mcp/http_tokens.ts: one writer at a time, each write renamed into place).
 */

import assert from "node:assert/strict";
import { runWats } from "../support/cli.ts";
import { tempDir } from "../support/rig.ts";
import { serveMcpHttp } from "../../src/mcp/http_server.ts";
import { readTokens, TokenBook } from "../../src/mcp/http_tokens.ts";
import { FakeService } from "../mcp/fake_service.ts";

/** How many `create`s run at once: enough that unserialised writers lose tokens. */
const WRITERS = 10;

/** `wats mcp token create` in `dir`: the token printed on stdout. */
async function create(dir: string, profile: string): Promise<string> {
  const r = await runWats(["mcp", "token", "create", "--profile", profile], { dataDir: dir });
  assert.equal(r.code, 0, r.stderr);
  const token = r.stdout.trim();
  assert.match(token, /^wats_mcp_[A-Za-z0-9_-]{43}$/);
  return token;
}

/** The HTTP status of an initialize sent with `token` to a real endpoint reading `file`. */
async function statusesAt(file: string, tokens: string[]): Promise<number[]> {
  const server = serveMcpHttp({
    listen: { hostname: "127.0.0.1", port: 0, hostPort: "127.0.0.1:0", loopback: true },
    service: new FakeService(),
    tokens: new TokenBook(file),
    ratePerMinute: 600,
  });
  try {
    const out: number[] = [];
    for (const token of tokens) {
      const res = await fetch(server.url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "token-race", version: "0" },
          },
        }),
      });
      await res.body?.cancel();
      out.push(res.status);
    }
    return out;
  } finally {
    await server.close();
  }
}

async function modeOf(path: string): Promise<number> {
  return (await Deno.stat(path)).mode! & 0o777;
}

Deno.test(`${WRITERS} \`wats mcp token create\` at once: every token is kept and opens a session`, async () => {
  await using dir = tempDir("wats-token-race-");
  const file = `${dir.path}/mcp_tokens.json`;
  const before = await create(dir.path, "alice");
  // The daemon's reader, reading the file again at each change while the writers race: it never
  // sees half a file (a warning) nor loses the token made before.
  const warnings: string[] = [];
  const book = new TokenBook(file, (m) => warnings.push(m));
  let racing = true;
  let lookups = 0;
  const reading = (async () => {
    while (racing) {
      assert.ok(await book.lookup(before), "the earlier token stays live");
      lookups++;
      await new Promise((r) => setTimeout(r, 0));
    }
  })();
  const made = await Promise.allSettled(
    Array.from({ length: WRITERS }, (_, i) => create(dir.path, i % 2 ? "alice" : "bob")),
  );
  racing = false;
  await reading;
  const tokens = [
    before,
    ...made.map((m) => {
      if (m.status === "rejected") throw m.reason;
      return m.value;
    }),
  ];
  assert.ok(lookups > 0);
  assert.deepEqual(warnings, []);
  const records = await readTokens(file);
  assert.equal(records.length, WRITERS + 1, "no create lost another's token");
  assert.equal(new Set(records.map((r) => r.id)).size, WRITERS + 1);
  assert.equal(await modeOf(file), 0o600);
  assert.deepEqual(await statusesAt(file, tokens), tokens.map(() => 200));
  // Nothing half-written is left beside the file.
  const names = [...Deno.readDirSync(dir.path)].map((e) => e.name).sort();
  assert.deepEqual(names, ["mcp_tokens.json", "mcp_tokens.json.lock"]);
});

Deno.test("a revoke racing creates removes its token and nothing else", async () => {
  await using dir = tempDir("wats-token-race-");
  const file = `${dir.path}/mcp_tokens.json`;
  // One after the other, so the file lists them in this order.
  const doomed = await create(dir.path, "bob");
  const kept = await create(dir.path, "alice");
  const [gone] = await readTokens(file);
  const [revoked, ...made] = await Promise.all([
    runWats(["mcp", "token", "revoke", gone!.id], { dataDir: dir.path }),
    ...Array.from({ length: WRITERS - 2 }, () => create(dir.path, "bob")),
  ]);
  assert.equal((revoked as { code: number }).code, 0, (revoked as { stderr: string }).stderr);
  const records = await readTokens(file);
  assert.equal(records.length, 1 + made.length, "every other token kept");
  assert.ok(!records.some((r) => r.id === gone!.id), "the revoked one is gone");
  assert.equal(await modeOf(file), 0o600);
  const live = [kept, ...(made as string[])];
  assert.deepEqual(await statusesAt(file, live), live.map(() => 200));
  assert.deepEqual(await statusesAt(file, [doomed]), [401]);
});
