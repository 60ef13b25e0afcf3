import assert from "node:assert/strict";
import { BudgetLedger } from "../../src/runner/budget.ts";
import { nextUtcDay, nextUtcMonth } from "../../src/duration.ts";
import { usd } from "../../src/money.ts";

const LIMITS = { usdPerDay: 2, usdPerMonth: 20, runsPerDay: 3 };

Deno.test("spend per UTC day and month is the sum of reported costs", () => {
  const l = new BudgetLedger(LIMITS);
  const now = Date.UTC(2026, 9, 15, 12);
  l.record({ at: Date.UTC(2026, 9, 15, 1), costUsd: 0.5 });
  l.record({ at: Date.UTC(2026, 9, 14, 23, 59), costUsd: 1 });
  l.record({ at: Date.UTC(2026, 8, 30, 23, 59), costUsd: 7 }); // last month
  const s = l.state(now);
  assert.equal(s.usdToday, 0.5);
  assert.equal(s.usdMonth, 1.5);
  assert.equal(s.usdLeft, 1.5);
  assert.equal(s.blocked, undefined);
});

Deno.test("the budget left is the smaller of the day's and the month's", () => {
  const l = new BudgetLedger(LIMITS);
  l.record({ at: Date.UTC(2026, 9, 3), costUsd: 19.2 });
  l.record({ at: Date.UTC(2026, 9, 15, 1), costUsd: 0.1 });
  const s = l.state(Date.UTC(2026, 9, 15, 12));
  assert.ok(Math.abs(s.usdLeft - 0.7) < 1e-9, String(s.usdLeft));
});

Deno.test("a reached daily budget blocks until the next UTC midnight, a monthly one until the next month", () => {
  const day = new BudgetLedger(LIMITS);
  day.record({ at: Date.UTC(2026, 9, 15, 1), costUsd: 2.1 });
  const s = day.state(Date.UTC(2026, 9, 15, 12));
  assert.equal(s.blocked?.window, "day");
  assert.equal(s.blocked?.resetsAt, Date.UTC(2026, 9, 16));
  assert.match(s.blocked!.reason, /agent\.max_usd_per_day = \$2\.00/);
  assert.equal(s.usdLeft, 0);
  assert.equal(day.state(Date.UTC(2026, 9, 16)).blocked, undefined);

  const month = new BudgetLedger(LIMITS);
  for (let d = 1; d <= 11; d++) month.record({ at: Date.UTC(2026, 9, d), costUsd: 1.9 });
  const m = month.state(Date.UTC(2026, 9, 15));
  assert.equal(m.blocked?.window, "month");
  assert.equal(m.blocked?.resetsAt, Date.UTC(2026, 10, 1));
  assert.equal(month.state(Date.UTC(2026, 10, 1)).blocked, undefined);
});

Deno.test("runs without a reported cost count against agent.max_runs_per_day", () => {
  const l = new BudgetLedger(LIMITS);
  const now = Date.UTC(2026, 9, 15, 12);
  l.record({ at: now - 3000, costUsd: 0.01 });
  l.record({ at: now - 2000 });
  l.record({ at: now - 1000 });
  assert.equal(l.state(now).blocked, undefined);
  l.record({ at: now - 500 });
  const s = l.state(now);
  assert.equal(s.runsWithoutCostToday, 3);
  assert.equal(s.runsToday, 4);
  assert.match(s.blocked!.reason, /agent\.max_runs_per_day = 3/);
});

Deno.test("UTC windows roll over at midnight UTC and month ends", () => {
  assert.equal(nextUtcDay(Date.UTC(2026, 11, 31, 23, 59)), Date.UTC(2027, 0, 1));
  assert.equal(nextUtcMonth(Date.UTC(2026, 11, 15)), Date.UTC(2027, 0, 1));
  assert.equal(usd(0.0012), "$0.0012");
  assert.equal(usd(2), "$2.00");
});

Deno.test("spend outside runs (coding agents over ACP) counts in USD but not as a run", () => {
  const l = new BudgetLedger(LIMITS);
  const now = Date.UTC(2026, 9, 15, 12);
  l.record({ at: Date.UTC(2026, 9, 15, 1), costUsd: 1.5, run: false });
  l.record({ at: Date.UTC(2026, 9, 15, 2), costUsd: 0.6, run: false });
  const s = l.state(now);
  assert.equal(s.usdToday, 2.1);
  assert.equal(s.runsToday, 0);
  assert.equal(s.runsWithoutCostToday, 0);
  assert.equal(s.blocked?.window, "day");
});
