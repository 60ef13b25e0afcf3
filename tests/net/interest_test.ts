import assert from "node:assert/strict";
import {
  addedFilters,
  FILTERS_PER_REQ,
  type Interest,
  interestSubscriptions,
  MAX_ASK_THREADS,
  MAX_THREADS,
  THREAD_BUCKETS,
  VALUES_PER_FILTER,
} from "../../src/net/interest.ts";
import { NOSTR_KINDS, nostrKindOf } from "../../src/posts/kinds.ts";

const ASK = nostrKindOf("ask");
const HALT = nostrKindOf("halt");
const ANNOUNCE = nostrKindOf("announce");
const PRESENCE = nostrKindOf("presence");
const ALL = [...NOSTR_KINDS];
const hex = (n: number) => n.toString(16).padStart(64, "0");
/** A root id whose first byte is `byte` (its thread bucket is `byte % THREAD_BUCKETS`). */
const root = (byte: number, n: number) => byte.toString(16).padStart(2, "0") + hex(n).slice(2);

const me = hex(1), agent = hex(2), guardian = hex(3);
const base: Interest = {
  profiles: [agent, me],
  caps: ["rust", "deno"],
  openAsks: false,
  haltAuthors: [guardian],
  threads: [],
};

Deno.test("with open asks off: #p and authors of the profiles, asks with its caps, halts of halt.accept, announces", () => {
  assert.deepEqual(interestSubscriptions(base), [{
    key: "base",
    filters: [
      { kinds: ALL, "#p": [me, agent] },
      { kinds: ALL, authors: [me, agent] },
      { kinds: [ASK], "#t": ["cap:deno", "cap:rust"] },
      { kinds: [HALT], authors: [guardian] },
      { kinds: [ANNOUNCE, PRESENCE] },
    ],
  }]);
});

Deno.test("with open asks on: every ask is added last, the cap filter kept", () => {
  const [sub] = interestSubscriptions({ ...base, openAsks: true });
  assert.deepEqual(sub!.filters.slice(2), [
    { kinds: [ASK], "#t": ["cap:deno", "cap:rust"] },
    { kinds: [HALT], authors: [guardian] },
    { kinds: [ANNOUNCE, PRESENCE] },
    { kinds: [ASK] },
  ]);
});

Deno.test("other asks' threads are followed besides the MAX_THREADS that concern the node, never instead", () => {
  const threads = Array.from({ length: MAX_THREADS + 20 }, (_, i) => root(1, i));
  const askThreads = Array.from({ length: MAX_ASK_THREADS + 20 }, (_, i) => root(2, i));
  const subs = interestSubscriptions({ ...base, openAsks: true, threads, askThreads });
  const ids = new Set(subs.flatMap((s) => s.filters.flatMap((f) => f["#e"] ?? [])));
  assert.equal(ids.size, MAX_THREADS + MAX_ASK_THREADS);
  assert.ok(threads.slice(0, MAX_THREADS).every((t) => ids.has(t)));
  assert.ok(askThreads.slice(0, MAX_ASK_THREADS).every((t) => ids.has(t)));
});

Deno.test("no caps and open asks off: no ask filter but the addressed ones; no halt.accept: no halt filter", () => {
  const [sub] = interestSubscriptions({ ...base, caps: [], haltAuthors: [] });
  assert.deepEqual(sub!.filters, [
    { kinds: ALL, "#p": [me, agent] },
    { kinds: ALL, authors: [me, agent] },
    { kinds: [ANNOUNCE, PRESENCE] },
  ]);
});

Deno.test("threads are spread over buckets by the first byte of their root, each its own subscription", () => {
  const a = root(0x00, 1), b = root(0x08, 2), c = root(0x01, 3);
  const subs = interestSubscriptions({ ...base, threads: [a, b, c] });
  assert.deepEqual(subs.slice(1), [
    { key: "threads-0", filters: [{ kinds: ALL, "#e": [a, b] }] },
    { key: "threads-1", filters: [{ kinds: ALL, "#e": [c] }] },
  ]);
});

