/**
 * The daemon command: `wats` and `wats node`. It reads the flags and settings,
 * takes the data directory's lock (taking over from a node that `wats mcp`
 * started in the background), picks where events go, and runs the node
 * (src/node/daemon.ts) until SIGINT or SIGTERM. Stopping is not an error: exit 0.
 *
 * @module
 */

import type { DataPaths } from "../config/paths.ts";
import { loadSettings } from "../config/settings.ts";
import { BusyError } from "../errors.ts";
import { type EventSink, noEvents } from "../events.ts";
import { log, setupLogging } from "../log.ts";
import { runNode } from "../node/daemon.ts";
import { DAEMON_HELP, parseDaemonArgs } from "../node/daemon_args.ts";
import { acquireDaemonLock, type DaemonLock, lockHolder } from "../node/lock.ts";
import type { CommandContext } from "./context.ts";
import { writeAllSync } from "./io.ts";
import { sendControl } from "./socket_client.ts";

/** How long a foreground `wats` waits for a background node it asked to stop. */
export const TAKEOVER_WAIT_MS = 15_000;

/** Runs the daemon until the context's signal aborts. */
export async function daemonCommand(ctx: CommandContext): Promise<number> {
  const args = parseDaemonArgs(ctx.argv);
  if (args.help) {
    console.log(DAEMON_HELP);
    return 0;
  }
  await setupLogging(args.logLevel);
  const logger = log("node");
  const events: EventSink = ctx.words[0] === "node" ? jsonLinesSink() : noEvents;
  const resolved = await loadSettings(ctx.paths, ctx.env, args.flags, ctx.user);
  for (const w of resolved.warnings) logger.warn(w);
  const lock = await takeLock(ctx.paths, args.startedByMcp);
  return await runNode({
    lock,
    paths: ctx.paths,
    settings: resolved.values,
    events,
    env: ctx.env,
    user: ctx.user,
    os: ctx.os,
    self: ctx.self,
    cwd: ctx.cwd,
    startedByMcp: args.startedByMcp,
    idleStopMs: args.idleStopMs,
    signal: ctx.signal,
  });
}

/**
 * Takes the daemon lock. When another node holds it, a foreground daemon asks
 * it over mcp.sock to make way: a node that `wats mcp` started in the
 * background agrees and stops; any other refuses, and the start fails naming
 * it. A node started by `wats mcp` never takes over. Requires the lock and
 * socket grants.
 */
async function takeLock(paths: DataPaths, startedByMcp: boolean): Promise<DaemonLock> {
  try {
    return await acquireDaemonLock(paths.lock, Deno.pid);
  } catch (busy) {
    if (startedByMcp || !(busy instanceof BusyError) || busy.code !== "daemon.running") throw busy;
    const holder = lockHolder(paths.lock);
    try {
      await sendControl(paths.socket, { wats: "control", op: "takeover" });
    } catch {
      // A foreground node refused, or the holder does not answer (yet): the
      // lock error says what to do.
      throw busy;
    }
    const lock = await acquireDaemonLock(paths.lock, Deno.pid, { waitMs: TAKEOVER_WAIT_MS });
    console.error(
      `wats: took over from the background node that \`wats mcp\` started${
        holder ? ` (pid ${holder})` : ""
      }; it has stopped`,
    );
    return lock;
  }
}

/** A sink that writes JSON lines to stdout with a timestamp: `wats node`. */
export function jsonLinesSink(now: () => number = Date.now): EventSink {
  const enc = new TextEncoder();
  return (e) => {
    writeAllSync(
      Deno.stdout,
      enc.encode(JSON.stringify({ ts: new Date(now()).toISOString(), ...e }) + "\n"),
    );
  };
}
