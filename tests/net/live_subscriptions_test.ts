/**
 * The live subscriptions of one relay (src/net/live_subscriptions.ts) without a
 * relay: what is sent when the interest changes, which events are taken, and the
 * fallback to the firehose. interest_sync_test.ts runs them against real relays.
 */

import assert from "node:assert/strict";
import { interestSubscriptions, type Subscription } from "../../src/net/interest.ts";
import { FIREHOSE, liveDiff, LiveSubscriptions } from "../../src/net/live_subscriptions.ts";
import { NOSTR_KINDS } from "../../src/posts/kinds.ts";
import { alice, bob, signed, testLog } from "./net_support.ts";

const A: Subscription = { key: "a", filters: [{ kinds: [4470], "#p": ["x"] }] };
const B: Subscription = { key: "b", filters: [{ kinds: [4471] }] };

Deno.test("the diff opens new keys, replaces a changed one REQ before CLOSE, closes the ones gone, and leaves the same alone", () => {
  const first = liveDiff(new Map(), [A, B], 0);
  assert.deepEqual(first.messages, [
    ["REQ", "wats-live-a-1", { kinds: [4470], "#p": ["x"], limit: 0 }],
    ["REQ", "wats-live-b-2", { kinds: [4471], limit: 0 }],
  ]);
  const A2: Subscription = { key: "a", filters: [{ kinds: [4470], "#p": ["x", "y"] }] };
  const second = liveDiff(first.open, [A2], first.count);
  assert.deepEqual(second.messages, [
    ["REQ", "wats-live-a-3", { kinds: [4470], "#p": ["x", "y"], limit: 0 }],
    ["CLOSE", "wats-live-a-1"],
    ["CLOSE", "wats-live-b-2"],
  ]);
  assert.deepEqual([...second.open.keys()], ["a"]);
  assert.deepEqual(liveDiff(second.open, [A2], second.count).messages, []);
  // The map given is not changed.
  assert.deepEqual([...first.open.keys()], ["a", "b"]);
});

function live(subscriptions: readonly Subscription[] | undefined) {
  const sent: unknown[][] = [];
  const subs = new LiveSubscriptions({
    subscriptions,
    send: (m) => (sent.push(m), true),
    log: testLog,
    url: "ws://relay.test",
  });
  return { subs, sent };
}

const INTEREST = interestSubscriptions({
  profiles: [bob.pubkey],
  caps: [],
  openAsks: false,
  haltAuthors: [],
  threads: [],
});

Deno.test("an event outside the interest falls the connection back to one firehose subscription, once, until reset", () => {
  const { subs, sent } = live(INTEREST);
  subs.open();
  const opened = sent.splice(0);
  assert.ok(opened.every((m) => m[0] === "REQ"));
  const first = String(opened[0]![1]);
  const forBob = signed(alice, "ask", "to bob", { title: "t", mentions: [bob.pubkey] });
  assert.equal(subs.admit(first, forBob), true);
  assert.equal(subs.unasked, 0);
  assert.deepEqual(sent, []);

  const outside = signed(alice, "note", "to no one");
  assert.equal(subs.admit(first, outside), true, "taken: the firehose brings it anyway");
  assert.equal(subs.fallenBack, true);
  assert.equal(subs.unasked, 1);
  assert.deepEqual(sent[0], ["REQ", sent[0]![1], { kinds: [...NOSTR_KINDS], limit: 0 }]);
  assert.match(String(sent[0]![1]), /^wats-live-all-\d+$/);
  assert.deepEqual(
    sent.slice(1).map((m) => m[0]),
    opened.map(() => "CLOSE"),
    "every interest subscription closed",
  );
  sent.length = 0;
  // Fallen back: everything is taken, nothing more is counted.
  assert.equal(subs.admit(String(opened[0]![1]), outside), true);
  assert.equal(subs.unasked, 1);
  // …and an event still coming on a closed interest id has it closed again.
  assert.deepEqual(sent.splice(0), [["CLOSE", opened[0]![1]]]);

  subs.reset();
  assert.equal(subs.fallenBack, false);
  subs.open();
  assert.ok(sent.length === opened.length && sent.every((m) => m[0] === "REQ"));
});

Deno.test("after a change, an event of the filters before is dropped unstored but does not fall back", () => {
  const { subs } = live(INTEREST);
  subs.open();
  const forBob = signed(alice, "ask", "to bob", { title: "t", mentions: [bob.pubkey] });
  subs.setInterest(interestSubscriptions({
    profiles: ["c".repeat(64)],
    caps: [],
    openAsks: false,
    haltAuthors: [],
    threads: [],
  }));
  subs.open();
  assert.equal(subs.admit("wats-live-p-1", forBob), false);
  assert.equal(subs.fallenBack, false);
  assert.equal(subs.unasked, 0);
});

Deno.test("a live id still sending after its CLOSE is closed once more, not for every event", () => {
  const { subs, sent } = live(undefined);
  subs.open();
  assert.deepEqual(sent.splice(0).map((m) => m[1]), ["wats-live-all-1"]);
  assert.equal(subs.isOpen("wats-live-all-1"), true);
  const e = signed(alice, "note", "x");
  assert.equal(subs.admit("wats-live-all-1", e), true);
  assert.deepEqual(sent, []);
  assert.equal(subs.admit("wats-live-old-7", e), true);
  assert.equal(subs.admit("wats-live-old-7", e), true);
  assert.deepEqual(sent, [["CLOSE", "wats-live-old-7"]]);
});

Deno.test("with no interest everything is taken and nothing counted; pages and fetches are checked as asked", () => {
  const { subs } = live(undefined);
  assert.deepEqual(subs.filters, FIREHOSE[0]!.filters);
  const note = signed(alice, "note", "x");
  assert.equal(subs.asked({ kinds: [4470] }, note, false), true);
  assert.equal(subs.unasked, 0);
  assert.equal(subs.asked({ kinds: [4470] }, note, true), false, "a fetch is always checked");
  assert.equal(subs.unasked, 1);
  // Junk is left to the ingest, which refuses it and says why.
  assert.equal(subs.asked({ kinds: [4470] }, null, true), true);
});
