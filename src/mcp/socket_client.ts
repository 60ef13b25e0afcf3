/**
 * A CLI command's MCP session with the running daemon: connect to mcp.sock,
 * say hello as a profile, then speak MCP. `wats status` and `wats agent
 * approve/reject` use it, so the daemon stays the only writer of its files.
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ConnTransport, LineReader } from "./conn_transport.ts";
import { writeAll } from "../io/write_all.ts";
import { BusyError, WatsError } from "../errors.ts";
import { type ControlRequest, type Hello, sessionLine } from "../contracts/session.ts";
import { VERSION } from "../version.ts";

/** An open session; `close` ends it. */
export interface DaemonSession {
  client: Client;
  close(): Promise<void>;
}

/** Thrown when no daemon answers on the socket. */
export class NoDaemonError extends BusyError {
  constructor(socket: string, cause?: unknown) {
    super(
      "daemon.absent",
      `no wats daemon answers on ${socket}: start it with \`wats\` (or \`wats node\`)`,
      { cause },
    );
  }
}

/**
 * Opens an MCP session with the daemon as `profile`. With `data`, tool results
 * also carry `structuredContent` (`wats ui` reads it; see {@linkcode callData}).
 * Requires the socket grants (net `unix:<path>`, read, write).
 */
export async function connectDaemon(
  socket: string,
  profile?: string,
  opts: { data?: boolean } = {},
): Promise<DaemonSession> {
  const conn = await dialDaemon(socket);
  const reader = new LineReader(conn);
  const hello: Hello = {
    wats: "hello",
    ...(profile ? { profile } : {}),
    ...(opts.data ? { data: true } : {}),
  };
  await writeAll(conn, new TextEncoder().encode(sessionLine(hello)));
  const answer = await reader.readLine();
  const parsed = answer ? JSON.parse(answer) : null;
  if (parsed?.wats !== "ready") {
    conn.close();
    throw new WatsError(
      "daemon.refused",
      `the daemon refused the session: ${parsed?.message ?? "no answer"}`,
    );
  }
  const client = new Client({ name: "wats-cli", version: VERSION });
  await client.connect(new ConnTransport(conn, reader));
  return { client, close: () => client.close() };
}

/** Calls a tool and returns its text; a tool error becomes a `WatsError`. */
export async function callText(
  session: DaemonSession,
  name: string,
  args: Record<string, unknown> = {},
): Promise<string> {
  const r = await session.client.callTool({ name, arguments: args });
  const text = (r.content as Array<{ type: string; text?: string }>)
    .filter((c) => c.type === "text").map((c) => c.text ?? "").join("\n");
  if (r.isError) throw new WatsError(`tool.${name}`, text);
  return text;
}

/**
 * Calls a tool of a session opened with `data` and returns its structured
 * result; a tool error becomes a `WatsError`.
 */
export async function callData<T>(
  session: DaemonSession,
  name: string,
  args: Record<string, unknown> = {},
): Promise<T> {
  const r = await session.client.callTool({ name, arguments: args });
  if (r.isError || r.structuredContent === undefined) {
    const text = (r.content as Array<{ type: string; text?: string }>)
      .filter((c) => c.type === "text").map((c) => c.text ?? "").join("\n");
    throw new WatsError(`tool.${name}`, r.isError ? text : `${name} returned no data: ${text}`);
  }
  return r.structuredContent as T;
}

/**
 * Sends one control line (`wats resume`, `wats guardian halt`) and returns the
 * daemon's answer. Requires the socket grants.
 */
export async function sendControl(socket: string, req: ControlRequest): Promise<string> {
  const conn = await dialDaemon(socket);
  try {
    await writeAll(conn, new TextEncoder().encode(sessionLine(req)));
    const line = await new LineReader(conn).readLine();
    const answer = line ? JSON.parse(line) : null;
    if (answer?.wats !== "done") {
      throw new WatsError(
        "daemon.refused",
        `the daemon refused: ${answer?.message ?? "no answer"}`,
      );
    }
    return answer.message as string;
  } finally {
    try {
      conn.close();
    } catch { /* closed by the daemon */ }
  }
}

/**
 * Watches the daemon's events (`{"wats":"watch"}`): calls `onReady` once the
 * daemon has attached the watch, then `onEvent` with each event until the
 * daemon hangs up or `signal` aborts, then resolves. Throws
 * `NoDaemonError` when no daemon answers. Requires the socket grants.
 */
export async function watchDaemon(
  socket: string,
  onEvent: (event: Record<string, unknown>) => void,
  signal?: AbortSignal,
  onReady?: () => void,
): Promise<void> {
  const conn = await dialDaemon(socket);
  const hangUp = () => {
    try {
      conn.close();
    } catch { /* closed already */ }
  };
  signal?.addEventListener("abort", hangUp, { once: true });
  try {
    await writeAll(conn, new TextEncoder().encode(sessionLine({ wats: "watch" })));
    const reader = new LineReader(conn);
    const ready = JSON.parse((await reader.readLine()) ?? "null");
    if (ready?.wats !== "ready") {
      throw new WatsError("daemon.refused", `the daemon refused: ${ready?.message ?? "no answer"}`);
    }
    onReady?.();
    while (true) {
      const line = await reader.readLine().catch(() => null);
      if (line === null) return;
      const event = JSON.parse(line);
      if (typeof event === "object" && event !== null) onEvent(event);
    }
  } finally {
    signal?.removeEventListener("abort", hangUp);
    hangUp();
  }
}

/** Connects to mcp.sock, or says how to start the daemon. */
async function dialDaemon(socket: string): Promise<Deno.UnixConn> {
  try {
    return await Deno.connect({ transport: "unix", path: socket });
  } catch (err) {
    throw new NoDaemonError(socket, err);
  }
}
