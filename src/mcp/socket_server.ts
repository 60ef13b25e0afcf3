/**
 * The daemon's MCP endpoint: a unix socket (`<data>/mcp.sock`, mode 0600) where
 * each connection is one MCP session, many at once.
 *
 * Per connection, before MCP starts, the client sends one JSON line
 * `{"wats":"hello","profile":"alice","token":"…"}` ({@linkcode Hello}). The node
 * decides who the session speaks for (`NodeService.authenticate`) and answers
 * `{"wats":"ready","profile":"alice"}`, or `{"wats":"error","message":"…"}` and
 * closes. Then newline-delimited JSON-RPC flows both ways. A client that sends
 * garbage or goes away ends its own session only.
 *
 * Requires `net` on `unix:<path>` and read and write on `<path>`.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { BusyError, WatsError } from "../errors.ts";
import { writeAll } from "../io/write_all.ts";
import { ConnTransport, LineReader } from "./conn_transport.ts";
import { createMcpServer, type McpLog } from "./server.ts";
import {
  type ControlRequest,
  decodeFirstLine,
  type Hello,
  HELLO_TIMEOUT_MS,
  type SessionIdentity,
} from "../contracts/session.ts";
import type { NodeService } from "./service.ts";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

/** Options of {@linkcode serveMcpSocket}. */
export interface ServeMcpSocketOptions {
  /** The socket path, normally `DataPaths.socket`. */
  path: string;
  service: NodeService;
  log?: McpLog;
  /** Aborting it closes the server, as `close()` does. */
  signal?: AbortSignal;
  /** Hello deadline in milliseconds (default {@linkcode HELLO_TIMEOUT_MS}). */
  helloTimeoutMs?: number;
  /** Handles a control line (see `ControlRequest`); its answer goes back as one line. */
  control?: (req: ControlRequest) => Promise<ControlAnswer>;
  /**
   * Attaches a watcher of the node's events (`{"wats":"watch"}`); returns the
   * function that detaches it. Absent: watch requests are refused.
   */
  watch?: (send: (event: unknown) => void) => () => void;
  /** Told the number of open MCP sessions each time one opens or closes. */
  onSessions?: (open: number) => void;
  /**
   * Decides who a hello speaks for instead of `service.authenticate` (a run's own socket
   * accepts only that run's token: src/node/run_socket.ts); throws to refuse.
   */
  authenticate?: (hello: Hello) => SessionIdentity;
}

/**
 * What a control handler answers: the message, and optionally what to do once
 * the answer is written (a node that stops must not close the socket before
 * the asker has read why).
 */
export type ControlAnswer = string | { message: string; afterAnswer: () => void };

/** A running socket server. */
export interface McpSocketServer {
  /** Stops listening, ends every session and removes the socket file. */
  close(): Promise<void>;
  /** How many MCP sessions are open now. */
  sessions(): number;
}

/**
 * Listens on `opts.path` and serves one MCP session per connection. A stale
 * socket file (nobody answers on it) is replaced; a live one is a `BusyError`.
 */
