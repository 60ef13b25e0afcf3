import assert from "node:assert/strict";
import { type ClaimPost, claimState, HELD_MAX, HeldAsks } from "../../src/runner/claims.ts";
import type { QueuedEvent } from "../../src/runner/run_setup.ts";
import { claimNote, readHeartbeatTemplate } from "../../src/runner/prompt.ts";
import { npubEncode } from "nostr-tools/nip19";
import { runSystemPrompt } from "../../src/prompts.ts";
import { instructionsFor } from "../../src/mcp/instructions.ts";
import { AGENT, BOB, CAROL, FakeStore, hexId, PERSON } from "./fakes.ts";

const MIN = 60_000;
const TTL = 30 * MIN;
/** 2026-10-15 12:00:00 UTC, in ms. */
const T0 = Date.UTC(2026, 9, 15, 12);

/** A thread built post by post, each `at` minutes after T0. */
function thread() {
  const store = new FakeStore();
  const ask = store.add({ author: BOB, kind: "ask", createdAt: T0 / 1000 });
  const posts: ClaimPost[] = [ask];
  return {
    ask,
    posts,
    add(author: string, kind: string, min: number, parent: string = ask.id): ClaimPost {
      const p = store.add({
        author,
        kind,
        root: ask.id,
        parent,
        createdAt: (T0 + min * MIN) / 1000,
      });
      posts.push(p);
      return p;
    },
    state: (min: number) => claimState(ask.id, posts, AGENT, TTL, T0 + min * MIN),
  };
}

Deno.test("an ask nobody claimed is open", () => {
  const t = thread();
  t.add(CAROL, "answer", 1);
  assert.deepEqual(t.state(2), { state: "open" });
});

Deno.test("another author's claim holds the ask until agent.claim_ttl after it", () => {
  const t = thread();
  const c = t.add(CAROL, "claim", 1);
  assert.deepEqual(t.state(2), {
    state: "held",
    claim: { id: c.id, by: CAROL, at: T0 + MIN, lapsesAt: T0 + 31 * MIN },
  });
  assert.equal(t.state(31).state, "lapsed");
  assert.deepEqual(t.state(31), {
    state: "lapsed",
    claim: { id: c.id, by: CAROL, at: T0 + MIN, lapsesAt: T0 + 31 * MIN },
  });
});

Deno.test("every post of the claimer in the thread extends its claim; others' posts do not", () => {
  const t = thread();
  t.add(CAROL, "claim", 1);
  t.add(BOB, "note", 20); // the asker, not the claimer
  const progress = t.add(CAROL, "progress", 10);
  t.add(CAROL, "note", 25, progress.id); // anywhere in the thread
  const s = t.state(40);
  assert.equal(s.state, "held");
  assert.equal(s.state === "held" && s.claim.lapsesAt, T0 + 55 * MIN);
  assert.equal(t.state(55).state, "lapsed");
});

Deno.test("a claim posted long ago is already lapsed when it arrives", () => {
  const t = thread();
  t.add(CAROL, "claim", -40);
  assert.equal(t.state(0).state, "lapsed");
});

Deno.test("the claimer's release ends its claim at once; a release by anyone else does not", () => {
  const t = thread();
  const c = t.add(CAROL, "claim", 1);
  t.add(PERSON, "release", 2, c.id);
  assert.equal(t.state(3).state, "held");
  t.add(CAROL, "release", 4, c.id);
  assert.deepEqual(t.state(5), {
    state: "released",
    claim: { id: c.id, by: CAROL, at: T0 + MIN, lapsesAt: T0 + 31 * MIN },
    releasedAt: T0 + 4 * MIN,
  });
  // Claiming again after the release holds again.
  t.add(CAROL, "claim", 6);
  assert.equal(t.state(7).state, "held");
});

Deno.test("the claimer's answer to the ask delivers the claim: it no longer lapses", () => {
  const t = thread();
  const c = t.add(CAROL, "claim", 1);
  t.add(CAROL, "answer", 5);
  assert.deepEqual(t.state(24 * 60), {
    state: "held",
    claim: { id: c.id, by: CAROL, at: T0 + MIN },
  });
  t.add(CAROL, "release", 30);
  assert.equal(t.state(31).state, "released");
});

Deno.test("a claim must reply to the ask itself; a claim of another post in the thread is not one", () => {
  const t = thread();
  const answer = t.add(PERSON, "answer", 1);
  t.add(CAROL, "claim", 2, answer.id);
  assert.deepEqual(t.state(3), { state: "open" });
});