Deno.test("the newest MAX_THREADS threads are followed; a filter holds at most VALUES_PER_FILTER ids, a REQ FILTERS_PER_REQ filters", () => {
  // All in one bucket, so the bucket must split into filters.
  const threads = Array.from({ length: MAX_THREADS + 50 }, (_, i) => root(0, i));
  const subs = interestSubscriptions({ ...base, threads });
  const ids = subs.flatMap((s) => s.filters.flatMap((f) => f["#e"] ?? []));
  assert.deepEqual(new Set(ids), new Set(threads.slice(0, MAX_THREADS)));
  for (const s of subs) {
    assert.ok(s.filters.length <= FILTERS_PER_REQ, `${s.key}: ${s.filters.length} filters`);
    for (const f of s.filters) {
      for (const list of [f["#e"], f["#p"], f.authors]) {
        assert.ok((list?.length ?? 0) <= VALUES_PER_FILTER);
      }
    }
  }
  assert.equal(subs.filter((s) => s.key.startsWith("threads-")).length, 1);
});

Deno.test("many profiles split into several filters, and past FILTERS_PER_REQ filters into another subscription", () => {
  const profiles = Array.from({ length: 5 * VALUES_PER_FILTER }, (_, i) => hex(1000 + i));
  const subs = interestSubscriptions({ ...base, profiles });
  assert.deepEqual(subs.map((s) => s.key), ["base", "base-1"]);
  // 5 #p, 5 authors, caps, announces, halts.
  assert.deepEqual(subs.map((s) => s.filters.length), [FILTERS_PER_REQ, 13 - FILTERS_PER_REQ]);
  assert.equal(subs.flatMap((s) => s.filters).filter((f) => f["#p"]).length, 5);
});

Deno.test("equal interests give equal subscriptions whatever the order of their lists", () => {
  const t = [root(3, 1), root(3, 2)];
  assert.deepEqual(
    interestSubscriptions({ ...base, threads: t }),
    interestSubscriptions({
      ...base,
      profiles: [...base.profiles].reverse(),
      caps: [...base.caps].reverse(),
      threads: [...t].reverse(),
    }),
  );
  // Following one more thread changes only that thread's bucket.
  const before = interestSubscriptions({ ...base, threads: [root(1, 1), root(2, 2)] });
  const after = interestSubscriptions({ ...base, threads: [root(1, 1), root(2, 2), root(2, 3)] });
  const changed = after.filter((s, i) => JSON.stringify(s) !== JSON.stringify(before[i]));
  assert.deepEqual(changed.map((s) => s.key), ["threads-2"]);
  assert.equal(THREAD_BUCKETS, 8);
});

Deno.test("added filters: only the new threads, caps, profiles and halt authors, nothing already asked", () => {
  const t1 = root(1, 1), t2 = root(1, 2);
  const prev: Interest = { ...base, threads: [t1] };
  assert.deepEqual(addedFilters(prev, prev), []);
  assert.deepEqual(addedFilters(prev, { ...prev, threads: [t2, t1] }), [{
    kinds: ALL,
    "#e": [t2],
  }]);
  const other = hex(9);
  assert.deepEqual(
    addedFilters(prev, { ...prev, caps: ["rust", "go"], haltAuthors: [guardian, other] }),
    [{ kinds: [ASK], "#t": ["cap:go"] }, { kinds: [HALT], authors: [other] }],
  );
  assert.deepEqual(addedFilters(prev, { ...prev, profiles: [...prev.profiles, other] }), [
    { kinds: ALL, "#p": [other] },
    { kinds: ALL, authors: [other] },
  ]);
  // Open asks turned on: every ask; a cap added with open asks on still adds its filter.
  assert.deepEqual(addedFilters(prev, { ...prev, openAsks: true }), [{ kinds: [ASK] }]);
  const open = { ...prev, openAsks: true };
  assert.deepEqual(addedFilters(open, { ...open, caps: ["go"] }), [{
    kinds: [ASK],
    "#t": ["cap:go"],
  }]);
  assert.deepEqual(addedFilters(prev, { ...prev, askThreads: [t2] }), [{ kinds: ALL, "#e": [t2] }]);
});