export async function serveMcpSocket(opts: ServeMcpSocketOptions): Promise<McpSocketServer> {
  const log: McpLog = opts.log ?? (() => {});
  const helloTimeout = opts.helloTimeoutMs ?? HELLO_TIMEOUT_MS;
  const authenticate = opts.authenticate ?? ((hello: Hello) => opts.service.authenticate(hello));
  await clearStaleSocket(opts.path);
  const listener = Deno.listen({ transport: "unix", path: opts.path });
  // The socket speaks for this user's profiles: nobody else may connect.
  await Deno.chmod(opts.path, 0o600);

  const conns = new Set<Deno.Conn>();
  const sessions = new Map<ConnTransport, McpServer>();
  let closing: Promise<void> | null = null;

  async function handle(conn: Deno.Conn): Promise<void> {
    conns.add(conn);
    const reader = new LineReader(conn);
    let identity: SessionIdentity;
    try {
      const hello = await withTimeout(reader.readLine(), helloTimeout);
      if (closing) throw new WatsError("mcp.closing", "the node is shutting down; try again");
      const first = decodeFirstLine(hello);
      if ("refused" in first) throw new WatsError(first.refused, first.message);
      if ("watch" in first) {
        if (!opts.watch) throw new WatsError("mcp.no_control", "this node serves no event watch");
        await serveWatch(conn, reader, opts.watch);
        conns.delete(conn);
        return;
      }
      if ("control" in first) {
        const control = first.control;
        if (!opts.control) {
          throw new WatsError("mcp.no_control", "this node takes no control requests");
        }
        const answer = await opts.control(control);
        const message = typeof answer === "string" ? answer : answer.message;
        await writeLine(conn, { wats: "done", message }).catch(() => {});
        closeQuietly(conn);
        conns.delete(conn);
        if (typeof answer !== "string") answer.afterAnswer();
        return;
      }
      const parsed = first.hello;
      identity = authenticate(parsed);
      if (parsed.data === true && !identity.runner) identity = { ...identity, data: true };
      await writeLine(conn, { wats: "ready", profile: identity.profile });
    } catch (err) {
      const message = err instanceof WatsError
        ? err.message
        : err instanceof TimeoutError
        ? 'no hello line arrived in time: send {"wats":"hello","profile":…} first'
        : "the node could not start this session";
      log(err instanceof WatsError ? "info" : "debug", "mcp connection refused", {
        reason: errorMessage(err),
      });
      await writeLine(conn, { wats: "error", message }).catch(() => {});
      closeQuietly(conn);
      conns.delete(conn);
      return;
    }
    conns.delete(conn);
    const transport = new ConnTransport(conn, reader);
    const server = createMcpServer(opts.service, identity, { log });
    transport.onclose = () => {
      if (!sessions.delete(transport)) return;
      opts.onSessions?.(sessions.size);
      log("debug", "mcp session closed", { profile: identity.profile });
    };
    server.server.onerror = (err: Error) =>
      log("debug", "mcp session error", { error: err.message });
    sessions.set(transport, server);
    opts.onSessions?.(sessions.size);
    log("info", "mcp session opened", {
      profile: identity.profile,
      runner: identity.runner,
      ...(identity.runId ? { run: identity.runId } : {}),
    });
    try {
      await server.connect(transport);
    } catch (err) {
      log("debug", "mcp session failed to start", { error: String(err) });
      await transport.close();
    }
    // Closed while we were connecting: close() may have missed this session.
    if (closing) await server.close().catch(() => {});
  }

  const acceptLoop = (async () => {
    while (!closing) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch (err) {
        if (closing) break;
        if (err instanceof Deno.errors.BadResource) break;
        log("warn", "mcp accept failed", { error: String(err) });
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      handle(conn).catch((err) => log("debug", "mcp connection failed", { error: String(err) }));
    }
  })();

  const close = (): Promise<void> => {
    closing ??= (async () => {
      closeQuietly(listener);
      for (const c of conns) closeQuietly(c);
      conns.clear();
      await Promise.all([...sessions.values()].map((s) => s.close().catch(() => {})));
      sessions.clear();
      await acceptLoop;
      await removeSocket(opts.path);
    })();
    return closing;
  };

  if (opts.signal) {
    if (opts.signal.aborted) await close();
    else opts.signal.addEventListener("abort", () => void close(), { once: true });
  }

  return { close, sessions: () => sessions.size };
}

/** Events a watcher may have waiting to be written; a reader further behind is cut off. */
export const WATCH_BACKLOG = 256;

/**
 * Writes each event as one JSON line until the client hangs up (or falls
 * {@linkcode WATCH_BACKLOG} events behind: then it is closed, and reconnects).
 */
async function serveWatch(
  conn: Deno.Conn,
  reader: LineReader,
  watch: (send: (event: unknown) => void) => () => void,
): Promise<void> {
  await writeLine(conn, { wats: "ready" });
  let waiting = 0;
  let chain = Promise.resolve();
  const stop = watch((event) => {
    if (waiting >= WATCH_BACKLOG) {
      closeQuietly(conn);
      return;
    }
    waiting++;
    chain = chain.then(() => writeLine(conn, event)).catch(() => closeQuietly(conn))
      .finally(() => waiting--);
  });
  try {
    // The client sends nothing more; its end of the stream is the hang-up.
    while ((await reader.readLine().catch(() => null)) !== null) { /* ignore */ }
  } finally {
    stop();
    closeQuietly(conn);
  }
}

/**
 * Makes `path` free to listen on: removes a socket nobody answers on, refuses a
 * live one and anything that is not a socket.
 */
async function clearStaleSocket(path: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  if (!info.isSocket) {
    throw new BusyError(
      "mcp.socket_path",
      `${path} exists and is not a socket: move it away, then start the node again`,
    );
  }
  try {
    const probe = await Deno.connect({ transport: "unix", path });
    probe.close();
  } catch {
    await Deno.remove(path).catch(() => {});
    return;
  }
  throw new BusyError(
    "mcp.socket_busy",
    `another node already serves ${path}: stop it first, or use another --data-dir`,
  );
}

async function removeSocket(path: string): Promise<void> {
  try {
    const info = await Deno.lstat(path);
    if (info.isSocket) await Deno.remove(path);
  } catch {
    // Gone already.
  }
}

async function writeLine(conn: Deno.Conn, value: unknown): Promise<void> {
  await writeAll(conn, new TextEncoder().encode(JSON.stringify(value) + "\n"));
}

function closeQuietly(c: { close(): void }): void {
  try {
    c.close();
  } catch {
    // Already closed.
  }
}

class TimeoutError extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError("hello timeout")), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}
