/**
 * A WebSocket server (RFC 6455, text messages) on a plain TCP listener, for the
 * relay endpoint (`relay_server.ts`).
 *
 * Why not `Deno.serve` with `Deno.upgradeWebSocket`: Deno's server WebSocket joins
 * the fragments of a message inside the runtime, out of sight, up to about 16 MiB
 * per client, so a client that sends the first fragments of a message and never
 * the last held memory no cap of the endpoint counted (24 clients added 165 MB).
 * Here each connection's half-received message and unread bytes are `held`, which
 * the endpoint counts in its per-connection and total caps, and a message longer
 * than `maxMessageBytes` closes the connection (1009) before it is read.
 *
 * Plain HTTP requests (no `Upgrade: websocket`) get the handler's answer and the
 * connection closes after it. The surface of an accepted socket is the part of
 * `WebSocket` the endpoint uses: `readyState`, `bufferedAmount`, `send`, `close`,
 * `onopen`, `onmessage`, `onclose`, `onerror`, plus `held`.
 *
 * Requires `--allow-net` on the listen address.
 *
 * @module
 */

import { closeBody, concat, type Frame, frame, FrameError, FrameReader } from "./ws_frames.ts";

/** The states of `readyState`, as `WebSocket`'s. */
const CONNECTING = 0, OPEN = 1, CLOSING = 2, CLOSED = 3;
const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/** A request head longer than this is refused (431). */
const MAX_HEAD_BYTES = 16 * 1024;
/** A connection that has not sent its whole request head by then is closed. */
const HEAD_TIMEOUT_MS = 10_000;
/** How long a close waits for the peer's close frame before dropping the connection. */
const CLOSE_WAIT_MS = 2_000;

/** A request's method, path and headers (lowercase names). */
export interface RequestHead {
  method: string;
  path: string;
  headers: Headers;
}

/** A plain HTTP answer. */
export interface HttpAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

/** Options of {@linkcode serveWebSockets}. */
export interface WsServerOptions {
  hostname: string;
  port: number;
  /** Longer messages (all fragments together) close the connection with 1009. */
  maxMessageBytes: number;
  /**
   * Answers a request: an HTTP answer (also for an upgrade request, to refuse it),
   * or `"upgrade"` to accept the WebSocket, which `onSocket` then receives.
   */
  handler(head: RequestHead, remote: Deno.NetAddr): HttpAnswer | "upgrade";
  onSocket(socket: WsServerSocket, remote: Deno.NetAddr, head: RequestHead): void;
}

/** A running server. */
export interface WsServer {
  readonly addr: Deno.NetAddr;
  /** Stops listening and drops every connection, then resolves. */
  close(): Promise<void>;
}

/**
 * Listens and serves. Requires `--allow-net` on `hostname:port`.
 */
export function serveWebSockets(opts: WsServerOptions): WsServer {
  const listener = Deno.listen({ hostname: opts.hostname, port: opts.port });
  const conns = new Set<Deno.Conn>();
  const accepting = (async () => {
    for (;;) {
      let conn: Deno.TcpConn;
      try {
        conn = await listener.accept();
      } catch {
        return; // the listener closed
      }
      // Each frame leaves in one write; without this, a small frame sent while the
      // previous one is unacknowledged waits for the peer's delayed ACK (~40 ms).
      conn.setNoDelay(true);
      conns.add(conn);
      void serveConn(conn, opts).finally(() => {
        conns.delete(conn);
        try {
          conn.close();
        } catch {
          // Already closed.
        }
      });
    }
  })();
  let closing: Promise<void> | undefined;
  return {
    addr: listener.addr as Deno.NetAddr,
    close() {
      closing ??= (async () => {
        listener.close();
        await accepting;
        for (const c of conns) {
          try {
            c.close();
          } catch {
            // Already closed.
          }
        }
      })();
      return closing;
    },
  };
}

