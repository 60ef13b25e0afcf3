import assert from "node:assert/strict";
import { verifiedSymbol } from "nostr-tools/pure";
import { createIngest } from "../../src/net/ingest.ts";
import { startNetwork } from "../../src/net/network.ts";
import { createVerifyPool } from "../../src/net/verify_pool.ts";
import type { NostrEvent } from "../../src/posts/post.ts";
import { alice, bob, recordingSink, signed, tempStore, testLog } from "./net_support.ts";

function forged(e: NostrEvent): NostrEvent {
  return { ...e, sig: (e.sig[0] === "a" ? "b" : "a") + e.sig.slice(1) };
}

Deno.test("the verify pool checks ids and signatures in workers, each verdict in its place", async () => {
  const pool = createVerifyPool(2);
  try {
    assert.equal(pool.size, 2);
    const good = Array.from({ length: 600 }, (_, i) => signed(alice, "note", `good ${i}`));
    const inputs = good.flatMap((e, i) =>
      i % 100 === 0 ? [e, forged(e), { ...e, content: e.content + "!" }] : [e]
    );
    const results = await Promise.all(inputs.map((e) => pool.verify(e)));
    const expected = good.flatMap((_, i) => i % 100 === 0 ? ["ok", "bad_sig", "bad_id"] : ["ok"]);
    assert.deepEqual(results, expected);
  } finally {
    pool.close();
  }
});

Deno.test({
  name: "the verify workers need no permission at all",
  permissions: { read: true, net: false, write: false, run: false, env: false, sys: false },
  async fn() {
    // Read is for loading the worker module from source; the worker itself runs with
    // `permissions: "none"`, which it could not get were it asking for more than this.
    const pool = createVerifyPool(1);
    try {
      const e = signed(bob, "ask", "checked in a worker", { title: "t" });
      assert.equal(await pool.verify(e), "ok");
      assert.equal(await pool.verify(forged(e)), "bad_sig");
    } finally {
      pool.close();
    }
  },
});

Deno.test("the ingest with the pool stores valid events, rejects forged ones whatever they claim", async () => {
  const t = tempStore();
  const rec = recordingSink();
  const pool = createVerifyPool(2);
  const ingest = createIngest({
    store: t.store,
    events: rec.sink,
    log: testLog,
    now: Date.now,
    maxSkewMs: 600_000,
    verify: pool.verify,
  });
  try {
    const good = signed(alice, "note", "fine");
    // A forged copy that carries nostr-tools' cached "verified" mark.
    const fake = forged(signed(alice, "note", "forged")) as NostrEvent & {
      [verifiedSymbol]?: boolean;
    };
    fake[verifiedSymbol] = true;
    const [a, b] = await Promise.all([ingest(good, "test"), ingest(fake, "test")]);
    assert.equal(a.ok, true);
    assert.equal(b.ok, false);
    assert.equal(b.code, "bad_sig");
    assert.equal(t.store.has(good.id), true);
    assert.equal(t.store.has(fake.id), false);
  } finally {
    await ingest.settle();
    pool.close();
    t.cleanup();
  }
});

Deno.test("after close the pool checks on this thread; startNetwork runs one worker per core", async () => {
  const pool = createVerifyPool(1);
  pool.close();
  const e = signed(alice, "note", "after close");
  assert.equal(await pool.verify(e), "ok");
  assert.equal(await pool.verify(forged(e)), "bad_sig");

  const t = tempStore();
  const net = await startNetwork({
    settings: { infra: [], listen: "127.0.0.1:0", maxSkewMs: 600_000 },
    store: t.store,
    events: () => {},
    log: testLog,
  });
  try {
    assert.equal(net.status().verifyWorkers, navigator.hardwareConcurrency);
    const r = await net.ingest(forged(signed(bob, "note", "via the network")), "test");
    assert.equal(r.code, "bad_sig");
  } finally {
    await net.close();
    t.cleanup();
  }
});
