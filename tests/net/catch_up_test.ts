/**
 * The catch-up's paging decisions (src/net/catch_up.ts), one case each, and the
 * reducer that runs them over a connection's messages: the relay_sync tests drive
 * them through real relays; these pin each branch. Every state object and list the
 * reducer is given is frozen, so a change made in place would throw.
 */

import assert from "node:assert/strict";
import {
  afterPage,
  type CatchUp,
  type CatchUpEffect,
  type CatchUpInput,
  type CatchUpState,
  countInPage,
  initialCatchUp,
  MAX_ADDED,
  newPage,
  openPage,
  stepCatchUp,
} from "../../src/net/catch_up.ts";

const CATCH_UP: CatchUp = { filter: { kinds: [4470] }, since: 100, added: false };
const fresh = { stuck: 0, seen: new Set<string>() };

function page(
  until: number | undefined,
  events: Array<[string, number]>,
  seen = new Set<string>(),
) {
  let p = newPage("wats-page-1", CATCH_UP, 100, until);
  for (const [id, at] of events) p = countInPage(p, { id, created_at: at }, seen);
  return p;
}

Deno.test("events outside the page's window are not counted", () => {
  const p = page(200, [["a", 99], ["b", 201], ["c", 150]]);
  assert.equal(p.received, 1);
  assert.equal(p.oldest, 150);
});

Deno.test("new events: the next page ends at the oldest second, inclusive, remembering its ids", () => {
  const p = page(undefined, [["a", 180], ["b", 150], ["c", 150]]);
  const next = afterPage(p, fresh, 1000);
  assert.deepEqual(next, { until: 150, stuck: 0, seen: new Set(["b", "c"]) });
});

Deno.test("a page all in its boundary second with new events asks that second once more, then skips it", () => {
  const p = page(150, [["x", 150], ["y", 150]], new Set(["b"]));
  const again = afterPage(p, { stuck: 0, seen: new Set(["b"]) }, 2);
  assert.deepEqual(again, { until: 150, stuck: 1, seen: new Set(["b", "x", "y"]) });
  const p2 = page(150, [["z", 150], ["x", 150]], again.seen);
  const skip = afterPage(p2, again, 2);
  assert.deepEqual(skip, { until: 149, skipped: 150, stuck: 0, seen: new Set() });
});

Deno.test("a full page of one second, all seen, skips the second instead of looping", () => {
  const seen = new Set(["a", "b"]);
  const p = page(150, [["a", 150], ["b", 150]], seen);
  assert.equal(p.fresh, 0);
  assert.deepEqual(afterPage(p, { stuck: 0, seen }, 2), {
    until: 149,
    skipped: 150,
    stuck: 0,
    seen: new Set(),
  });
});

Deno.test("nothing new and not full: the filter is caught up", () => {
  const seen = new Set(["a"]);
  const p = page(150, [["a", 150]], seen);
  assert.deepEqual(afterPage(p, { stuck: 0, seen }, 1000), { stuck: 0, seen: new Set() });
  assert.deepEqual(afterPage(page(undefined, []), fresh, 1000), { stuck: 0, seen: new Set() });
});

// ---- the reducer: one connection's catch-up, message by message -------------

const FILTER = { kinds: [4470] };

