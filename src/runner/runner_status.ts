/**
 * What the heartbeat runner reports of itself (scheduler.ts `status()`): the
 * state, the run in progress, the queue, the loop pauses, the budget and the
 * newest skipped wakes; and the line a run's end is logged with. `wats status`,
 * the MCP status tool and the banner read it.
 *
 * @module
 */

import { formatElapsed } from "../duration.ts";
import { usd, usdOf } from "../money.ts";
import type { BudgetState } from "./budget.ts";
import type { SkipDecision } from "./skips.ts";
import type { Claim } from "./claims.ts";
import { RETRY_TRIES, type RetryNote } from "./retry.ts";
import type { NodeStatus } from "../contracts/views.ts";
import type { RunIndexEntry, RunTrigger } from "../contracts/runs.ts";

/** The run in progress. */
export interface CurrentRun {
  id: string;
  trigger: RunTrigger;
  startedAt: number;
  events: number;
  /** The thread (root id) the run is about, when its events and decisions are all of one. */
  thread?: string;
}

/** What `status()` reports. */
export interface RunnerStatus {
  state: "stopped" | "idle" | "running" | "paused" | "halted";
  /** Why runs are paused (budget) or halted. */
  reason?: string;
  /** When a budget pause ends. */
  resumesAt?: number;
  current?: CurrentRun;
  /** Queued events, paused threads' included. */
  queued: number;
  /** Threads the loop detector holds, with why. */
  pausedThreads: Array<{ thread: string; reason: string }>;
  /** Asks dropped from the queue for another author's claim, oldest first (claims.ts). */
  claimed: Array<{ ask: string; claim: Claim }>;
  /** Feedback posts waiting for the next run. */
  feedback: number;
  /** The next deadline the runner waits for, if any. */
  nextAt?: number;
  /** Until when `agent.max_runs_per_hour` holds the queued events back, when it does. */
  capUntil?: number;
  budget: BudgetState;
  /** The last run that ended, from the index. */
  lastRun?: RunIndexEntry;
  /** The newest posts a setting kept from waking the agent, oldest first (src/runner/skips.ts). */
  skipped: SkipDecision[];
  /** Events and decisions runs that could not act gave back, soonest next try first (retry.ts). */
  retrying: RetryNote[];
  /** The newest events and decisions given up after their tries, oldest first. */
  gaveUp: RetryNote[];
}

/** What the state of `status()` is decided from. */
export interface StatusOf {
  started: boolean;
  halted?: string;
  current?: CurrentRun;
}

/** The runner's state, from its lifecycle, the run in progress and the budget. Pure. */
export function statusOf(
  s: StatusOf,
  base: Omit<RunnerStatus, "state" | "reason" | "resumesAt" | "current">,
): RunnerStatus {
  if (!s.started) return { state: "stopped", ...base };
  if (s.halted !== undefined) return { state: "halted", reason: s.halted, ...base };
  if (s.current) {
    const { id, trigger, startedAt, events, thread } = s.current;
    return {
      state: "running",
      current: { id, trigger, startedAt, events, ...(thread ? { thread } : {}) },
      ...base,
    };
  }
  const blocked = base.budget.blocked;
  if (blocked) {
    return { state: "paused", reason: blocked.reason, resumesAt: blocked.resetsAt, ...base };
  }
  return { state: "idle", ...base };
}

/** The log line of a run that ended, with the spend of its day and month after it. */
export function endedLine(entry: RunIndexEntry, b: BudgetState): string {
  const cost = entry.cost_usd !== undefined ? usd(entry.cost_usd) : "no cost reported";
  const line = `run ${entry.id} ended: ${entry.status} in ${formatElapsed(entry.duration_ms)}, ` +
    `${entry.turns ?? "?"} turn(s), ${cost}; today ${usdOf(b.usdToday, b.limits.usdPerDay)}, ` +
    `month ${usdOf(b.usdMonth, b.limits.usdPerMonth)}`;
  return entry.status === "ok" ? line : `${line}: ${entry.error ?? ""}`;
}

/** The retries and give-ups of `status()` as `wats status` and the dashboard show them, at `now`. */
export function retryViews(
  st: Pick<RunnerStatus, "retrying" | "gaveUp">,
  now: number,
): Pick<NonNullable<NodeStatus["pauses"]>, "retrying" | "gaveUp"> {
  const view = (n: RetryNote) => ({ ...n, of: RETRY_TRIES });
  return {
    ...(st.retrying.length > 0
      ? { retrying: st.retrying.map((n) => ({ ...view(n), inMs: Math.max(0, n.at - now) })) }
      : {}),
    ...(st.gaveUp.length > 0 ? { gaveUp: st.gaveUp.map(view) } : {}),
  };
}
