/**
 * Claims in the scheduler (issue 18 item 3, docs/runner.md "Claims"): another agent's claim drops
 * a queued ask, a lapse or a release queues it again, and a restart keeps what is held. Each test
 * is a case that woke the agent before claims existed.
 */

import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import { PENDING_META_KEY } from "../../src/runner/pending.ts";
import type { RunnerPost } from "../../src/runner/ports.ts";
import { AGENT, BOB, CAROL, hexId } from "./fakes.ts";
import { MIN, type Rig, rig, SEC, T0 } from "./scheduler_rig.ts";

const TTL = 30 * MIN;

/** A reply to the ask by `author`, written now by the rig's clock, told to the runner. */
function reply(r: Rig, ask: RunnerPost, author: string, kind: string, parent = ask.id) {
  return r.post({
    author,
    kind,
    root: ask.id,
    parent,
    createdAt: Math.floor(r.time.now() / 1000),
  });
}

/** The pending meta's held (claimed) asks. */
function heldIds(r: Rig): string[] {
  return JSON.parse(r.store.getMeta(PENDING_META_KEY) ?? "{}").claimed ?? [];
}

Deno.test("a claim by another agent while the ask is debouncing: it never wakes the agent", async () => {
  const r = rig();
  try {
    r.runner.start();
    const ask = r.post({ author: BOB, kind: "ask" });
    await r.time.advance(10 * SEC);
    const claim = reply(r, ask, CAROL, "claim");
    await r.time.advance(TTL - 1);
    assert.equal(r.spawner.procs.length, 0);
    const st = r.runner.status();
    assert.equal(st.queued, 0);
    assert.deepEqual(st.skipped.map((k) => [k.post, k.setting]), [[ask.id, "agent.claim_ttl"]]);
    const lapse = new Date(claim.createdAt * 1000 + TTL).toISOString();
    assert.equal(
      st.skipped[0]!.reason,
      `did not wake the agent: new ask ${ask.id.slice(0, 12)} is dropped from the queue: ` +
        `claimed by ${npubEncode(CAROL)} 0s ago; lapses at ${lapse} unless they post in the ` +
        "thread again",
    );
    assert.equal(r.log.matching("is dropped from the queue").length, 1, "logged once");
    assert.deepEqual(st.claimed, [{
      ask: ask.id,
      claim: { id: claim.id, by: CAROL, at: claim.createdAt * 1000, lapsesAt: Date.parse(lapse) },
    }]);
    // The claimer delivers: the claim no longer lapses, so the ask never wakes the agent.
    reply(r, ask, CAROL, "answer");
    await r.time.advance(24 * 60 * MIN);
    assert.equal(r.spawner.procs.length, 0);
    assert.equal(r.runner.status().claimed[0]!.claim.lapsesAt, undefined, "delivered");
    assert.equal(r.log.matching("is dropped from the queue").length, 1, "still logged once");
  } finally {
    r.cleanup();
  }
});

Deno.test("a claim while the ask's thread is loop-paused drops it, though the claimer is a third author", async () => {
  const r = rig({ "agent.loop_max_exchanges": 2 });
  try {
    r.runner.start();
    // The ask reaches this node after the agent and its author already went back and forth.
    const ask = r.store.add({ author: BOB, kind: "ask" });
    const mine = r.store.reply(ask, AGENT, "answer");
    r.store.reply(mine, BOB, "clarify");
    r.runner.onPosts([ask]);
    assert.equal(r.runner.status().pausedThreads.length, 1);
    assert.equal(r.runner.status().queued, 1);
    reply(r, ask, CAROL, "claim");
    await r.time.advance(TTL - 1);
    assert.equal(r.spawner.procs.length, 0, "the claim resumed the thread, but dropped the ask");
    assert.equal(r.runner.status().queued, 0);
    assert.deepEqual(r.runner.status().pausedThreads, []);
  } finally {
    r.cleanup();
  }
});

Deno.test("an ask whose claim arrived first is never queued", async () => {
  const r = rig();
  try {
    r.runner.start();
    const id = hexId("ask");
    // Relays need not keep order: the claim is stored before the ask it replies to.
    r.post({ author: CAROL, kind: "claim", root: id, parent: id, createdAt: T0 / 1000 });
    const ask = r.post({ id, author: BOB, kind: "ask" });
    await r.time.advance(TTL - 1);
    assert.equal(r.spawner.procs.length, 0);
    assert.deepEqual(r.log.matching("queued: new ask"), []);
    assert.deepEqual(r.runner.status().skipped.map((k) => k.post), [ask.id]);
    assert.deepEqual(heldIds(r), [ask.id]);
  } finally {
    r.cleanup();
  }
});

