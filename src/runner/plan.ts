/**
 * When the heartbeat runner runs next, and with what (docs/decisions/runner.md):
 * the debounce of `agent.every`, the heartbeat, the hourly cap and the budget
 * pause, decided from plain data. No clock, no timers, no store: the runner
 * (scheduler.ts) gathers the state, asks, and does what the plan says.
 *
 * @module
 */

import { HOUR_MS } from "../duration.ts";
import type { RunTrigger } from "../contracts/runs.ts";

/** What the runner knows when it asks what comes next. */
export interface PlanState {
  now: number;
  /** A reached budget, if any (budget.ts). */
  blocked?: { reason: string; resetsAt: number };
  /** Queued events whose thread the loop detector does not hold. */
  runnable: number;
  /** Decisions on parked requests waiting to wake the agent. */
  decided: number;
  /** When the debounce window of the queued events ends. */
  debounceAt?: number;
  /** When the next heartbeat run is due. */
  heartbeatAt?: number;
  /** Until when the hourly cap holds queued events and decisions. */
  capUntil?: number;
  /** When the runs of the last hour started. */
  runStarts: readonly number[];
  maxRunsPerHour: number;
  /** `agent.heartbeat` (ms). */
  heartbeatMs: number;
  /**
   * True once the loop detector was asked again about the queued threads: the
   * agent may have posted since they were queued, so a deadline is only
   * acted on after that check.
   */
  checked: boolean;
}

/** What the runner does next. */
export type Plan =
  & (
    /** A budget is reached: nothing runs until it resets. */
    | { do: "pause"; until: number; reason: string }
    /** Nothing to wait for: no timer. */
    | { do: "idle" }
    /** The next deadline. */
    | { do: "wait"; until: number }
    /** A deadline has come: ask the loop detector again, then plan again with `checked`. */
    | { do: "check" }
    /**
     * The hourly cap skips a due run: queued events and decisions wait
     * `capUntil`, a skipped heartbeat comes again at `heartbeatAt`.
     */
    | { do: "skip"; message: string; capUntil?: number; heartbeatAt?: number }
    /** Start a run now. */
    | { do: "run"; trigger: RunTrigger }
  )
  & {
    /** The debounce window closed with nothing runnable left: the next event opens a new one. */
    debounceEnded?: true;
  };

/** Decides what the runner does next, given its state. Pure. */
export function planRun(s: PlanState): Plan {
  const { now } = s;
  if (s.blocked) return { do: "pause", until: s.blocked.resetsAt, reason: s.blocked.reason };
  const ended = s.checked && s.runnable === 0 && s.debounceAt !== undefined;
  const debounceAt = ended ? undefined : s.debounceAt;
  const mark = ended ? { debounceEnded: true as const } : {};
  const cap = s.capUntil ?? -Infinity;
  const deadlines: number[] = [];
  if (debounceAt !== undefined && s.runnable > 0) deadlines.push(Math.max(debounceAt, cap));
  if (s.heartbeatAt !== undefined) deadlines.push(s.heartbeatAt);
  if (s.decided > 0) deadlines.push(Math.max(now, cap));
  const next = Math.min(...deadlines.filter(Number.isFinite));
  if (!Number.isFinite(next)) return { do: "idle", ...mark };
  if (next > now) return { do: "wait", until: next, ...mark };
  if (!s.checked) return { do: "check" };

  // A deadline has come, so at least one of these is due.
  const eventsDue = s.runnable > 0 && debounceAt !== undefined && debounceAt <= now && cap <= now;
  const heartbeatDue = s.heartbeatAt !== undefined && s.heartbeatAt <= now;
  const decidedDue = s.decided > 0 && cap <= now;
  const max = s.maxRunsPerHour;
  const inHour = s.runStarts.filter((t) => now - t < HOUR_MS);
  if (inHour.length >= max) {
    const release = inHour.length > 0 ? Math.min(...inHour) + HOUR_MS : Infinity;
    const what = eventsDue
      ? `${s.runnable} queued event(s) wait`
      : decidedDue
      ? "permission decisions wait"
      : "heartbeat skipped";
    return {
      do: "skip",
      message: `run skipped: hourly cap (agent.max_runs_per_hour = ${max}); ${what}` +
        (Number.isFinite(release) ? ` until ${new Date(release).toISOString()}` : ""),
      ...(eventsDue || decidedDue ? { capUntil: release } : {}),
      ...(heartbeatDue ? { heartbeatAt: now + s.heartbeatMs } : {}),
      ...mark,
    };
  }
  return { do: "run", trigger: eventsDue || decidedDue ? "events" : "heartbeat", ...mark };
}

/** A queued event, as far as choosing a run's share goes. */
export interface Takeable {
  post: { seq: number };
  thread: string;
}

/** A decision on a parked request, as far as choosing a run's share goes. */
export interface TakeableDecision {
  /** The thread of the run whose call parked, when it had one. */
  thread?: string;
}

/**
 * What a run takes: all runnable events and decisions, or with `threadPerRun`
 * those of one thread (the oldest event's, else the first decision's) and the
 * decisions of no thread. The run's thread is the one thread of what it took,
 * if there is one. Pure.
 */
export function takeForRun<E extends Takeable, D extends TakeableDecision>(
  runnable: readonly E[],
  decided: readonly D[],
  threadPerRun: boolean,
): { events: E[]; decided: D[]; thread?: string } {
  let events = [...runnable];
  let taken = [...decided];
  if (threadPerRun) {
    const oldest = runnable.reduce<E | undefined>(
      (a, q) => a === undefined || q.post.seq < a.post.seq ? q : a,
      undefined,
    );
    const thread = oldest?.thread ?? decided.find((d) => d.thread)?.thread;
    events = runnable.filter((q) => q.thread === thread);
    taken = decided.filter((d) => d.thread === undefined || d.thread === thread);
  }
  const threads = new Set([
    ...events.map((q) => q.thread),
    ...taken.flatMap((d) => d.thread ?? []),
  ]);
  const thread = threads.size === 1 ? [...threads][0] : undefined;
  return { events, decided: taken, ...(thread !== undefined ? { thread } : {}) };
}
