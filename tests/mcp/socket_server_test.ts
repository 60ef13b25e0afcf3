/**
 * The MCP socket server on a real unix socket in a temp dir: the hello
 * protocol, refusals, many concurrent SDK clients, garbage, file mode, close.
 *
 * @module
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { BusyError } from "../../src/errors.ts";
import { ConnTransport, LineReader } from "../../src/mcp/conn_transport.ts";
import { serveMcpSocket } from "../../src/mcp/socket_server.ts";
import { FakeService } from "./fake_service.ts";

const enc = new TextEncoder();

async function tempSocket(): Promise<{ dir: string; path: string }> {
  const dir = await Deno.makeTempDir({ prefix: "wats-mcp-" });
  return { dir, path: `${dir}/mcp.sock` };
}

/** Opens a raw connection and sends `hello` (a string is sent as is). */
async function rawHello(path: string, hello: unknown) {
  const conn = await Deno.connect({ transport: "unix", path });
  const line = typeof hello === "string" ? hello : JSON.stringify(hello);
  await conn.write(enc.encode(line + "\n"));
  const reader = new LineReader(conn);
  const reply = await reader.readLine();
  return { conn, reader, reply: reply === null ? null : JSON.parse(reply) };
}

/** An SDK client over the socket, after a successful hello. */
async function sdkClient(path: string, hello: Record<string, unknown>): Promise<Client> {
  const { conn, reader, reply } = await rawHello(path, { wats: "hello", ...hello });
  assert.equal(reply?.wats, "ready", JSON.stringify(reply));
  const client = new Client({ name: "socket-test", version: "0.0.0" });
  await client.connect(new ConnTransport(conn, reader));
  return client;
}

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), `never happened: ${what}`);
}

function textOf(r: unknown): string {
  return (r as { content: { text: string }[] }).content.map((c) => c.text).join("\n");
}

