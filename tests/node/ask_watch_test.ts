/**
 * The no-taker watch (src/node/ask_watch.ts) with a fake clock and timers: one timer for the first
 * ask due, a claim that still holds moves the check to its lapse, an answer is reported as it
 * arrives, and another node's ask is never reported.
 */

import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import type { NodeEvent } from "../../src/contracts/node_events.ts";
import type { AskState } from "../../src/contracts/views.ts";
import { watchAsks } from "../../src/node/ask_watch.ts";
import type { StoredPost } from "../../src/store/store.ts";

const ME = "a".repeat(64);
const OTHER = "b".repeat(64);
const HOUR = 3_600_000;
const T0 = 1_800_000_000;

function world() {
  let now = T0 * 1000;
  const timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
  const listeners: Array<(posts: StoredPost[]) => void> = [];
  const posts = new Map<string, StoredPost>();
  const states = new Map<string, Partial<AskState>>();
  const events: NodeEvent[] = [];
  const store = {
    onInsert(l: (posts: StoredPost[]) => void) {
      listeners.push(l);
      return () => {};
    },
    localAuthors: () => new Set([ME]),
    query: () => [],
    get: (id: string) => posts.get(id),
  };
  const insert = (p: Partial<StoredPost> & { id: string; kind: string; author: string }) => {
    const full = { createdAt: Math.floor(now / 1000), caps: [], to: [], ...p } as StoredPost;
    posts.set(p.id, full);
    for (const l of listeners) l([full]);
  };
  /** Moves the clock to `t` and fires the timers due, as the event loop would. */
  const advanceTo = (t: number) => {
    now = t;
    for (const timer of [...timers]) {
      if (timer.live && timer.at <= now) {
        timer.live = false;
        timer.fn();
      }
    }
  };
  const watch = watchAsks({
    // deno-lint-ignore no-explicit-any
    store: store as any,
    stateOf: (
      id,
    ) => ({
      ask: id,
      by: "",
      local: true,
      phase: "waiting",
      routing: { caps: [], to: [], matching: 1, reachable: 1 },
      answers: [],
      heldDrafts: [],
      ...states.get(id),
    } as AskState),
    timeoutMs: HOUR,
    clock: { now: () => now },
    timers: {
      setTimer: (ms, fn) => {
        const t = { at: now + ms, fn, live: true };
        timers.push(t);
        return t;
      },
      clearTimer: (h) => void ((h as { live: boolean }).live = false),
    },
    events: (e) => events.push(e),
  });
  const pending = () => timers.filter((t) => t.live).map((t) => t.at);
  return { insert, advanceTo, states, events, pending, watch };
}

Deno.test("an ask of this node with no taker by agent.ask_timeout is reported once, at its time", () => {
  const w = world();
  w.insert({ id: "q1", kind: "ask", author: ME, title: "Logs" });
  assert.deepEqual(w.pending(), [T0 * 1000 + HOUR], "one timer, for the ask's time");
  w.states.set("q1", { phase: "no_taker", title: "Logs", noTakerAt: T0 * 1000 + HOUR });
  w.advanceTo(T0 * 1000 + HOUR - 1);
  assert.deepEqual(w.events, []);
  w.advanceTo(T0 * 1000 + HOUR);
  assert.deepEqual(w.events, [
    { event: "ask_no_taker", ask: "q1", title: "Logs", since: T0 * 1000 + HOUR },
  ]);
  w.advanceTo(T0 * 1000 + 5 * HOUR);
  assert.equal(w.events.length, 1, "reported once");
  assert.deepEqual(w.pending(), []);
  w.watch.stop();
});

Deno.test("a claim that still holds at the ask's time moves the check to the claim's lapse", () => {
  const w = world();
  w.insert({ id: "q1", kind: "ask", author: ME });
  const lapse = T0 * 1000 + HOUR + 20 * 60_000;
  w.states.set("q1", { phase: "claimed", claim: { by: "x", at: T0 * 1000, until: lapse } });
  w.advanceTo(T0 * 1000 + HOUR);
  assert.deepEqual(w.events, []);
  assert.deepEqual(w.pending(), [lapse]);
  w.states.set("q1", { phase: "no_taker", noTakerAt: T0 * 1000 + HOUR });
  w.advanceTo(lapse);
  assert.deepEqual(w.events.map((e: NodeEvent) => e.event), ["ask_no_taker"]);
  w.watch.stop();
});

Deno.test("an answer to this node's ask is reported as it arrives, and the ask is then not reported as no taker", () => {
  const w = world();
  w.insert({ id: "q1", kind: "ask", author: ME });
  w.insert({ id: "a1", kind: "answer", author: OTHER, root: "q1", parent: "q1" });
  assert.deepEqual(w.events, [
    { event: "ask_answered", ask: "q1", answer: "a1", by: npubEncode(OTHER) },
  ]);
  w.states.set("q1", { phase: "answered" });
  w.advanceTo(T0 * 1000 + 2 * HOUR);
  assert.equal(w.events.length, 1);
  w.watch.stop();
});

Deno.test("another node's ask, and the asker's own answer, are never reported", () => {
  const w = world();
  w.insert({ id: "q2", kind: "ask", author: OTHER });
  assert.deepEqual(w.pending(), [], "another author's ask is not watched");
  w.insert({ id: "a2", kind: "answer", author: ME, root: "q2", parent: "q2" });
  w.insert({ id: "q1", kind: "ask", author: ME });
  w.insert({ id: "a3", kind: "answer", author: ME, root: "q1", parent: "q1" });
  assert.deepEqual(w.events, []);
  w.watch.stop();
});
