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
import { type EventSink, noEvents } from "../contracts/node_events.ts";
import { log, setupLogging } from "../log.ts";
import { runNode } from "../node/daemon.ts";
import { DAEMON_HELP, parseDaemonArgs } from "./daemon_args.ts";
import { acquireDaemonLock, type DaemonLock, lockHolder } from "../node/lock.ts";
import type { CommandContext } from "./context.ts";
import { writeAllSync } from "../io/write_all.ts";
import { jsonTerminalSafe } from "../io/terminal_text.ts";
import { NoDaemonError, sendControl } from "../mcp/socket_client.ts";
import { print, printErr } from "./output.ts";

/** How long a foreground `wats` waits for a background node it asked to stop. */
export const TAKEOVER_WAIT_MS = 15_000;

/** Runs the daemon until the context's signal aborts. */
export async function daemonCommand(ctx: CommandContext): Promise<number> {
  const args = parseDaemonArgs(ctx.argv);
  if (args.help) {
    print(DAEMON_HELP);
    return 0;
  }
  await setupLogging(args.logLevel, printErr);
  const logger = log("node");
  const events: EventSink = ctx.words[0] === "node" ? jsonLinesSink() : noEvents;
  const resolved = await loadSettings(ctx.paths, ctx.env, args.flags, ctx.user);
  for (const w of resolved.warnings) logger.warn(w);
  const lock = await takeDaemonLock(args.startedByMcp, realLockPorts(ctx.paths));
  return await runNode({
    lock,
    paths: ctx.paths,
    settings: resolved.values,
    acp: resolved.acp,
    notify: resolved.notify,
    events,
    banner: printErr,
    env: ctx.env,
    ...(ctx.agentEnv ? { agentEnv: ctx.agentEnv } : {}),
    ...(ctx.droppedPath ? { droppedPath: ctx.droppedPath } : {}),
    user: ctx.user,
    os: ctx.os,
    self: ctx.self,
    cwd: ctx.cwd,
    startedByMcp: args.startedByMcp,
    idleStopMs: args.idleStopMs,
    ...(args.startedByTry ? { noPresence: true } : {}),
    signal: args.startedByTry ? AbortSignal.any([ctx.signal, stdinClosed()]) : ctx.signal,
  });
}

/** How often to ask again while the holder has the lock but no socket yet (it is starting). */
const ASK_AGAIN_MS = 100;

/** What taking the lock touches; injected so tests can replace it. */
export interface LockPorts {
  /** Takes the lock, waiting up to `waitMs` for it; throws `BusyError` "daemon.running". */
  acquire(waitMs: number): Promise<DaemonLock>;
  /** The pid in the lock file. */
  holder(): number | undefined;
  /** Sends the `takeover` control line; throws `NoDaemonError` when nothing answers. */
  askToStop(): Promise<void>;
  sleep(ms: number): Promise<void>;
  now(): number;
  /** Prints one line for the person who started the daemon. */
  say(line: string): void;
}

/**
 * Takes the daemon lock. When another node holds it, a foreground daemon asks
 * it over mcp.sock to make way: a node that `wats mcp` started in the
 * background agrees and stops, and this one waits for the lock and says so; any
 * other node refuses, and the start fails naming it. A holder that is still
 * starting (lock taken, socket not yet open) is asked again until it answers.
 * A node started by `wats mcp` never takes over.
 */
export async function takeDaemonLock(startedByMcp: boolean, ports: LockPorts): Promise<DaemonLock> {
  const deadline = ports.now() + TAKEOVER_WAIT_MS;
  while (true) {
    try {
      return await ports.acquire(0);
    } catch (busy) {
      if (startedByMcp || !(busy instanceof BusyError) || busy.code !== "daemon.running") {
        throw busy;
      }
      const holder = ports.holder();
      try {
        await ports.askToStop();
      } catch (err) {
        if (err instanceof NoDaemonError && ports.now() < deadline) {
          await ports.sleep(ASK_AGAIN_MS);
          continue;
        }
        // A foreground node refused, or the holder never answered: the lock
        // error names it and says what to do.
        throw busy;
      }
      const lock = await ports.acquire(TAKEOVER_WAIT_MS);
      ports.say(
        `wats: took over from the background node that \`wats mcp\` started${
          holder ? ` (pid ${holder})` : ""
        }; it has stopped`,
      );
      return lock;
    }
  }
}

/** The real lock file, socket and clock. Requires the lock and socket grants. */
function realLockPorts(paths: DataPaths): LockPorts {
  return {
    acquire: (waitMs) => acquireDaemonLock(paths.lock, Deno.pid, { waitMs }),
    holder: () => lockHolder(paths.lock),
    askToStop: async () => {
      await sendControl(paths.socket, { wats: "control", op: "takeover" });
    },
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    now: () => performance.now(),
    say: (line) => printErr(line),
  };
}

/** A sink that writes JSON lines to stdout with a timestamp: `wats node`. */
export function jsonLinesSink(now: () => number = Date.now): EventSink {
  const enc = new TextEncoder();
  return (e) => {
    writeAllSync(
      Deno.stdout,
      enc.encode(
        jsonTerminalSafe(JSON.stringify({ ts: new Date(now()).toISOString(), ...e })) + "\n",
      ),
    );
  };
}

/**
 * Aborts when stdin reaches its end: the process that started this node and holds the
 * pipe's other end is gone, however it ended (the kernel closes a killed process's pipes).
 */
function stdinClosed(): AbortSignal {
  const closed = new AbortController();
  (async () => {
    const buf = new Uint8Array(64);
    while ((await Deno.stdin.read(buf)) !== null) { /* nothing is sent: only the end counts */ }
  })().catch(() => {}).finally(() => closed.abort("the process that started this node ended"));
  return closed.signal;
}
