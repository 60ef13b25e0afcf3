/**
 * What the daemon shows of its runner: the banner's lines and the runner's part of `wats
 * status`, from the runner's own status and its runtime's facts. Pure.
 *
 * @module
 */

import { npubEncode } from "nostr-tools/nip19";
import type { Settings } from "../config/schema.ts";
import type { NodeStatus } from "../contracts/views.ts";
import { usd, usdOf } from "../money.ts";
import type { BudgetLimits } from "../runner/budget.ts";
import { retryViews } from "../runner/runner_status.ts";
import type { RuntimeFacts } from "../runner/runtimes/runtime.ts";
import type { Runner } from "../runner/scheduler.ts";

/** How many held asks `wats status` names; the rest are counted. */
const CLAIMED_SHOWN = 10;

/** The runner's status, as `Runner.status()` gives it. */
type RunnerState = ReturnType<Runner["status"]>;

/** What the views of one runner are drawn from. */
export interface RunnerView {
  facts: RuntimeFacts;
  limits: BudgetLimits;
  settings: Settings;
  /** The agent's profile name. */
  agent: string;
}

/** The budget in one line: spend against the limits, or runs for a runtime that reports no cost. */
export function budgetLine(v: RunnerView, st: RunnerState): string {
  const b = st.budget;
  if (!v.facts.reportsCost) {
    return `runs ${b.runsWithoutCostToday} of ${v.limits.runsPerDay} today ` +
      `(${v.facts.name} reports no cost: runs count against agent.max_runs_per_day)`;
  }
  return `budget ${usdOf(b.usdToday, v.limits.usdPerDay)} today, ` +
    `${usdOf(b.usdMonth, v.limits.usdPerMonth)} this month; ${reservedLine(b.inFlight)} ` +
    `(each run or call reserves ${usd(v.settings["agent.reserve_usd"])}: agent.reserve_usd)`;
}

/** `$0.80 reserved by 2 runs and calls in flight`: what the banner and status add to the spend. */
export function reservedLine(f: { reservedUsd: number; count: number; parked?: number }): string {
  return f.count === 0
    ? "nothing reserved"
    : `${usd(f.reservedUsd)} reserved by ${f.count} run(s) and coding agent call(s) in flight` +
      parkedNote(f.parked);
}

/** `, 1 of them parked …`: a call waiting for a person holds only what it spent. */
export function parkedNote(parked: number | undefined): string {
  return parked
    ? `, ${parked} of them parked for a person's decision (holding only what they spent)`
    : "";
}

/** What pauses runs now: the budget, threads, the hourly cap, retries, claimed asks. */
export function pausesView(
  v: Pick<RunnerView, "settings">,
  st: RunnerState,
  now: number,
): NodeStatus["pauses"] {
  return {
    ...(st.state === "paused" && st.reason !== undefined && st.resumesAt !== undefined
      ? { budget: { reason: st.reason, until: st.resumesAt } }
      : {}),
    threads: st.pausedThreads,
    ...(st.capUntil !== undefined && st.capUntil > now
      ? { hourlyCap: { max: v.settings["agent.max_runs_per_hour"], until: st.capUntil } }
      : {}),
    ...retryViews(st, now),
    ...(st.claimed.length > 0
      ? {
        claimed: {
          count: st.claimed.length,
          asks: st.claimed.slice(0, CLAIMED_SHOWN).map(({ ask, claim }) => ({
            ask,
            by: npubEncode(claim.by),
            ...(claim.lapsesAt !== undefined ? { lapsesAt: claim.lapsesAt } : {}),
          })),
        },
      }
      : {}),
  };
}

/** The runner's part of the banner: runtime, budget and what pauses it (before the access lines). */
export function runnerBannerLines(
  v: RunnerView & { label: string },
  st: RunnerState,
  now: number,
): string[] {
  const p = pausesView(v, st, now);
  return [
    `${v.label} as ${v.agent} · ${budgetLine(v, st)}`,
    ...(p?.budget
      ? [`paused: ${p.budget.reason}; runs resume at ${new Date(p.budget.until).toISOString()}`]
      : []),
    ...(p?.threads ?? []).map((t) => `thread ${t.thread} paused: ${t.reason}`),
  ];
}

/** The runner's part of the MCP status. */
export function runnerStatus(
  v: RunnerView,
  st: RunnerState,
  now: number,
): Pick<NodeStatus, "agent" | "budget" | "pauses" | "skipped" | "runs"> {
  const b = st.budget;
  return {
    pauses: pausesView(v, st, now),
    skipped: st.skipped.map((k) => ({ ...k, author: npubEncode(k.author) })),
    runs: {
      ...(st.current ? { current: { id: st.current.id, startedAt: st.current.startedAt } } : {}),
      ...(st.lastRun
        ? {
          last: {
            id: st.lastRun.id,
            status: st.lastRun.status,
            startedAt: Date.parse(st.lastRun.started_at),
          },
        }
        : {}),
    },
    agent: { runtime: v.facts.name, profile: v.agent },
    budget: {
      usdToday: b.usdToday,
      usdPerDay: b.limits.usdPerDay,
      usdMonth: b.usdMonth,
      usdPerMonth: b.limits.usdPerMonth,
      runsToday: b.runsWithoutCostToday,
      runsPerDay: b.limits.runsPerDay,
      ...(v.facts.reportsCost ? {} : { noCost: true }),
      reserved: {
        usd: b.inFlight.reservedUsd,
        count: b.inFlight.count,
        spentUsd: b.inFlight.spentUsd,
        ...(b.inFlight.parked ? { parked: b.inFlight.parked } : {}),
      },
    },
  };
}
