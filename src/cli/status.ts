/**
 * `wats status`: the running node, its profiles, safety notices, halt state and
 * budget, as the daemon reports them. With no daemon it still shows the safety
 * notices (from the files) and exits 1.
 *
 * @module
 */

import { safetyNotices } from "../safety/notices.ts";
import type { CommandContext } from "./context.ts";
import { callText, connectDaemon, NoDaemonError } from "../mcp/socket_client.ts";
import {
  codexStateDir,
  readSelfCheck,
  selfCheckStatusLine,
} from "../runner/runtimes/codex/lock.ts";
import { readRunnerState } from "../runner/state_file.ts";
import { refuseArguments } from "./usage.ts";
import { print } from "./output.ts";

/** The usage text of `wats status`. */
export const STATUS_HELP = `Usage: wats status [--data-dir DIR]

Shows the running node: its id, profiles, data directory, each relay (connected,
bytes received since the node started), agent runtime, budget
spent and left, why agent runs wait (a reached budget, threads the loop detector
paused), the agents known from their presence (caps, state, last seen; stale
ones marked), your newest asks and what became of them (docs/asks.md), drafts
waiting for review, halt state, and any safety setting changed
since \`wats config ack\`. With Codex, the result of the lock's self-check
(docs/codex.md), also when no daemon runs. Exits 1 when no daemon runs.
`;

/** Runs `wats status`. */
export async function statusCommand(ctx: CommandContext): Promise<number> {
  if (ctx.argv.includes("--help") || ctx.argv.includes("-h")) {
    print(STATUS_HELP);
    return 0;
  }
  refuseArguments("wats status", ctx.argv);
  let session;
  try {
    session = await connectDaemon(ctx.paths.socket);
  } catch (err) {
    if (!(err instanceof NoDaemonError)) throw err;
    print(`no daemon runs on ${ctx.paths.dataDir}: start it with \`wats\``);
    for (const n of await safetyNotices(ctx.paths, ctx.env, ctx.user)) print(`! ${n}`);
    printCodexLock(ctx);
    return 1;
  }
  try {
    print(await callText(session, "status"));
    printCodexLock(ctx);
    return 0;
  } finally {
    await session.close();
  }
}

/** The Codex lock's self-check result, when the daemon wrote one (docs/codex.md). */
function printCodexLock(ctx: CommandContext): void {
  // A node that last started with another runtime is not described by an
  // older Codex check; a check since that start (a refused Codex start leaves
  // the record of the previous runtime) still says why.
  const dir = codexStateDir(ctx.paths.agentDir);
  const state = readRunnerState(ctx.paths.agentDir);
  const check = readSelfCheck(dir);
  if (
    state !== undefined && state.runtime !== "codex" && check !== undefined &&
    Date.parse(check.checked_at) < Date.parse(state.started_at)
  ) return;
  const line = selfCheckStatusLine(dir);
  if (line !== undefined) print(line);
}
