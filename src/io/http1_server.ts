/**
 * An HTTP/1.1 server read from `Deno.listen` with the limits `Deno.serve` does not offer
 * (docs/decisions/ui.md, "An HTTP/1.1 server of its own"): the dashboard (src/ui/http.ts) and MCP
 * over HTTP (src/mcp/http_wire.ts) both serve through it.
 *
 * A connection that has not sent its request head within {@linkcode Http1Limits.headerMs} is
 * closed (slowloris); a head over 16 KiB gets 431, a body over {@linkcode Http1Limits.maxBody} 413
 * before any of it is read, a chunked body 411; at most {@linkcode Http1Limits.maxConnections}
 * connections are open, and a new one over that closes the oldest still sending its head. The
 * request's URL is built from the address served, never from its Host header, so a strange Host
 * reaches the caller's gate (which refuses it) instead of throwing. A handler that throws gets a
 * 500 and the caller's `onError`. Every answer has a length and goes out in one write, but an
 * event stream when the caller allows them ({@linkcode Http1Options.eventStreams}).
 *
 * With {@linkcode Http1Options.keepAlive} a client may keep a connection for its next request: it
 * may wait `idleMs` for that request's first byte, then has `headerMs` for the head, and is among
 * the first pushed out at the cap while it waits. A refused answer (status 400 or more) closes the
 * connection all the same.
 *
 * Requires `--allow-net` for the address served.
 *
 * @module
 */

import { writeAll } from "./write_all.ts";

/** The limits of {@linkcode serveHttp1}. */
export interface Http1Limits {
  /** Time for a connection to send its whole request head. */
  headerMs: number;
  /** Time for the body once the head is in, and for the answer to be taken. */
  ioMs: number;
  /** The largest request body, in bytes. */
  maxBody: number;
  /** Open connections at most. */
  maxConnections: number;
}

/** Where and how {@linkcode serveHttp1} listens. */
export interface Http1Options {
  hostname: string;
  port: number;
  limits: Http1Limits;
  /** Stops the server as {@linkcode Http1Server.shutdown} does. */
  signal?: AbortSignal;
  /**
   * Keep a connection between requests; `idleMs` is how long it may wait for the first byte of
   * the next one. Without it every answer closes its connection.
   */
  keepAlive?: { idleMs: number };
  /**
   * Write a `text/event-stream` answer as it comes (no length, the connection closes after it);
   * without it such an answer is read whole like any other.
   */
  eventStreams?: boolean;
  /** Told about a handler that threw. */
  onError: (err: unknown) => void;
  /** The reason the 500 a handler that threw gets gives (it must hold no request data). */
  failure: string;
}

/** A running {@linkcode serveHttp1}. */
export interface Http1Server {
  /** The address actually bound. */
  addr: Deno.NetAddr;
  /** Resolves when the server has stopped and every connection is closed. */
  finished: Promise<void>;
  /** Stops listening, closes every connection, waits for the handlers. */
  shutdown(): Promise<void>;
}

const MAX_HEAD = 16 * 1024;

/** `host:port` of a bound address, as a URL and the Host header name it (`[::1]:7448`). */
export function hostPortOf(addr: Deno.NetAddr): string {
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  return `${host}:${addr.port}`;
}

