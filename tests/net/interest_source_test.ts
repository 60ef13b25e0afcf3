import assert from "node:assert/strict";
import { MAX_ASK_THREADS, MAX_THREADS } from "../../src/net/interest.ts";
import { computeInterest, watchInterest } from "../../src/net/interest_source.ts";
import { deriveProfileKey } from "../../src/identity/profile_key.ts";
import { alice, bob, nowSec, signed, tempStore } from "./net_support.ts";

const settings = { caps: ["deno"], openAsks: false, haltAccept: [] };

Deno.test("the threads followed: threads the node's profiles posted in, and apart from them the other asks stored", () => {
  const t = tempStore();
  try {
    t.store.recordProfile("bob", bob.pubkey);
    const at = nowSec() - 100;
    const aliceNote = signed(alice, "note", "a thread bob is not in", { createdAt: at });
    const aliceAsk = signed(alice, "ask", "an ask", { createdAt: at + 1 });
    const bobReply = signed(bob, "note", "bob in alice's note thread", {
      createdAt: at + 2,
      root: aliceNote.id,
      parent: aliceNote.id,
      parentAuthor: alice.pubkey,
    });
    const unrelated = signed(alice, "note", "nobody follows this", { createdAt: at + 3 });
    // Bob's announce is no thread (a new one every agent.presence_every).
    const announce = signed(bob, "announce", "bob's agent", { createdAt: at + 4 });
    t.store.insert([aliceNote, aliceAsk, unrelated], { origin: "remote" });
    t.store.insert([bobReply, announce], { origin: "local" });
    const i = computeInterest(t.store, settings);
    assert.deepEqual(i.profiles, [bob.pubkey]);
    assert.deepEqual(i.threads, [aliceNote.id]);
    assert.deepEqual(i.askThreads, [aliceAsk.id]);
    assert.deepEqual({ ...i, threads: [], askThreads: [], profiles: [] }, {
      caps: ["deno"],
      openAsks: false,
      haltAuthors: [],
      threads: [],
      askThreads: [],
      profiles: [],
    });
  } finally {
    t.cleanup();
  }
});

Deno.test("at most MAX_THREADS threads, the newest", () => {
  const t = tempStore();
  try {
    const at = nowSec() - 10_000;
    const asks = Array.from(
      { length: MAX_THREADS + 5 },
      (_, i) => signed(alice, "ask", `ask ${i}`, { createdAt: at + i, caps: ["deno"] }),
    );
    t.store.insert(asks, { origin: "remote" });
    const { threads } = computeInterest(t.store, settings);
    assert.equal(threads.length, MAX_THREADS);
    assert.equal(threads[0], asks.at(-1)!.id);
    assert.ok(!threads.includes(asks[0]!.id));
  } finally {
    t.cleanup();
  }
});

Deno.test("asks addressed to the node or naming its caps keep their threads followed under a flood of newer open asks", () => {
  const t = tempStore();
  try {
    t.store.recordProfile("bob", bob.pubkey);
    const at = nowSec() - 10_000;
    const addressed = signed(alice, "ask", "for bob", { createdAt: at, mentions: [bob.pubkey] });
    const capped = signed(alice, "ask", "for deno", { createdAt: at + 1, caps: ["deno"] });
    const flood = Array.from(
      { length: MAX_ASK_THREADS + 50 },
      (_, i) => signed(alice, "ask", `open ${i}`, { createdAt: at + 10 + i }),
    );
    t.store.insert([addressed, capped, ...flood], { origin: "remote" });
    const i = computeInterest(t.store, { ...settings, openAsks: true });
    assert.deepEqual(i.threads, [capped.id, addressed.id]);
    assert.equal(i.askThreads?.length, MAX_ASK_THREADS);
    assert.equal(i.askThreads?.[0], flood.at(-1)!.id);
  } finally {
    t.cleanup();
  }
});

Deno.test("the interest is recomputed once per batch that adds a thread or a profile, not for a reply in a followed thread", async () => {
  const t = tempStore();
  try {
    t.store.recordProfile("bob", bob.pubkey);
    const seen: string[][] = [];
    const source = watchInterest(
      t.store,
      settings,
      (i) => seen.push([...i.threads, ...i.askThreads ?? []]),
    );
    const settle = () => new Promise((r) => setTimeout(r, 0));
    const ask1 = signed(alice, "ask", "one");
    const ask2 = signed(alice, "ask", "two");
    t.store.insert([ask1, ask2], { origin: "remote" });
    await settle();
    assert.equal(seen.length, 1, "one batch, one new interest");
    assert.deepEqual(new Set(seen[0]), new Set([ask1.id, ask2.id]));
    assert.deepEqual(new Set(source.current().askThreads), new Set([ask1.id, ask2.id]));
    // A reply by someone else in a followed thread changes nothing.
    t.store.insert([
      signed(alice, "claim", "mine", {
        root: ask1.id,
        parent: ask1.id,
        parentAuthor: alice.pubkey,
      }),
    ], { origin: "remote" });
    await settle();
    assert.equal(seen.length, 1);
    // A note by someone else, in no thread followed, neither; nor bob's announce.
    t.store.insert([signed(alice, "note", "chatter")], { origin: "remote" });
    t.store.insert([signed(bob, "announce", "present")], { origin: "local" });
    await settle();
    assert.equal(seen.length, 1);
    // Bob posts a note of his own: a new thread.
    const own = signed(bob, "note", "bob's own");
    t.store.insert([own], { origin: "local" });
    await settle();
    assert.equal(seen.length, 2);
    assert.ok(seen[1]!.includes(own.id));
    // A new profile posts: its key joins the profiles.
    const carol = deriveProfileKey(new Uint8Array(32).fill(9), "carol");
    t.store.recordProfile("carol", carol.pubkey);
    t.store.insert([
      signed(carol, "note", "carol in bob's thread", {
        root: own.id,
        parent: own.id,
        parentAuthor: bob.pubkey,
      }),
    ], { origin: "local" });
    await settle();
    assert.equal(seen.length, 3);
    assert.ok(source.current().profiles.includes(carol.pubkey));
    source.stop();
    t.store.insert([signed(alice, "ask", "after stop")], { origin: "remote" });
    await settle();
    assert.equal(seen.length, 3, "nothing after stop");
  } finally {
    t.cleanup();
  }
});
