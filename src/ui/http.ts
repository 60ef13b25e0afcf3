/**
 * The dashboard's HTTP/1.1 server: one request per connection, read with
 * limits `Deno.serve` does not offer (docs/decisions/ui.md). A connection that
 * has not sent its request head within {@linkcode UiHttpLimits.headerMs} is
 * closed (slowloris); a head over 16 KiB gets 431, a body over
 * {@linkcode UiHttpLimits.maxBody} 413 before any of it is read; at most
 * {@linkcode UiHttpLimits.maxConnections} connections are open, and a new one
 * over that closes the oldest still sending its head. The request's URL is
 * built from the address served, never from its Host header, so a strange
 * Host reaches the gate (which refuses it) instead of throwing; a handler that
 * throws gets a 500 and one line on stderr with no request data in it (a URL
 * may hold the login token).
 *
 * Requires `--allow-net` for the address served.
 *
 * @module
 */

import { writeAll } from "../io/write_all.ts";

/** The limits of {@linkcode serveUi}; each has a default. */
export interface UiHttpLimits {
  /** Time for a connection to send its whole request head (10 s). */
  headerMs: number;
  /** Time for the body once the head is in, and for the answer to be taken (30 s). */
  ioMs: number;
  /** The largest request body (1 MiB: a form with an edited draft). */
  maxBody: number;
  /** Open connections at most (64). */
  maxConnections: number;
}

/** The limits `wats ui` serves with. */
export const UI_HTTP_LIMITS: Readonly<UiHttpLimits> = {
  headerMs: 10_000,
  ioMs: 30_000,
  maxBody: 1024 * 1024,
  maxConnections: 64,
};

const MAX_HEAD = 16 * 1024;

/** Where and how {@linkcode serveUi} listens. */
export interface UiHttpOptions {
  hostname: string;
  port: number;
  signal?: AbortSignal;
  limits?: Partial<UiHttpLimits>;
  /** Told about a handler that threw (default: one `error:` line on stderr). */
  onError?: (err: unknown) => void;
}

/** A running {@linkcode serveUi}. */
export interface UiHttpServer {
  /** The address actually bound. */
  addr: Deno.NetAddr;
  /** Resolves when the server has stopped and every connection is closed. */
  finished: Promise<void>;
  shutdown(): Promise<void>;
}

/** `host:port` of a bound address, as a URL and the Host header name it (`[::1]:7448`). */
export function hostPortOf(addr: Deno.NetAddr): string {
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  return `${host}:${addr.port}`;
}

