/**
 * The node's one budget as runs and coding agent calls see it (issue 30, item 4;
 * docs/decisions/budget_holds.md): each asks to be admitted before it starts,
 * holds part of what is left while it runs, says what it spent as it spends,
 * and settles once. The runner's desk (src/runner/reservations.ts) implements
 * it; the ACP layer (src/acp/calls.ts) uses it through the runner's
 * `AgentHost`.
 *
 * @module
 */

/** What one run or call in flight holds of the budget. */
export interface BudgetHold {
  /**
   * What it has spent so far, in USD (cumulative, as `usage_update` reports
   * it). True: the budget holds room for the reply under way and the next one,
   * go on; false: it has not, stop now (what it spends after this still counts).
   */
  spent(usd: number): boolean;
  /**
   * It ended: counts what it cost (undefined: nothing was reported, so it counts
   * against `agent.max_runs_per_day`) and releases what it held. Once; later
   * calls do nothing.
   */
  settle(usd: number | undefined): void;
  /** What it holds now, in USD: the most it may spend before it is asked to stop. */
  readonly heldUsd: number;
  /**
   * Calls `fn` once when the money runs out while it is in flight: spend that
   * settled elsewhere left less than what is held, and this one is stopped to
   * cover it (at once when it already was). What it spends after that still counts.
   */
  onStop(fn: () => void): void;
  /**
   * It waits for a person (a permission request in the review queue): it holds
   * only what it spent, and the rest is free for other runs and calls while it
   * waits. It is never stopped while it waits.
   */
  park(): void;
  /**
   * The person decided: it is admitted again against what is left beside what
   * others hold, like a new call. True: it holds again, go on; false: there is
   * no room, stop now (`stopped: budget`).
   */
  resume(): boolean;
}

/** The answer to a run or call that asks to start. */
export type Admission =
  | { admitted: true; hold: BudgetHold }
  /** `reason` says what was reached or who holds the rest, and when to try again. */
  | { admitted: false; reason: string };

/** What a coding agent call needs of the budget. */
export interface CallBudget {
  /** Admits a call named `label` (for the log) against what is left beside what others hold. */
  admitCall(label: string): Admission;
  /**
   * Calls `fn` once, after the budget window that is reached now (or else the
   * current UTC day) has reset: a call the budget stopped goes on then.
   */
  afterBudgetReset(fn: () => void): void;
}

/** The budget as the node's ACP layer sees it: calls, plus what it restores and asks at start. */
export interface NodeBudget extends CallBudget {
  /** Why nothing may spend now (a reached budget), or undefined. */
  blocked(): string | undefined;
  /**
   * Counts a call that settled before this start (`<data>/agent/acp_spend.jsonl`), at `at` (ms
   * since the epoch): in USD, not as a run; without a cost, as a run without a cost.
   */
  addSpend(at: number, usd: number | undefined): void;
}
