/**
 * Runs that ended before the agent could act (docs/runner.md, "A run that could not act";
 * docs/decisions/runner.md, "Retries"): a run whose CLI did not start, exited at once, came up
 * without its wats tools, or whose model API failed before any tool call never let the agent
 * answer, so its events are owed, not done. They are given back with a backoff — 5 s, 30 s,
 * 2 min, 8 min — and given up after the fifth such run in a row, marked so in the runs index, the log
 * and `wats status`. Such a run is not a full run for `agent.max_runs_per_hour` (its cost, when
 * it reports one, still counts against the budgets).
 *
 * `ActWatch` decides from the run's events whether the agent acted; `Retries` holds what waits
 * for its next try, how many tries each event has had, and the newest give-ups.
 *
 * @module
 */

import type { RunEvent } from "./harness.ts";
import type { RunStatus } from "../contracts/runs.ts";

/**
 * The wait before each try after the first: a run that could not act is tried again this much
 * later. The first wait is short: most such runs met a passing hitch (a bridge slow to start on a
 * loaded machine, a burst of 529s), and its asker is waiting; the later ones back off for an
 * outage or a broken install (docs/decisions/runner.md, "Retries").
 */
export const RETRY_BACKOFF_MS: readonly number[] = [5_000, 30_000, 120_000, 480_000];

/** How many runs in a row may end before acting before an event is given up. */
export const RETRY_TRIES = RETRY_BACKOFF_MS.length + 1;

/** How many give-ups `wats status` shows (the newest). */
export const GAVE_UP_KEPT = 10;

/** The MCP server name of wats's own tools in a run's configuration. */
const WATS_SERVER = "wats";

/**
 * Watches a run's events for a sign that the agent could act. It could when its wats tools
 * were connected and a tool call of any kind either returned without an error or never returned
 * (the run ended inside it: it may have done its work). A tool call that failed is not acting,
 * nor is text: neither reaches anyone.
 */
export class ActWatch {
  #acted = false;
  #noTools = false;
  readonly #open = new Set<string>();

  /** One event of the run, as the harness's parser reads it. */
  see(ev: RunEvent): void {
    switch (ev.type) {
      case "init":
        this.#noTools ||= ev.mcpServers.some((s) =>
          s.name === WATS_SERVER && s.status !== "connected"
        );
        return;
      case "tool_call":
        if (ev.id === undefined) this.#acted = true;
        else this.#open.add(ev.id);
        return;
      case "tool_result":
        if (ev.id !== undefined && !this.#open.delete(ev.id)) return;
        if (!ev.isError) this.#acted = true;
        return;
      default:
        return;
    }
  }

  /**
   * True when a run that ended as `status` ended before the agent could act: only a failed run
   * (`error`) can be; a run that completed, timed out or was stopped is judged as it is. A run
   * without its wats tools could not answer, whatever built-in tools it used.
   */
  endedBeforeActing(status: RunStatus): boolean {
    if (status !== "error") return false;
    return this.#noTools || (!this.#acted && this.#open.size === 0);
  }
}

/** An event a run that could not act gives back, as far as retries go. */
export interface Retryable {
  post: { id: string };
  /** Why it wakes the agent (`new ask 1a2b3c…`): how status names it. */
  reason: string;
}

/** A person's decision on a parked request, waiting to wake the agent (docs/acp.md). */
export interface Decided {
  reason: string;
  /** The thread of the run whose call parked, when it had one. */
  thread?: string;
  /** Runs in a row that were given it and ended before acting. */
  tries?: number;
}

/** One event or decision that waits for its next try, or was given up, as status shows it. */
export interface RetryNote {
  /** What it is: the event's reason (`new ask 1a2b3c…`) or the decision's. */
  what: string;
  /** The post, when it is one. */
  post?: string;
  /** Runs so far that ended before acting. */
  tries: number;
  /** When it is tried again, or when it was given up (ms). */
  at: number;
  /** Why the last of them ended. */
  error: string;
}

/** What the runs index records of a run that ended before acting (`retry` of an index line). */
export interface RetryMark {
  /** Its events' highest try, counting this run (1: the first run they were given to). */
  try: number;
  /** `RETRY_TRIES`. */
  of: number;
  /** When what it gave back is tried again (ISO); absent when nothing is. */
  at?: string;
  /** How many of its events and decisions were given up. */
  gave_up?: number;
}

/** The saved form of one event's tries (`runner.pending`, key `retries`). */
export interface SavedTries {
  id: string;
  tries: number;
  /** When it is tried again (ms), while it waits. */
  at?: number;
  error?: string;
}

interface Waiting<E> {
  event: E;
  at: number;
  error: string;
}

/** What waits for its next try, each event's tries, and the newest give-ups. */
export class Retries<E extends Retryable> {
  /** Runs in a row that ended before acting, by event id (cleared when a run that acted had it). */
  readonly #tries = new Map<string, number>();
  readonly #waiting = new Map<string, Waiting<E>>();
  #decided: Array<Waiting<Decided>> = [];
  #gaveUp: RetryNote[] = [];