async function serveConn(conn: Deno.Conn, opts: WsServerOptions): Promise<void> {
  const remote = conn.remoteAddr as Deno.NetAddr;
  // 4 KiB per client while idle: 256 clients hold 1 MiB, not 16.
  const reader = new FrameReader(conn, opts.maxMessageBytes, true, 4 * 1024);
  const timer = setTimeout(() => conn.close(), HEAD_TIMEOUT_MS);
  let headBytes: Uint8Array | null;
  try {
    headBytes = await reader.readHead(MAX_HEAD_BYTES);
  } catch {
    return; // closed by the timer or the peer
  } finally {
    clearTimeout(timer);
  }
  if (headBytes === null) {
    if (reader.held > MAX_HEAD_BYTES) await answer(conn, { status: 431, body: "" });
    return;
  }
  const head = parseHead(new TextDecoder().decode(headBytes));
  if (head === undefined) return await answer(conn, { status: 400, body: "bad request\n" });
  const key = head.headers.get("sec-websocket-key");
  const upgrade = head.headers.get("upgrade")?.toLowerCase() === "websocket";
  // A bad upgrade is answered before the handler, so that a handler's "upgrade"
  // always reaches onSocket (the endpoint counts connections there).
  if (upgrade && (!key || head.headers.get("sec-websocket-version") !== "13")) {
    return await answer(conn, {
      status: 426,
      headers: { "sec-websocket-version": "13" },
      body: "",
    });
  }
  const decision = opts.handler(head, remote);
  if (decision !== "upgrade") return await answer(conn, decision);
  if (!upgrade || !key) return await answer(conn, { status: 426, body: "" });
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(key + GUID));
  const socket = new WsServerSocket(conn, reader, opts.maxMessageBytes);
  opts.onSocket(socket, remote, head);
  await socket.run(
    new TextEncoder().encode(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Accept: ${btoa(String.fromCharCode(...new Uint8Array(digest)))}\r\n\r\n`,
    ),
  );
}

/** The request line and headers, or undefined when they cannot be read. */
function parseHead(text: string): RequestHead | undefined {
  const [request = "", ...headerLines] = text.split("\r\n");
  const m = request.match(/^([A-Z]+) (\S+) HTTP\/1\.[01]$/);
  if (!m) return undefined;
  const headers = new Headers();
  for (const line of headerLines) {
    const at = line.indexOf(":");
    if (at <= 0) return undefined;
    try {
      headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return { method: m[1]!, path: m[2]!, headers };
}

const REASONS: Record<number, string> = {
  200: "OK",
  400: "Bad Request",
  426: "Upgrade Required",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable",
};

async function answer(conn: Deno.Conn, a: HttpAnswer): Promise<void> {
  const body = new TextEncoder().encode(a.body);
  const headers = Object.entries({
    ...a.headers,
    "content-length": String(body.length),
    connection: "close",
  }).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  const head = `HTTP/1.1 ${a.status} ${REASONS[a.status] ?? ""}\r\n${headers}\r\n`;
  try {
    await writeAll(conn, concat([new TextEncoder().encode(head), body]));
  } catch {
    // The client left.
  }
}

const encoder = new TextEncoder();

/**
 * An unmasked text frame, the text encoded straight into it: one allocation of the
 * exact size when the length is known cheaply (ASCII: the usual JSON), else two.
 */
function textFrame(text: string): Uint8Array {
  // deno-lint-ignore no-control-regex
  if (!/[^\x00-\x7f]/.test(text)) {
    const len = text.length;
    const at = len < 126 ? 2 : len < 65536 ? 4 : 10;
    const out = new Uint8Array(at + len);
    out[0] = 0x81;
    const view = new DataView(out.buffer);
    if (at === 2) out[1] = len;
    else if (at === 4) {
      out[1] = 126;
      view.setUint16(2, len);
    } else {
      out[1] = 127;
      view.setBigUint64(2, BigInt(len));
    }
    encoder.encodeInto(text, out.subarray(at));
    return out;
  }
  return frame(1, encoder.encode(text), false);
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
}

/** An accepted WebSocket; see the module doc. */
export class WsServerSocket {
  readyState: number = CONNECTING;
  /** Bytes given to `send` (and control frames) not yet written to the connection. */
  bufferedAmount = 0;
  onopen: (() => void) | undefined;
  /** A text message as a string, a binary one as bytes. */
  onmessage: ((e: { data: string | Uint8Array }) => void) | undefined;
  onerror: ((e: { message: string }) => void) | undefined;
  onclose: (() => void) | undefined;
  /** After each fragment of a message not yet complete (`held` grew). */
  onheld: (() => void) | undefined;
  readonly #conn: Deno.Conn;
  readonly #reader: FrameReader;
  readonly #maxMessageBytes: number;
  #writing: Promise<void> = Promise.resolve();
  #parts: Uint8Array[] = [];
  #partsBytes = 0;
  /** Whether the message being received is binary (its first frame's opcode). */
  #binary = false;
  #closeSent = false;
  #closeTimer: ReturnType<typeof setTimeout> | undefined;
  #ended = false;
  readonly #pongBody = new Uint8Array(125);
  #pongLength = -1;

  constructor(conn: Deno.Conn, reader: FrameReader, maxMessageBytes: number) {
    this.#conn = conn;
    this.#reader = reader;
    this.#maxMessageBytes = maxMessageBytes;
  }

  /**
   * Bytes held for what the client sent and this side has not handed on: the
   * fragments of a message not yet complete, and bytes read but not yet parsed.
   */
  get held(): number {
    return this.#partsBytes + this.#reader.held;
  }

  /** Sends one text message (dropped unless open). */
  send(text: string): void {
    if (this.readyState !== OPEN) return;
    this.#write(textFrame(text));
  }

  /** Starts the closing handshake; the connection drops after 2 s without an answer. */
  close(code = 1000, reason = ""): void {
    if (this.readyState >= CLOSING) return;
    this.readyState = CLOSING;
    this.#sendClose(code, reason);
    this.#closeTimer = setTimeout(() => this.#end(), CLOSE_WAIT_MS);
  }

  /**
   * Writes the handshake's answer, then reads until the connection ends (and
   * `onclose` has run, however it ended). Called once by the server.
   */
  async run(handshake: Uint8Array): Promise<void> {
    const dec = new TextDecoder("utf-8", { fatal: true });
    try {
      await writeAll(this.#conn, handshake);
      this.readyState = OPEN;
      this.onopen?.();
      for (;;) {
        let f: Frame | undefined;
        try {
          while ((f = this.#reader.take()) === undefined) {
            if (!await this.#reader.fill()) return;
          }
        } catch (err) {
          if (!(err instanceof FrameError)) throw err;
          return await this.#protocolError(err.code, err.message);
        }
        if (this.#ended) return;
        const { fin, opcode } = f;
        if (opcode === 9) {
          this.#pong(f);
          continue;
        }
        if (opcode === 10) continue;
        const payload = f.payload();
        if (opcode === 8) {
          const code = payload.length >= 2 ? (payload[0]! << 8) | payload[1]! : 1005;
          if (!this.#closeSent) this.#sendClose(code === 1005 ? 1000 : code, "");
          return await this.#flushed();
        }
        if (opcode !== 0 && opcode !== 1 && opcode !== 2) {
          return await this.#protocolError(1002, `unknown opcode ${opcode}`);
        }
        if ((opcode === 0) !== (this.#parts.length > 0)) {
          return await this.#protocolError(1002, "a fragment out of order");
        }
        this.#partsBytes += payload.length;
        if (this.#partsBytes > this.#maxMessageBytes) {
          return await this.#protocolError(1009, "message too big");
        }
        if (this.#parts.length === 0) this.#binary = opcode === 2;
        this.#parts.push(fin && this.#parts.length === 0 ? payload : payload.slice());
        if (!fin) {
          this.onheld?.();
          continue;
        }
        const whole = this.#parts.length === 1 ? this.#parts[0]! : concat(this.#parts);
        this.#parts = [];
        this.#partsBytes = 0;
        if (this.#binary) {
          if (this.readyState === OPEN) this.onmessage?.({ data: whole.slice() });
          continue;
        }
        let text: string;
        try {
          text = dec.decode(whole);
        } catch {
          return await this.#protocolError(1007, "a message is not UTF-8");
        }
        if (this.readyState === OPEN) this.onmessage?.({ data: text });
      }
    } catch (err) {
      this.onerror?.({ message: err instanceof Error ? err.message : String(err) });
    } finally {
      this.#end();
    }
  }

  #write(bytes: Uint8Array): void {
    const conn = this.#conn;
    this.bufferedAmount += bytes.length;
    this.#writing = this.#writing.then(async () => {
      await writeAll(conn, bytes);
      this.bufferedAmount -= bytes.length;
    }).catch(() => this.#end());
  }

  /** At most one pong waits to be written, with the newest ping's payload. */
  #pong(ping: Frame): void {
    const queued = this.#pongLength >= 0;
    ping.copyPayload(this.#pongBody);
    this.#pongLength = ping.length;
    if (queued) return;
    this.#writing = this.#writing.then(async () => {
      const bytes = frame(10, this.#pongBody.subarray(0, this.#pongLength), false);
      this.#pongLength = -1;
      await writeAll(this.#conn, bytes);
    }).catch(() => this.#end());
  }

  #sendClose(code: number, reason: string): void {
    this.#closeSent = true;
    this.#write(frame(8, closeBody(code, reason), false));
  }

  async #protocolError(code: number, reason: string): Promise<void> {
    this.onerror?.({ message: `WebSocket protocol error: ${reason}` });
    this.readyState = CLOSING;
    // The half-read message is dropped now, whatever the peer does.
    this.#parts = [];
    this.#partsBytes = 0;
    this.#sendClose(code, reason);
    await this.#flushed();
  }

  /** Waits until what was sent is written, or 2 s for a peer that reads nothing. */
  async #flushed(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#writing,
      new Promise<void>((r) => timer = setTimeout(r, CLOSE_WAIT_MS)),
    ]);
    clearTimeout(timer);
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#closeTimer);
    this.readyState = CLOSED;
    this.#parts = [];
    this.#partsBytes = 0;
    try {
      this.#conn.close();
    } catch {
      // Already closed.
    }
    this.onclose?.();
  }
}