/** Serves `handler` on one address until `signal` aborts or `shutdown` is called. */
export function serveHttp1(
  opts: Http1Options,
  handler: (req: Request) => Promise<Response>,
): Http1Server {
  const { limits } = opts;
  const listener = Deno.listen({ hostname: opts.hostname, port: opts.port });
  const addr = listener.addr as Deno.NetAddr;
  const origin = `http://${hostPortOf(addr)}`;
  const open = new Set<Deno.Conn>();
  // Connections still sending their head (or waiting, kept, for their next one), oldest first:
  // the ones a new connection may push out when the cap is reached.
  const inHead = new Set<Deno.Conn>();
  const handling = new Set<Promise<void>>();
  let stopped = false;
  // Ends the event streams, which otherwise wait for their next event.
  const closing = new AbortController();

  const stop = () => {
    if (stopped) return;
    stopped = true;
    closing.abort();
    closeQuietly(listener);
    for (const c of open) closeQuietly(c);
  };
  opts.signal?.addEventListener("abort", stop, { once: true });

  const accepting = (async () => {
    while (true) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch {
        break; // closed by stop()
      }
      if (open.size >= limits.maxConnections) {
        const oldest = inHead.values().next().value;
        if (oldest === undefined) {
          closeQuietly(conn);
          continue;
        }
        closeQuietly(oldest);
        inHead.delete(oldest);
        open.delete(oldest);
      }
      try {
        // Answers go out whole in one write, and stream events one by one: send each at once.
        (conn as Deno.TcpConn).setNoDelay(true);
      } catch {
        // The peer is gone already: the first read says so.
      }
      open.add(conn);
      inHead.add(conn);
      const p = serveConn(conn).catch(() => {}).finally(() => {
        open.delete(conn);
        inHead.delete(conn);
        closeQuietly(conn);
        handling.delete(p);
      });
      handling.add(p);
    }
  })();

  /** Serves the requests of one connection, one after another while the client keeps it. */
  async function serveConn(conn: Deno.Conn): Promise<void> {
    let carry: Uint8Array = new Uint8Array(0);
    let more = true;
    for (let first = true; more && !stopped; first = false) {
      inHead.add(conn);
      if (!first && carry.length === 0) {
        // Kept and idle: its next head's deadline starts with that head's first byte.
        const idleMs = opts.keepAlive?.idleMs ?? 0;
        const next = await withDeadline(conn, idleMs, () => firstBytes(conn));
        if (next === null) return;
        carry = next;
      }
      const rest = await serveRequest(conn, carry);
      if (rest === null) return;
      [carry, more] = rest;
    }
  }

  /**
   * Reads one request and answers it; the bytes read past it and whether the connection stays
   * open, or null when it ended. Its head must be in within `headerMs`.
   */
  async function serveRequest(
    conn: Deno.Conn,
    carry: Uint8Array,
  ): Promise<[Uint8Array, boolean] | null> {
    const answer = async (res: Response, keep = false) => {
      const keepS = keep && opts.keepAlive ? keepAliveHintS(opts.keepAlive.idleMs) : undefined;
      const ok = await withDeadline(conn, limits.ioMs, () => writeResponse(conn, res, keepS));
      return ok === null ? null : keep;
    };
    const refuse = async (status: number, reason: string) => {
      await answer(plain(status, reason));
      return null;
    };
    const head = await withDeadline(conn, limits.headerMs, () => readHead(conn, carry));
    inHead.delete(conn);
    if (head === null) return null;
    if ("status" in head) return await refuse(head.status, head.reason);
    const parsed = parseHead(head.head);
    if ("status" in parsed) return await refuse(parsed.status, parsed.reason);
    const { method, target, headers } = parsed;
    let body: Uint8Array<ArrayBuffer> | undefined;
    let after: Uint8Array = head.rest;
    const length = headers.get("content-length");
    if (length !== null) {
      const n = Number(length);
      if (n > limits.maxBody) {
        return await refuse(413, `a request body may be at most ${limits.maxBody} bytes`);
      }
      const got = await withDeadline(conn, limits.ioMs, () => readBody(conn, head.rest, n));
      if (got === null) return null;
      [body, after] = got;
    }
    let req: Request;
    try {
      req = new Request(origin + target, {
        method,
        headers,
        ...(body !== undefined && method !== "GET" && method !== "HEAD" ? { body } : {}),
      });
    } catch {
      return await refuse(400, "this request cannot be read");
    }
    let res: Response;
    try {
      res = await handler(req);
    } catch (err) {
      opts.onError(err);
      res = plain(500, opts.failure);
    }
    if (
      opts.eventStreams && res.body &&
      res.headers.get("content-type")?.startsWith("text/event-stream")
    ) {
      await streamResponse({
        conn,
        res,
        body: res.body,
        ms: limits.ioMs,
        stopping: closing.signal,
      });
      return null;
    }
    const keep = opts.keepAlive !== undefined && parsed.version === "1.1" &&
      !/\bclose\b/i.test(headers.get("connection") ?? "");
    // A refused request (no token, another Host, over the rate) keeps nothing open.
    const kept = await answer(res, keep && res.status < 400 && !stopped);
    return kept === null ? null : [after, kept];
  }

  const finished = (async () => {
    await accepting;
    while (handling.size > 0) await Promise.allSettled([...handling]);
  })();

  return {
    addr,
    finished,
    async shutdown() {
      stop();
      await finished;
    },
  };
}