/** Runs inputs through the reducer, collecting every effect; freezes each state it sees. */
function run(state: CatchUpState, ...inputs: CatchUpInput[]) {
  const effects: CatchUpEffect[] = [];
  for (const input of inputs) {
    const step = stepCatchUp(deepFreeze(state), input);
    state = step.state;
    effects.push(...step.effects);
  }
  return { state, effects };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** An event of page `subId` handed to the ingest and found valid. */
function stored(subId: string, id: string, at: number): CatchUpInput[] {
  return [{ type: "event", subId }, { type: "stored", subId, event: { id, created_at: at } }];
}

Deno.test("a connection's catch-up asks one filter per REQ, from since, with the page limit", () => {
  const { state, effects } = run(initialCatchUp(2), {
    type: "start",
    filters: [FILTER, { kinds: [4471] }],
    since: 100,
  });
  assert.deepEqual(effects, [
    { type: "arm", subId: "wats-page-1" },
    { type: "req", subId: "wats-page-1", filter: { kinds: [4470], limit: 2, since: 100 } },
  ]);
  assert.equal(state.queue.length, 2);
  assert.equal(openPage(state, "wats-page-1")?.subId, "wats-page-1");
  assert.equal(openPage(state, "wats-page-9"), undefined);
});

Deno.test("a full page ends without EOSE, the next asks until its oldest second, then the next filter; caught up once", () => {
  const start = run(initialCatchUp(2), {
    type: "start",
    filters: [FILTER, { kinds: [4471] }],
    since: 100,
  });
  const first = run(
    start.state,
    ...stored("wats-page-1", "a", 180),
    ...stored("wats-page-1", "b", 150),
  );
  assert.deepEqual(first.effects, [
    { type: "disarm" },
    { type: "close", subId: "wats-page-1" },
    { type: "arm", subId: "wats-page-2" },
    {
      type: "req",
      subId: "wats-page-2",
      filter: { kinds: [4470], limit: 2, since: 100, until: 150 },
    },
  ]);
  // The second page brings only the boundary event: this filter is done, the next starts.
  const second = run(first.state, ...stored("wats-page-2", "b", 150), {
    type: "eose",
    subId: "wats-page-2",
  });
  assert.deepEqual(second.effects.slice(2), [
    { type: "arm", subId: "wats-page-3" },
    { type: "req", subId: "wats-page-3", filter: { kinds: [4471], limit: 2, since: 100 } },
  ]);
  const done = run(second.state, { type: "eose", subId: "wats-page-3" });
  assert.deepEqual(done.effects.at(-1), { type: "caughtUp" });
  assert.equal(done.state.caughtUp, true);
  assert.equal(done.state.page, undefined);
  // A late EOSE of an ended page changes nothing.
  assert.deepEqual(run(done.state, { type: "eose", subId: "wats-page-3" }).effects, []);
});

Deno.test("a page waits for its ingests after EOSE; answers for an older page are ignored", () => {
  const start = run(initialCatchUp(1000), { type: "start", filters: [FILTER], since: undefined });
  const waiting = run(
    start.state,
    { type: "event", subId: "wats-page-1" },
    { type: "eose", subId: "wats-page-1" },
  );
  // Closed, but not decided: the event's answer may still make the page fresh.
  assert.deepEqual(waiting.effects, [{ type: "disarm" }, { type: "close", subId: "wats-page-1" }]);
  assert.equal(openPage(waiting.state, "wats-page-1"), undefined);
  const after = run(waiting.state, {
    type: "stored",
    subId: "wats-page-1",
    event: { id: "x", created_at: 170 },
  });
  assert.deepEqual(after.effects.at(-1), {
    type: "req",
    subId: "wats-page-2",
    filter: { kinds: [4470], limit: 1000, until: 170 },
  });
  const stale = run(after.state, { type: "stored", subId: "wats-page-1" });
  assert.deepEqual(stale.effects, []);
  assert.equal(stale.state, after.state);
});

Deno.test("an invalid event does not count: the page ends at EOSE with nothing more to ask", () => {
  const start = run(initialCatchUp(1000), { type: "start", filters: [FILTER], since: 100 });
  const r = run(
    start.state,
    { type: "event", subId: "wats-page-1" },
    { type: "stored", subId: "wats-page-1" },
    { type: "timeout", subId: "wats-page-1" },
  );
  assert.deepEqual(r.effects.map((e) => e.type), ["disarm", "close", "caughtUp"]);
});

Deno.test("a CLOSED page is dropped and the filter is not paged further on this connection", () => {
  const start = run(initialCatchUp(1000), { type: "start", filters: [FILTER], since: 100 });
  const r = run(start.state, { type: "closed", subId: "wats-page-1" }, {
    type: "eose",
    subId: "wats-page-1",
  });
  assert.deepEqual(r.effects, [{ type: "disarm" }]);
  assert.equal(r.state.page, undefined);
  assert.equal(r.state.caughtUp, false);
});

Deno.test("added filters: caught up on now with no since, kept across connections until done, at most 64", () => {
  const idle = run(initialCatchUp(1000), { type: "add", filters: [FILTER], now: false });
  assert.deepEqual(idle.effects, []);
  assert.deepEqual(idle.state.added, [FILTER]);
  // The next connection catches up on it after the interest's filters, with no since.
  const start = run(idle.state, { type: "start", filters: [{ kinds: [4471] }], since: 100 });
  const next = run(start.state, { type: "eose", subId: "wats-page-1" });
  assert.deepEqual(next.effects.at(-1), {
    type: "req",
    subId: "wats-page-2",
    filter: { kinds: [4470], limit: 1000 },
  });
  const done = run(next.state, { type: "eose", subId: "wats-page-2" });
  assert.deepEqual(done.state.added, []);
  // While caught up, an added filter starts a page at once; one already added does not.
  const again = run(done.state, { type: "add", filters: [FILTER, FILTER], now: true });
  assert.deepEqual(again.effects.map((e) => e.type), ["arm", "req"]);
  const dup = run(again.state, { type: "add", filters: [FILTER], now: true });
  assert.deepEqual(dup.effects, []);
  const many = Array.from({ length: 70 }, (_, i) => ({ kinds: [4470], "#e": [String(i)] }));
  const capped = run(initialCatchUp(1000), { type: "add", filters: many, now: false });
  assert.equal(capped.state.added.length, MAX_ADDED);
  assert.deepEqual(capped.state.added[0], many[6]);
});

Deno.test("a lost connection stops the catch-up; page ids never repeat on the next", () => {
  const start = run(initialCatchUp(1000), { type: "start", filters: [FILTER], since: 100 });
  const stopped = run(start.state, { type: "stop" });
  assert.deepEqual(stopped.effects, [{ type: "disarm" }]);
  assert.equal(stopped.state.page, undefined);
  assert.deepEqual(run(stopped.state, { type: "eose", subId: "wats-page-1" }).effects, []);
  const again = run(stopped.state, { type: "start", filters: [FILTER], since: 100 });
  assert.equal(again.state.page?.subId, "wats-page-2");
});
