/**
 * Every spend figure wats shows, from one read of the files that hold it
 * (issue 29, item 4): the heartbeat agent's runs (the runs index and the
 * carry of runs retention removed, src/runner/transcripts.ts) and the coding
 * agents' calls (`acp_spend.jsonl`, src/acp/spend.ts). `wats agent runs`, the
 * dashboard's overview, runs page, work pages and charts read spend only
 * through {@linkcode readSpend} and total it only through
 * {@linkcode spendFigures}; the daemon's budget (`wats status`) restores the
 * same records from the same files at start and adds each new one as it
 * happens, so all of them agree (tests/ui/figures_agree_test.ts reads every
 * surface and compares).
 *
 * Requires `--allow-read` of the agent dir.
 *
 * @module
 */

import { AcpSpendFile } from "../acp/spend.ts";
import { utcDayStart, utcMonthStart } from "../duration.ts";
import { BudgetLedger, type BudgetLimits, type BudgetState, type SpendRecord } from "./budget.ts";
import { Transcripts } from "./transcripts.ts";
import { usd } from "../money.ts";

/** One thing that spent, or counts as a run. */
export interface SpendItem {
  /** When it ended, ms since the epoch. */
  at: number;
  /** Its cost; absent when its harness reported none. */
  usd?: number;
  /** A heartbeat run; a coding agent's call; runs retention removed (a day's sum, or one run without a cost). */
  kind: "run" | "call" | "carried";
  /** The run's id, or the call's (what a work's calls name). */
  id?: string;
}

/** Where the spend of one data dir is kept. */
export interface SpendFiles {
  runsDir: string;
  runsIndex: string;
  agentDir: string;
}

/**
 * This UTC month's runs and calls, and the older runs the index still holds
 * (the charts go back 30 days). Reads the files each time.
 */
export function readSpend(files: SpendFiles, now: number): SpendItem[] {
  const t = new Transcripts({ runsDir: files.runsDir, runsIndex: files.runsIndex });
  const month = utcMonthStart(now);
  // The budget's lines of this month: what retention carried first, then the indexed runs.
  const budgetLines = t.spend(now);
  const items: SpendItem[] = [];
  let indexedThisMonth = 0;
  for (const e of t.index()) {
    const at = Date.parse(e.ended_at);
    if (!Number.isFinite(at)) continue;
    if (at >= month && at < utcMonthStart(month + 32 * 86_400_000)) indexedThisMonth++;
    items.push({ at, kind: "run", id: e.id, ...usdOf(e.cost_usd) });
  }
  for (const l of budgetLines.slice(0, Math.max(0, budgetLines.length - indexedThisMonth))) {
    items.push({ at: l.at, kind: "carried", ...usdOf(l.costUsd) });
  }
  for (const c of new AcpSpendFile(files.agentDir).month(now)) {
    items.push({ at: c.at, usd: c.usd, kind: "call", id: c.call });
  }
  return items.sort((a, b) => a.at - b.at);
}

/** The records the budget counts (this month's; a call is no run). */
export function spendRecords(items: readonly SpendItem[], now: number): SpendRecord[] {
  const month = utcMonthStart(now);
  return items.filter((i) => i.at >= month).map((i) => ({
    at: i.at,
    ...(i.usd !== undefined ? { costUsd: i.usd } : {}),
    ...(i.kind === "call" ? { run: false } : {}),
  }));
}

/** What every surface shows: the budget's state, and the same split by what spent. */
export interface SpendFigures {
  budget: BudgetState;
  /** USD of heartbeat runs (carried ones included) and of coding-agent calls. */
  runsUsdToday: number;
  callsUsdToday: number;
  runsUsdMonth: number;
  callsUsdMonth: number;
  /** Coding-agent calls that reported a cost, today. */
  callsToday: number;
  /** Every item read, for the charts. */
  items: readonly SpendItem[];
}

/** Limits for surfaces that know none (the figures do not depend on them). */
export const NO_LIMITS: BudgetLimits = {
  usdPerDay: Infinity,
  usdPerMonth: Infinity,
  runsPerDay: Infinity,
};

/** Totals `items` at `now` through the budget's own ledger. Pure. */
export function spendFigures(
  items: readonly SpendItem[],
  now: number,
  limits: BudgetLimits = NO_LIMITS,
): SpendFigures {
  const ledger = new BudgetLedger(limits);
  ledger.restore(spendRecords(items, now));
  const budget = ledger.state(now);
  const day = utcDayStart(now);
  const month = utcMonthStart(now);
  let runsUsdToday = 0, callsUsdToday = 0, runsUsdMonth = 0, callsUsdMonth = 0, callsToday = 0;
  for (const i of items) {
    if (i.at < month || i.at > now) continue;
    const usd = i.usd ?? 0;
    if (i.kind === "call") {
      callsUsdMonth += usd;
      if (i.at >= day) {
        callsUsdToday += usd;
        callsToday++;
      }
    } else {
      runsUsdMonth += usd;
      if (i.at >= day) runsUsdToday += usd;
    }
  }
  return {
    budget,
    runsUsdToday: cents6(runsUsdToday),
    callsUsdToday: cents6(callsUsdToday),
    runsUsdMonth: cents6(runsUsdMonth),
    callsUsdMonth: cents6(callsUsdMonth),
    callsToday,
    items,
  };
}

/** `of which heartbeat runs $a, coding-agent calls $b today; …` for the CLI. Pure. */
export function spendSplitLine(f: SpendFigures): string {
  return `of which heartbeat runs ${usd(f.runsUsdToday)} and coding-agent calls ${
    usd(f.callsUsdToday)
  } today; heartbeat runs ${usd(f.runsUsdMonth)} and coding-agent calls ${
    usd(f.callsUsdMonth)
  } this month`;
}

/** What the calls `callIds` (one work's) cost this month. Pure. */
export function callsSpend(items: readonly SpendItem[], callIds: Iterable<string>): number {
  const ids = new Set(callIds);
  let sum = 0;
  for (const i of items) {
    if (i.kind === "call" && i.id !== undefined && ids.has(i.id)) sum += i.usd ?? 0;
  }
  return cents6(sum);
}

function usdOf(usd: number | undefined): { usd?: number } {
  return usd !== undefined ? { usd } : {};
}

/** Rounded to a millionth of a dollar, so sums of floats print as money. */
function cents6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
