import assert from "node:assert/strict";
import { finalizeEvent } from "nostr-tools/pure";
import { createIngest, MAX_BATCH } from "../../src/net/ingest.ts";
import { NOSTR_KINDS } from "../../src/posts/kinds.ts";
import { alice, bob, nowSec, recordingSink, signed, tempStore, testLog } from "./net_support.ts";

const MAX_SKEW = 10 * 60_000;

function setup() {
  const t = tempStore();
  const rec = recordingSink();
  const ingest = createIngest({
    store: t.store,
    events: rec.sink,
    log: testLog,
    now: Date.now,
    maxSkewMs: MAX_SKEW,
  });
  return { ...t, ...rec, ingest };
}

Deno.test("ingest stores a valid post once and announces it with its source", async () => {
  const { store, seen, ingest, cleanup } = setup();
  try {
    const e = signed(alice, "ask", "Who knows Deno?", { title: "Deno" });
    assert.deepEqual(await ingest(e, "ws://relay.test"), { ok: true, id: e.id });
    assert.deepEqual(await ingest(e, "ws://relay.test"), { ok: true, id: e.id, duplicate: true });
    assert.equal(store.count(), 1);
    assert.deepEqual(seen, [{
      event: "post_stored",
      id: e.id,
      seq: 1,
      kind: "ask",
      author: alice.pubkey,
      source: "ws://relay.test",
    }]);
    assert.equal(ingest.stored(), 1);
  } finally {
    cleanup();
  }
});

Deno.test("ingest refuses bad events with a code and reason, counts them, stores none", async () => {
  const { store, seen, ingest, cleanup } = setup();
  try {
    const good = signed(alice, "note", "fine");
    const badSig = { ...good, sig: (good.sig[0] === "a" ? "b" : "a") + good.sig.slice(1) };
    const unknownKind = finalizeEvent(
      { kind: 1, created_at: nowSec(), tags: [], content: "plain note" },
      alice.secret,
    );
    const future = signed(alice, "note", "from the future", { createdAt: nowSec() + 3600 });
    const manyTags = finalizeEvent({
      kind: NOSTR_KINDS[9]!,
      created_at: nowSec(),
      tags: Array.from({ length: 65 }, (_, i) => ["t", `x${i}`]),
      content: "tags",
    }, alice.secret);
    // An ask addressed to more authors than MAX_TO (16): bounded like a local draft.
    const manyTo = finalizeEvent({
      kind: NOSTR_KINDS[0]!,
      created_at: nowSec(),
      tags: Array.from({ length: 17 }, (_, i) => ["p", i.toString(16).padStart(64, "0")]),
      content: "for everyone I know",
    }, alice.secret);
    const cases: [unknown, string][] = [
      [badSig, "bad_sig"],
      [manyTo, "bad_route"],
      [unknownKind, "unknown_kind"],
      [future, "future"],
      [manyTags, "too_many_tags"],
      ["not an object", "malformed"],
      [{ ...good, id: good.id.toUpperCase() }, "malformed"],
    ];
    for (const [input, code] of cases) {
      const r = await ingest(input, "peer");
      assert.equal(r.ok, false, code);
      assert.equal(r.code, code);
      assert.ok(r.reason && r.reason.length > 0);
    }
    assert.equal(store.count(), 0);
    assert.deepEqual(ingest.rejected(), {
      bad_sig: 1,
      unknown_kind: 1,
      future: 1,
      too_many_tags: 1,
      bad_route: 1,
      malformed: 2,
    });
    assert.equal(seen.length, cases.length);
    assert.ok(seen.every((e) => e.event === "post_rejected" && e.source === "peer"));
    assert.equal(seen[0]!.id, badSig.id);
  } finally {
    cleanup();
  }
});

Deno.test("events arriving together are stored in shared transactions of at most MAX_BATCH", async () => {
  const { store, ingest, cleanup } = setup();
  try {
    const events = Array.from({ length: MAX_BATCH + 100 }, (_, i) => signed(bob, "note", `n${i}`));
    const batches: number[] = [];
    const origins = new Set<string>();
    store.onInsert((posts, origin) => {
      batches.push(posts.length);
      origins.add(origin);
    });
    const results = await Promise.all(events.map((e) => ingest(e, "burst")));
    assert.ok(results.every((r) => r.ok && !r.duplicate));
    assert.equal(store.count(), events.length);
    assert.ok(batches.length <= 3, `expected a few transactions, got ${batches.length}`);
    assert.ok(Math.max(...batches) <= MAX_BATCH);
    assert.deepEqual([...origins], ["remote"], "the ingest inserts as the network's");
    assert.equal(store.outbox.size(), 0, "nothing from the network is queued to publish");
    await ingest.settle();
  } finally {
    cleanup();
  }
});

Deno.test("a store that fails under a batch answers error for each event, never throws", async () => {
  const { store, ingest, seen, cleanup } = setup();
  try {
    const pending = [
      ingest(signed(alice, "note", "a"), "x"),
      ingest(signed(bob, "note", "b"), "x"),
    ];
    store.close();
    const results = await Promise.all(pending);
    assert.ok(results.every((r) => !r.ok && r.code === "store"));
    assert.equal(seen.length, 2);
    assert.ok(seen.every((e) => e.event === "post_rejected" && e.code === "store"));
    assert.deepEqual(ingest.rejected(), { store: 2 });
  } finally {
    cleanup();
  }
});
