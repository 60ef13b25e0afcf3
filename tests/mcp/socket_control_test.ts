/**
 * What the node's takeover and idle stop need from the socket server: a
 * control answer that acts only once it is written, and the count of open MCP
 * sessions as it changes.
 *
 * @module
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ConnTransport, LineReader } from "../../src/mcp/conn_transport.ts";
import { decodeFirstLine } from "../../src/contracts/session.ts";
import { serveMcpSocket } from "../../src/mcp/socket_server.ts";
import { FakeService } from "./fake_service.ts";

const enc = new TextEncoder();

async function tempSocket(): Promise<string> {
  return `${await Deno.makeTempDir({ prefix: "wats-mcp-" })}/mcp.sock`;
}

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), `never happened: ${what}`);
}

Deno.test("a takeover control line is read as one", () => {
  assert.deepEqual(decodeFirstLine('{"wats":"control","op":"takeover"}'), {
    control: { wats: "control", op: "takeover" },
  });
});

Deno.test("a control answer is written before its follow-up runs, even when the follow-up closes the server", async () => {
  const path = await tempSocket();
  const steps: string[] = [];
  const server = await serveMcpSocket({
    path,
    service: new FakeService(),
    control: (req) =>
      Promise.resolve({
        message: `${req.op}: stopping`,
        afterAnswer: () => {
          steps.push("after");
          void server.close();
        },
      }),
  });
  const conn = await Deno.connect({ transport: "unix", path });
  await conn.write(enc.encode('{"wats":"control","op":"takeover"}\n'));
  const line = await new LineReader(conn).readLine();
  assert.deepEqual(JSON.parse(line!), { wats: "done", message: "takeover: stopping" });
  await until("the follow-up", () => steps.includes("after"));
  conn.close();
  await server.close();
});

Deno.test("the server reports the number of open MCP sessions as they open and close", async () => {
  const path = await tempSocket();
  const counts: number[] = [];
  const server = await serveMcpSocket({
    path,
    service: new FakeService(),
    onSessions: (n) => counts.push(n),
  });
  const open = async () => {
    const conn = await Deno.connect({ transport: "unix", path });
    await conn.write(enc.encode('{"wats":"hello","profile":"bob"}\n'));
    const reader = new LineReader(conn);
    assert.match((await reader.readLine())!, /"ready"/);
    const client = new Client({ name: "t", version: "0" });
    await client.connect(new ConnTransport(conn, reader));
    return client;
  };
  const a = await open();
  const b = await open();
  await until("two sessions", () => counts.at(-1) === 2);
  // A control line is not a session.
  const c = await Deno.connect({ transport: "unix", path });
  await c.write(enc.encode('{"wats":"control","op":"resume"}\n'));
  await new LineReader(c).readLine();
  c.close();
  await a.close();
  await until("one left", () => counts.at(-1) === 1);
  await b.close();
  await until("none left", () => counts.at(-1) === 0);
  assert.deepEqual(counts, [1, 2, 1, 0]);
  await server.close();
});

Deno.test("a watch line is read as one, and a watcher far behind is cut off instead of growing the node's memory", async () => {
  assert.deepEqual(decodeFirstLine('{"wats":"watch"}'), { watch: { wats: "watch" } });
  assert.ok("refused" in decodeFirstLine('{"wats":"watch","x":1}'), "only the bare line");
  const path = await tempSocket();
  let send: ((e: unknown) => void) | undefined;
  let detached = false;
  const server = await serveMcpSocket({
    path,
    service: new FakeService(),
    watch: (fn) => {
      send = fn;
      return () => {
        detached = true;
      };
    },
  });
  try {
    const conn = await Deno.connect({ transport: "unix", path });
    await conn.write(enc.encode('{"wats":"watch"}\n'));
    const reader = new LineReader(conn);
    assert.deepEqual(JSON.parse((await reader.readLine())!), { wats: "ready" });
    send!({ event: "resumed" });
    assert.deepEqual(JSON.parse((await reader.readLine())!), { event: "resumed" });
    // The client stops reading: big events pile up until the backlog bound closes it.
    const big = "x".repeat(64 * 1024);
    for (let i = 0; i < 2000 && !detached; i++) {
      send!({ event: "post_stored", pad: big });
      await new Promise((r) => setTimeout(r, 0));
    }
    await until("the slow watcher is detached", () => detached);
    conn.close();
  } finally {
    await server.close();
  }
});
