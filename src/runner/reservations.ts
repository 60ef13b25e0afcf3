/**
 * The budget desk (issue 30, item 4; docs/decisions/budget_holds.md): the one
 * place where heartbeat runs and coding agent calls, whoever started them, are
 * admitted against the day's and month's budget together. The ledger
 * (budget.ts) counts what has settled; the desk adds what is in flight.
 *
 * - A run or call is **admitted** only when, beside what the others in flight
 *   hold, `agent.reserve_usd` is left (or all that is left, when less), and a
 *   run without a cost may still be counted; it then holds that much.
 * - A call says what it spent after each reply (`usage_update`). It may go on
 *   while its hold covers what it spent plus two replies as large as its
 *   largest so far (the one under way, the next); else its hold grows from what
 *   is free, or, when nothing is, it is told to stop, holding what the reply
 *   under way may cost. So, while no reply costs more than the one before it,
 *   nothing overshoots; when one does, by that reply.
 * - A run's hold is fixed: the harness gets it as its limit (`--max-budget-usd`),
 *   which the CLI checks after each reply.
 * - A call parked for a person's decision holds only what it spent while it
 *   waits; the decision admits it again against what is left, like a new call.
 * - Settling counts the cost (or a run without a cost) and releases the hold;
 *   whatever waited for room is told.
 *
 * @module
 */

import type { Admission, BudgetHold, NodeBudget } from "../contracts/budget.ts";
import { nextUtcDay } from "../duration.ts";
import { usd } from "../money.ts";
import { BudgetLedger, type BudgetLimits, type BudgetState, type SpendRecord } from "./budget.ts";
import type { Clock, Timers } from "./ports.ts";

/** What the desk is built from. */
export interface DeskOptions {
  limits: BudgetLimits;
  /** `agent.reserve_usd`. */
  reserveUsd: number;
  clock: Clock;
  timers: Timers;
  /** A run or call ended and released its hold: what waited for room may start. */
  onRelease?: () => void;
}

/** One run or call in flight. */
class Hold implements BudgetHold {
  readonly #desk: BudgetDesk;
  readonly run: boolean;
  #held: number;
  #spent = 0;
  /** The largest reply so far. */
  #reply = 0;
  #reported = false;
  #stopped = false;
  #settled = false;
  /** Waits for a person: holds only what it spent. */
  #parked = false;
  #onStop: (() => void) | undefined;

  constructor(desk: BudgetDesk, held: number, run: boolean) {
    this.#desk = desk;
    this.#held = held;
    this.run = run;
  }

  get heldUsd(): number {
    return this.#settled ? 0 : Math.max(this.#held, this.#spent);
  }

  get spentUsd(): number {
    return this.#settled ? 0 : this.#spent;
  }

  /** True until a cost was reported. */
  get withoutCost(): boolean {
    return !this.#settled && !this.#reported;
  }