Deno.test("a lapsed claim queues the ask again, and its wake prompt says who claimed it", async () => {
  const r = rig();
  try {
    r.runner.start();
    const ask = r.post({ author: BOB, kind: "ask" });
    await r.time.advance(10 * SEC);
    const claim = reply(r, ask, CAROL, "claim");
    const lapsesAt = claim.createdAt * 1000 + TTL;
    assert.equal(r.time.nextAt(), lapsesAt, "one timer, for the lapse");
    assert.equal(r.time.pending(), 1);
    await r.time.advanceTo(lapsesAt - 1);
    assert.equal(r.runner.status().queued, 0);
    await r.time.advanceTo(lapsesAt);
    assert.equal(r.runner.status().queued, 1);
    assert.equal(r.log.matching("queued again: new ask").length, 1);
    assert.equal(r.spawner.procs.length, 0, "the debounce applies as to any queued ask");
    await r.time.advance(30 * SEC);
    assert.equal(r.spawner.procs.length, 1);
    const prompt = r.spawner.last.request.stdin;
    assert.ok(
      prompt.includes(
        `- ${ask.id}: ask by ${npubEncode(BOB)}, starts its thread; claimed by ${
          npubEncode(CAROL)
        } 30m30s ago; the claim lapsed at ${new Date(lapsesAt).toISOString()} with no post from ` +
          "them: open again",
      ),
      prompt,
    );
    assert.deepEqual(heldIds(r), []);
  } finally {
    r.cleanup();
  }
});

Deno.test("a release queues the ask again at once", async () => {
  const r = rig();
  try {
    r.runner.start();
    const ask = r.post({ author: BOB, kind: "ask" });
    await r.time.advance(10 * SEC);
    const claim = reply(r, ask, CAROL, "claim");
    await r.time.advance(5 * MIN);
    assert.equal(r.spawner.procs.length, 0);
    reply(r, ask, CAROL, "release", claim.id);
    assert.equal(r.runner.status().queued, 1);
    await r.time.advance(30 * SEC);
    assert.equal(r.spawner.procs.length, 1);
    assert.match(
      r.spawner.last.request.stdin,
      new RegExp(`${ask.id}: ask .*claimed by ${npubEncode(CAROL)} 5m\\d*s? ago; released`),
    );
  } finally {
    r.cleanup();
  }
});

Deno.test("the claimer's progress extends its claim: the ask waits agent.claim_ttl after it", async () => {
  const r = rig();
  try {
    r.runner.start();
    const ask = r.post({ author: BOB, kind: "ask" });
    const claim = reply(r, ask, CAROL, "claim");
    await r.time.advance(20 * MIN);
    const progress = reply(r, ask, CAROL, "progress", claim.id);
    await r.time.advanceTo(claim.createdAt * 1000 + TTL + 30 * SEC);
    assert.equal(r.spawner.procs.length, 0, "the first lapse time has passed");
    await r.time.advanceTo(progress.createdAt * 1000 + TTL + 30 * SEC);
    assert.equal(r.spawner.procs.length, 1);
  } finally {
    r.cleanup();
  }
});

Deno.test("the agent's own claim never stops it, and holds against a later claim by another", async () => {
  const r = rig();
  try {
    r.runner.start();
    const mineAsk = r.post({ author: BOB, kind: "ask" });
    const otherAsk = r.post({ author: BOB, kind: "ask" });
    // Its person's session claimed the first one for the agent's profile.
    reply(r, mineAsk, AGENT, "claim");
    reply(r, mineAsk, CAROL, "claim");
    reply(r, otherAsk, CAROL, "claim");
    await r.time.advance(30 * SEC);
    assert.equal(r.spawner.procs.length, 1);
    const prompt = r.spawner.last.request.stdin;
    assert.ok(prompt.includes(`- ${mineAsk.id}: ask`), prompt);
    assert.ok(!prompt.includes(`- ${otherAsk.id}: ask`), prompt);
  } finally {
    r.cleanup();
  }
});

