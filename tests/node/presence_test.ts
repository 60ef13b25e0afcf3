import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import { KnownAgents } from "../../src/node/presence.ts";
import { presenceTags } from "../../src/posts/presence.ts";
import type { PresenceState } from "../../src/posts/presence.ts";
import type { ProfileKey } from "../../src/identity/profile_key.ts";
import { alice, bob, carol, post, tempStore } from "../store/post_factory.ts";

const EVERY = 15 * 60_000;

function presence(who: ProfileKey, createdAt: number, s: PresenceState, caps: string[]) {
  return post(who, "presence", "", {
    createdAt,
    caps,
    title: "Rust reviewer",
    extraTags: presenceTags(s),
  });
}

Deno.test("known agents: newest presence per author, with caps, state, arrival time; stale after 3 periods", async () => {
  const { store, cleanup } = await tempStore();
  let now = 1_800_000_000_000;
  const known = new KnownAgents({ store, now: () => now, everyMs: EVERY });
  try {
    const created = Math.floor(now / 1000) - 3600; // an hour behind: last seen is the arrival
    store.insert([presence(alice, created, { state: "running" }, ["rust"])], { origin: "remote" });
    const until = now + 3_600_000;
    store.insert([presence(bob, created, { state: "paused", until }, ["go"])], {
      origin: "remote",
    });
    store.insert([presence(alice, created + 1, { state: "halted" }, ["rust"])], {
      origin: "remote",
    });
    const list = known.list();
    assert.deepEqual(list.map((a) => [a.npub, a.state]), [
      [npubEncode(alice.pubkey), "halted"],
      [npubEncode(bob.pubkey), "paused"],
    ]);
    assert.equal(list[0]!.lastSeen, now);
    assert.equal(list[0]!.title, "Rust reviewer");
    assert.deepEqual(list[0]!.caps, ["rust"]);
    assert.equal(list[1]!.until, until);
    assert.equal(list.every((a) => !a.stale && !a.reachable), true);

    store.insert([presence(carol, created + 2, { state: "running" }, ["rust", "go"])], {
      origin: "remote",
    });
    // A bare presence is not counted as reachable; carol's ask makes her seen.
    assert.deepEqual(known.reach(alice.pubkey, ["rust"]), { matching: 1, reachable: 0, unseen: 1 });
    store.insert([post(carol, "ask", "a question", { title: "q" })], { origin: "remote" });
    assert.deepEqual(known.reach(alice.pubkey, ["rust"]), { matching: 1, reachable: 1 });
    assert.deepEqual(known.reach(bob.pubkey, ["rust"]), { matching: 2, reachable: 1 });
    assert.deepEqual(known.reach(bob.pubkey, []), { matching: 2, reachable: 1 });
    assert.deepEqual(known.reach(bob.pubkey, ["go"], [alice.pubkey]), {
      matching: 1,
      reachable: 0,
    });
    assert.deepEqual(known.reach(bob.pubkey, ["python"]), { matching: 0, reachable: 0 });

    now += 3 * EVERY;
    assert.equal(known.list().find((a) => a.state === "running")!.stale, false, "3 periods: fresh");
    now += 1;
    const stale = known.list().find((a) => a.state === "running")!;
    assert.equal(stale.stale, true);
    assert.equal(stale.reachable, false, "a stale presence reaches nobody");
    assert.deepEqual(known.reach(bob.pubkey, ["rust"]), { matching: 2, reachable: 0 });
  } finally {
    known.close();
    await cleanup();
  }
});

Deno.test("known agents: a presence stored before the table started is last seen at its own date; junk caps and long titles are cut", async () => {
  const { store, cleanup } = await tempStore();
  const now = 1_800_000_000_000;
  try {
    const created = Math.floor(now / 1000) - 600;
    store.insert([
      post(alice, "presence", "", {
        createdAt: created,
        caps: ["rust", "Bad!Cap", "x".repeat(100)],
        title: "t".repeat(500),
        extraTags: [["state", "dancing"]],
      }),
    ], { origin: "remote" });
    const known = new KnownAgents({ store, now: () => now, everyMs: EVERY });
    const [a] = known.list();
    known.close();
    assert.equal(a!.lastSeen, created * 1000);
    assert.deepEqual(a!.caps, ["rust"]);
    assert.equal(a!.title!.length, 80);
    assert.equal(a!.state, "off", "an unknown state is not counted as running");
  } finally {
    await cleanup();
  }
});

Deno.test("known agents: bare presences are listed after the seen agents and counted apart, never as reachable", async () => {
  const { store, cleanup } = await tempStore();
  const now = 1_800_000_000_000;
  const known = new KnownAgents({ store, now: () => now, everyMs: EVERY });
  try {
    const created = Math.floor(now / 1000) - 60;
    store.insert([post(alice, "ask", "a question", { title: "q", createdAt: created })], {
      origin: "remote",
    });
    store.insert([presence(alice, created, { state: "running" }, ["rust"])], { origin: "remote" });
    // Newer presences, from authors that never posted anything else.
    store.insert([presence(bob, created + 1, { state: "running" }, ["rust"])], {
      origin: "remote",
    });
    store.insert([presence(carol, created + 2, { state: "running" }, ["rust"])], {
      origin: "remote",
    });
    const list = known.list(2);
    assert.equal(list[0]!.npub, npubEncode(alice.pubkey), "the seen agent first");
    assert.equal(list[0]!.reachable, true);
    assert.equal(list[1]!.npub, npubEncode(carol.pubkey));
    assert.equal(list[1]!.reachable, false);
    assert.equal(list[1]!.unseen, true);
    assert.deepEqual(known.counts(), { total: 3, seen: 1 });
    assert.deepEqual(known.reach(bob.pubkey, ["rust"]), { matching: 2, reachable: 1, unseen: 1 });
    assert.deepEqual(known.reach("an asker with no presence", []), {
      matching: 3,
      reachable: 1,
      unseen: 2,
    });
  } finally {
    known.close();
    await cleanup();
  }
});

Deno.test("known agents: with agent.ignore_local, this node's agent is no taker of this node's person's ask; another node's agent is", async () => {
  const { store, cleanup } = await tempStore();
  const now = 1_800_000_000_000;
  // alice is the person, bob the agent of this node; carol an agent elsewhere.
  store.recordProfile("alice", alice.pubkey);
  store.recordProfile("bob", bob.pubkey);
  const created = Math.floor(now / 1000) - 60;
  for (const who of [bob, carol]) {
    store.insert([post(who, "answer", "seen", { createdAt: created })], { origin: "remote" });
    store.insert([presence(who, created, { state: "running" }, ["rust"])], { origin: "remote" });
  }
  const ignoring = new KnownAgents({ store, now: () => now, everyMs: EVERY, ignoreLocal: true });
  const taking = new KnownAgents({ store, now: () => now, everyMs: EVERY });
  try {
    assert.deepEqual(ignoring.reach(alice.pubkey, ["rust"]), { matching: 1, reachable: 1 });
    assert.deepEqual(ignoring.reach(alice.pubkey, [], [bob.pubkey]), {
      matching: 0,
      reachable: 0,
    });
    assert.deepEqual(taking.reach(alice.pubkey, ["rust"]), { matching: 2, reachable: 2 });
    // An ask from elsewhere still counts this node's agent.
    assert.deepEqual(ignoring.reach(carol.pubkey, ["rust"]), { matching: 1, reachable: 1 });
  } finally {
    ignoring.close();
    taking.close();
    await cleanup();
  }
});
