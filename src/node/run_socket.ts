/**
 * A sandboxed heartbeat run's own socket (docs/decisions/run_socket.md): while the run lasts the
 * daemon listens on `<data>/agent/run.sock` (mode 0600), which the OS sandbox binds where the
 * run's `wats mcp` looks for `mcp.sock`. It serves that run's MCP session and nothing else: a
 * hello must carry the run's token and ask for no profile but the agent's; a control line and a
 * watch line are refused (it is given no control table: every op speaks for the person), as is a
 * hello without the token. The daemon's own `mcp.sock`, which speaks
 * for the person, is not in the sandbox at all. The socket is closed and its file removed when
 * the run ends; one a crashed daemon left is removed at the next start.
 *
 * One path, not one per run id: Deno grants a unix socket by its exact path (a folder grant does
 * not cover the sockets in it), and the runner runs one run at a time.
 *
 * Requires `net` on `unix:<path>` and read and write on `<path>`.
 *
 * @module
 */

import { PostError } from "../errors.ts";
import type { Hello, SessionIdentity } from "../contracts/session.ts";
import type { McpLog } from "../mcp/server.ts";
import type { NodeService } from "../mcp/service.ts";
import { type McpSocketServer, serveMcpSocket } from "../mcp/socket_server.ts";

/** What a run's socket serves. */
export interface RunSocketOptions {
  /** The socket path (`DataPaths.runSocket`). */
  path: string;
  service: NodeService;
  /** The agent profile: the one a runner session speaks as. */
  agentProfile: string;
  log?: McpLog;
}

/** The run a socket is made for. */
export interface RunOfSocket {
  id: string;
  token: string;
}

/**
 * Who a hello on a run's socket speaks for: the run's runner session when it carries the run's
 * token and asks for no other profile; anything else is refused.
 *
 * @throws {PostError} code `session.token`, saying what this socket serves.
 */
export function runSocketIdentity(
  hello: Hello,
  run: RunOfSocket,
  o: Pick<RunSocketOptions, "service" | "agentProfile">,
): SessionIdentity {
  if (hello.token === undefined || !sameToken(hello.token, run.token)) {
    throw new PostError(
      "session.token",
      "this socket serves one agent run and only under its run token; nothing else is answered here",
    );
  }
  if (hello.profile !== undefined && hello.profile !== o.agentProfile) {
    throw new PostError(
      "session.token",
      `this socket speaks only as the agent profile ${o.agentProfile}, never as ${hello.profile}`,
    );
  }
  const agent = o.service.authenticate({ wats: "hello", profile: o.agentProfile });
  return { profile: agent.profile, pubkey: agent.pubkey, runner: true, runId: run.id };
}

/** Listens on the run's socket; `close()` ends its session and removes the file. */
export async function serveRunSocket(
  o: RunSocketOptions,
  run: RunOfSocket,
): Promise<McpSocketServer> {
  return await serveMcpSocket({
    path: o.path,
    service: o.service,
    ...(o.log ? { log: o.log } : {}),
    // No control and no watch: those lines are refused (docs/decisions/run_socket.md).
    authenticate: (hello) => runSocketIdentity(hello, run, o),
  });
}

/**
 * Removes a run socket a crashed daemon left (nobody serves it: this daemon holds the data
 * directory's lock). Anything else at the path is left alone for `serveMcpSocket` to refuse.
 */
export async function removeStaleRunSocket(path: string): Promise<void> {
  try {
    if ((await Deno.lstat(path)).isSocket) await Deno.remove(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

/** Compares two tokens in time that does not depend on where they differ. */
function sameToken(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
