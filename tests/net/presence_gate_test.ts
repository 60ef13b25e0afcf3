import assert from "node:assert/strict";
import { createIngest } from "../../src/net/ingest.ts";
import { ingestAnswer } from "../../src/net/relay_messages.ts";
import { PresenceGate } from "../../src/net/presence_gate.ts";
import { presenceTags } from "../../src/posts/presence.ts";
import { alice, bob, nowSec, recordingSink, signed, tempStore, testLog } from "./net_support.ts";

Deno.test("the gate admits a burst per author, then one per refill period", () => {
  const gate = new PresenceGate({ burst: 2, refillMs: 60_000 });
  const t = 1_000_000;
  assert.equal(gate.admit("a", t), "ok");
  assert.equal(gate.admit("a", t), "ok");
  assert.equal(gate.admit("a", t + 1), "too_frequent", "the burst is spent");
  assert.equal(gate.admit("b", t + 1), "ok", "another author has its own allowance");
  assert.equal(gate.admit("a", t + 59_000), "too_frequent");
  assert.equal(gate.admit("a", t + 61_000), "ok", "one more after a refill period");
  assert.equal(gate.admit("a", t + 62_000), "too_frequent");
});

Deno.test("the gate remembers a bounded number of authors, forgetting the one seen longest ago", () => {
  const gate = new PresenceGate({ burst: 1, refillMs: 60_000, maxAuthors: 2 });
  assert.equal(gate.admit("a", 0), "ok");
  assert.equal(gate.admit("b", 0), "ok");
  assert.equal(gate.admit("a", 1), "too_frequent"); // a is now the most recent
  assert.equal(gate.admit("c", 2), "ok"); // evicts b
  assert.equal(gate.size, 2);
  assert.equal(gate.admit("a", 3), "too_frequent", "a was kept");
  assert.equal(gate.admit("b", 4), "ok", "b was forgotten, so it starts afresh");
});

Deno.test("new presence authors have a budget per source and overall; known authors do not spend it", () => {
  const gate = new PresenceGate({
    newPerSourceBurst: 2,
    newPerSourceHour: 2,
    newBurst: 3,
    newHour: 3,
  });
  const t = 1_000_000;
  const fresh = (source: string) => ({ source, known: false });
  assert.equal(gate.admit("k1", t, fresh("s1")), "ok");
  assert.equal(gate.admit("k2", t, fresh("s1")), "ok");
  assert.equal(gate.admit("k3", t, fresh("s1")), "too_many_authors", "s1's budget is spent");
  assert.equal(gate.admit("k1", t, { source: "s1", known: true }), "ok", "a known author passes");
  assert.equal(gate.admit("k4", t, fresh("s2")), "ok", "another source has its own budget");
  assert.equal(gate.admit("k5", t, fresh("s3")), "too_many_authors", "the overall budget is spent");
  // Refused authors spent nothing: k3 has its own allowance when the budgets refill.
  assert.equal(gate.admit("k3", t + 1_800_000, fresh("s1")), "ok", "one more per half hour");
  assert.equal(gate.admit("k6", t + 1_800_000, fresh("s1")), "too_many_authors");
});

Deno.test("a presence flood from one author is dropped and counted; the store keeps one presence", async () => {
  const t = tempStore();
  const rec = recordingSink();
  const ingest = createIngest({
    store: t.store,
    events: rec.sink,
    log: testLog,
    now: Date.now,
    maxSkewMs: 600_000,
    presenceGate: new PresenceGate({ burst: 3, refillMs: 3_600_000 }),
  });
  try {
    const base = nowSec() - 100;
    const flood = Array.from({ length: 20 }, (_, i) =>
      signed(alice, "presence", "", {
        createdAt: base + i,
        extraTags: presenceTags({ state: "running" }),
      }));
    const results = await Promise.all(flood.map((e) => ingest(e, "ws://relay.test")));
    assert.equal(results.filter((r) => r.ok).length, 3);
    assert.equal(ingest.rejected().too_frequent, 17);
    assert.equal(t.store.presenceCount(), 1);
    assert.equal(t.store.count(), 1);
    // Another author is not held back by alice's flood.
    const other = signed(bob, "presence", "", { extraTags: presenceTags({ state: "off" }) });
    assert.equal((await ingest(other, "ws://relay.test")).ok, true);
    // An older presence than the stored one is refused as superseded, and counted.
    const old = signed(bob, "presence", "", {
      createdAt: base - 50,
      extraTags: presenceTags({ state: "halted" }),
    });
    const r = await ingest(old, "ws://relay.test");
    assert.equal(r.ok, false);
    assert.equal(r.code, "superseded");
    assert.equal(ingest.rejected().superseded, 1);
    assert.equal(t.store.presenceCount(), 2);
  } finally {
    await ingest.settle();
    t.cleanup();
  }
});

Deno.test("the relay endpoint answers a presence flood rate-limited and an old presence duplicate", () => {
  assert.deepEqual(
    ingestAnswer("e1", { ok: false, code: "too_frequent", reason: "too often" }),
    ["OK", "e1", false, "rate-limited: too often (too_frequent)"],
  );
  assert.deepEqual(
    ingestAnswer("e2", { ok: false, code: "superseded", reason: "a newer one" }),
    ["OK", "e2", false, "duplicate: a newer one (superseded)"],
  );
});
