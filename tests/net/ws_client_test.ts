import assert from "node:assert/strict";
import { CLOSED, WsClient } from "../../src/net/ws_client.ts";
import { waitFor } from "./net_support.ts";

/** Opens a client and collects what it receives. */
async function open(url: string) {
  const ws = new WsClient(url);
  const got: string[] = [];
  const closes: { code: number; reason: string }[] = [];
  const errors: string[] = [];
  ws.onmessage = (e) => got.push(e.data);
  ws.onclose = (e) => closes.push(e);
  ws.onerror = (e) => errors.push(e.message);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onclose = (e) => reject(new Error(`closed (${e.code}) ${errors.join("; ")}`));
  });
  ws.onclose = (e) => closes.push(e);
  return { ws, got, closes, errors };
}

Deno.test("WsClient exchanges text messages of every length class with Deno.serve", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = (e) => socket.send(`echo:${e.data}`);
    return response;
  });
  try {
    const c = await open(`ws://127.0.0.1:${server.addr.port}/some/path?x=1`);
    const texts = [0, 1, 125, 126, 1024, 1025, 4096, 65535, 65536, 200_000].map((n) =>
      "é".repeat(n >> 1) + "a".repeat(n & 1)
    );
    for (const t of texts) c.ws.send(t);
    await waitFor(() => c.got.length === texts.length, "every echo");
    assert.deepEqual(c.got, texts.map((t) => `echo:${t}`));
    c.ws.close(1000, "done");
    await waitFor(() => c.closes.length === 1, "the close");
    assert.equal(c.closes[0]!.code, 1000);
    assert.equal(c.ws.readyState, CLOSED);
  } finally {
    await server.shutdown();
  }
});

/** A TCP server that completes the handshake and hands back the connection. */
function rawServer() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = (async () => {
    const conn = await listener.accept();
    const buf = new Uint8Array(4096);
    let head = "";
    while (!head.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) throw new Error("no handshake");
      head += new TextDecoder().decode(buf.subarray(0, n));
    }
    const key = head.match(/sec-websocket-key:\s*(\S+)/i)![1];
    const digest = new Uint8Array(
      await crypto.subtle.digest(
        "SHA-1",
        new TextEncoder().encode(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"),
      ),
    );
    await conn.write(new TextEncoder().encode(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Accept: ${btoa(String.fromCharCode(...digest))}\r\n\r\n`,
    ));
    return conn;
  })();
  return { port: (listener.addr as Deno.NetAddr).port, accepted, listener };
}

Deno.test("a message over 1 KiB leaves in one write: the peer's first read holds the whole frame", async () => {
  // Deno's own WebSocket client writes the header and the payload of such a frame
  // separately with Nagle on, and the payload then waits ~40 ms for the peer's
  // delayed ACK: here the first read would hold only the 8-byte header.
  const raw = rawServer();
  const c = await open(`ws://127.0.0.1:${raw.port}`);
  const conn = await raw.accepted;
  try {
    for (const size of [1025, 4096, 60_000]) {
      c.ws.send("p".repeat(size));
      const buf = new Uint8Array(128 * 1024);
      const n = (await conn.read(buf))!;
      assert.equal(n, size + 8, `first read of a ${size}-byte message`);
    }
  } finally {
    c.ws.close();
    conn.close();
    raw.listener.close();
  }
});

Deno.test("WsClient answers ping with pong, joins fragments and reports the server's close", async () => {
  const raw = rawServer();
  const c = await open(`ws://127.0.0.1:${raw.port}`);
  const conn = await raw.accepted;
  try {
    const enc = new TextEncoder();
    const f = (byte0: number, payload: Uint8Array) =>
      new Uint8Array([byte0, payload.length, ...payload]);
    // A text message in two fragments with a ping between them.
    await conn.write(f(0x01, enc.encode("hel")));
    await conn.write(f(0x89, enc.encode("are you there")));
    await conn.write(f(0x80, enc.encode("lo")));
    const buf = new Uint8Array(1024);
    const n = (await conn.read(buf))!;
    assert.equal(buf[0], 0x8a, "a pong");
    assert.equal(buf[1]! & 0x80, 0x80, "masked, as from a client");
    const len = buf[1]! & 127;
    const mask = buf.subarray(2, 6);
    const body = buf.subarray(6, 6 + len).map((b, i) => b ^ mask[i & 3]!);
    assert.equal(new TextDecoder().decode(body), "are you there");
    assert.equal(n, 6 + len);
    await waitFor(() => c.got.length === 1, "the message");
    assert.deepEqual(c.got, ["hello"]);
    // The server closes with 1001 "bye": the client answers and reports it.
    await conn.write(new Uint8Array([0x88, 5, 0x03, 0xe9, ...enc.encode("bye")]));
    await waitFor(() => c.closes.length === 1, "the close");
    assert.deepEqual(c.closes[0], { code: 1001, reason: "bye" });
    const m = (await conn.read(buf))!;
    assert.equal(buf[0], 0x88, "the client's close frame");
    assert.ok(m >= 8);
  } finally {
    conn.close();
    raw.listener.close();
  }
});

Deno.test("WsClient fails cleanly on a refused handshake and on a closed port", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("no", { status: 503 }),
  );
  try {
    await assert.rejects(open(`ws://127.0.0.1:${server.addr.port}`), /503/);
  } finally {
    await server.shutdown();
  }
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  await assert.rejects(open(`ws://127.0.0.1:${port}`), /closed \(1006\)/);
  assert.throws(() => new WsClient("http://example.com/"), /not a ws:\/\/ or wss:\/\/ URL/);
});

