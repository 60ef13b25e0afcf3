/**
 * A node that `wats mcp` started in the background serves MCP sessions only;
 * nobody sees it and nobody stops it. It stops on its own once no session has
 * been open for {@linkcode MCP_NODE_IDLE_MS}, so a host's health check (e.g.
 * `claude mcp get`) does not leave a node behind for good.
 *
 * Sessions come two ways, each counted on its own: `mcp.sock` (the `wats mcp`
 * bridges) and MCP over HTTP (`mcp.listen`). A node serving only an HTTP client
 * is as busy as one serving a bridge, and one way's last session ending must not
 * start the countdown while the other still has sessions open.
 *
 * @module
 */

/** How long a node started by `wats mcp` waits with no MCP session before it stops. */
export const MCP_NODE_IDLE_MS = 10 * 60_000;

import { systemTimers, type Timers } from "../runner/ports.ts";

/** The ways a session reaches the node: `mcp.sock`, or MCP over HTTP. */
export type SessionWay = "socket" | "http";

/** Watches the number of open sessions. */
export interface IdleWatch {
  /** Tells the watch how many sessions of one way (default: the socket's) are open now. */
  sessions(open: number, way?: SessionWay): void;
  /** A request was served: with no session open, the countdown starts again from now. */
  activity(): void;
  /** Stops watching; `onIdle` will not be called. */
  stop(): void;
}

/**
 * Calls `onIdle` once after `idleMs` with no session open. The count starts at
 * zero, so a node nobody connects to stops too.
 */
export function watchIdle(
  idleMs: number,
  onIdle: () => void,
  timers: Timers = systemTimers,
): IdleWatch {
  let timer: unknown;
  let stopped = false;
  const open = new Map<SessionWay, number>();
  const anyOpen = () => [...open.values()].some((n) => n > 0);
  const arm = () => {
    timer ??= timers.setTimer(idleMs, () => {
      timer = undefined;
      if (!stopped) {
        stopped = true;
        onIdle();
      }
    });
  };
  const disarm = () => {
    if (timer !== undefined) timers.clearTimer(timer);
    timer = undefined;
  };
  arm();
  return {
    sessions(count, way = "socket") {
      if (stopped) return;
      open.set(way, count);
      if (anyOpen()) disarm();
      else arm();
    },
    activity() {
      if (stopped || anyOpen()) return;
      disarm();
      arm();
    },
    stop() {
      stopped = true;
      disarm();
    },
  };
}
