import assert from "node:assert/strict";
import { presenceTags } from "../../src/posts/presence.ts";
import type { NostrEvent } from "../../src/posts/post.ts";
import type { ProfileKey } from "../../src/identity/profile_key.ts";
import { deriveProfileKey } from "../../src/identity/profile_key.ts";
import { alice, bob, carol, NODE, post, tempStore } from "./post_factory.ts";

/** A presence of `who` dated `createdAt`, running unless told. */
function presence(who: ProfileKey, createdAt: number, state = "running"): NostrEvent {
  return post(who, "presence", "", {
    createdAt,
    caps: ["rust"],
    extraTags: presenceTags({ state: state as "running" }),
  });
}

Deno.test("the store keeps one presence per author: the newest replaces the older, rows and tags go", async () => {
  const { store, cleanup } = await tempStore();
  try {
    const first = presence(alice, 1000);
    const second = presence(alice, 1060, "halted");
    store.insert([first], { origin: "remote" });
    assert.deepEqual(store.insert([second], { origin: "remote" }), [{ id: second.id, seq: 2 }]);
    assert.deepEqual(store.presence().map((p) => p.id), [second.id]);
    assert.equal(store.count(), 1, "the older presence is deleted, not kept beside");
    assert.equal(store.has(first.id), false);
    assert.deepEqual(store.byTag("t", "cap:rust", { limit: 10 }).map((p) => p.id), [second.id]);
  } finally {
    await cleanup();
  }
});

Deno.test("an older presence, or one of the same second with a higher id, is superseded and not stored", async () => {
  const { store, cleanup } = await tempStore();
  try {
    const newer = presence(alice, 2000);
    store.insert([newer], { origin: "remote" });
    const older = presence(alice, 1999);
    assert.deepEqual(store.insert([older], { origin: "remote" }), [{
      id: older.id,
      superseded: true,
    }]);
    // NIP-01: on a tie of created_at, the lowest id stays.
    const [low, high] = [presence(bob, 2000, "halted"), presence(bob, 2000, "off")]
      .sort((x, y) => x.id < y.id ? -1 : 1) as [NostrEvent, NostrEvent];
    assert.equal(store.insert([high], { origin: "remote" })[0]?.seq !== undefined, true);
    assert.equal(store.insert([low], { origin: "remote" })[0]?.seq !== undefined, true);
    assert.deepEqual(store.insert([high], { origin: "remote" }), [{
      id: high.id,
      superseded: true,
    }]);
    assert.deepEqual(store.presence().map((p) => p.id), [low.id, newer.id]);
    assert.equal(store.count(), 2);
    assert.equal(store.insert([newer], { origin: "remote" })[0]?.duplicate, true);
  } finally {
    await cleanup();
  }
});

Deno.test("a local presence replaced before its relay acknowledged it leaves the outbox too", async () => {
  const { store, cleanup } = await tempStore({ relays: ["ws://127.0.0.1:1"] });
  try {
    store.insert([presence(bob, 3000)], { origin: "local" });
    store.insert([presence(bob, 3001)], { origin: "local" });
    store.insert([presence(bob, 3002)], { origin: "local" });
    assert.equal(store.outbox.size(), 1, "only the newest presence waits to be published");
  } finally {
    await cleanup();
  }
});

Deno.test("past the author bound, a new author's presence evicts the one that arrived first", async () => {
  const { store, cleanup } = await tempStore({ maxPresenceAuthors: 2 });
  try {
    const a = presence(alice, 4000);
    const b = presence(bob, 4000);
    const c = presence(carol, 4000);
    store.insert([a, b], { origin: "remote" });
    store.insert([c], { origin: "remote" });
    assert.deepEqual(store.presence().map((p) => p.author), [carol.pubkey, bob.pubkey]);
    assert.equal(store.presenceCount(), 2);
    // A known author's refresh replaces its own, evicting nobody.
    store.insert([presence(bob, 4001)], { origin: "remote" });
    assert.deepEqual(store.presence().map((p) => p.author), [bob.pubkey, carol.pubkey]);
  } finally {
    await cleanup();
  }
});

Deno.test("past the author bound with no bare presence left, the oldest seen one goes, never this node's own", async () => {
  const { store, cleanup } = await tempStore({ maxPresenceAuthors: 2 });
  try {
    store.recordProfile("alice", alice.pubkey);
    // alice is this node's and arrived first; bob posted an ask.
    store.insert([presence(alice, 4000), presence(bob, 4000)], { origin: "remote" });
    store.insert([post(bob, "ask", "a question", { title: "q" })], { origin: "remote" });
    store.insert([presence(carol, 4000)], { origin: "remote" });
    assert.deepEqual(
      store.presence().map((p) => [p.author, p.seen]),
      [[alice.pubkey, true], [carol.pubkey, false]],
    );
    assert.equal(store.hasPresence(bob.pubkey), false);
  } finally {
    await cleanup();
  }
});

Deno.test("a flood of bare presences evicts only bare presences, oldest first", async () => {
  const { store, cleanup } = await tempStore({ maxPresenceAuthors: 3 });
  try {
    store.insert([presence(alice, 4000)], { origin: "remote" });
    store.insert([post(alice, "answer", "an answer", { title: "a" })], { origin: "remote" });
    const keys = Array.from({ length: 20 }, (_, i) => deriveProfileKey(NODE, `flood${i}`));
    for (const k of keys) store.insert([presence(k, 4000)], { origin: "remote" });
    assert.equal(store.presenceCount(), 3);
    assert.equal(store.hasPresence(alice.pubkey), true, "the agent seen in a thread is kept");
    assert.deepEqual(
      store.presence().map((p) => p.author),
      [alice.pubkey, keys[19]!.pubkey, keys[18]!.pubkey],
    );
    assert.deepEqual(store.presenceCounts(), { total: 3, seen: 1 });
    assert.deepEqual(
      store.seenAuthors([alice.pubkey, keys[19]!.pubkey]),
      new Set([alice.pubkey]),
    );
  } finally {
    await cleanup();
  }
});

Deno.test("the feed leaves presence out unless asked for it", async () => {
  const { store, cleanup } = await tempStore();
  try {
    const ask = post(alice, "ask", "a question", { title: "q" });
    const p = presence(bob, 5000);
    store.insert([ask, p], { origin: "remote" });
    assert.deepEqual(store.feed({ sinceSeq: 0, limit: 10 }).posts.map((x) => x.id), [ask.id]);
    assert.deepEqual(
      store.feed({ sinceSeq: 0, limit: 10, kinds: ["presence"] }).posts.map((x) => x.id),
      [p.id],
    );
    assert.deepEqual(store.query({ kinds: [14480] }).map((e) => e.id), [p.id]);
  } finally {
    await cleanup();
  }
});
