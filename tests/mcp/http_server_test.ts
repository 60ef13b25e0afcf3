/**
 * MCP over HTTP at the endpoint (src/mcp/http_server.ts) with an in-memory node: the SDK's own
 * client transport gets the interactive tools of its token's profile; everything that is not
 * a live token of this node, on this node's address, within its rate and size, is refused and
 * stores nothing (docs/mcp.md, "MCP over HTTP").
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type McpHttpServer, serveMcpHttp } from "../../src/mcp/http_server.ts";
import { createToken, revokeToken, TokenBook } from "../../src/mcp/http_tokens.ts";
import type { McpWireLimits } from "../../src/mcp/http_wire.ts";
import { fakePubkey, FakeService } from "./fake_service.ts";
import { call, connect, interactive, runner } from "./connect.ts";
import { tempDir } from "../support/rig.ts";

interface Endpoint extends AsyncDisposable {
  server: McpHttpServer;
  service: FakeService;
  file: string;
  token: string;
  tokenId: string;
}

async function endpoint(
  o: {
    rate?: number;
    idleMs?: number;
    perToken?: number;
    limits?: Partial<McpWireLimits>;
    service?: FakeService;
  } = {},
): Promise<Endpoint> {
  const dir = tempDir("wats-http-");
  const file = `${dir.path}/mcp_tokens.json`;
  const made = await createToken(file, { profile: "bob" });
  const service = o.service ?? new FakeService();
  const server = serveMcpHttp({
    listen: { hostname: "127.0.0.1", port: 0, hostPort: "127.0.0.1:0", loopback: true },
    service,
    tokens: new TokenBook(file),
    ratePerMinute: o.rate ?? 600,
    ...(o.idleMs !== undefined ? { sessionIdleMs: o.idleMs } : {}),
    ...(o.perToken !== undefined ? { sessionsPerToken: o.perToken } : {}),
    ...(o.limits ? { limits: o.limits } : {}),
  });
  return {
    server,
    service,
    file,
    token: made.token,
    tokenId: made.record.id,
    async [Symbol.asyncDispose]() {
      await server.close();
      await dir[Symbol.asyncDispose]();
    },
  };
}

async function client(url: string, token: string): Promise<Client> {
  const c = new Client({ name: "http-test", version: "0.0.0" });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return c;
}

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "x", version: "1" },
  },
});

function post(url: string, headers: Record<string, string>, body = INIT): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body,
  });
}

Deno.test("an HTTP session gets the interactive tools of its token's profile, and posts as it", async () => {
  await using ep = await endpoint();
  const c = await client(ep.server.url, ep.token);
  const overHttp = (await c.listTools()).tools.map((t: { name: string }) => t.name).sort();
  const direct = await connect(ep.service, interactive("bob"));
  assert.deepEqual(
    overHttp,
    (await direct.listTools()).tools.map((t: { name: string }) => t.name).sort(),
  );
  const asRunner = await connect(ep.service, runner());
  assert.ok(
    overHttp.length > (await asRunner.listTools()).tools.length,
    "more than a runner's",
  );
  const r = await call(c, "ask", { title: "over http", text: "does it land?" });
  assert.equal(r.isError, false, r.text);
  assert.equal(ep.service.posts.length, 1);
  assert.equal(ep.service.posts[0]!.author, fakePubkey("bob"));
  await c.close();
  await direct.close();
  await asRunner.close();
});

Deno.test("no token, a wrong one, a run's token and a revoked one get 401 and store nothing", async () => {
  const service = new FakeService({ tokens: { "run-secret": "run-1" } });
  await using ep = await endpoint({ service });
  const url = ep.server.url;
  const c = await client(url, ep.token);
  const sid = (await post(url, { authorization: `Bearer ${ep.token}` })).headers.get(
    "mcp-session-id",
  )!;
  for (
    const auth of [
      undefined,
      "Bearer wats_mcp_wrong",
      "Bearer run-secret",
      `Basic ${ep.token}`,
      `Bearer ${ep.token}x`,
    ]
  ) {
    const res = await post(url, auth ? { authorization: auth } : {});
    const body = await res.text();
    assert.equal(res.status, 401, `${auth}: ${body}`);
    assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/);
  }
  await revokeToken(ep.file, ep.tokenId);
  const after = await post(url, {
    authorization: `Bearer ${ep.token}`,
    "mcp-session-id": sid,
  }, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
  assert.equal(after.status, 401);
  await after.body?.cancel();
  await assert.rejects(call(c, "ask", { title: "after revoke", text: "x" }));
  assert.equal(service.posts.length, 0);
  assert.ok(!service.calls.includes("post"));
  await c.close().catch(() => {});
});

Deno.test("a foreign Host, a page of another origin and a CORS preflight get 403 with no CORS header", async () => {
  await using ep = await endpoint();
  const url = new URL(ep.server.url);
  const auth = `Bearer ${ep.token}`;
  // fetch cannot send another Host: write the request by hand.
  const raw = async (head: string, body = "") => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(url.port) });
    await conn.write(new TextEncoder().encode(head + body));
    const out = new TextDecoder().decode(
      (await new Response(conn.readable).arrayBuffer()) as ArrayBuffer,
    );
    return out;
  };
  const hostile = await raw(
    `POST /mcp HTTP/1.1\r\nhost: evil.example.com:${url.port}\r\nauthorization: ${auth}\r\n` +
      `content-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
      `content-length: ${INIT.length}\r\n\r\n`,
    INIT,
  );
  assert.match(hostile, /^HTTP\/1\.1 403/);
  const fromPage = await post(ep.server.url, {
    authorization: auth,
    origin: "http://127.0.0.1:5173",
  });
  assert.equal(fromPage.status, 403);
  assert.equal(fromPage.headers.get("access-control-allow-origin"), null);
  await fromPage.body?.cancel();
  const preflight = await fetch(ep.server.url, {
    method: "OPTIONS",
    headers: { origin: "http://127.0.0.1:5173", "access-control-request-method": "POST" },
  });
  assert.ok(preflight.status >= 400, String(preflight.status));
  assert.equal(preflight.headers.get("access-control-allow-origin"), null);
  await preflight.body?.cancel();
  // The endpoint's own origin (a page it would serve, were there one) and none at all pass.
  const own = await post(ep.server.url, { authorization: auth, origin: `http://${url.host}` });
  assert.equal(own.status, 200);
  await own.body?.cancel();
  assert.equal(ep.service.posts.length, 0);
});

Deno.test("a body over the cap gets 413 before it is read, and a chunked one 411", async () => {
  await using ep = await endpoint({ limits: { maxBody: 4096 } });
  const big = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "ask", arguments: { title: "big", text: "x".repeat(8192) } },
  });
  const res = await post(ep.server.url, { authorization: `Bearer ${ep.token}` }, big);
  assert.equal(res.status, 413);
  await res.body?.cancel();
  const chunked = await fetch(ep.server.url, {
    method: "POST",
    headers: { authorization: `Bearer ${ep.token}`, "content-type": "application/json" },
    body: new Blob([INIT]).stream(),
  });
  assert.equal(chunked.status, 411);
  await chunked.body?.cancel();
  assert.equal(ep.service.posts.length, 0);
});

Deno.test("slowloris connections are closed at the head deadline and pushed out at the cap", async () => {
  await using ep = await endpoint({ limits: { headerMs: 1000, maxConnections: 4 } });
  const port = Number(new URL(ep.server.url).port);
  const slow: Deno.Conn[] = [];
  for (let i = 0; i < 8; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new TextEncoder().encode("POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n"));
    slow.push(conn);
  }
  // A real client still gets in while they hang.
  const c = await client(ep.server.url, ep.token);
  assert.equal((await call(c, "status")).isError, false);
  await c.close();
  // Each slow connection ends: closed by the node, never answered.
  for (const conn of slow) {
    const n = await conn.read(new Uint8Array(64)).catch(() => null);
    assert.equal(n, null);
    conn.close();
  }
});

Deno.test("more requests a minute than mcp.rate_limit get 429 with Retry-After", async () => {
  await using ep = await endpoint({ rate: 3 });
  const codes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await post(ep.server.url, { authorization: `Bearer ${ep.token}` });
    codes.push(res.status);
    if (res.status === 429) assert.match(res.headers.get("retry-after") ?? "", /^\d+$/);
    await res.body?.cancel();
  }
  assert.deepEqual(codes, [200, 200, 200, 429, 429]);
});

Deno.test("a session belongs to its token: another token's request for it is 404", async () => {
  await using ep = await endpoint();
  const other = await createToken(ep.file, { profile: "alice" });
  const first = await post(ep.server.url, { authorization: `Bearer ${ep.token}` });
  const sid = first.headers.get("mcp-session-id")!;
  await first.body?.cancel();
  const res = await post(ep.server.url, {
    authorization: `Bearer ${other.token}`,
    "mcp-session-id": sid,
  }, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
  assert.equal(res.status, 404);
  await res.body?.cancel();
});

Deno.test("idle sessions end, and a token's sessions are capped (the least recently used goes)", async () => {
  await using ep = await endpoint({ idleMs: 1 });
  const opened = await post(ep.server.url, { authorization: `Bearer ${ep.token}` });
  const sid = opened.headers.get("mcp-session-id")!;
  await opened.body?.cancel();
  while (ep.server.sessions() > 0) await new Promise((r) => setTimeout(r, 10));
  const late = await post(ep.server.url, {
    authorization: `Bearer ${ep.token}`,
    "mcp-session-id": sid,
  }, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
  assert.equal(late.status, 404);
  await late.body?.cancel();
  await using capped = await endpoint({ perToken: 2 });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await post(capped.server.url, { authorization: `Bearer ${capped.token}` });
    ids.push(res.headers.get("mcp-session-id")!);
    await res.body?.cancel();
  }
  assert.equal(capped.server.sessions(), 2);
  const list = (sid: string) =>
    post(capped.server.url, {
      authorization: `Bearer ${capped.token}`,
      "mcp-session-id": sid,
      "mcp-protocol-version": "2025-06-18",
    }, JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }));
  const oldest = await list(ids[0]!);
  assert.equal(oldest.status, 404);
  await oldest.body?.cancel();
  const newest = await list(ids[2]!);
  assert.equal(newest.status, 200, await newest.text());
});

Deno.test("GET (a server stream) is 405: the node sends nothing of its own", async () => {
  await using ep = await endpoint();
  const res = await fetch(ep.server.url, {
    headers: { authorization: `Bearer ${ep.token}`, accept: "text/event-stream" },
  });
  assert.equal(res.status, 405);
  assert.equal(res.headers.get("allow"), "POST, DELETE");
  await res.body?.cancel();
});

Deno.test("a client keeps its connection between requests; a refused request closes it", async () => {
  await using ep = await endpoint();
  const port = Number(new URL(ep.server.url).port);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const request = (body: string, extra = "") =>
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${ep.token}\r\n` +
    `content-type: application/json\r\naccept: application/json, text/event-stream\r\n${extra}` +
    `content-length: ${new TextEncoder().encode(body).length}\r\n\r\n${body}`;
  // Two requests written at once (pipelined): two answers, in order, on the one connection.
  await conn.write(new TextEncoder().encode(request(INIT) + request(INIT)));
  let text = "";
  const buf = new Uint8Array(64 * 1024);
  while ((text.match(/HTTP\/1\.1 200/g) ?? []).length < 2 || !text.trimEnd().endsWith("}")) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  assert.equal((text.match(/HTTP\/1\.1 200 OK/g) ?? []).length, 2, text);
  assert.match(text, /connection: keep-alive/);
  assert.equal(ep.server.sessions(), 2);
  // A refused one (a wrong token) is answered, then the connection ends.
  await conn.write(new TextEncoder().encode(request(INIT).replace(ep.token, "wats_mcp_nope")));
  let rest = "";
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    rest += new TextDecoder().decode(buf.subarray(0, n));
  }
  assert.match(rest, /^HTTP\/1\.1 401 Unauthorized\r\n/);
  assert.match(rest, /connection: close/);
  conn.close();
});
