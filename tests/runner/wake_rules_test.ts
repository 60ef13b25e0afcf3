import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import {
  classifyPost,
  normalizeAllow,
  type WakeContext,
  WakeLimiter,
} from "../../src/runner/wake_rules.ts";
import { AGENT, BOB, CAROL, FakeStore, PERSON } from "./fakes.ts";

function ctx(store: FakeStore, over: Partial<WakeContext> = {}): WakeContext {
  return {
    agentKey: AGENT,
    localAuthors: () => new Set([AGENT, PERSON]),
    ignoreLocal: true,
    allow: new Set(),
    caps: new Set(),
    capsMatch: "any",
    openAsks: true,
    get: (id) => store.get(id),
    ...over,
  };
}

Deno.test("an ask from another author wakes the agent", () => {
  const s = new FakeStore();
  const ask = s.add({ author: BOB, kind: "ask" });
  const d = classifyPost(ask, ctx(s));
  assert.equal(d.action, "wake");
  assert.match(d.reason, /new ask/);
});

Deno.test("an answer to the agent's clarify wakes it; a sibling answer in the same thread does not", () => {
  const s = new FakeStore();
  const ask = s.add({ author: BOB, kind: "ask" });
  const agentAnswer = s.reply(ask, AGENT, "answer");
  const clarify = s.reply(ask, AGENT, "clarify");
  const replyToClarify = s.reply(clarify, BOB, "answer");
  const sibling = s.reply(ask, CAROL, "answer");
  assert.equal(classifyPost(replyToClarify, ctx(s)).action, "wake");
  const d = classifyPost(sibling, ctx(s));
  assert.equal(d.action, "ignore");
  assert.match(d.reason, /does not reply to the agent/);
  // A clarify replying to the agent's answer wakes it too.
  assert.equal(classifyPost(s.reply(agentAnswer, BOB, "clarify"), ctx(s)).action, "wake");
});

Deno.test("a vouch replying to the agent's answer is feedback, not a wake", () => {
  const s = new FakeStore();
  const ask = s.add({ author: BOB, kind: "ask" });
  const answer = s.reply(ask, AGENT, "answer");
  for (const kind of ["react", "vouch", "progress", "note"]) {
    assert.equal(classifyPost(s.reply(answer, CAROL, kind), ctx(s)).action, "feedback", kind);
  }
  // Feedback on someone else's post is ignored.
  assert.equal(classifyPost(s.reply(ask, CAROL, "vouch"), ctx(s)).action, "ignore");
});

Deno.test("every actionable kind replying to the agent wakes it; announce and halt never do", () => {
  const s = new FakeStore();
  const offer = s.add({ author: AGENT, kind: "offer" });
  for (const kind of ["answer", "clarify", "offer", "claim", "release"]) {
    assert.equal(classifyPost(s.reply(offer, BOB, kind), ctx(s)).action, "wake", kind);
  }
  assert.equal(classifyPost(s.add({ author: BOB, kind: "announce" }), ctx(s)).action, "ignore");
  assert.equal(classifyPost(s.reply(offer, BOB, "halt"), ctx(s)).action, "ignore");
});

Deno.test("the agent's own posts never wake it", () => {
  const s = new FakeStore();
  const d = classifyPost(s.add({ author: AGENT, kind: "ask" }), ctx(s, { ignoreLocal: false }));
  assert.equal(d.action, "ignore");
  assert.match(d.reason, /own post/);
});

Deno.test("agent.ignore_local leaves out the node's other profiles, and only when on", () => {
  const s = new FakeStore();
  const ask = s.add({ author: PERSON, kind: "ask" });
  const d = classifyPost(ask, ctx(s));
  assert.equal(d.action, "ignore");
  assert.match(d.reason, /agent\.ignore_local/);
  assert.equal(classifyPost(ask, ctx(s, { ignoreLocal: false })).action, "wake");
});

Deno.test("agent.allow limits wakes to its authors, given as npub or hex", () => {
  const s = new FakeStore();
  const allow = normalizeAllow([npubEncode(BOB), CAROL.toUpperCase()]);
  assert.deepEqual([...allow].sort(), [BOB, CAROL]);
  const stranger = "e".repeat(64);
  assert.equal(classifyPost(s.add({ author: BOB, kind: "ask" }), ctx(s, { allow })).action, "wake");
  assert.equal(
    classifyPost(s.add({ author: CAROL, kind: "ask" }), ctx(s, { allow })).action,
    "wake",
  );
  const d = classifyPost(s.add({ author: stranger, kind: "ask" }), ctx(s, { allow }));
  assert.equal(d.action, "ignore");
  assert.match(d.reason, /agent\.allow/);
  assert.throws(() => normalizeAllow(["bob"]), /agent\.allow: "bob" is not an author key/);
});

Deno.test("agent.wakes_per_author_per_hour caps one author's wakes in a sliding hour", () => {
  const l = new WakeLimiter(2);
  const t0 = 1_000_000;
  assert.equal(l.take(BOB, t0), true);
  assert.equal(l.take(BOB, t0 + 1000), true);
  assert.equal(l.take(BOB, t0 + 2000), false);
  assert.equal(l.take(CAROL, t0 + 2000), true, "another author has their own count");
  assert.equal(l.take(BOB, t0 + 3_600_000), true, "the first wake left the hour");
  const unlimited = new WakeLimiter(0);
  for (let i = 0; i < 100; i++) assert.equal(unlimited.take(BOB, t0), true);
});

Deno.test("an author setting is named only when it is what kept an ask or reply from waking the agent", () => {
  const s = new FakeStore();
  const ask = s.add({ author: PERSON, kind: "ask" });
  const note = s.add({ author: PERSON, kind: "note" });
  const byCarol = s.add({ author: CAROL, kind: "ask" });
  const local = classifyPost(ask, ctx(s));
  assert.deepEqual(
    local.action === "ignore" ? local.setting : local.action,
    "agent.ignore_local",
  );
  assert.match(local.reason, /wats try/);
  // A note that replies to no post of the agent wakes it from no one: no setting to blame.
  const n = classifyPost(note, ctx(s));
  assert.equal(n.action === "ignore" ? n.setting : n.action, undefined);
  assert.match(n.reason, /feedback on someone else/);
  const notAllowed = classifyPost(byCarol, ctx(s, { allow: new Set([BOB]) }));
  assert.equal(notAllowed.action === "ignore" ? notAllowed.setting : "", "agent.allow");
});
