import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { reset as resetLogging } from "@logtape/logtape";
import { StoreError } from "../../src/errors.ts";
import { setupLogging } from "../../src/log.ts";
import { Store, type StoredPost } from "../../src/store/store.ts";
import { alice, bob, carol, post, reply, tempStore } from "./post_factory.ts";

Deno.test("insert gives arrival seqs; a stored event or a repeat in the batch is a duplicate", async () => {
  const { store, cleanup } = await tempStore();
  try {
    const a = post(alice, "ask", "first");
    const b = post(bob, "note", "second");
    assert.deepEqual(store.insert([a, b, a], { origin: "remote" }), [
      { id: a.id, seq: 1 },
      { id: b.id, seq: 2 },
      { id: a.id, duplicate: true },
    ]);
    assert.deepEqual(store.insert([b], { origin: "remote" }), [{ id: b.id, duplicate: true }]);
    assert.equal(store.count(), 2);
    assert.equal(store.maxSeq(), 2);
    const got = store.get(a.id)!;
    assert.equal(got.seq, 1);
    assert.equal(got.kind, "ask");
    assert.equal(got.author, alice.pubkey);
    assert.deepEqual(got.event, a);
    assert.equal(store.has(b.id), true);
    assert.equal(store.get("f".repeat(64)), undefined);
  } finally {
    await cleanup();
  }
});

Deno.test("insert refuses a batch holding an event that is not a wats post, storing none", async () => {
  const { store, cleanup } = await tempStore();
  try {
    const good = post(alice, "ask", "ok");
    assert.throws(
      () => store.insert([good, { ...good, id: "1".repeat(64), kind: 1 }], { origin: "remote" }),
      (err) => {
        assert.ok(err instanceof StoreError);
        assert.equal(err.code, "store.not_a_post");
        return true;
      },
    );
    assert.equal(store.count(), 0);
  } finally {
    await cleanup();
  }
});

Deno.test("thread shows the root, its replies and grafted replies; threadNewest leaves grafts out", async () => {
  const { store, cleanup } = await tempStore();
  try {
    const rootA = post(alice, "ask", "thread A");
    const a1 = reply(bob, "answer", "a1", rootA);
    const a2 = reply(alice, "clarify", "a2", a1);
    const rootB = post(carol, "ask", "thread B");
    // In thread B, but answering a post of thread A: a graft.
    const g = post(carol, "answer", "graft", { root: rootB.id, parent: a1.id });
    const b1 = reply(bob, "answer", "b1", rootB);
    store.insert([rootA, a1, a2, rootB, g, b1], { origin: "remote" });

    const ids = (ps: StoredPost[]) => ps.map((p) => p.id);
    assert.deepEqual(ids(store.thread(rootA.id)), [rootA.id, a1.id, a2.id, g.id]);
    assert.deepEqual(ids(store.thread(rootB.id)), [rootB.id, g.id, b1.id]);
    assert.equal(store.get(g.id)!.grafted, true);
    assert.equal(store.get(a2.id)!.grafted, false);
    assert.equal(store.get(b1.id)!.grafted, false);
    assert.deepEqual(ids(store.threadNewest(rootB.id, 10)), [b1.id, rootB.id]);
    assert.deepEqual(ids(store.threadNewest(rootA.id, 10)), [a2.id, a1.id, rootA.id]);
    assert.deepEqual(ids(store.threadNewest(rootA.id, 2)), [a2.id, a1.id]);
    // A limit keeps the root and the newest replies.
    assert.deepEqual(ids(store.thread(rootA.id, { limit: 1 })), [rootA.id, g.id]);
  } finally {
    await cleanup();
  }
});

Deno.test("a reply stored before its parent becomes grafted when the parent arrives", async () => {
  const { store, cleanup } = await tempStore();
  try {
    const rootA = post(alice, "ask", "A");
    const a1 = reply(bob, "answer", "a1", rootA);
    const rootB = post(carol, "ask", "B");
    const g = post(carol, "answer", "graft", { root: rootB.id, parent: a1.id });
    const sameThread = reply(alice, "clarify", "same", a1);
    store.insert([rootA, rootB, g, sameThread], { origin: "remote" });
    assert.equal(store.get(g.id)!.grafted, false, "parent unknown yet");
    store.insert([a1], { origin: "remote" });
    assert.equal(store.get(g.id)!.grafted, true);
    assert.equal(store.get(sameThread.id)!.grafted, false);

    // Within one batch, child first: the listener sees the final flag.
    const { store: s2, cleanup: c2 } = await tempStore();
    try {
      let seen: StoredPost[] = [];
      s2.onInsert((ps) => seen = ps);
      s2.insert([rootA, rootB, g, a1], { origin: "remote" });
      assert.equal(seen.find((p) => p.id === g.id)!.grafted, true);
      assert.equal(s2.get(g.id)!.grafted, true);
    } finally {
      await c2();
    }
  } finally {
    await cleanup();
  }
});