/** Reads frames sent by the client (masked) from `conn` until `stop` says so. */
async function readClientFrames(
  conn: Deno.Conn,
  stop: (f: { opcode: number; payload: Uint8Array }) => boolean,
): Promise<{ opcode: number; payload: Uint8Array }[]> {
  const frames: { opcode: number; payload: Uint8Array }[] = [];
  let buf = new Uint8Array(0);
  const chunk = new Uint8Array(64 * 1024);
  for (;;) {
    let pos = 0;
    while (buf.length - pos >= 6) {
      let len = buf[pos + 1]! & 127;
      let at = 2;
      if (len === 126) [len, at] = [(buf[pos + 2]! << 8) | buf[pos + 3]!, 4];
      if (buf.length - pos < at + 4 + len) break;
      const mask = buf.subarray(pos + at, pos + at + 4);
      const payload = buf.slice(pos + at + 4, pos + at + 4 + len).map((b, i) => b ^ mask[i & 3]!);
      const f = { opcode: buf[pos]! & 15, payload };
      frames.push(f);
      pos += at + 4 + len;
      if (stop(f)) return frames;
    }
    buf = buf.slice(pos);
    const n = await conn.read(chunk);
    if (n === null) return frames;
    const next = new Uint8Array(buf.length + n);
    next.set(buf);
    next.set(chunk.subarray(0, n), buf.length);
    buf = next;
  }
}

Deno.test("a ping flood from a server that reads nothing leaves at most one pong waiting, the newest", async () => {
  // 200,000 pings of 125 bytes (25 MB) are more than the loopback socket buffers
  // hold: the client's pongs back up. Before, it queued one pong per ping (RSS grew
  // by hundreds of MB); now a newer ping replaces the pong still waiting.
  const raw = rawServer();
  const c = await open(`ws://127.0.0.1:${raw.port}`);
  const conn = await raw.accepted;
  try {
    const pings = 200_000;
    const size = 2 + 125;
    const flood = new Uint8Array(pings * size);
    for (let i = 0; i < pings; i++) {
      flood[i * size] = 0x89;
      flood[i * size + 1] = 125;
      new DataView(flood.buffer).setUint32(i * size + 2, i);
    }
    await conn.write(new Uint8Array([0x81, 4, ...new TextEncoder().encode("sent")]));
    let off = 0;
    while (off < flood.length) off += await conn.write(flood.subarray(off));
    await conn.write(new Uint8Array([0x81, 4, ...new TextEncoder().encode("done")]));
    // Every ping was read (the text frame after them arrived); only now read the pongs.
    await waitFor(() => c.got.includes("done"), "the frames after the pings");
    const last = pings - 1;
    const pongs = await readClientFrames(
      conn,
      (f) => f.opcode === 10 && new DataView(f.payload.buffer).getUint32(0) === last,
    );
    assert.ok(pongs.every((f) => f.opcode === 10), "only pongs");
    assert.equal(new DataView(pongs.at(-1)!.payload.buffer).getUint32(0), last, "the newest");
    assert.ok(pongs.length < pings, `${pongs.length} pongs for ${pings} pings: they queued`);
  } finally {
    c.ws.close();
    conn.close();
    raw.listener.close();
  }
});

Deno.test("a control frame over 125 bytes closes the connection with 1002 (RFC 6455 §5.5)", async () => {
  const raw = rawServer();
  const c = await open(`ws://127.0.0.1:${raw.port}`);
  const conn = await raw.accepted;
  try {
    await conn.write(new Uint8Array([0x89, 126, 0, 126, ...new Uint8Array(126)]));
    const frames = await readClientFrames(conn, () => true);
    assert.deepEqual(frames.map((f) => f.opcode), [8], "a close frame, no pong");
    assert.equal((frames[0]!.payload[0]! << 8) | frames[0]!.payload[1]!, 1002);
    await waitFor(() => c.closes.length === 1, "the close");
    assert.equal(c.closes[0]!.code, 1002);
    assert.match(c.errors.join(), /control frame/);
  } finally {
    conn.close();
    raw.listener.close();
  }
});

Deno.test("bytesReceived counts every byte the server sent: the handshake's answer, frame headers, a ping", async () => {
  const raw = rawServer();
  const c = await open(`ws://127.0.0.1:${raw.port}`);
  const conn = await raw.accepted;
  try {
    // The answer rawServer writes: its fixed text and a 28-character accept key.
    const handshake =
      ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Accept: ${"x".repeat(28)}\r\n\r\n`).length;
    await conn.write(new Uint8Array([0x89, 1, 7])); // a ping of 1 byte
    await conn.write(new Uint8Array([0x81, 5, ...new TextEncoder().encode("hello")]));
    await waitFor(() => c.got.includes("hello"), "the message");
    assert.equal(c.ws.bytesReceived, handshake + 3 + 7);
  } finally {
    c.ws.close();
    conn.close();
    raw.listener.close();
  }
});

Deno.test("a frame with a reserved bit set closes the connection with 1002: no extension was negotiated (RFC 6455 §5.2)", async () => {
  const raw = rawServer();
  const c = await open(`ws://127.0.0.1:${raw.port}`);
  const conn = await raw.accepted;
  try {
    // FIN, RSV1 (a permessage-deflate frame, say), text "hi".
    await conn.write(new Uint8Array([0xc1, 2, ...new TextEncoder().encode("hi")]));
    const frames = await readClientFrames(conn, () => true);
    assert.deepEqual(frames.map((f) => f.opcode), [8]);
    assert.equal((frames[0]!.payload[0]! << 8) | frames[0]!.payload[1]!, 1002);
    await waitFor(() => c.closes.length === 1, "the close");
    assert.equal(c.closes[0]!.code, 1002);
    assert.deepEqual(c.got, [], "the message was not delivered");
    assert.match(c.errors.join(), /RSV/);
  } finally {
    conn.close();
    raw.listener.close();
  }
});
