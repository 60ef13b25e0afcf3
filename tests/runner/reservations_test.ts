import assert from "node:assert/strict";
import { BudgetDesk } from "../../src/runner/reservations.ts";
import type { BudgetHold } from "../../src/contracts/budget.ts";
import { nextUtcDay, nextUtcMonth } from "../../src/duration.ts";
import { FakeTime } from "./fakes.ts";

const T0 = Date.UTC(2026, 9, 15, 12);
const EPS = 1e-9;

function desk(
  o: { usdPerDay?: number; usdPerMonth?: number; runsPerDay?: number; reserve?: number } = {},
) {
  const time = new FakeTime(T0);
  let released = 0;
  const d = new BudgetDesk({
    limits: {
      usdPerDay: o.usdPerDay ?? 1,
      usdPerMonth: o.usdPerMonth ?? 20,
      runsPerDay: o.runsPerDay ?? 48,
    },
    reserveUsd: o.reserve ?? 0.4,
    clock: time,
    timers: time,
    onRelease: () => released++,
  });
  return { d, time, released: () => released };
}

function held(a: ReturnType<BudgetDesk["admit"]>): BudgetHold {
  assert.ok(a.admitted, a.admitted ? "" : a.reason);
  return a.hold;
}

Deno.test("a run or call holds agent.reserve_usd, or all that is left when less, and is admitted only against what the others leave", () => {
  const { d } = desk({ usdPerDay: 1, reserve: 0.4 });
  const a = held(d.admitCall("a"));
  assert.equal(a.heldUsd, 0.4);
  const b = held(d.admitCall("b"));
  assert.equal(b.heldUsd, 0.4);
  const c = d.admitCall("c");
  assert.ok(!c.admitted);
  assert.equal(
    c.reason,
    "$0.80 of the $1.00 left is held by 2 run(s) and coding agent call(s) in flight; " +
      "try again when one of them ends",
  );
  let stopped = false;
  b.onStop(() => stopped = true);
  a.settle(0.75);
  // $0.25 is left and b held $0.40: the money ran out while b ran, so b is stopped.
  assert.ok(stopped);
  assert.equal(b.heldUsd, 0, "b reported no reply: it keeps nothing");
  // Less than the reservation is left: a run may have all of it.
  const run = held(d.admit(true));
  assert.ok(Math.abs(run.heldUsd - 0.25) < EPS);
});

Deno.test("a call goes on while its hold covers two replies more, grows from what is free, and is told to stop holding the reply under way", () => {
  const { d, released } = desk({ usdPerDay: 1, reserve: 0.2 });
  const a = held(d.admitCall("a"));
  const b = held(d.admitCall("b"));
  // Replies of $0.05: a's hold covers $0.05 spent plus two more.
  assert.equal(a.spent(0.05), true);
  assert.equal(a.heldUsd, 0.2);
  assert.equal(a.spent(0.15), true, "grows: $0.15 + 2 × $0.10 from the $0.80 free");
  assert.ok(Math.abs(a.heldUsd - 0.35) < EPS);
  // b, by replies of $0.10, may grow to the rest: $1.00 - $0.35 = $0.65.
  for (const total of [0.1, 0.2, 0.3, 0.4]) assert.equal(b.spent(total), true);
  assert.ok(Math.abs(b.heldUsd - 0.6) < EPS);
  assert.equal(b.spent(0.5), false, "$0.50 + 2 × $0.10 does not fit in $0.65");
  assert.ok(Math.abs(b.heldUsd - 0.6) < EPS, "it holds the reply under way");
  assert.equal(b.spent(0.6), false, "stopped stays stopped");
  b.settle(0.6);
  assert.equal(released(), 1);
  const s = d.state();
  assert.ok(Math.abs(s.usdToday - 0.6) < EPS);
  assert.equal(s.runsWithoutCostToday, 0, "a call with a cost is no run");
  assert.equal(s.inFlight.count, 1);
});

Deno.test("calls without a reported cost count against agent.max_runs_per_day, in flight too", () => {
  const { d } = desk({ runsPerDay: 2, reserve: 0.1 });
  held(d.admitCall("a")).settle(undefined);
  assert.equal(d.state().runsWithoutCostToday, 1);
  const b = held(d.admitCall("b"));
  const c = d.admitCall("c");
  assert.ok(!c.admitted);
  assert.match(
    c.reason,
    /^1 runs without a reported cost today and 1 in flight that may end so \(agent\.max_runs_per_day = 2\)/,
  );
  // Once b reports a cost it will not end as a run without one.
  b.spent(0.01);
  assert.ok(d.admitCall("c").admitted);
  // An end without a final count still counts what was reported.
  b.settle(undefined);
  assert.ok(Math.abs(d.state().usdToday - 0.01) < EPS);
  assert.equal(d.state().runsWithoutCostToday, 1);
});

