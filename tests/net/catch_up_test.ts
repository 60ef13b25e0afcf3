/**
 * The catch-up's paging decisions (src/net/catch_up.ts), one case each: the
 * relay_sync tests drive them through real relays; these pin each branch.
 */

import assert from "node:assert/strict";
import { afterPage, type CatchUp, countInPage, newPage } from "../../src/net/catch_up.ts";

const CATCH_UP: CatchUp = { filter: { kinds: [4470] }, since: 100, added: false };
const fresh = { stuck: 0, seen: new Set<string>() };

function page(
  until: number | undefined,
  events: Array<[string, number]>,
  seen = new Set<string>(),
) {
  const p = newPage("wats-page-1", CATCH_UP, 100, until);
  for (const [id, at] of events) countInPage(p, { id, created_at: at }, seen);
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