Deno.test("threadNewest orders by arrival (seq), not by created_at", async () => {
  const { store, cleanup } = await tempStore();
  try {
    const root = post(alice, "ask", "root", { createdAt: 2_000_000_000 });
    // Each reply claims an earlier time than the one before it.
    const r1 = post(bob, "answer", "r1", { root: root.id, createdAt: 1_999_999_990 });
    const r2 = post(alice, "clarify", "r2", { root: root.id, createdAt: 1_999_999_980 });
    const r3 = post(bob, "answer", "r3", { root: root.id, createdAt: 1_999_999_970 });
    store.insert([root], { origin: "remote" });
    store.insert([r1], { origin: "remote" });
    store.insert([r2, r3], { origin: "remote" });
    assert.deepEqual(store.threadNewest(root.id, 10).map((p) => p.text), [
      "r3",
      "r2",
      "r1",
      "root",
    ]);
    assert.deepEqual(store.thread(root.id).map((p) => p.text), ["root", "r1", "r2", "r3"]);
  } finally {
    await cleanup();
  }
});

Deno.test("feed pages by seq with a cursor, and filters by kind and author", async () => {
  const { store, cleanup } = await tempStore();
  try {
    const events = [
      post(alice, "ask", "1"),
      post(bob, "note", "2"),
      post(alice, "offer", "3"),
      post(carol, "ask", "4"),
      post(bob, "ask", "5"),
    ];
    store.insert(events, { origin: "remote" });
    const p1 = store.feed({ sinceSeq: 0, limit: 2 });
    assert.deepEqual(p1.posts.map((p) => p.text), ["1", "2"]);
    assert.equal(p1.cursor, 2);
    const p2 = store.feed({ sinceSeq: p1.cursor, limit: 2 });
    assert.deepEqual(p2.posts.map((p) => p.text), ["3", "4"]);
    const p3 = store.feed({ sinceSeq: p2.cursor, limit: 2 });
    assert.deepEqual(p3.posts.map((p) => p.text), ["5"]);
    assert.equal(p3.cursor, 5);
    assert.deepEqual(store.feed({ sinceSeq: 5, limit: 2 }), { posts: [], cursor: 5 });

    const asks = store.feed({ sinceSeq: 0, limit: 10, kinds: ["ask"] });
    assert.deepEqual(asks.posts.map((p) => p.text), ["1", "4", "5"]);
    // Two kinds, each walked on its own, come back merged in arrival order, page by page.
    const k1 = store.feed({ sinceSeq: 0, limit: 2, kinds: ["offer", "ask", "ask"] });
    assert.deepEqual([k1.posts.map((p) => p.text), k1.cursor], [["1", "3"], 3]);
    const k2 = store.feed({ sinceSeq: k1.cursor, limit: 2, kinds: ["ask", "offer"] });
    assert.deepEqual([k2.posts.map((p) => p.text), k2.cursor], [["4", "5"], 5]);
    assert.deepEqual(store.feed({ sinceSeq: 0, limit: 5, kinds: [] }), { posts: [], cursor: 5 });
    const byAlice = store.feed({ sinceSeq: 0, limit: 10, authors: [alice.pubkey] });
    assert.deepEqual(byAlice.posts.map((p) => p.text), ["1", "3"]);
    // A filtered short page still moves the cursor past everything it looked at.
    assert.equal(byAlice.cursor, 5);
    const both = store.feed({ sinceSeq: 0, limit: 10, kinds: ["ask"], authors: [bob.pubkey] });
    assert.deepEqual(both.posts.map((p) => p.text), ["5"]);
    assert.throws(() => store.feed({ sinceSeq: 0, limit: 0 }), /limit/);
  } finally {
    await cleanup();
  }
});

