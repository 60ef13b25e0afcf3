import assert from "node:assert/strict";
import {
  type ClaimPost,
  CLAIMS_PER_AUTHOR,
  claimState,
  HELD_MAX,
  HeldAsks,
  type OthersClaim,
  TrustedClaimers,
} from "../../src/runner/claims.ts";
import type { QueuedEvent } from "../../src/runner/run_setup.ts";
import { claimNote, readHeartbeatTemplate } from "../../src/runner/prompt.ts";
import { npubEncode } from "nostr-tools/nip19";
import { runSystemPrompt } from "../../src/prompts.ts";
import { instructionsFor } from "../../src/mcp/instructions.ts";
import { ALL_TOOLS } from "../../src/mcp/tools.ts";
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
    state: (min: number, trusted: (a: string) => boolean = () => false) =>
      claimState(ask.id, posts, { agentKey: AGENT, ttlMs: TTL, now: T0 + min * MIN, trusted }),
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

Deno.test("every post of a trusted claimer in the thread extends its claim; others' posts do not", () => {
  const t = thread();
  const carol = (a: string) => a === CAROL;
  t.add(CAROL, "claim", 1);
  t.add(BOB, "note", 20); // the asker, not the claimer
  const progress = t.add(CAROL, "progress", 10);
  t.add(CAROL, "note", 25, progress.id); // anywhere in the thread
  const s = t.state(40, carol);
  assert.equal(s.state, "held");
  assert.equal(s.state === "held" && s.claim.lapsesAt, T0 + 55 * MIN);
  assert.equal(t.state(55, carol).state, "lapsed");
  // A stranger's posts do not: its claim holds one agent.claim_ttl from the claim.
  assert.equal(t.state(31).state, "lapsed");
});