  /** Restores saved tries: waiting events come back with `events`, others only count. */
  restore(saved: readonly SavedTries[], events: ReadonlyMap<string, E>, gaveUp: RetryNote[]): void {
    for (const s of saved) {
      this.#tries.set(s.id, s.tries);
      const e = events.get(s.id);
      if (s.at !== undefined && e !== undefined) {
        this.#waiting.set(s.id, { event: e, at: s.at, error: s.error ?? "" });
      }
    }
    this.#gaveUp = gaveUp.slice(-GAVE_UP_KEPT);
  }

  /**
   * A run that ended before acting at `now` gives back `events` (those the agent had not
   * answered) and `decided`: each waits its backoff, or is given up after `RETRY_TRIES` tries.
   * Returns what the runs index records, and what was given up (to log).
   */
  fail(
    events: readonly E[],
    decided: readonly Decided[],
    now: number,
    error: string,
  ): { mark: RetryMark; gaveUp: RetryNote[] } {
    let highest = 1;
    let next: number | undefined;
    const gaveUp: RetryNote[] = [];
    const take = (tries: number, what: string, post: string | undefined): number | undefined => {
      highest = Math.max(highest, tries);
      if (tries >= RETRY_TRIES) {
        gaveUp.push({ what, ...(post !== undefined ? { post } : {}), tries, at: now, error });
        return undefined;
      }
      const at = now + RETRY_BACKOFF_MS[tries - 1]!;
      next = next === undefined ? at : Math.min(next, at);
      return at;
    };
    for (const e of events) {
      const tries = (this.#tries.get(e.post.id) ?? 0) + 1;
      const at = take(tries, e.reason, e.post.id);
      if (at === undefined) this.#tries.delete(e.post.id);
      else {
        this.#tries.set(e.post.id, tries);
        this.#waiting.set(e.post.id, { event: e, at, error });
      }
    }
    for (const d of decided) {
      const tries = (d.tries ?? 0) + 1;
      const at = take(tries, d.reason, undefined);
      if (at !== undefined) this.#decided.push({ event: { ...d, tries }, at, error });
    }
    this.#gaveUp = [...this.#gaveUp, ...gaveUp].slice(-GAVE_UP_KEPT);
    const mark: RetryMark = {
      try: highest,
      of: RETRY_TRIES,
      ...(next !== undefined ? { at: new Date(next).toISOString() } : {}),
      ...(gaveUp.length > 0 ? { gave_up: gaveUp.length } : {}),
    };
    return { mark, gaveUp };
  }

  /** A run that acted (or completed) had these events: their tries start over. */
  done(ids: Iterable<string>): void {
    for (const id of ids) this.#tries.delete(id);
  }

  /** Takes what is due by `now`. */
  due(now: number): { events: E[]; decided: Decided[] } {
    const events: E[] = [];
    for (const [id, w] of this.#waiting) {
      if (w.at <= now) {
        this.#waiting.delete(id);
        events.push(w.event);
      }
    }
    const decided = this.#decided.filter((w) => w.at <= now).map((w) => w.event);
    this.#decided = this.#decided.filter((w) => w.at > now);
    return { events, decided };
  }

  /** The earliest next try, if anything waits. */
  nextAt(): number | undefined {
    const all = [...this.#waiting.values(), ...this.#decided].map((w) => w.at);
    return all.length > 0 ? Math.min(...all) : undefined;
  }

  /** What waits for its next try, soonest first. */
  waiting(): RetryNote[] {
    const notes = [
      ...[...this.#waiting.values()].map((w) => ({
        what: w.event.reason,
        post: w.event.post.id,
        tries: this.#tries.get(w.event.post.id) ?? 1,
        at: w.at,
        error: w.error,
      })),
      ...this.#decided.map((w) => ({
        what: w.event.reason,
        tries: w.event.tries ?? 1,
        at: w.at,
        error: w.error,
      })),
    ];
    return notes.sort((a, b) => a.at - b.at);
  }

  /** The newest events and decisions given up, oldest first. */
  gaveUp(): RetryNote[] {
    return [...this.#gaveUp];
  }

  /** What is saved across a restart: every event's tries, and when a waiting one goes again. */
  save(): { retries: SavedTries[]; gave_up: RetryNote[] } {
    const retries = [...this.#tries].map(([id, tries]) => {
      const w = this.#waiting.get(id);
      return { id, tries, ...(w ? { at: w.at, error: w.error } : {}) };
    });
    return { retries, gave_up: this.#gaveUp };
  }

  /** The ids of the events waiting for their next try. */
  waitingIds(): string[] {
    return [...this.#waiting.keys()];
  }
}

/** The log line of a run that ended before acting and gave its events back. */
export function retryLine(runId: string, error: string, mark: RetryMark): string {
  return `run ${runId} ended before the agent could act (${error}): what it was given goes ` +
    `again at ${mark.at} (try ${mark.try + 1} of ${mark.of}); not counted against ` +
    "agent.max_runs_per_hour";
}

/** The log line of an event or decision given up. */
export function gaveUpLine(runId: string, g: RetryNote): string {
  return `gave up on ${g.what} after ${g.tries} tries: each run ended before the agent could ` +
    `act (last: ${g.error}); it will not wake the agent again. See \`wats agent logs ${runId}\` ` +
    `and docs/runner.md, "A run that could not act"`;
}
