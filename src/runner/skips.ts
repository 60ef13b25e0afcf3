/**
 * Posts that did not wake the agent because of a setting (docs/runner.md, "When a post does not
 * wake it"): `agent.ignore_local`, `agent.allow`, `agent.wakes_per_author_per_hour`, a loop pause
 * (`agent.loop_max_exchanges`) or a budget pause. A person who asks and sees nothing happen must
 * be able to find out why without turning on debug logs, so each one is logged at info, naming the
 * setting; but an author who keeps posting must not flood the log, so only the first of each
 * (setting, author) pair in an hour is at info, the rest at debug. The last few are kept in
 * memory for `wats status`: bounded, and gone at restart, as the log has them.
 *
 * @module
 */

import { HOUR_MS } from "../duration.ts";
import type { RunnerLog, RunnerPost } from "./ports.ts";

/** How many skip decisions `wats status` shows (the newest). */
export const SKIPS_KEPT = 5;

/** How many (setting, author) pairs are remembered for the hourly info line before pruning. */
const QUIET_MAX = 1000;

/** One post that a setting kept from waking the agent. */
export interface SkipDecision {
  /** When it was decided (ms since the epoch). */
  at: number;
  post: string;
  kind: string;
  /** The post's author key (hex). */
  author: string;
  /** The setting that decided it (`agent.ignore_local`, `agent.max_usd_per_day`, …). */
  setting: string;
  /** What happened to it, naming the setting: the info line's text. */
  reason: string;
}

/** Records skip decisions: logs each one (info once per setting and author an hour), keeps the last few. */
export class SkipLog {
  readonly #log: RunnerLog;
  readonly #recent: SkipDecision[] = [];
  /** When each `setting author` pair was last logged at info. */
  readonly #told = new Map<string, number>();

  constructor(log: RunnerLog) {
    this.#log = log;
  }

  /** Records that `post` did not wake the agent at `at` because of `setting`, and why. */
  didNotWake(
    at: number,
    post: Pick<RunnerPost, "id" | "kind" | "author">,
    setting: string,
    reason: string,
  ): void {
    this.add({
      at,
      post: post.id,
      kind: post.kind,
      author: post.author,
      setting,
      reason: `did not wake the agent: ${reason}`,
    });
  }

  /** Records one decision. Call it once per post and setting. */
  add(d: SkipDecision): void {
    this.#recent.push(d);
    if (this.#recent.length > SKIPS_KEPT) this.#recent.shift();
    const key = `${d.setting} ${d.author}`;
    const last = this.#told.get(key);
    const props = { id: d.post, author: d.author, setting: d.setting };
    if (last !== undefined && d.at - last < HOUR_MS) {
      this.#log.debug(d.reason, props);
      return;
    }
    this.#told.set(key, d.at);
    if (this.#told.size > QUIET_MAX) {
      for (const [k, t] of this.#told) if (d.at - t >= HOUR_MS) this.#told.delete(k);
    }
    this.#log.info(
      `${d.reason}; more like it from this author within the hour: debug level`,
      props,
    );
  }

  /** The newest decisions, oldest first (at most {@linkcode SKIPS_KEPT}). */
  recent(): SkipDecision[] {
    return [...this.#recent];
  }
}