Deno.test("search finds titles and texts; a bad FTS query is a StoreError, plain words work", async () => {
  const { store, cleanup } = await tempStore();
  try {
    store.insert([
      post(alice, "ask", "How do I parse TOML in Deno?", { title: "TOML parsing" }),
      post(bob, "answer", "Use smol-toml, it's fine"),
      post(carol, "note", "unrelated words"),
    ], { origin: "remote" });
    assert.deepEqual(
      store.search("toml", { limit: 10 }).map((p) => p.author).sort(),
      [
        alice.pubkey,
        bob.pubkey,
      ].sort(),
    );
    assert.equal(store.search("parsing", { limit: 10 })[0]!.title, "TOML parsing");
    assert.equal(store.search("pars*", { limit: 10 }).length, 1);
    assert.throws(() => store.search("it's fine?", { limit: 10 }), (err) => {
      assert.ok(err instanceof StoreError);
      assert.equal(err.code, "store.bad_search");
      assert.match(err.message, /Cannot search for "it's fine\?"/);
      assert.match(err.message, /plain words/);
      return true;
    });
    assert.equal(store.search("it's fine", { limit: 10, plain: true }).length, 1);
    assert.deepEqual(store.search("   ", { limit: 10, plain: true }), []);
    assert.equal(store.count(), 3, "the store still works after a bad query");
  } finally {
    await cleanup();
  }
});

Deno.test("byTag finds posts by a single-letter tag, newest first, from `since` on", async () => {
  const { store, cleanup } = await tempStore();
  try {
    const r = post(alice, "announce", "rust", { caps: ["rust"], createdAt: 100 });
    const g = post(bob, "announce", "go", { caps: ["go"], createdAt: 200 });
    const r2 = post(carol, "announce", "rust too", { caps: ["rust", "go"], createdAt: 300 });
    const ans = post(bob, "answer", "re", { root: r.id, createdAt: 250 });
    store.insert([r2, r, g, ans], { origin: "remote" });
    const texts = (ps: StoredPost[]) => ps.map((p) => p.text);
    assert.deepEqual(texts(store.byTag("t", "cap:rust", { limit: 10 })), ["rust too", "rust"]);
    assert.deepEqual(texts(store.byTag("t", "cap:go", { limit: 10, since: 250 })), ["rust too"]);
    assert.deepEqual(texts(store.byTag("t", "cap:go", { limit: 1 })), ["rust too"]);
    assert.deepEqual(texts(store.byTag("e", r.id, { limit: 10 })), ["re"]);
    assert.deepEqual(store.byTag("subject", "x", { limit: 10 }), []);
  } finally {
    await cleanup();
  }
});

Deno.test("insert queues a local event for every relay, even again as a duplicate, and a remote one never", async () => {
  const { store, cleanup } = await tempStore({ relays: ["wss://r1", "wss://r2"] });
  try {
    const origins: string[] = [];
    store.onInsert((_posts, origin) => origins.push(origin));
    // Alice's post arrives from the network first: the node did not sign it here.
    const theirs = post(alice, "note", "from a relay");
    const mine = post(bob, "ask", "signed here");
    store.insert([theirs], { origin: "remote" });
    assert.equal(store.outbox.size(), 0, "a remote event is never queued");
    store.insert([mine], { origin: "local" });
    assert.deepEqual(store.outbox.pending("wss://r1", 10), [mine]);
    assert.deepEqual(store.outbox.pending("wss://r2", 10), [mine]);
    // Acknowledged by r1, then stored again (a retried approval): queued again.
    store.outbox.ack(mine.id, "wss://r1");
    assert.deepEqual(store.insert([mine], { origin: "local" }), [{ id: mine.id, duplicate: true }]);
    assert.deepEqual(store.outbox.pending("wss://r1", 10), [mine]);
    // The same remote event again, or a remote copy of a local one: still not queued.
    store.insert([theirs, mine], { origin: "remote" });
    store.outbox.ack(mine.id, "wss://r1");
    store.outbox.ack(mine.id, "wss://r2");
    assert.equal(store.outbox.size(), 0);
    assert.deepEqual(origins, ["remote", "local"], "listeners hear each new batch's origin");
  } finally {
    await cleanup();
  }
});

