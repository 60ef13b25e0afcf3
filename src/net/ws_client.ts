/**
 * A WebSocket client (RFC 6455, `ws://` and `wss://`, text messages) on a TCP
 * connection with Nagle's algorithm off, for the relay syncs.
 *
 * Why not the runtime's `WebSocket`: Deno 2.9's client writes a frame whose payload
 * is over 1,024 bytes as two writes (header, then payload) on a socket that keeps
 * Nagle's algorithm on, and offers no way to set `TCP_NODELAY`. The payload then
 * waits for the peer to acknowledge the header, which a peer with delayed ACKs does
 * after about 40 ms: every post over 1 KiB sent alone took 40 ms more to reach a
 * relay (measured on loopback: 0.2 ms at 1,024 bytes, 43 ms at 1,025). This client
 * writes each frame in one write, on a socket with `setNoDelay(true)`.
 *
 * The surface is the part of `WebSocket` the syncs use: `onopen`, `onmessage`,
 * `onerror`, `onclose`, `send`, `close`, `readyState`.
 *
 * Requires `--allow-net` on the URL's host and port.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { MAX_EVENT_BYTES } from "../posts/post.ts";
import { closeBody, concat, type Frame, frame, FrameError, FrameReader } from "./ws_frames.ts";

/**
 * Incoming messages longer than this close the connection (1009). A relay's message
 * carries at most one event, and an event is at most `MAX_EVENT_BYTES` (64 KiB)
 * serialised: four times that leaves room for escaping, the same cap as the relay
 * endpoint's (`MAX_MESSAGE_CHARS`). Anything longer is junk that would only be
 * parsed to be refused.
 */
const MAX_MESSAGE_BYTES = 4 * MAX_EVENT_BYTES;
/** How long a close waits for the peer's close frame before dropping the connection. */
const CLOSE_WAIT_MS = 2_000;
const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** The states of `WebSocket.readyState`. */
export const CONNECTING = 0, OPEN = 1, CLOSING = 2, CLOSED = 3;

/** A WebSocket client connection; see the module doc. Connects at once. */
export class WsClient {
  readonly url: string;
  readyState: number = CONNECTING;
  onopen: (() => void) | undefined;
  onmessage: ((e: { data: string }) => void) | undefined;
  onerror: ((e: { message: string }) => void) | undefined;
  onclose: ((e: { code: number; reason: string }) => void) | undefined;
  /**
   * Sees the first bytes (at most 100) of each whole text message before it is
   * decoded; false drops the message, which then costs no allocation.
   */
  onpeek: ((head: Uint8Array) => boolean) | undefined;
  #conn: Deno.Conn | undefined;
  #reader: FrameReader | undefined;
  #writing: Promise<void> = Promise.resolve();
  #closeTimer: ReturnType<typeof setTimeout> | undefined;
  #closeSent = false;
  /** The payload of the pong waiting to be written (`#pongLength` -1: none waits). */
  readonly #pongBody = new Uint8Array(125);
  #pongLength = -1;
  #paused: PromiseWithResolvers<void> | undefined;
  #ended = false;
  readonly #enc = new TextEncoder();

  /** @throws {SyntaxError} when `url` is not a ws:// or wss:// URL. */
  constructor(url: string) {
    const u = new URL(url);
    if (u.protocol !== "ws:" && u.protocol !== "wss:") {
      throw new SyntaxError(`${url} is not a ws:// or wss:// URL`);
    }
    this.url = url;
    this.#run(u).catch((err) => this.#fail(err));
  }

  /**
   * Bytes received on this connection so far, as on the wire (handshake, frame
   * headers, messages dropped unread): what a relay costs the node to download.
   */
  get bytesReceived(): number {
    return this.#reader?.bytesRead ?? 0;
  }

  /** Sends one text message (ignored unless open, as `WebSocket.send` is not). */
  send(text: string): void {
    if (this.readyState !== OPEN) throw new DOMException("the connection is not open");
    this.#write(frame(1, this.#enc.encode(text), true));
  }

  /**
   * Stops reading from the connection (after the message being delivered) until
   * {@linkcode resume}: the peer is slowed by TCP instead of buffered here.
   */
  pause(): void {
    this.#paused ??= Promise.withResolvers<void>();
  }

  /** Reads again after {@linkcode pause}. */
  resume(): void {
    this.#paused?.resolve();
    this.#paused = undefined;
  }