  spent(total: number): boolean {
    if (this.#settled) return false;
    this.#reported = true;
    if (total > this.#spent) {
      this.#reply = Math.max(this.#reply, total - this.#spent);
      this.#spent = total;
    }
    if (this.#stopped) return false;
    // No reply is under way while it waits for a person: what it holds is what it spent.
    if (this.#parked) return true;
    const needed = this.#spent + 2 * this.#reply;
    if (needed <= this.#held) return true;
    const room = this.#desk.roomBeside(this);
    if (room >= needed) {
      this.#held = needed;
      return true;
    }
    // The reply under way is paid whatever happens: hold it, so no one else is admitted on it.
    this.#held = Math.max(this.#spent, Math.min(room, this.#spent + this.#reply));
    this.#stopped = true;
    return false;
  }

  onStop(fn: () => void): void {
    if (this.#stopped) fn();
    else this.#onStop = fn;
  }

  /** True once it was told to stop. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * The money ran out elsewhere: stops it, keeping only what the reply under way
   * may cost. Returns what that freed.
   */
  revoke(): number {
    // A parked call holds only what it spent: stopping it would free nothing.
    if (this.#stopped || this.#settled || this.#parked) return 0;
    const before = this.heldUsd;
    this.#held = Math.min(this.#held, this.#spent + this.#reply);
    this.#stopped = true;
    this.#onStop?.();
    return before - this.heldUsd;
  }

  /** True while it waits for a person. */
  get parked(): boolean {
    return this.#parked && !this.#settled;
  }

  park(): void {
    if (this.#settled || this.#parked || this.run) return;
    this.#parked = true;
    this.#held = this.#spent;
    this.#desk.released();
  }

  resume(): boolean {
    if (this.#settled) return false;
    if (!this.#parked) return !this.#stopped;
    this.#parked = false;
    const want = this.#stopped ? undefined : this.#desk.readmit(this);
    if (want === undefined) {
      this.#stopped = true;
      return false;
    }
    this.#held = this.#spent + want;
    return true;
  }

  settle(cost: number | undefined): void {
    if (this.#settled) return;
    this.#settled = true;
    // An end with no final count (an agent that died) still counts what it reported.
    this.#desk.settled(this, cost ?? (this.#reported ? this.#spent : undefined));
  }
}

/** The budget of runs and calls together. */
export class BudgetDesk implements NodeBudget {
  readonly #ledger: BudgetLedger;
  readonly #options: DeskOptions;
  readonly #holds = new Set<Hold>();
  readonly #timers = new Set<unknown>();

  constructor(options: DeskOptions) {
    this.#options = options;
    this.#ledger = new BudgetLedger(options.limits);
  }

  /** Replaces what has settled with `records` (from the runs index at start). */
  restore(records: readonly SpendRecord[]): void {
    this.#ledger.restore(records);
  }

  addSpend(at: number, usd: number | undefined): void {
    this.#ledger.record({ at, costUsd: usd, run: usd === undefined });
    this.#coverHolds();
  }

  /** The budget at `now`, with what is in flight. */
  state(now: number = this.#options.clock.now()): BudgetState {
    let reservedUsd = 0, spentUsd = 0, withoutCost = 0, parked = 0;
    for (const h of this.#holds) {
      reservedUsd += h.heldUsd;
      spentUsd += h.spentUsd;
      if (h.withoutCost) withoutCost++;
      if (h.parked) parked++;
    }
    return this.#ledger.state(now, {
      count: this.#holds.size,
      reservedUsd,
      spentUsd,
      withoutCost,
      parked,
    });
  }

  blocked(): string | undefined {
    return this.state().blocked?.reason;
  }

  /**
   * Why a new run or call cannot start now although no budget is reached: what is
   * in flight holds the rest, or may use up the day's runs without a cost.
   */
  heldBack(s: BudgetState): string | undefined {
    if (s.blocked !== undefined) return undefined;
    const { inFlight, limits } = s;
    if (inFlight.count === 0) return undefined;
    if (s.runsWithoutCostToday + inFlight.withoutCost >= limits.runsPerDay) {
      return `${s.runsWithoutCostToday} runs without a reported cost today and ` +
        `${inFlight.withoutCost} in flight that may end so (agent.max_runs_per_day = ${limits.runsPerDay})`;
    }
    if (s.usdFree < this.#want(s)) {
      return `${usd(inFlight.reservedUsd)} of the ${usd(s.usdLeft)} left is held by ` +
        `${inFlight.count} run(s) and coding agent call(s) in flight`;
    }
    return undefined;
  }

  /** What a new run or call holds: the reservation, or all that is left when less. */
  #want(s: BudgetState): number {
    return Math.min(this.#options.reserveUsd, s.usdLeft);
  }

  /**
   * Admits a run (`run`: its hold is its limit) or a call. Refused: a budget is
   * reached, or what is in flight holds the rest.
   */
  admit(run: boolean): Admission {
    const s = this.state();
    if (s.blocked !== undefined) {
      return {
        admitted: false,
        reason: `${s.blocked.reason}; it resets at ${new Date(s.blocked.resetsAt).toISOString()}`,
      };
    }
    const held = this.heldBack(s);
    if (held !== undefined) {
      return { admitted: false, reason: `${held}; try again when one of them ends` };
    }
    const hold = new Hold(this, this.#want(s), run);
    this.#holds.add(hold);
    return { admitted: true, hold };
  }

  admitCall(_label: string): Admission {
    return this.admit(false);
  }

  /**
   * What a call that waited for a person may hold again beyond what it spent,
   * admitted as a new call is (`agent.reserve_usd`, or all that is left when
   * less and the others hold none of it), or undefined: a budget is reached,
   * the others hold the rest, or the day's runs without a cost may be used up.
   */
  readmit(hold: Hold): number | undefined {
    const s = this.state();
    if (s.blocked !== undefined) return undefined;
    // It counts among those in flight already: only the others may not use up its run.
    if (s.runsWithoutCostToday + s.inFlight.withoutCost > s.limits.runsPerDay) return undefined;
    const want = Math.min(this.#options.reserveUsd, s.usdLeft - hold.spentUsd);
    const free = this.roomBeside(hold) - hold.spentUsd;
    return want > 1e-9 && free >= want - 1e-9 ? want : undefined;
  }

  /** A call parked for a person gave back what it held beyond its spend: what waited may start. */
  released(): void {
    this.#options.onRelease?.();
  }

  /** What `hold` may grow to: what is left less what the others hold. */
  roomBeside(hold: BudgetHold): number {
    const s = this.state();
    return s.usdLeft - (s.inFlight.reservedUsd - hold.heldUsd);
  }

  /** A hold settled: its cost counts, its room is free. */
  settled(hold: Hold, cost: number | undefined): void {
    this.#holds.delete(hold);
    this.#ledger.record({
      at: this.#options.clock.now(),
      costUsd: cost,
      run: hold.run || cost === undefined,
    });
    this.#coverHolds();
    // A run's end schedules the next itself, once it is recorded.
    if (!hold.run) this.#options.onRelease?.();
  }

  /**
   * When what settled leaves less than the calls in flight hold (one spent
   * more than it held, reported only as it ended, or a restart counted earlier
   * spend), the newest calls are stopped until what is held is covered: the
   * money ran out while they ran. A run's limit was given to its harness and
   * cannot shrink; it is never stopped here.
   */
  #coverHolds(): void {
    let over = this.state().inFlight.reservedUsd - this.state().usdLeft;
    for (const h of [...this.#holds].reverse()) {
      if (over <= 1e-9) return;
      if (!h.run) over -= h.revoke();
    }
  }

  afterBudgetReset(fn: () => void): void {
    const now = this.#options.clock.now();
    const at = this.state(now).blocked?.resetsAt ?? nextUtcDay(now);
    const timer = this.#options.timers.setTimer(at - now, () => {
      this.#timers.delete(timer);
      // The month may still be spent when the day resets: wait for it too.
      if (this.state().blocked !== undefined) this.afterBudgetReset(fn);
      else fn();
    });
    this.#timers.add(timer);
  }

  /** Drops the timers of `afterBudgetReset` (the node is stopping). */
  close(): void {
    for (const t of this.#timers) this.#options.timers.clearTimer(t);
    this.#timers.clear();
  }
}