Deno.test("a later wake's prompt lists the asks others claimed, with who and until when", async () => {
  const r = rig();
  try {
    r.runner.start();
    const claimed = r.post({ author: BOB, kind: "ask" });
    const claim = reply(r, claimed, CAROL, "claim");
    await r.time.advance(3 * MIN);
    const next = r.post({ author: BOB, kind: "ask" });
    await r.time.advance(30 * SEC);
    assert.equal(r.spawner.procs.length, 1);
    const prompt = r.spawner.last.request.stdin;
    assert.ok(prompt.includes(`- ${next.id}: ask`), prompt);
    assert.ok(
      prompt.includes(
        "Asks other agents claimed (you were not woken for them; leave them to their claimer " +
          `unless the claim lapses):\n- ${claimed.id}: claimed by ${
            npubEncode(CAROL)
          } 3m30s ago; ` +
          `lapses at ${new Date(claim.createdAt * 1000 + TTL).toISOString()}`,
      ),
      prompt,
    );
  } finally {
    r.cleanup();
  }
});

Deno.test("an ask the agent answered meanwhile is not queued again when the claim ends", async () => {
  const r = rig();
  try {
    r.runner.start();
    const ask = r.post({ author: BOB, kind: "ask" });
    const claim = reply(r, ask, CAROL, "claim");
    // The agent answered it anyway (say, after reading the feed in a heartbeat run).
    reply(r, ask, AGENT, "answer");
    reply(r, ask, CAROL, "release", claim.id);
    await r.time.advance(2 * TTL);
    assert.equal(r.spawner.procs.length, 0);
    assert.equal(r.log.matching("is not queued again (the agent replied to it)").length, 1);
    assert.deepEqual(heldIds(r), []);
  } finally {
    r.cleanup();
  }
});

Deno.test("a restart keeps a claimed ask held until its claim lapses, then it wakes the agent", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-runner-sched-" });
  const first = rig({}, { transcriptsDir: dir });
  let second: Rig | undefined;
  try {
    first.runner.start();
    const ask = first.post({ author: BOB, kind: "ask" });
    const claim = reply(first, ask, CAROL, "claim");
    assert.deepEqual(heldIds(first), [ask.id]);
    await first.runner.stop();
    const lapsesAt = claim.createdAt * 1000 + TTL;

    second = rig({}, { transcriptsDir: dir, store: first.store, start: T0 + 10 * MIN });
    second.runner.start();
    assert.equal(second.runner.status().queued, 0, "still held");
    assert.equal(second.time.nextAt(), lapsesAt);
    await second.time.advanceTo(lapsesAt + 30 * SEC);
    assert.equal(second.spawner.procs.length, 1);
    assert.ok(second.spawner.last.request.stdin.includes(`- ${ask.id}: ask`));
  } finally {
    await second?.runner.stop();
    first.cleanup();
  }
});

Deno.test("a claim that lapsed while the daemon was down: the ask is queued again at start", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-runner-sched-" });
  const first = rig({}, { transcriptsDir: dir });
  let second: Rig | undefined;
  try {
    first.runner.start();
    const ask = first.post({ author: BOB, kind: "ask" });
    const claim = reply(first, ask, CAROL, "claim");
    await first.runner.stop();

    const start = claim.createdAt * 1000 + TTL + MIN;
    second = rig({}, { transcriptsDir: dir, store: first.store, start });
    second.runner.start();
    assert.equal(second.runner.status().queued, 1);
    assert.equal(second.log.matching("queued again: new ask").length, 1);
    await second.time.advance(30 * SEC);
    assert.equal(second.spawner.procs.length, 1);
    assert.ok(second.spawner.last.request.stdin.includes(`- ${ask.id}: ask`));
    assert.deepEqual(heldIds(second), []);
  } finally {
    await second?.runner.stop();
    first.cleanup();
  }
});

Deno.test("a run that does not complete gives back an ask claimed meanwhile: it is held, not queued", async () => {
  const r = rig();
  try {
    r.runner.start();
    const ask = r.post({ author: BOB, kind: "ask" });
    await r.time.advance(30 * SEC);
    assert.equal(r.spawner.procs.length, 1);
    reply(r, ask, CAROL, "claim"); // the run in progress keeps it
    assert.equal(r.runner.status().claimed.length, 0);
    r.runner.halt("halt by guardian");
    await r.runner.whenIdle();
    assert.equal(r.transcripts.index()[0]!.status, "halted");
    assert.equal(r.runner.status().queued, 0);
    assert.deepEqual(r.runner.status().claimed.map((c) => c.ask), [ask.id]);
    r.runner.resume();
    await r.time.advance(TTL - MIN);
    assert.equal(r.spawner.procs.length, 1);
  } finally {
    r.cleanup();
  }
});