/** What clients are told to keep an idle connection for: well under the idle limit. */
function keepAliveHintS(idleMs: number): number {
  return Math.max(1, Math.floor(idleMs / 2000));
}

/** A plain refusal the server answers itself. */
function plain(status: number, reason: string): Response {
  return new Response(`error: ${reason}\n`, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}

type Head = { head: string; rest: Uint8Array } | { status: number; reason: string };

/** The next bytes a connection sends; null when it ends first. */
async function firstBytes(conn: Deno.Conn): Promise<Uint8Array | null> {
  const buf = new Uint8Array(16 * 1024);
  const n = await conn.read(buf);
  return n === null ? null : buf.subarray(0, n);
}

/** Reads up to the blank line that ends the head; null when the peer left first. */
async function readHead(conn: Deno.Conn, carry: Uint8Array): Promise<Head | null> {
  const buf = new Uint8Array(MAX_HEAD + 4);
  if (carry.length > buf.length) return { status: 431, reason: "the request head is too large" };
  buf.set(carry);
  let len = carry.length;
  let scanned = 0;
  while (true) {
    // Only the new bytes are scanned: a head sent a byte at a time costs no more.
    const end = headEnd(buf, scanned, len);
    scanned = Math.max(0, len - 3);
    if (end >= 0) {
      return {
        head: new TextDecoder("latin1").decode(buf.subarray(0, end)),
        rest: buf.slice(end + 4, len),
      };
    }
    if (len >= buf.length) return { status: 431, reason: "the request head is too large" };
    const n = await conn.read(buf.subarray(len));
    if (n === null) return null;
    len += n;
  }
}

function headEnd(buf: Uint8Array, from: number, len: number): number {
  for (let i = from; i + 3 < len; i++) {
    if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i;
  }
  return -1;
}

type Parsed =
  | { method: string; target: string; headers: Headers; version: "1.0" | "1.1" }
  | { status: number; reason: string };

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function parseHead(head: string): Parsed {
  const [line = "", ...fields] = head.split("\r\n");
  const m = line.match(/^([A-Z]{1,16}) (\/[\x21-\x7e]*) HTTP\/1\.([01])$/);
  if (!m) return { status: 400, reason: "this is not an HTTP/1.1 request for a path" };
  const headers = new Headers();
  try {
    for (const f of fields) {
      const colon = f.indexOf(":");
      const name = f.slice(0, colon);
      if (colon < 1 || !TOKEN.test(name)) return { status: 400, reason: "a header cannot be read" };
      headers.append(name, f.slice(colon + 1).trim());
    }
  } catch {
    return { status: 400, reason: "a header cannot be read" };
  }
  // Browsers send forms, and MCP clients JSON, with a length; a chunked body would need a reader
  // of its own, and nothing served takes one.
  if (headers.has("transfer-encoding")) {
    return { status: 411, reason: "a request body needs a content-length" };
  }
  const length = headers.get("content-length");
  if (length !== null && !/^\d{1,15}$/.test(length)) {
    return { status: 400, reason: "the content-length cannot be read" };
  }
  if (fields.filter((f) => /^host:/i.test(f)).length > 1) {
    return { status: 400, reason: "a request names one host" };
  }
  return { method: m[1]!, target: m[2]!, headers, version: m[3] === "1" ? "1.1" : "1.0" };
}

/** The body, and the bytes read past it (the next request's, pipelined). */
async function readBody(
  conn: Deno.Conn,
  start: Uint8Array,
  length: number,
): Promise<[Uint8Array<ArrayBuffer>, Uint8Array] | null> {
  const body = new Uint8Array(length);
  const first = start.subarray(0, length);
  body.set(first);
  let got = first.length;
  while (got < length) {
    const n = await conn.read(body.subarray(got));
    if (n === null) return null;
    got += n;
  }
  return [body, start.subarray(length)];
}

/** The status line and the handler's headers, but those that are the server's to say. */
function headLines(res: Response): string[] {
  const lines = [`HTTP/1.1 ${res.status} ${STATUS_TEXT[res.status] ?? "Status"}`];
  // Iterating Headers gives each Set-Cookie on its own.
  for (const [k, v] of res.headers) {
    if (!SERVER_HEADERS.has(k)) lines.push(`${k}: ${v}`);
  }
  return lines;
}

const SERVER_HEADERS = new Set(["content-length", "connection", "keep-alive", "transfer-encoding"]);

/** Writes a whole answer; `keepS`, when given, keeps the connection and tells the client so. */
async function writeResponse(conn: Deno.Conn, res: Response, keepS?: number): Promise<boolean> {
  const body = new Uint8Array(await res.arrayBuffer());
  const lines = headLines(res);
  lines.push(`content-length: ${body.length}`);
  if (keepS === undefined) lines.push("connection: close");
  else lines.push("connection: keep-alive", `keep-alive: timeout=${keepS}`);
  lines.push("", "");
  // One write: a head and a body sent apart wait on the peer's delayed ACK on a kept connection.
  const head = new TextEncoder().encode(lines.join("\r\n"));
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  await writeAll(conn, out);
  return true;
}

/** An event stream to write: its connection, answer and body, the deadline of each chunk. */
interface Stream {
  conn: Deno.Conn;
  res: Response;
  body: ReadableStream<Uint8Array>;
  ms: number;
  /** Aborts when the server stops. */
  stopping: AbortSignal;
}

/**
 * Writes an event stream (`text/event-stream`) as it comes: no length, each chunk with its own
 * deadline, until the handler ends it, the client leaves (a read ends or a write fails) or the
 * server stops.
 */
async function streamResponse({ conn, res, body, ms, stopping }: Stream): Promise<void> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  stopping.addEventListener("abort", cancel, { once: true });
  try {
    const lines = headLines(res);
    lines.push("cache-control: no-store", "connection: close", "", "");
    const head = new TextEncoder().encode(lines.join("\r\n"));
    if (await withDeadline(conn, ms, () => writeAll(conn, head).then(() => true)) === null) return;
    // A client that left (a reload, a closed tab) ends its stream now, not at the next write:
    // each open stream may hold a scarce slot (the dashboard's src/ui/live.ts MAX_LIVE_PAGES).
    void (async () => {
      const buf = new Uint8Array(512);
      try {
        while ((await conn.read(buf)) !== null) { /* a client sends nothing more */ }
      } catch { /* closed */ }
      cancel();
    })();
    while (true) {
      const { done, value } = await reader.read();
      if (done) return;
      const sent = await withDeadline(conn, ms, () => writeAll(conn, value).then(() => true));
      if (sent === null) return;
    }
  } finally {
    stopping.removeEventListener("abort", cancel);
    cancel();
  }
}

/**
 * Runs `fn` on `conn`, closing the connection if it takes longer than `ms`; null when it was
 * closed (by the deadline or the peer) before `fn` finished.
 */
async function withDeadline<T>(
  conn: Deno.Conn,
  ms: number,
  fn: () => Promise<T | null>,
): Promise<T | null> {
  const timer = setTimeout(() => closeQuietly(conn), ms);
  try {
    return await fn();
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

function closeQuietly(closable: { close(): void }): void {
  try {
    closable.close();
  } catch { /* already closed */ }
}

const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  202: "Accepted",
  303: "See Other",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  411: "Length Required",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};