/** Serves `handler` on one address until `signal` aborts or `shutdown` is called. */
export function serveUi(
  opts: UiHttpOptions,
  handler: (req: Request) => Promise<Response>,
): UiHttpServer {
  const limits = { ...UI_HTTP_LIMITS, ...opts.limits };
  const onError = opts.onError ?? ((err: unknown) => {
    console.error(
      `error: the dashboard could not answer a request (${errorName(err)}): reload the page; ` +
        "if it keeps failing, restart `wats ui`",
    );
  });
  const listener = Deno.listen({ hostname: opts.hostname, port: opts.port });
  const addr = listener.addr as Deno.NetAddr;
  const origin = `http://${hostPortOf(addr)}`;
  const open = new Set<Deno.Conn>();
  // Connections still sending their head, oldest first: the ones a new
  // connection may push out when the cap is reached.
  const inHead = new Set<Deno.Conn>();
  const handling = new Set<Promise<void>>();
  let stopped = false;
  // Ends the event streams, which otherwise wait for their next event.
  const closing = new AbortController();

  const stop = () => {
    if (stopped) return;
    stopped = true;
    closing.abort();
    try {
      listener.close();
    } catch { /* already closed */ }
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

  async function serveConn(conn: Deno.Conn): Promise<void> {
    const answer = async (status: number, reason: string) => {
      await withDeadline(conn, limits.ioMs, () => writeResponse(conn, plain(status, reason)));
    };
    const head = await withDeadline(conn, limits.headerMs, () => readHead(conn));
    inHead.delete(conn);
    if (head === null) return;
    if ("status" in head) return await answer(head.status, head.reason);
    const parsed = parseHead(head.head);
    if ("status" in parsed) return await answer(parsed.status, parsed.reason);
    const { method, target, headers } = parsed;
    let body: Uint8Array<ArrayBuffer> | undefined;
    const length = headers.get("content-length");
    if (length !== null) {
      const n = Number(length);
      if (n > limits.maxBody) {
        return await answer(413, `a request body may be at most ${limits.maxBody} bytes`);
      }
      const got = await withDeadline(conn, limits.ioMs, () => readBody(conn, head.rest, n));
      if (got === null) return;
      body = got;
    }
    let req: Request;
    try {
      req = new Request(origin + target, {
        method,
        headers,
        ...(body !== undefined && method !== "GET" && method !== "HEAD" ? { body } : {}),
      });
    } catch {
      return await answer(400, "this request cannot be read");
    }
    let res: Response;
    try {
      res = await handler(req);
    } catch (err) {
      onError(err);
      res = plain(500, "the dashboard could not answer this request");
    }
    if (res.headers.get("content-type")?.startsWith("text/event-stream") && res.body) {
      return await streamResponse(conn, res, res.body, limits.ioMs, closing.signal);
    }
    await withDeadline(conn, limits.ioMs, () => writeResponse(conn, res));
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

type Head = { head: string; rest: Uint8Array } | { status: number; reason: string };

/** Reads up to the blank line that ends the head; null when the peer left first. */
async function readHead(conn: Deno.Conn): Promise<Head | null> {
  const buf = new Uint8Array(MAX_HEAD + 4);
  let len = 0;
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
  | { method: string; target: string; headers: Headers }
  | { status: number; reason: string };

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function parseHead(head: string): Parsed {
  const [line = "", ...fields] = head.split("\r\n");
  const m = line.match(/^([A-Z]{1,16}) (\/[\x21-\x7e]*) HTTP\/1\.[01]$/);
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
  // Browsers send forms with a length; a chunked body would need a reader of
  // its own, and nothing the dashboard serves takes one.
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
  return { method: m[1]!, target: m[2]!, headers };
}

async function readBody(
  conn: Deno.Conn,
  start: Uint8Array,
  length: number,
): Promise<Uint8Array<ArrayBuffer> | null> {
  const body = new Uint8Array(length);
  const first = start.subarray(0, length);
  body.set(first);
  let got = first.length;
  while (got < length) {
    const n = await conn.read(body.subarray(got));
    if (n === null) return null;
    got += n;
  }
  return body;
}

async function writeResponse(conn: Deno.Conn, res: Response): Promise<void> {
  const body = new Uint8Array(await res.arrayBuffer());
  const lines = [`HTTP/1.1 ${res.status} ${res.statusText || STATUS_TEXT[res.status] || ""}`];
  // Iterating Headers gives each Set-Cookie on its own.
  for (const [k, v] of res.headers) lines.push(`${k}: ${v}`);
  lines.push(`content-length: ${body.length}`, "connection: close", "", "");
  await writeAll(conn, new TextEncoder().encode(lines.join("\r\n")));
  await writeAll(conn, body);
}

/**
 * Writes an event stream (`text/event-stream`) as it comes: no length, each
 * chunk with its own deadline, until the handler ends it, the browser leaves
 * (a write fails) or the server stops.
 */
async function streamResponse(
  conn: Deno.Conn,
  res: Response,
  body: ReadableStream<Uint8Array>,
  ms: number,
  stopping: AbortSignal,
): Promise<void> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  stopping.addEventListener("abort", cancel, { once: true });
  try {
    const lines = [`HTTP/1.1 ${res.status} ${STATUS_TEXT[res.status] ?? ""}`];
    for (const [k, v] of res.headers) lines.push(`${k}: ${v}`);
    lines.push("cache-control: no-store", "connection: close", "", "");
    const head = new TextEncoder().encode(lines.join("\r\n"));
    if (await withDeadline(conn, ms, () => writeAll(conn, head).then(() => true)) === null) return;
    // A browser that left (a reload, a closed tab) ends its stream now, not at the next write:
    // each open stream holds one of the few live slots (src/ui/live.ts MAX_LIVE_PAGES).
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

function plain(status: number, reason: string): Response {
  return new Response(`error: ${reason}\n`, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}

/**
 * Runs `fn` on `conn`, closing the connection if it takes longer than `ms`;
 * null when it was closed (by the deadline or the peer) before `fn` finished.
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

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* already closed */ }
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}

const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  303: "See Other",
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  411: "Length Required",
  413: "Content Too Large",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};