  /** Starts the closing handshake (or abandons a connection still opening). */
  close(code = 1000, reason = ""): void {
    if (this.readyState === CLOSED || this.readyState === CLOSING) return;
    if (this.readyState === CONNECTING) {
      this.readyState = CLOSING;
      this.#end(1006, "closed before it opened");
      return;
    }
    this.readyState = CLOSING;
    this.#sendClose(code, reason);
    this.#closeTimer = setTimeout(
      () => this.#end(1006, "no close frame from the peer"),
      CLOSE_WAIT_MS,
    );
  }

  async #run(u: URL): Promise<void> {
    const tls = u.protocol === "wss:";
    const port = Number(u.port || (tls ? 443 : 80));
    const hostname = u.hostname.replace(/^\[(.*)\]$/, "$1");
    const tcp = await Deno.connect({ hostname, port });
    // The point of this module: each frame leaves at once.
    tcp.setNoDelay(true);
    this.#conn = tls ? await Deno.startTls(tcp, { hostname }) : tcp;
    if (this.readyState !== CONNECTING) return this.#end(1006, "closed before it opened");
    const key = encodeBase64(crypto.getRandomValues(new Uint8Array(16)));
    await this.#conn.write(this.#enc.encode(
      `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\n` +
        `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    ));
    const reader = this.#reader = new FrameReader(this.#conn, MAX_MESSAGE_BYTES, false);
    // The handshake's answer.
    const headBytes = await reader.readHead(16 * 1024);
    if (headBytes === null) throw new Error("no WebSocket handshake");
    const head = new TextDecoder().decode(headBytes) + "\r\n";
    const status = head.match(/^HTTP\/1\.1 (\d{3})[^\r\n]*/);
    if (status?.[1] !== "101") {
      throw new Error(`the server refused the WebSocket: ${status?.[0] ?? head.slice(0, 80)}`);
    }
    const accept = head.match(/\r\nsec-websocket-accept:\s*(\S+)/i)?.[1];
    const digest = await crypto.subtle.digest("SHA-1", this.#enc.encode(key + GUID));
    if (accept !== encodeBase64(new Uint8Array(digest))) {
      throw new Error("the server's Sec-WebSocket-Accept does not match");
    }
    if (this.readyState !== CONNECTING) return this.#end(1006, "closed before it opened");
    this.readyState = OPEN;
    this.onopen?.();

    const parts: Uint8Array[] = [];
    let partsBytes = 0;
    const dec = new TextDecoder("utf-8", { fatal: true });
    for (;;) {
      if (this.#paused) await this.#paused.promise;
      if (this.#ended) return;
      let f: Frame | undefined;
      try {
        while ((f = reader.take()) === undefined) {
          if (!await reader.fill()) return this.#end(1006, "the connection ended");
        }
      } catch (err) {
        if (!(err instanceof FrameError)) throw err;
        return this.#protocolError(err.code, err.message);
      }
      const { fin, opcode } = f;
      // Pings and pongs allocate nothing: a flood of them is only parsed.
      if (opcode === 9) {
        this.#pong(f);
        continue;
      }
      if (opcode === 10) continue;
      const payload = f.payload();
      if (opcode === 8) {
        const code = payload.length >= 2 ? (payload[0]! << 8) | payload[1]! : 1005;
        const reason = new TextDecoder().decode(payload.subarray(2));
        if (!this.#closeSent) this.#sendClose(code === 1005 ? 1000 : code, "");
        await this.#writing;
        return this.#end(code, reason);
      }
      if (opcode !== 0 && opcode !== 1 && opcode !== 2) {
        return this.#protocolError(1002, `unknown opcode ${opcode}`);
      }
      partsBytes += payload.length;
      if (partsBytes > MAX_MESSAGE_BYTES) return this.#protocolError(1009, "message too big");
      // The payload is a view into the reader's buffer: copied only to outlive a read.
      parts.push(fin && parts.length === 0 ? payload : payload.slice());
      if (!fin) continue;
      const whole = parts.length === 1 ? parts[0]! : concat(parts);
      parts.length = 0;
      partsBytes = 0;
      if (this.onpeek && !this.onpeek(whole.subarray(0, 100))) continue;
      let text: string;
      try {
        text = dec.decode(whole);
      } catch {
        return this.#protocolError(1007, "a message is not UTF-8");
      }
      if (this.readyState === OPEN) this.onmessage?.({ data: text });
    }
  }

  #write(bytes: Uint8Array): void {
    const conn = this.#conn;
    if (!conn) return;
    this.#writing = this.#writing.then(async () => {
      let off = 0;
      while (off < bytes.length) off += await conn.write(bytes.subarray(off));
    }).catch((err) => this.#fail(err));
  }

  /**
   * Answers a ping. At most one pong waits to be written, carrying the newest
   * ping's payload (RFC 6455 §5.5.3 allows answering only the most recent): a
   * relay that pings faster than it reads cannot make pongs pile up here.
   */
  #pong(ping: Frame): void {
    const queued = this.#pongLength >= 0;
    ping.copyPayload(this.#pongBody);
    this.#pongLength = ping.length;
    if (queued || !this.#conn) return;
    const conn = this.#conn;
    this.#writing = this.#writing.then(async () => {
      const bytes = frame(10, this.#pongBody.subarray(0, this.#pongLength), true);
      this.#pongLength = -1;
      let off = 0;
      while (off < bytes.length) off += await conn.write(bytes.subarray(off));
    }).catch((err) => this.#fail(err));
  }

  #sendClose(code: number, reason: string): void {
    this.#closeSent = true;
    this.#write(frame(8, closeBody(code, reason), true));
  }

  #protocolError(code: number, reason: string): void {
    this.onerror?.({ message: `WebSocket protocol error: ${reason}` });
    this.#sendClose(code, reason);
    this.#writing.finally(() => this.#end(code, reason));
    // A peer that reads nothing would hold the close frame, and the connection, forever.
    this.#closeTimer = setTimeout(() => this.#end(code, reason), CLOSE_WAIT_MS);
  }

  #fail(err: unknown): void {
    if (this.#ended) return;
    this.onerror?.({ message: errorMessage(err) });
    this.#end(1006, "");
  }

  #end(code: number, reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.resume();
    clearTimeout(this.#closeTimer);
    this.readyState = CLOSED;
    try {
      this.#conn?.close();
    } catch {
      // Already closed.
    }
    this.onclose?.({ code, reason });
  }
}

function encodeBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}