Deno.test("of two live claims the earliest by arrival holds; when it ends, the next one does", () => {
  const t = thread();
  const carol = t.add(CAROL, "claim", 1);
  const person = t.add(PERSON, "claim", 10);
  const s = t.state(11);
  assert.equal(s.state === "held" && s.claim.id, carol.id);
  t.add(CAROL, "release", 12, carol.id);
  const after = t.state(13);
  assert.equal(after.state === "held" && after.claim.id, person.id);
  assert.equal(t.state(40).state, "lapsed");
});

Deno.test("the agent's own claim never stops it, and holds against a later claim by another", () => {
  const t = thread();
  t.add(AGENT, "claim", 1);
  assert.deepEqual(t.state(2), { state: "open" });
  t.add(CAROL, "claim", 3);
  assert.deepEqual(t.state(4), { state: "open" });
  // Its own claim lapsed: the other's live claim holds it now.
  assert.equal(t.state(32).state, "held");
});

Deno.test("order is arrival order (seq), not the authors' clocks", () => {
  const t = thread();
  // The release arrives after the claim but says it was written before it.
  const c = t.add(CAROL, "claim", 5);
  t.add(CAROL, "release", 4, c.id);
  assert.equal(t.state(6).state, "released");
});

function queued(thread = hexId("t")): QueuedEvent {
  const store = new FakeStore();
  const post = store.add({ author: BOB, kind: "ask", root: thread, parent: thread });
  return { post, reason: `new ask ${post.id.slice(0, 12)}`, thread };
}

Deno.test("held asks: the first lapse, the due threads, and a hold again keeps the ask's place", () => {
  const h = new HeldAsks();
  const a = queued();
  const b = queued();
  const claim = (lapsesAt?: number) => ({
    id: hexId("c"),
    by: CAROL,
    at: T0,
    ...(lapsesAt !== undefined ? { lapsesAt } : {}),
  });
  h.hold(a, claim(T0 + 20 * MIN));
  h.hold(b, claim(T0 + 10 * MIN));
  assert.equal(h.nextLapse(), T0 + 10 * MIN);
  assert.deepEqual([...h.dueThreads(T0 + 10 * MIN)], [b.thread]);
  h.hold(b, claim()); // delivered: never lapses
  assert.equal(h.nextLapse(), T0 + 20 * MIN);
  assert.deepEqual(h.list().map((x) => x.queued), [a, b]);
  assert.deepEqual(h.inThread(a.thread).map((x) => x.queued), [a]);
  assert.equal(h.take(a.post.id)?.queued, a);
  assert.equal(h.has(a.post.id), false);
  assert.equal(h.nextLapse(), undefined);
});

Deno.test("held asks are bounded: past HELD_MAX the oldest is forgotten", () => {
  const h = new HeldAsks();
  const first = queued();
  const claim = { id: hexId("c"), by: CAROL, at: T0, lapsesAt: T0 + TTL };
  assert.equal(h.hold(first, claim), undefined);
  for (let i = 1; i < HELD_MAX; i++) assert.equal(h.hold(queued(), claim), undefined);
  assert.equal(h.hold(queued(), claim)?.queued, first);
  assert.equal(h.list().length, HELD_MAX);
});

Deno.test("the agent is told to claim before long work and release when it gives up", () => {
  const claimAndRelease = /`claim`[^\n]*`release`/;
  // The wake prompt (HEARTBEAT.md's "How to act"), the run's system prompt, and a person's session.
  assert.match(readHeartbeatTemplate(), claimAndRelease);
  assert.match(runSystemPrompt(), claimAndRelease);
  assert.match(instructionsFor(false), claimAndRelease);
});

Deno.test("the claim notes say who claimed an ask, how long ago, and until when", () => {
  const claim = { id: hexId("c"), by: CAROL, at: T0, lapsesAt: T0 + TTL };
  const by = `claimed by ${npubEncode(CAROL)}`;
  const now = T0 + 3 * MIN;
  assert.equal(
    claimNote({ state: "held", claim }, now),
    `${by} 3m ago; lapses at 2026-10-15T12:30:00.000Z unless they post in the thread again`,
  );
  assert.equal(
    claimNote({ state: "held", claim: { id: claim.id, by: CAROL, at: T0 } }, now),
    `${by} 3m ago, and answered by them; held until they release it`,
  );
  assert.equal(
    claimNote({ state: "lapsed", claim }, T0 + 31 * MIN),
    `${by} 31m ago; the claim lapsed at 2026-10-15T12:30:00.000Z with no post from them: open again`,
  );
  assert.equal(
    claimNote({ state: "released", claim, releasedAt: T0 + MIN }, now),
    `${by} 3m ago; released 2m ago: open again`,
  );
});