Deno.test("outbox keeps each post per relay until that relay acknowledges it", async () => {
  let now = 1000;
  const { store, cleanup } = await tempStore({ now: () => now });
  try {
    const p1 = post(alice, "ask", "one");
    const p2 = post(alice, "ask", "two");
    store.insert([p2, p1], { origin: "remote" });
    store.outbox.add(p1.id, ["wss://r1", "wss://r2"]);
    now = 2000;
    store.outbox.add(p2.id, ["wss://r1"]);
    store.outbox.add(p1.id, ["wss://r1"]); // again: no second copy
    assert.deepEqual(store.outbox.pending("wss://r1", 10).map((e) => e.id), [p1.id, p2.id]);
    assert.deepEqual(store.outbox.pending("wss://r1", 1).map((e) => e.id), [p1.id]);
    assert.deepEqual(store.outbox.pending("wss://r2", 10), [p1]);
    assert.equal(store.outbox.size(), 3);
    assert.equal(store.outbox.ack(p1.id, "wss://r1"), true);
    assert.equal(store.outbox.ack(p1.id, "wss://r1"), false);
    assert.deepEqual(store.outbox.pending("wss://r1", 10).map((e) => e.id), [p2.id]);
    assert.deepEqual(store.outbox.pending("wss://r2", 10).map((e) => e.id), [p1.id]);
    assert.throws(() => store.outbox.add("9".repeat(64), ["wss://r1"]), /not stored/);
  } finally {
    await cleanup();
  }
});

Deno.test("profiles, cursors and meta are kept", async () => {
  const { store, cleanup } = await tempStore();
  try {
    store.recordProfile("alice", alice.pubkey);
    store.recordProfile("alice", alice.pubkey);
    store.recordProfile("alice-agent", bob.pubkey);
    assert.deepEqual(store.localAuthors(), new Set([alice.pubkey, bob.pubkey]));
    assert.deepEqual(store.profiles(), [
      { name: "alice", pubkey: alice.pubkey },
      { name: "alice-agent", pubkey: bob.pubkey },
    ]);
    assert.equal(store.getCursor("wss://r"), undefined);
    store.setCursor("wss://r", 10);
    store.setCursor("wss://r", 20);
    assert.equal(store.getCursor("wss://r"), 20);
    assert.equal(store.getMeta("k"), undefined);
    store.setMeta("k", "v1");
    store.setMeta("k", "v2");
    assert.equal(store.getMeta("k"), "v2");
  } finally {
    await cleanup();
  }
});

Deno.test("onInsert fires once per batch with only the new posts, until unsubscribed", async () => {
  const errors: unknown[] = [];
  const { store, cleanup } = await tempStore({ onListenerError: (e) => errors.push(e) });
  try {
    const calls: string[][] = [];
    const off = store.onInsert((ps) => calls.push(ps.map((p) => p.text)));
    store.onInsert(() => {
      throw new Error("listener bug");
    });
    const a = post(alice, "ask", "a");
    const b = post(bob, "answer", "b");
    store.insert([a, b], { origin: "remote" });
    store.insert([a], { origin: "remote" }); // duplicates only: nothing new, no call
    store.insert([a, post(carol, "note", "c")], { origin: "remote" });
    assert.deepEqual(calls, [["a", "b"], ["c"]]);
    assert.equal(errors.length, 2, "a throwing listener is reported, the insert still commits");
    assert.equal(store.count(), 3);
    off();
    store.insert([post(carol, "note", "d")], { origin: "remote" });
    assert.equal(calls.length, 2);
  } finally {
    await cleanup();
  }
});

Deno.test("a throwing listener is reported on the store logger when no onListenerError is given", async () => {
  const lines: string[] = [];
  await setupLogging("error", (line) => lines.push(line));
  const { store, cleanup } = await tempStore();
  try {
    store.onInsert(() => {
      throw new Error("listener bug");
    });
    store.insert([post(alice, "note", "a")], { origin: "remote" });
    assert.equal(store.count(), 1, "the insert still commits");
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^error: a store listener failed: .*listener bug/);
  } finally {
    await cleanup();
    await resetLogging();
  }
});

