/**
 * What the runner says when the budget holds its runs back (docs/runner.md,
 * "Budget"): once as a pause begins (a budget is reached) and once as it ends,
 * and once when a due run waits for coding agent calls in flight to release
 * the rest of the budget (src/runner/reservations.ts).
 *
 * @module
 */

import { usd } from "../money.ts";
import type { RunnerLog } from "./ports.ts";

/** The runner's budget waits, each said once. */
export class BudgetWaits {
  readonly #log: RunnerLog;
  readonly #onPause: ((reason: string, until: number) => void) | undefined;
  #pause: string | undefined;
  #heldBack: string | undefined;

  constructor(log: RunnerLog, onPause?: (reason: string, until: number) => void) {
    this.#log = log;
    this.#onPause = onPause;
  }

  /** A budget is reached: runs pause until `until`. */
  paused(reason: string, until: number): void {
    if (this.#pause === reason) return;
    this.#pause = reason;
    this.#log.warn(`agent runs paused: ${reason}; they resume at ${new Date(until).toISOString()}`);
    this.#onPause?.(reason, until);
  }

  /** No budget is reached (any more), with `usdLeft` left. */
  open(usdLeft: number): void {
    if (this.#pause === undefined) return;
    this.#pause = undefined;
    this.#log.info(`agent runs resumed: the budget window reset (${usd(usdLeft)} left)`);
  }

  /** A due run waits: calls in flight hold the rest (`reason`). */
  heldBack(reason: string): void {
    if (this.#heldBack === reason) return;
    this.#heldBack = reason;
    this.#log.info(`run waits: ${reason}`);
  }

  /** A run started. */
  started(): void {
    this.#heldBack = undefined;
  }
}
