/**
 * A node that `wats mcp` started in the background serves MCP sessions only;
 * nobody sees it and nobody stops it. It stops on its own once no session has
 * been open for {@linkcode MCP_NODE_IDLE_MS}, so a host's health check (e.g.
 * `claude mcp get`) does not leave a node behind for good.
 *
 * @module
 */

/** How long a node started by `wats mcp` waits with no MCP session before it stops. */
export const MCP_NODE_IDLE_MS = 10 * 60_000;

import { systemTimers, type Timers } from "../runner/ports.ts";

/** Watches the number of open sessions. */
export interface IdleWatch {
  /** Tells the watch how many sessions are open now. */
  sessions(open: number): void;
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
    sessions(open) {
      if (stopped) return;
      if (open > 0) disarm();
      else arm();
    },
    stop() {
      stopped = true;
      disarm();
    },
  };
}