Deno.test("a reopened store keeps its posts, outbox, profiles and meta", async () => {
  const { store, path, cleanup } = await tempStore();
  try {
    const a = post(alice, "ask", "persisted", { caps: ["x"] });
    store.insert([a], { origin: "remote" });
    store.outbox.add(a.id, ["wss://r"]);
    store.recordProfile("alice", alice.pubkey);
    store.setMeta("announced", "yes");
    store.close();
    assert.throws(() => store.count(), /closed/);
    const again = Store.open(path);
    try {
      assert.equal(again.get(a.id)!.text, "persisted");
      assert.equal(again.search("persisted", { limit: 5 }).length, 1);
      assert.equal(again.byTag("t", "cap:x", { limit: 5 }).length, 1);
      assert.deepEqual(again.outbox.pending("wss://r", 5), [a]);
      assert.deepEqual(again.localAuthors(), new Set([alice.pubkey]));
      assert.equal(again.getMeta("announced"), "yes");
      const b = post(bob, "answer", "next");
      assert.deepEqual(again.insert([b], { origin: "remote" }), [{ id: b.id, seq: 2 }]);
    } finally {
      again.close();
    }
  } finally {
    await cleanup();
  }
});

Deno.test("a store written by a newer wats, or a file that is not a store, is refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const newer = `${dir}/newer.db`;
    const db = new DatabaseSync(newer);
    db.exec("PRAGMA user_version = 99");
    db.close();
    assert.throws(() => Store.open(newer), (err) => {
      assert.ok(err instanceof StoreError);
      assert.equal(err.code, "store.newer_schema");
      assert.match(err.message, /Upgrade wats/);
      return true;
    });
    const junk = `${dir}/junk.db`;
    await Deno.writeTextFile(junk, "this is not sqlite ".repeat(100));
    assert.throws(() => Store.open(junk), /move it away/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// Made at load time with the test run's full grant (the narrow test below may not
// write the temp folder), and removed with it when the module ends, whichever tests
// ran and in whatever order.
const narrowDir = Deno.makeTempDirSync({ prefix: "wats-store-narrow-" });
const narrowDb = `${narrowDir}/store.db`;
globalThis.addEventListener("unload", () => Deno.removeSync(narrowDir, { recursive: true }));

Deno.test({
  name: "the store needs only read and write on its own file",
  permissions: { read: [narrowDb], write: [narrowDb] },
  fn() {
    const store = Store.open(narrowDb);
    try {
      const a = post(alice, "ask", "narrow");
      store.insert([a], { origin: "remote" });
      assert.equal(store.search("narrow", { limit: 1 }).length, 1);
      assert.throws(() => Deno.readTextFileSync(`${narrowDir}/other`), Deno.errors.NotCapable);
    } finally {
      store.close();
    }
  },
});

Deno.test("query answers NIP-01 filters newest first, capped, and refuses malformed ones", async () => {
  const { store, cleanup } = await tempStore();
  try {
    const ask = post(alice, "ask", "ask", { caps: ["rust"], createdAt: 100 });
    const ans = post(bob, "answer", "answer", { root: ask.id, createdAt: 200 });
    const note = post(carol, "note", "note", { createdAt: 300 });
    store.insert([ans, ask, note], { origin: "remote" });
    const ids = (es: { id: string }[]) => es.map((e) => e.id);
    assert.deepEqual(ids(store.query({})), [note.id, ans.id, ask.id]);
    assert.deepEqual(ids(store.query({ kinds: [4470, 4479] })), [note.id, ask.id]);
    assert.deepEqual(store.query({ kinds: [1] }), []);
    assert.deepEqual(ids(store.query({ authors: [bob.pubkey] })), [ans.id]);
    assert.deepEqual(ids(store.query({ ids: [ask.id, note.id] })), [note.id, ask.id]);
    assert.deepEqual(ids(store.query({ since: 150, until: 250 })), [ans.id]);
    assert.deepEqual(ids(store.query({ "#e": [ask.id] })), [ans.id]);
    assert.deepEqual(ids(store.query({ "#t": ["cap:rust"], kinds: [4470] })), [ask.id]);
    assert.deepEqual(store.query({ "#subject": ["x"] }), []);
    assert.deepEqual(ids(store.query({ limit: 1 })), [note.id]);
    assert.deepEqual(ids(store.query({}, { maxLimit: 2 })), [note.id, ans.id]);
    assert.deepEqual(store.query({ limit: 0 }), []);
    assert.deepEqual(store.query({ search: "note" }), []);
    assert.deepEqual(store.query({ ids: [ask.id] })[0], ask);
    for (
      const bad of [{ ids: "x" }, { kinds: ["1"] }, { since: "1" }, { limit: -1 }, { "#e": [1] }]
    ) {
      assert.throws(() => store.query(bad as never), (err) => {
        assert.ok(err instanceof StoreError);
        assert.equal(err.code, "store.bad_filter");
        return true;
      });
    }
  } finally {
    await cleanup();
  }
});
