/**
 * The gate and the token file of MCP over HTTP (src/mcp/http_gate.ts, src/mcp/http_tokens.ts):
 * which addresses may be served, which Host and Origin pass, the rate, and a token file that
 * keeps only hashes and that the daemon reads again when it changes.
 */

import assert from "node:assert/strict";
import {
  allowedAuthorities,
  bearerToken,
  checkAuthority,
  parseMcpListen,
  RateLimiter,
} from "../../src/mcp/http_gate.ts";
import {
  createToken,
  readTokens,
  revokeToken,
  TOKEN_PREFIX,
  TokenBook,
} from "../../src/mcp/http_tokens.ts";
import { tempDir } from "../support/rig.ts";

Deno.test("mcp.listen takes a loopback IP and port; other addresses need mcp.remote, names and wildcards never", () => {
  assert.deepEqual(parseMcpListen("127.0.0.1:7449", false), {
    hostname: "127.0.0.1",
    port: 7449,
    hostPort: "127.0.0.1:7449",
    loopback: true,
  });
  assert.equal(parseMcpListen("[::1]:7449", false).hostPort, "[::1]:7449");
  for (const bad of ["localhost:7449", "example.org:7449", "127.0.0.1", "127.0.0.1:0", ":7449"]) {
    assert.throws(() => parseMcpListen(bad, true), /mcp\.listen/, bad);
  }
  assert.throws(() => parseMcpListen("0.0.0.0:7449", true), /every address/);
  assert.throws(() => parseMcpListen("[::]:7449", true), /every address/);
  assert.throws(() => parseMcpListen("192.168.1.5:7449", false), /mcp\.remote true/);
  assert.equal(parseMcpListen("192.168.1.5:7449", true).loopback, false);
});

Deno.test("Host must name the address served (localhost too on loopback); Origin is absent or that address", () => {
  const hosts = allowedAuthorities(parseMcpListen("127.0.0.1:7449", false));
  const h = (o: Record<string, string>) => checkAuthority(new Headers(o), hosts)?.status ?? 200;
  assert.equal(h({ host: "127.0.0.1:7449" }), 200);
  assert.equal(h({ host: "LOCALHOST:7449" }), 200);
  assert.equal(h({ host: "127.0.0.1:7449", origin: "http://127.0.0.1:7449" }), 200);
  assert.equal(h({}), 403);
  assert.equal(h({ host: "evil.example.com:7449" }), 403);
  assert.equal(h({ host: "127.0.0.1:8080" }), 403);
  assert.equal(h({ host: "127.0.0.1:7449", origin: "http://127.0.0.1:5173" }), 403);
  assert.equal(h({ host: "127.0.0.1:7449", origin: "null" }), 403);
  const remote = allowedAuthorities(parseMcpListen("10.0.0.2:7449", true));
  assert.deepEqual([...remote], ["10.0.0.2:7449"]);
  assert.equal(bearerToken(new Headers({ authorization: "Bearer abc" })), "abc");
  assert.equal(bearerToken(new Headers({ authorization: "Basic abc" })), undefined);
  assert.equal(bearerToken(new Headers({ authorization: "Bearer a b" })), undefined);
});

Deno.test("the rate limiter lets mcp.rate_limit requests a minute through per token, evenly refilled", () => {
  let now = 0;
  const r = new RateLimiter(60, () => now);
  for (let i = 0; i < 60; i++) assert.equal(r.take("a"), null);
  const refused = r.take("a");
  assert.equal(refused?.status, 429);
  assert.equal(refused?.headers?.["retry-after"], "1");
  assert.equal(r.take("b"), null, "another token has its own bucket");
  now += 1000;
  assert.equal(r.take("a"), null);
  assert.equal(r.take("a")?.status, 429);
});

Deno.test("the token file keeps hashes only (mode 0600); list and revoke name ids; the daemon's view follows it", async () => {
  await using dir = tempDir("wats-tokens-");
  const file = `${dir.path}/mcp_tokens.json`;
  const book = new TokenBook(file);
  assert.equal(await book.lookup(`${TOKEN_PREFIX}x`), undefined, "no file: no tokens");
  const a = await createToken(file, { profile: "alice", label: "laptop" });
  const b = await createToken(file, { profile: "bob" });
  assert.ok(a.token.startsWith(TOKEN_PREFIX));
  assert.equal(a.token.length, TOKEN_PREFIX.length + 43);
  const text = await Deno.readTextFile(file);
  assert.ok(!text.includes(a.token) && !text.includes(b.token), "no token in the file");
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
  assert.deepEqual((await readTokens(file)).map((t) => [t.profile, t.label]), [
    ["alice", "laptop"],
    ["bob", ""],
  ]);
  assert.deepEqual(await book.lookup(a.token), { id: a.record.id, profile: "alice" });
  assert.equal(await book.lookup(a.token.slice(0, -1)), undefined);
  await assert.rejects(revokeToken(file, "zzzz"), /no token has the id/);
  await revokeToken(file, a.record.id.slice(0, 6));
  assert.equal(await book.lookup(a.token), undefined, "revoked: refused at the next lookup");
  assert.equal(await book.live(a.record.id), false);
  assert.deepEqual(await book.lookup(b.token), { id: b.record.id, profile: "bob" });
  // A file that is not a token file opens nothing, and says so.
  const warned: string[] = [];
  await Deno.writeTextFile(file, "{ not json");
  const broken = new TokenBook(file, (m) => warned.push(m));
  assert.equal(await broken.lookup(b.token), undefined);
  assert.match(warned[0] ?? "", /not a wats token file/);
});