Deno.test("a client says hello, gets ready with its profile, then speaks MCP", async () => {
  const { dir, path } = await tempSocket();
  const svc = new FakeService();
  const server = await serveMcpSocket({ path, service: svc });
  const client = await sdkClient(path, { profile: "bob" });
  const status = textOf(await client.callTool({ name: "status", arguments: {} }));
  assert.match(status, /^profile: bob /m);
  const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
  assert.ok(tools.includes("approve"));
  assert.equal(server.sessions(), 1);
  await client.close();
  await until("the session ends", () => server.sessions() === 0);
  await server.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a runner token makes a runner session without review tools", async () => {
  const { dir, path } = await tempSocket();
  const svc = new FakeService({ tokens: { "tok-123": "run-9" } });
  const server = await serveMcpSocket({ path, service: svc });
  const { conn, reply } = await rawHello(path, {
    wats: "hello",
    profile: "alice",
    token: "tok-123",
  });
  assert.deepEqual(reply, { wats: "ready", profile: "alice-agent" });
  conn.close();
  const client = await sdkClient(path, { token: "tok-123" });
  const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
  assert.ok(!tools.includes("pending") && !tools.includes("approve") && !tools.includes("reject"));
  await client.close();
  await server.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a hello asking for data gets structuredContent beside the text; a runner session never does", async () => {
  const { dir, path } = await tempSocket();
  const svc = new FakeService({ tokens: { "tok-123": "run-9" } });
  const server = await serveMcpSocket({ path, service: svc });
  const plain = await sdkClient(path, { profile: "bob" });
  const data = await sdkClient(path, { profile: "bob", data: true });
  const runner = await sdkClient(path, { token: "tok-123", data: true });
  try {
    const a = await plain.callTool({ name: "status", arguments: {} });
    assert.equal(a.structuredContent, undefined);
    const b = await data.callTool({ name: "status", arguments: {} });
    assert.equal(textOf(b), textOf(a), "the text is the same");
    assert.equal((b.structuredContent as { profile: { name: string } }).profile.name, "bob");
    const feed = await data.callTool({ name: "feed", arguments: {} });
    assert.ok(Array.isArray((feed.structuredContent as { posts: unknown[] }).posts));
    // A runner session's reading tool is `thread`.
    const ask = svc.add("bob", { kind: "ask", title: "q", text: "question" }, false);
    const r = await runner.callTool({ name: "thread", arguments: { id: ask.id } });
    assert.ok(!r.isError, textOf(r));
    assert.equal(r.structuredContent, undefined, "an agent reads only the fenced text");
  } finally {
    await plain.close();
    await data.close();
    await runner.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a refused hello gets one error line saying why, then the connection closes", async () => {
  const { dir, path } = await tempSocket();
  const svc = new FakeService({ tokens: { good: "run-1" } });
  const server = await serveMcpSocket({ path, service: svc });
  const cases: [unknown, RegExp][] = [
    [{ wats: "hello", profile: "mallory" }, /unknown profile "mallory": use one of alice/],
    [{ wats: "hello", token: "stale" }, /run token is not valid/],
    ["this is not json", /the hello line is not JSON: the first line must be \{"wats":"hello"/],
    [{ jsonrpc: "2.0", id: 1, method: "initialize" }, /the first line must be \{"wats":"hello"/],
    [{ wats: "hello", profile: 7 }, /profile must be a string/],
  ];
  for (const [hello, expected] of cases) {
    const { conn, reader, reply } = await rawHello(path, hello);
    assert.equal(reply?.wats, "error", JSON.stringify(reply));
    assert.match(reply.message, expected);
    assert.equal(await reader.readLine(), null, "the connection stayed open");
    conn.close();
  }
  assert.equal(server.sessions(), 0);
  await server.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("fifty clients at once each post and read", async () => {
  const { dir, path } = await tempSocket();
  const svc = new FakeService();
  const server = await serveMcpSocket({ path, service: svc });
  const clients = await Promise.all(
    Array.from({ length: 50 }, (_, i) => sdkClient(path, { profile: i % 2 ? "alice" : "bob" })),
  );
  assert.equal(server.sessions(), 50);
  const results = await Promise.all(clients.map(async (c: Client, i: number) => {
    const posted = await c.callTool({
      name: "ask",
      arguments: { title: `question ${i}`, text: `text of question ${i}` },
    });
    const found = await c.callTool({ name: "search", arguments: { query: `question ${i}` } });
    const status = await c.callTool({ name: "status", arguments: {} });
    return { posted: textOf(posted), found: textOf(found), status: textOf(status), i };
  }));
  for (const r of results) {
    assert.match(r.posted, /^Posted ask [0-9a-f]{64}\./);
    assert.ok(r.found.includes(`title: question ${r.i}`), r.found.slice(0, 200));
    assert.match(r.status, new RegExp(`^profile: ${r.i % 2 ? "alice" : "bob"} `, "m"));
  }
  assert.equal(svc.posts.length, 50);
  await Promise.all(clients.map((c: Client) => c.close()));
  await until("every session ends", () => server.sessions() === 0);
  await server.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("garbage and broken connections end only their own session", async () => {
  const { dir, path } = await tempSocket();
  const svc = new FakeService();
  const errors: string[] = [];
  const server = await serveMcpSocket({
    path,
    service: svc,
    log: (level, msg) => level !== "debug" && level !== "info" && errors.push(msg),
  });
  const good = await sdkClient(path, { profile: "alice" });

  // Random bytes instead of a hello.
  const noise = await Deno.connect({ transport: "unix", path });
  await noise.write(crypto.getRandomValues(new Uint8Array(4096)).map((b) => (b === 10 ? 11 : b)));
  await noise.write(enc.encode("\n"));
  const noiseReply = await new LineReader(noise).readLine();
  assert.equal(JSON.parse(noiseReply!).wats, "error");
  noise.close();

  // A client that hangs up in the middle of its hello.
  const quitter = await Deno.connect({ transport: "unix", path });
  await quitter.write(enc.encode('{"wats":"hel'));
  quitter.close();

  // A session that sends garbage lines after ready, then a valid request.
  const { conn, reader, reply } = await rawHello(path, { wats: "hello", profile: "bob" });
  assert.equal(reply.wats, "ready");
  await conn.write(enc.encode('not json at all\n{"jsonrpc":"2.0"}\n[1,2,3]\n\n'));
  await conn.write(enc.encode(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      },
    }) + "\n",
  ));
  const init = JSON.parse((await reader.readLine())!);
  assert.equal(init.id, 1);
  assert.equal(init.result.serverInfo.name, "wats");
  // And one that drops mid-message.
  await conn.write(enc.encode('{"jsonrpc":"2.0","id":2,"method":"tools/li'));
  conn.close();

  // The first session and new ones still work.
  assert.match(textOf(await good.callTool({ name: "status", arguments: {} })), /^profile: alice /m);
  const late = await sdkClient(path, { profile: "bob" });
  assert.match(textOf(await late.callTool({ name: "status", arguments: {} })), /^profile: bob /m);
  await until("only the two good sessions remain", () => server.sessions() === 2);
  assert.deepEqual(errors, []);
  await good.close();
  await late.close();
  await server.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the socket is mode 0600, and close ends sessions and removes it", async () => {
  const { dir, path } = await tempSocket();
  const server = await serveMcpSocket({ path, service: new FakeService() });
  const info = await Deno.lstat(path);
  assert.ok(info.isSocket);
  assert.equal(info.mode! & 0o777, 0o600);
  const client = await sdkClient(path, { profile: "alice" });
  let closed = false;
  client.onclose = () => closed = true;
  // A connection that never says hello must not hold close() up.
  const silent = await Deno.connect({ transport: "unix", path });
  await server.close();
  await until("the client sees the session end", () => closed);
  assert.equal(server.sessions(), 0);
  await assert.rejects(Deno.lstat(path), Deno.errors.NotFound);
  await assert.rejects(Deno.connect({ transport: "unix", path }));
  silent.close();
  await server.close(); // twice is fine
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a stale socket file is replaced; a live one is refused", async () => {
  const { dir, path } = await tempSocket();
  // A socket file nobody listens on, as a crashed node leaves it (Deno unlinks
  // the file on a clean close, so a killed process makes it).
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `const l = Deno.listen({ transport: "unix", path: ${JSON.stringify(path)} });
       console.log("up");
       await l.accept();`,
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  await child.stdout.pipeThrough(new TextDecoderStream()).getReader().read();
  child.kill("SIGKILL");
  await child.status;
  assert.ok((await Deno.lstat(path)).isSocket, "no stale socket to test with");
  const server = await serveMcpSocket({ path, service: new FakeService() });
  const client = await sdkClient(path, { profile: "alice" });
  await assert.rejects(
    serveMcpSocket({ path, service: new FakeService() }),
    (err: unknown) => err instanceof BusyError && /another node already serves/.test(err.message),
  );
  // The refused second server left the first one's socket alone.
  assert.match(
    textOf(await client.callTool({ name: "status", arguments: {} })),
    /^profile: alice /m,
  );
  await client.close();
  await server.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("aborting the signal closes the server", async () => {
  const { dir, path } = await tempSocket();
  const ac = new AbortController();
  const server = await serveMcpSocket({ path, service: new FakeService(), signal: ac.signal });
  const client = await sdkClient(path, { profile: "alice" });
  ac.abort();
  await server.close();
  assert.equal(server.sessions(), 0);
  await assert.rejects(Deno.lstat(path), Deno.errors.NotFound);
  await client.close();
  await Deno.remove(dir, { recursive: true });
});
