/**
 * The spend budget (docs/decisions/runner.md, "Budget"): per UTC day and per UTC month, spend is
 * the sum of the costs the harness reports; runs that report no cost count
 * against `agent.max_runs_per_day` instead. A budget is reached when what was
 * used is at least the limit (so a limit of 0 allows nothing); the runner then
 * pauses until the window resets. The ledger is restored from the runs index at
 * start, so spend survives a restart. What runs and calls in flight hold is
 * src/runner/reservations.ts's; the ledger counts what has settled.
 *
 * @module
 */

import { usdPair } from "../money.ts";
import { nextUtcDay, nextUtcMonth, utcDayStart, utcMonthStart } from "../duration.ts";

/** The limits, from settings. */
export interface BudgetLimits {
  /** `agent.max_usd_per_day`. */
  usdPerDay: number;
  /** `agent.max_usd_per_month`. */
  usdPerMonth: number;
  /** `agent.max_runs_per_day`: runs per UTC day that report no cost. */
  runsPerDay: number;
}

/** One finished run as the ledger counts it. */
export interface SpendRecord {
  /** When the run ended, ms since the epoch: the window it counts in. */
  at: number;
  /** The reported cost; absent when the harness reported none. */
  costUsd?: number;
  /**
   * False for spend outside a run (a coding agent's call over ACP, docs/acp.md):
   * it counts in USD but not as one of the day's runs.
   */
  run?: boolean;
}

/** Why runs are paused, and until when. */
export interface BudgetBlock {
  window: "day" | "month";
  /** The setting that was reached (for the skip decisions, src/runner/skips.ts). */
  setting: "agent.max_usd_per_month" | "agent.max_usd_per_day" | "agent.max_runs_per_day";
  /** What was reached, for the log and status. */
  reason: string;
  /** When the window resets (ms since the epoch, a UTC midnight). */
  resetsAt: number;
}

/** What runs and coding agent calls in flight hold (src/runner/reservations.ts). */
export interface InFlight {
  /** How many runs and calls are in flight. */
  count: number;
  /** What they hold, in USD: at least what each spent so far. */
  reservedUsd: number;
  /** What they spent so far: counted in the day and month only once each settles. */
  spentUsd: number;
  /** Those that reported no cost yet: each may end up as one of the day's runs without a cost. */
  withoutCost: number;
  /** Calls among them parked for a person's decision: each holds only what it spent. */
  parked?: number;
}

const NONE_IN_FLIGHT: InFlight = { count: 0, reservedUsd: 0, spentUsd: 0, withoutCost: 0 };

/** The budget at one moment. */
export interface BudgetState {
  usdToday: number;
  usdMonth: number;
  /** Every run that ended today. */
  runsToday: number;
  /** Runs that ended today without a reported cost. */
  runsWithoutCostToday: number;
  /** What a run may still spend: the smaller of what is left today and this month (≥ 0). */
  usdLeft: number;
  limits: BudgetLimits;
  /** Set when a budget is reached. */
  blocked?: BudgetBlock;
  /** What runs and calls in flight hold. */
  inFlight: InFlight;
  /** What a new run or call may be admitted against: `usdLeft` less what is held (≥ 0). */
  usdFree: number;
}

/** Spend so far in the current day and month windows. */
export class BudgetLedger {
  readonly #limits: BudgetLimits;
  #records: SpendRecord[] = [];

  constructor(limits: BudgetLimits) {
    this.#limits = limits;
  }

  /** Replaces the records with `records` (from the runs index at start). */
  restore(records: readonly SpendRecord[]): void {
    this.#records = [...records];
  }

  /** Counts one finished run. */
  record(rec: SpendRecord): void {
    this.#records.push(rec);
  }

  /** The budget at `now`, with what is in flight beside it. */
  state(now: number, inFlight: InFlight = NONE_IN_FLIGHT): BudgetState {
    const day = utcDayStart(now);
    const month = utcMonthStart(now);
    // Older records can never count again.
    this.#records = this.#records.filter((r) => r.at >= month);
    let usdToday = 0, usdMonth = 0, runsToday = 0, runsWithoutCostToday = 0;
    for (const r of this.#records) {
      if (r.at > now) continue;
      const cost = r.costUsd ?? 0;
      usdMonth += cost;
      if (r.at >= day) {
        usdToday += cost;
        if (r.run === false) continue;
        runsToday++;
        if (r.costUsd === undefined) runsWithoutCostToday++;
      }
    }
    const l = this.#limits;
    const usdLeft = Math.max(0, Math.min(l.usdPerDay - usdToday, l.usdPerMonth - usdMonth));
    let blocked: BudgetBlock | undefined;
    if (usdMonth >= l.usdPerMonth) {
      const [used, limit] = usdPair(usdMonth, l.usdPerMonth);
      blocked = {
        window: "month",
        setting: "agent.max_usd_per_month",
        reason: `the monthly budget is spent (${used} of agent.max_usd_per_month = ${limit})`,
        resetsAt: nextUtcMonth(now),
      };
    } else if (usdToday >= l.usdPerDay) {
      const [used, limit] = usdPair(usdToday, l.usdPerDay);
      blocked = {
        window: "day",
        setting: "agent.max_usd_per_day",
        reason: `the daily budget is spent (${used} of agent.max_usd_per_day = ${limit})`,
        resetsAt: nextUtcDay(now),
      };
    } else if (runsWithoutCostToday >= l.runsPerDay) {
      blocked = {
        window: "day",
        setting: "agent.max_runs_per_day",
        reason: `${runsWithoutCostToday} runs without a reported cost today ` +
          `(agent.max_runs_per_day = ${l.runsPerDay})`,
        resetsAt: nextUtcDay(now),
      };
    }
    const usdFree = Math.max(0, usdLeft - inFlight.reservedUsd);
    return {
      usdToday,
      usdMonth,
      runsToday,
      runsWithoutCostToday,
      usdLeft,
      limits: l,
      blocked,
      inFlight,
      usdFree,
    };
  }
}
