/**
 * The loop detector (docs/decisions/runner.md, addendum of 2026-10-18), to the letter.
 *
 * Before an event wakes the agent, read the newest events of its thread from the
 * store (root and replies, grafted replies left out, newest first by seq) and
 * count the turns taken in a row by the agent and one other author (the first
 * other author met going back). Consecutive events by one author are one turn;
 * the count stops at the first event by a third author. More than
 * `agent.loop_max_exchanges` turns (0: off) pauses the thread for the agent
 * until a third author posts in it. The state is the store itself, so a pause
 * survives a restart: this module only recomputes.
 *
 * @module
 */

import type { RunnerLog, RunnerPost, RunnerStore } from "./ports.ts";

/** What the count found. */
export interface TurnCount {
  /** Turns in a row by the agent and the other author. */
  turns: number;
  /** The other author, when one was met. */
  other?: string;
  /** True when the count stopped at a third author or at the thread's start. */
  complete: boolean;
}

/**
 * Counts alternating turns in `newestFirst` (a thread's events, newest first by
 * seq, grafted replies already left out). Stops early once `stopAbove` turns are
 * exceeded, since the answer cannot change after that.
 */
export function countTurns(
  newestFirst: readonly Pick<RunnerPost, "author">[],
  agentKey: string,
  stopAbove = Infinity,
): TurnCount {
  let other: string | undefined;
  let turns = 0;
  let last: string | undefined;
  for (const e of newestFirst) {
    if (e.author !== agentKey) {
      if (other === undefined) other = e.author;
      else if (e.author !== other) return { turns, other, complete: true };
    }
    if (e.author !== last) {
      turns++;
      last = e.author;
      if (turns > stopAbove) return { turns, other, complete: true };
    }
  }
  return { turns, other, complete: false };
}

/** The detector's verdict for one thread. */
export interface LoopVerdict {
  paused: boolean;
  turns: number;
  other?: string;
}

/**
 * Reads thread `rootId` from the store and decides whether it is paused for the
 * agent: more than `maxExchanges` turns (0: never paused). Reads more events
 * only while the count could still pass the limit.
 */
export function checkThread(
  store: Pick<RunnerStore, "threadNewest">,
  rootId: string,
  agentKey: string,
  maxExchanges: number,
): LoopVerdict {
  if (maxExchanges <= 0) return { paused: false, turns: 0 };
  let limit = Math.min(MAX_READ, Math.max(64, (maxExchanges + 1) * 4));
  for (;;) {
    const read = store.threadNewest(rootId, limit);
    const c = countTurns(read.filter((e) => !e.grafted), agentKey, maxExchanges);
    if (c.turns > maxExchanges) return { paused: true, turns: c.turns, other: c.other };
    // Fewer events than asked for: that was the whole thread.
    if (c.complete || read.length < limit || limit >= MAX_READ) {
      return { paused: false, turns: c.turns, other: c.other };
    }
    limit = Math.min(MAX_READ, limit * 4);
  }
}

/** The most events read from one thread (the store's query cap). */
const MAX_READ = 10_000;

/** The log line of a paused thread, exactly as the runner contract writes it. */
export function loopPausedMessage(thread: string, maxExchanges: number): string {
  return `agent wake paused: loop detected in thread ${thread} (agent.loop_max_exchanges = ${maxExchanges})`;
}

/** The threads the loop detector holds, with why: only threads holding queued events. */
export class ThreadPauses {
  readonly #held = new Map<string, string>();
  readonly #store: Pick<RunnerStore, "threadNewest">;
  readonly #agentKey: string;
  readonly #max: number;
  readonly #log: RunnerLog;

  constructor(o: {
    store: Pick<RunnerStore, "threadNewest">;
    agentKey: string;
    /** `agent.loop_max_exchanges`. */
    maxExchanges: number;
    log: RunnerLog;
  }) {
    this.#store = o.store;
    this.#agentKey = o.agentKey;
    this.#max = o.maxExchanges;
    this.#log = o.log;
  }

  /** Why `thread` is held, or undefined. */
  reason(thread: string): string | undefined {
    return this.#held.get(thread);
  }

  /** The held threads, with why. */
  list(): Array<{ thread: string; reason: string }> {
    return [...this.#held].map(([thread, reason]) => ({ thread, reason }));
  }

  /**
   * Decides again for `thread` from the store, logging a pause and a resume once
   * each; a thread `holding` no queued event is let go without a read.
   */
  check(thread: string, holding: boolean): void {
    if (!holding) {
      this.#held.delete(thread);
      return;
    }
    const max = this.#max;
    const v = checkThread(this.#store, thread, this.#agentKey, max);
    if (v.paused && !this.#held.has(thread)) {
      this.#held.set(
        thread,
        `loop detected: ${v.turns} turns between the agent and one other author ` +
          `(agent.loop_max_exchanges = ${max}); a post by a third author resumes it`,
      );
      this.#log.info(loopPausedMessage(thread, max), { thread, turns: v.turns, other: v.other });
    } else if (!v.paused && this.#held.has(thread)) {
      this.#held.delete(thread);
      this.#log.info(`agent wake resumed: a third author posted in thread ${thread}`, { thread });
    }
  }
}