Deno.test("a stranger's claim plus a junk answer does not hold the ask past agent.claim_ttl", () => {
  const t = thread();
  t.add(CAROL, "claim", 1);
  t.add(CAROL, "answer", 2);
  assert.equal(t.state(30).state, "held");
  assert.equal(t.state(31).state, "lapsed");
  // Trusted, its answer is a sign of life, no more: agent.claim_ttl after the answer.
  assert.equal(t.state(32, () => true).state, "lapsed");
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

Deno.test("the claimer's answer the asker accepted delivers the claim: it no longer lapses", () => {
  const t = thread();
  const c = t.add(CAROL, "claim", 1);
  const answer = t.add(CAROL, "answer", 5);
  t.add(PERSON, "vouch", 6, answer.id); // not the asker: no acceptance
  assert.equal(t.state(40).state, "lapsed");
  t.add(BOB, "vouch", 7, answer.id);
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

Deno.test("the outcome does not depend on arrival order: posts are ordered by created_at, then kind and id", () => {
  // Claim, accepted answer and a second claimer, in every arrival order: one outcome.
  const t = thread();
  const c = t.add(CAROL, "claim", 1);
  const answer = t.add(CAROL, "answer", 2);
  t.add(BOB, "vouch", 3, answer.id);
  t.add(PERSON, "claim", 1); // the same second as Carol's
  const orders = [[0, 1, 2, 3, 4], [0, 2, 3, 1, 4], [0, 4, 3, 2, 1], [0, 3, 1, 4, 2]];
  const outcomes = orders.map((order) => {
    const posts = order.map((i, seq) => ({ ...t.posts[i]!, seq: seq + 1 }));
    return claimState(t.ask.id, posts, { agentKey: AGENT, ttlMs: TTL, now: T0 + 40 * MIN });
  });
  const earliest = [c.id, t.posts[4]!.id].sort()[0];
  for (const o of outcomes) {
    assert.deepEqual(o, outcomes[0]);
    assert.equal(o.state === "held" && o.claim.id, earliest);
  }
  // A release dated before the claim does not end it, on every node alike.
  const u = thread();
  u.add(CAROL, "claim", 5);
  u.add(CAROL, "release", 4);
  assert.equal(u.state(6).state, "held");
});

Deno.test("held asks: one author holds at most CLAIMS_PER_AUTHOR, its earliest claims by time then id", () => {
  const held = new HeldAsks<QueuedEvent>();
  const claimAt = (i: number) => ({ id: `c${String(i).padStart(3, "0")}`, by: CAROL, at: T0 + i });
  const qs = Array.from({ length: CLAIMS_PER_AUTHOR + 1 }, () => queued());
  for (const [i, q] of qs.entries()) {
    if (i < CLAIMS_PER_AUTHOR) held.hold(q, claimAt(i + 1));
  }
  assert.equal(held.overBound(CAROL), undefined);
  const late = qs.at(-1)!;
  assert.equal(held.beyondBound(late.post.id, claimAt(99)), true, "a later claim does not hold");
  assert.equal(held.beyondBound(late.post.id, claimAt(0)), false, "an earlier one does");
  held.hold(late, claimAt(0));
  assert.equal(held.overBound(CAROL)?.queued, qs[CLAIMS_PER_AUTHOR - 1], "the latest claim goes");
  assert.equal(held.overBound(BOB), undefined);
});

Deno.test("an asker's vouch on another author's answer makes that author trusted, remembered in meta", () => {
  const store = new FakeStore();
  const ask = store.add({ author: BOB, kind: "ask" });
  const answer = store.reply(ask, CAROL, "answer");
  const trusted = new TrustedClaimers(store);
  trusted.learn(store.reply(answer, PERSON, "vouch")); // not the asker
  trusted.learn(store.reply(ask, BOB, "vouch")); // not on an answer
  assert.equal(trusted.has(CAROL), false);
  trusted.learn(store.reply(answer, BOB, "vouch"));
  assert.equal(trusted.has(CAROL), true);
  assert.equal(new TrustedClaimers(store).has(CAROL), true, "kept across a restart");
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
  const claimAndRelease = /\bclaim[^\n]*\brelease/;
  // The post tool every session has, the run's system prompt, and a person's session; the wake
  // prompt does not say it again (issue 30: every request of a wake carries all of them).
  const post = ALL_TOOLS.find((t) => t.name === "post")!;
  assert.match(post.description, claimAndRelease);
  assert.match(runSystemPrompt(), claimAndRelease);
  assert.match(instructionsFor(false), claimAndRelease);
  assert.doesNotMatch(readHeartbeatTemplate(), claimAndRelease);
});

Deno.test("the claim notes say who claimed an ask, how long ago, and until when", () => {
  const claim = { id: hexId("c"), by: CAROL, at: T0, lapsesAt: T0 + TTL };
  const by = `claimed by ${npubEncode(CAROL)}`;
  const now = T0 + 3 * MIN;
  assert.equal(
    claimNote({ state: "held", claim: { ...claim, trusted: true } }, now),
    `${by} 3m ago; lapses at 2026-10-15T12:30:00.000Z unless they post in the thread again`,
  );
  assert.equal(
    claimNote({ state: "held", claim }, now),
    `${by} 3m ago; lapses at 2026-10-15T12:30:00.000Z (an untrusted claimer: its later posts ` +
      `do not extend the claim)`,
    "an untrusted claimer's posts do not extend its claim, so the note does not promise it",
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

Deno.test("a claim says whether its claimer is trusted, which decides what the note promises", () => {
  const ask: ClaimPost = {
    id: hexId("a"),
    seq: 1,
    author: PERSON,
    kind: "ask",
    createdAt: T0 / 1000,
  };
  const claim: ClaimPost = {
    id: hexId("c"),
    seq: 2,
    author: CAROL,
    kind: "claim",
    parent: ask.id,
    createdAt: T0 / 1000,
  };
  const now = T0 + MIN;
  const untrusted = claimState(ask.id, [ask, claim], { agentKey: AGENT, ttlMs: TTL, now });
  assert.equal(untrusted.state === "held" && untrusted.claim.trusted, undefined);
  assert.doesNotMatch(claimNote(untrusted as OthersClaim, now), /unless they post/);
  const trusted = claimState(ask.id, [ask, claim], {
    agentKey: AGENT,
    ttlMs: TTL,
    now,
    trusted: (a) => a === CAROL,
  });
  assert.equal(trusted.state === "held" && trusted.claim.trusted, true);
  assert.match(claimNote(trusted as OthersClaim, now), /unless they post in the thread again$/);
});
