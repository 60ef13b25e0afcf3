import assert from "node:assert/strict";
import { planRun, type PlanState, takeForRun } from "../../src/runner/plan.ts";

const MIN = 60_000;
const HOUR = 60 * MIN;
/** 2026-10-15 12:00:00 UTC. */
const T0 = Date.UTC(2026, 9, 15, 12);

/** An idle runner at T0 with nothing queued, already checked by the loop detector. */
function state(s: Partial<PlanState> = {}): PlanState {
  return {
    now: T0,
    runnable: 0,
    decided: 0,
    runStarts: [],
    maxRunsPerHour: 6,
    heartbeatMs: 0,
    checked: true,
    ...s,
  };
}

Deno.test("planRun: nothing queued and no heartbeat waits for nothing (no timer)", () => {
  assert.deepEqual(planRun(state()), { do: "idle" });
});

Deno.test("planRun: queued events wait for the end of their debounce window", () => {
  assert.deepEqual(planRun(state({ runnable: 2, debounceAt: T0 + 30_000 })), {
    do: "wait",
    until: T0 + 30_000,
  });
});

Deno.test("planRun: at a deadline the loop detector is asked again before anything runs", () => {
  assert.deepEqual(planRun(state({ runnable: 1, debounceAt: T0, checked: false })), {
    do: "check",
  });
  assert.deepEqual(planRun(state({ runnable: 1, debounceAt: T0 })), {
    do: "run",
    trigger: "events",
  });
});

Deno.test("planRun: a debounce whose events the loop detector now holds ends, and the heartbeat is next", () => {
  assert.deepEqual(
    planRun(state({ runnable: 0, debounceAt: T0, heartbeatAt: T0 + HOUR })),
    { do: "wait", until: T0 + HOUR, debounceEnded: true },
  );
});

Deno.test("planRun: a due heartbeat with no events runs as a heartbeat", () => {
  assert.deepEqual(planRun(state({ heartbeatAt: T0 - 1, heartbeatMs: HOUR })), {
    do: "run",
    trigger: "heartbeat",
  });
});

Deno.test("planRun: a decision on a parked request runs at once, as events", () => {
  assert.deepEqual(planRun(state({ decided: 1 })), { do: "run", trigger: "events" });
});

Deno.test("planRun: a reached budget pauses until it resets, whatever is due", () => {
  const blocked = { reason: "agent.max_usd_per_day reached", resetsAt: T0 + 12 * HOUR };
  assert.deepEqual(planRun(state({ blocked, runnable: 3, debounceAt: T0, decided: 1 })), {
    do: "pause",
    until: T0 + 12 * HOUR,
    reason: "agent.max_usd_per_day reached",
  });
});

Deno.test("planRun: the hourly cap holds due events until the oldest run of the hour leaves the window", () => {
  const starts = [T0 - 50 * MIN, T0 - 10 * MIN];
  const plan = planRun(
    state({ runnable: 2, debounceAt: T0, runStarts: starts, maxRunsPerHour: 2 }),
  );
  assert.deepEqual(plan, {
    do: "skip",
    message: "run skipped: hourly cap (agent.max_runs_per_hour = 2); 2 queued event(s) wait " +
      `until ${new Date(T0 + 10 * MIN).toISOString()}`,
    capUntil: T0 + 10 * MIN,
  });
  // Held by the cap, the events' deadline is its release.
  assert.deepEqual(
    planRun(state({ runnable: 2, debounceAt: T0, capUntil: T0 + 10 * MIN, runStarts: starts })),
    { do: "wait", until: T0 + 10 * MIN },
  );
});

Deno.test("planRun: a capped heartbeat is skipped and comes again one heartbeat later", () => {
  assert.deepEqual(
    planRun(state({
      heartbeatAt: T0,
      heartbeatMs: HOUR,
      runStarts: [T0 - 5 * MIN],
      maxRunsPerHour: 1,
    })),
    {
      do: "skip",
      message: "run skipped: hourly cap (agent.max_runs_per_hour = 1); heartbeat skipped " +
        `until ${new Date(T0 + 55 * MIN).toISOString()}`,
      heartbeatAt: T0 + HOUR,
    },
  );
});

Deno.test("planRun: agent.max_runs_per_hour = 0 holds events for good, with no release time", () => {
  assert.deepEqual(planRun(state({ decided: 1, maxRunsPerHour: 0 })), {
    do: "skip",
    message: "run skipped: hourly cap (agent.max_runs_per_hour = 0); permission decisions wait",
    capUntil: Infinity,
  });
  assert.deepEqual(planRun(state({ decided: 1, capUntil: Infinity })), { do: "idle" });
});

Deno.test("planRun: runs that started over an hour ago do not count against the cap", () => {
  assert.deepEqual(
    planRun(state({ decided: 1, runStarts: [T0 - HOUR, T0 - 2 * HOUR], maxRunsPerHour: 1 })),
    { do: "run", trigger: "events" },
  );
});

const ev = (seq: number, thread: string) => ({ post: { seq }, thread });

Deno.test("takeForRun: without threadPerRun a run takes everything, about a thread only when there is one", () => {
  const events = [ev(2, "a"), ev(1, "b")];
  const decided = [{ thread: "c" }, {}];
  assert.deepEqual(takeForRun(events, decided, false), { events, decided });
  assert.deepEqual(takeForRun([ev(1, "a")], [{ thread: "a" }, {}], false), {
    events: [ev(1, "a")],
    decided: [{ thread: "a" }, {}],
    thread: "a",
  });
});

Deno.test("takeForRun: with threadPerRun a run takes the oldest event's thread and the decisions of no thread", () => {
  const events = [ev(5, "a"), ev(3, "b"), ev(4, "b")];
  const decided = [{ thread: "a" }, {}, { thread: "b" }];
  assert.deepEqual(takeForRun(events, decided, true), {
    events: [ev(3, "b"), ev(4, "b")],
    decided: [{}, { thread: "b" }],
    thread: "b",
  });
  // No event: the first decision with a thread chooses it.
  assert.deepEqual(takeForRun([], [{}, { thread: "a" }, { thread: "b" }], true), {
    events: [],
    decided: [{}, { thread: "a" }],
    thread: "a",
  });
});
