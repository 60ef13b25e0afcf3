/**
 * A node `wats mcp` started stops after its idle time with no MCP session (src/node/idle.ts); a
 * client of MCP over HTTP keeps it up as a `wats mcp` bridge does. The endpoint is the daemon's
 * own (`startMcpHttp`, handed the node's idle watch as the daemon hands it), reached by the MCP
 * SDK's client transport; the idle watch runs on a fake clock.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type McpHttpServer, startMcpHttp } from "../../src/mcp/http_server.ts";
import { createToken } from "../../src/mcp/http_tokens.ts";
import { MCP_NODE_IDLE_MS, watchIdle } from "../../src/node/idle.ts";
import { FakeTime } from "../runner/fakes.ts";
import { freePort } from "../support/free_port.ts";
import { tempDir } from "../support/rig.ts";
import { FakeService } from "./fake_service.ts";
import { call } from "./connect.ts";

interface Rig extends AsyncDisposable {
  server: McpHttpServer;
  time: FakeTime;
  idle: ReturnType<typeof watchIdle>;
  stops(): number;
  token: string;
}

async function rig(): Promise<Rig> {
  const dir = tempDir("wats-http-idle-");
  const tokensFile = `${dir.path}/mcp_tokens.json`;
  const { token } = await createToken(tokensFile, { profile: "bob" });
  const time = new FakeTime(0);
  let stops = 0;
  const idle = watchIdle(MCP_NODE_IDLE_MS, () => stops++, time);
  const server = startMcpHttp({
    settings: {
      "mcp.listen": `127.0.0.1:${freePort()}`,
      "mcp.remote": false,
      "mcp.rate_limit": 600,
    },
    tokensFile,
    service: new FakeService(),
    log: () => {},
    idle,
  })!;
  return {
    server,
    time,
    idle,
    stops: () => stops,
    token,
    async [Symbol.asyncDispose]() {
      await server.close();
      idle.stop();
      await dir[Symbol.asyncDispose]();
    },
  };
}

async function client(url: string, token: string): Promise<Client> {
  const c = new Client({ name: "http-idle-test", version: "0.0.0" });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return c;
}

/** A request with `token` that opens no session (no initialize): 400, or 401 for a wrong token. */
async function stray(url: string, token: string): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  await res.body?.cancel();
  return res.status;
}

Deno.test("an open HTTP session holds a node `wats mcp` started, also after its bridges left", async () => {
  await using r = await rig();
  const c = await client(r.server.url, r.token);
  // A bridge comes and goes (a host's health check): the socket has no session left.
  r.idle.sessions(1, "socket");
  r.idle.sessions(0, "socket");
  await r.time.advance(3 * MCP_NODE_IDLE_MS);
  assert.equal(r.stops(), 0, "the HTTP session holds the node");
  assert.equal((await call(c, "status")).isError, false);
  // The session ends (DELETE): the countdown starts then, not before.
  await (c.transport as StreamableHTTPClientTransport).terminateSession();
  await c.close();
  assert.equal(r.server.sessions(), 0);
  await r.time.advance(MCP_NODE_IDLE_MS - 1);
  assert.equal(r.stops(), 0);
  await r.time.advance(1);
  assert.equal(r.stops(), 1, "idle once no session of either way is open");
});

Deno.test("a socket session ending does not start the countdown while HTTP sessions are open, and the reverse", async () => {
  await using r = await rig();
  r.idle.sessions(1, "socket");
  const c = await client(r.server.url, r.token);
  r.idle.sessions(0, "socket");
  await r.time.advance(2 * MCP_NODE_IDLE_MS);
  assert.equal(r.stops(), 0);
  r.idle.sessions(1, "socket");
  await (c.transport as StreamableHTTPClientTransport).terminateSession();
  await c.close();
  await r.time.advance(2 * MCP_NODE_IDLE_MS);
  assert.equal(r.stops(), 0, "the bridge's session still holds it");
  r.idle.sessions(0, "socket");
  await r.time.advance(MCP_NODE_IDLE_MS);
  assert.equal(r.stops(), 1);
});

Deno.test("a live token's request starts the countdown again; a stranger's does not", async () => {
  await using r = await rig();
  await r.time.advance(MCP_NODE_IDLE_MS - 1);
  assert.equal(await stray(r.server.url, r.token), 400);
  await r.time.advance(MCP_NODE_IDLE_MS - 1);
  assert.equal(r.stops(), 0, "the request counted as activity");
  assert.equal(await stray(r.server.url, "wats_mcp_not-a-token"), 401);
  await r.time.advance(1);
  assert.equal(r.stops(), 1, "a refused request keeps nothing up");
});
