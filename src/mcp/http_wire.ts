/**
 * The HTTP/1.1 reader of MCP over HTTP: requests read from `Deno.listen`
 * with limits `Deno.serve` does not offer (docs/decisions/ui.md, "An HTTP/1.1 server of its own";
 * the dashboard's src/ui/http.ts reads the same way). A connection that has not sent its head
 * within {@linkcode McpWireLimits.headerMs} is closed (slowloris); a head over 16 KiB gets 431, a
 * body over {@linkcode McpWireLimits.maxBody} 413 before any of it is read, a chunked body 411; at
 * most {@linkcode McpWireLimits.maxConnections} connections are open, and a new one over that
 * closes the oldest still sending its head. The request's URL is built from the address served,
 * never from its Host, so a strange Host reaches the gate (src/mcp/http_gate.ts) instead of
 * throwing. Every answer has a length (the endpoint answers JSON, never a stream); a client may
 * keep the connection for its next request: it may wait {@linkcode McpWireLimits.idleMs} for that
 * request's first byte, then has `headerMs` for the head, and is among the first pushed out at
 * the cap while it waits.
 *
 * Requires `--allow-net` for the address served.
 *
 * @module
 */

import { writeAll } from "../io/write_all.ts";

/** The limits of {@linkcode serveMcpWire}. */
export interface McpWireLimits {
  /** Time for a connection to send its whole request head (10 s). */
  headerMs: number;
  /** Time for the body once the head is in, and for the answer to be taken (30 s). */
  ioMs: number;
  /** The largest request body (1 MiB: a post is at most 32 KiB of text). */
  maxBody: number;
  /** Open connections at most (256). */
  maxConnections: number;
  /**
   * How long a kept connection may wait for the first byte of its next request (120 s: longer
   * than clients keep an idle connection, so a client never sends into one being closed).
   */
  idleMs: number;
}

/** The limits the daemon serves with. */
export const MCP_WIRE_LIMITS: Readonly<McpWireLimits> = {
  headerMs: 10_000,
  ioMs: 30_000,
  maxBody: 1024 * 1024,
  maxConnections: 256,
  idleMs: 120_000,
};

const MAX_HEAD = 16 * 1024;

/** What clients are told to keep an idle connection for: less than the idle limit. */
const KEEP_ALIVE_HINT_S = 60;

/** Where and how {@linkcode serveMcpWire} listens. */
export interface McpWireOptions {
  hostname: string;
  port: number;
  limits?: Partial<McpWireLimits>;
  /** Told about a handler that threw (its answer is a 500). */
  onError: (err: unknown) => void;
}

/** A running server. */
export interface McpWire {
  /** The address actually bound. */
  addr: Deno.NetAddr;
  /** Stops listening, closes every connection, waits for the handlers. */
  shutdown(): Promise<void>;
}

/** A plain refusal the wire answers itself. */
function plain(status: number, reason: string): Response {
  return new Response(`error: ${reason}\n`, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}

/** Serves `handler` on one address until `shutdown`. */
export function serveMcpWire(
  opts: McpWireOptions,
  handler: (req: Request) => Promise<Response>,
): McpWire {
  const limits = { ...MCP_WIRE_LIMITS, ...opts.limits };
  const listener = Deno.listen({ hostname: opts.hostname, port: opts.port });
  const addr = listener.addr as Deno.NetAddr;
  const base = `http://${
    addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname
  }:${addr.port}`;
  const open = new Set<Deno.Conn>();
  // Connections still sending their head, oldest first: the ones a new one may push out.
  const inHead = new Set<Deno.Conn>();
  const handling = new Set<Promise<void>>();
  let stopped = false;

  const accepting = (async () => {
    while (true) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch {
        break; // closed by shutdown()
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
        // Answers are small and whole: send each at once.
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
        const next = await withDeadline(conn, limits.idleMs, () => firstBytes(conn));
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
      const ok = await withDeadline(conn, limits.ioMs, () => writeResponse(conn, res, keep));
      return ok === null ? null : keep;
    };
    const closing = async (status: number, reason: string) => {
      await answer(plain(status, reason));
      return null;
    };
    const head = await withDeadline(conn, limits.headerMs, () => readHead(conn, carry));
    inHead.delete(conn);
    if (head === null) return null;
    if ("status" in head) return await closing(head.status, head.reason);
    const parsed = parseHead(head.head);
    if ("status" in parsed) return await closing(parsed.status, parsed.reason);
    const { method, target, headers } = parsed;
    let body: Uint8Array<ArrayBuffer> | undefined;
    let after: Uint8Array = head.rest;
    const length = headers.get("content-length");
    if (length !== null) {
      const n = Number(length);
      if (n > limits.maxBody) {
        return await closing(413, `a request body may be at most ${limits.maxBody} bytes`);
      }
      const got = await withDeadline(conn, limits.ioMs, () => readBody(conn, head.rest, n));
      if (got === null) return null;
      [body, after] = got;
    }
    const keep = parsed.version === "1.1" && !/\bclose\b/i.test(headers.get("connection") ?? "");
    let req: Request;
    try {
      req = new Request(base + target, {
        method,
        headers,
        ...(body !== undefined && method !== "GET" && method !== "HEAD" ? { body } : {}),
      });
    } catch {
      return await closing(400, "this request cannot be read");
    }
    let res: Response;
    try {
      res = await handler(req);
    } catch (err) {
      opts.onError(err);
      res = plain(500, "the node could not answer this request; try again");
    }
    // A refused request (no token, another Host, over the rate) keeps nothing open.
    const kept = await answer(res, keep && res.status < 400 && !stopped);
    return kept === null ? null : [after, kept];
  }

  return {
    addr,
    async shutdown() {
      if (!stopped) {
        stopped = true;
        closeQuietly(listener);
        for (const c of open) closeQuietly(c);
      }
      await accepting;
      while (handling.size > 0) await Promise.allSettled([...handling]);
    },
  };
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
  // MCP clients send JSON with a length; a chunked body would need a reader of its own.
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

async function writeResponse(conn: Deno.Conn, res: Response, keep: boolean): Promise<boolean> {
  const body = new Uint8Array(await res.arrayBuffer());
  const lines = [`HTTP/1.1 ${res.status} ${STATUS_TEXT[res.status] ?? "Status"}`];
  for (const [k, v] of res.headers) {
    if (k !== "content-length" && k !== "connection") lines.push(`${k}: ${v}`);
  }
  lines.push(`content-length: ${body.length}`, `connection: ${keep ? "keep-alive" : "close"}`);
  if (keep) lines.push(`keep-alive: timeout=${KEEP_ALIVE_HINT_S}`);
  lines.push("", "");
  // One write: a head and a body sent apart wait on the peer's delayed ACK on a kept connection.
  const head = new TextEncoder().encode(lines.join("\r\n"));
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  await writeAll(conn, out);
  return true;
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

function closeQuietly(c: { close(): void }): void {
  try {
    c.close();
  } catch { /* already closed */ }
}

const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  202: "Accepted",
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