Deno.test("a reached budget refuses with when it resets; a run's end does not call onRelease (the runner schedules itself)", () => {
  const { d, released } = desk({ usdPerDay: 1 });
  held(d.admit(true)).settle(1);
  assert.equal(released(), 0);
  const r = d.admitCall("a");
  assert.ok(!r.admitted);
  assert.equal(
    r.reason,
    "the daily budget is spent ($1.00 of agent.max_usd_per_day = $1.00); it resets at 2026-10-16T00:00:00.000Z",
  );
});

Deno.test("afterBudgetReset waits for the day's reset, and for the month's when the month is spent", async () => {
  const day = desk({ usdPerDay: 1 });
  held(day.d.admitCall("a")).settle(1);
  let went = 0;
  day.d.afterBudgetReset(() => went++);
  await day.time.advanceTo(nextUtcDay(T0) - 1);
  assert.equal(went, 0);
  await day.time.advanceTo(nextUtcDay(T0));
  assert.equal(went, 1);

  const month = desk({ usdPerDay: 5, usdPerMonth: 5, reserve: 5 });
  held(month.d.admitCall("a")).settle(5);
  month.d.afterBudgetReset(() => went++);
  await month.time.advanceTo(nextUtcDay(T0));
  assert.equal(went, 1, "the month is still spent the next day");
  await month.time.advanceTo(nextUtcMonth(T0));
  assert.equal(went, 2);
  month.d.close();
  assert.equal(month.time.pending(), 0);
});

Deno.test("spend that settles elsewhere and leaves less than is held stops the newest calls until it is covered, never a run", () => {
  const { d } = desk({ usdPerDay: 1, reserve: 0.3 });
  const run = held(d.admit(true));
  const a = held(d.admitCall("a"));
  const b = held(d.admitCall("b"));
  const told: string[] = [];
  run.onStop(() => told.push("run"));
  a.onStop(() => told.push("a"));
  b.onStop(() => told.push("b"));
  a.spent(0.05);
  // A call that reported its cost only as it ended: $0.30 more than the $0.10 left beside the holds.
  d.addSpend(T0, 0.4);
  assert.deepEqual(told, ["b"], "b, the newest, covers it: $0.60 left, $0.30 + $0.30 held");
  assert.equal(b.spent(0.01), false, "b stays stopped");
  d.addSpend(T0, 0.5);
  assert.deepEqual(told, ["b", "a"]);
  assert.ok(Math.abs(a.heldUsd - 0.1) < EPS, "a keeps what its reply under way may cost");
  let late = false;
  a.onStop(() => late = true);
  assert.ok(late, "told at once when it already was stopped");
});

Deno.test("a call parked for a person holds only what it spent while it waits, and the decision admits it again against what is left", () => {
  const { d, released } = desk({ usdPerDay: 1, reserve: 0.4 });
  const a = held(d.admitCall("a"));
  assert.ok(a.spent(0.1));
  assert.equal(held(d.admitCall("b")).heldUsd, 0.4);
  // $0.80 held: a third is refused.
  assert.ok(!d.admitCall("c").admitted);

  a.park();
  assert.equal(released(), 1, "what waited for room is told");
  assert.ok(Math.abs(a.heldUsd - 0.1) < EPS, "it holds what it spent");
  const s = d.state();
  assert.ok(Math.abs(s.inFlight.reservedUsd - 0.5) < EPS);
  assert.equal(s.inFlight.parked, 1);
  const c = held(d.admitCall("c"));
  assert.equal(c.heldUsd, 0.4);

  // Spend elsewhere leaves less than is held: the parked call frees nothing, so it is not stopped.
  let stopped = false;
  a.onStop(() => stopped = true);
  d.addSpend(T0, 0.05);
  assert.ok(!stopped);

  // $0.95 left; b and c hold $0.80, a spent $0.10: $0.05 is free, less than the reservation.
  assert.equal(a.resume(), false, "no room: it stops");
  assert.ok(a.heldUsd - 0.1 < EPS);
  assert.equal(d.state().inFlight.parked, 0);
  // Told to stop once resumed without room: a later reply is not given room either.
  assert.equal(a.spent(0.12), false);
});

Deno.test("a parked call resumed with room holds the reservation again beyond what it spent", () => {
  const { d } = desk({ usdPerDay: 1, reserve: 0.4 });
  const a = held(d.admitCall("a"));
  assert.ok(a.spent(0.1));
  a.park();
  const b = held(d.admitCall("b"));
  b.settle(0.3);
  // $0.70 left, nothing else held: a goes on, holding its spend plus the reservation.
  assert.equal(a.resume(), true);
  assert.ok(Math.abs(a.heldUsd - 0.5) < EPS);
  assert.ok(a.spent(0.15));
  // Parked again when all that is left is less than the reservation: it may have all of it.
  a.park();
  held(d.admitCall("c")).settle(0.45);
  // $0.25 left, $0.15 of it a's: it may have the other $0.10.
  assert.equal(a.resume(), true);
  assert.ok(Math.abs(a.heldUsd - 0.25) < EPS, `holds ${a.heldUsd}`);
  // A reached budget refuses it.
  a.park();
  d.addSpend(T0, 0.25);
  assert.equal(a.resume(), false);
});
