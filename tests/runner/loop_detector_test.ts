import assert from "node:assert/strict";
import { checkThread, countTurns, loopPausedMessage } from "../../src/runner/loop_detector.ts";
import { AGENT, BOB, CAROL, FakeStore } from "./fakes.ts";

/** A thread by BOB, then `turns - 1` alternating replies by the agent and BOB. */
function alternating(turns: number): { store: FakeStore; root: string } {
  const store = new FakeStore();
  const root = store.add({ author: BOB, kind: "ask" });
  let last = root;
  for (let i = 1; i < turns; i++) last = store.reply(last, i % 2 === 1 ? AGENT : BOB, "answer");
  return { store, root: root.id };
}

Deno.test("loop detector pauses a thread after 31 alternating turns", () => {
  const at30 = alternating(30);
  assert.deepEqual(checkThread(at30.store, at30.root, AGENT, 30), {
    paused: false,
    turns: 30,
    other: BOB,
  });
  const at31 = alternating(31);
  const v = checkThread(at31.store, at31.root, AGENT, 30);
  assert.equal(v.paused, true);
  assert.equal(v.turns, 31);
  assert.equal(v.other, BOB);
});

Deno.test("loop detector counts an author's consecutive posts as one turn", () => {
  const { store, root } = alternating(30); // the agent took the 30th turn
  // The agent posts an answer and a reaction in one run: still the same turn.
  const a = store.reply(store.posts.at(-1)!, AGENT, "answer");
  store.reply(a, AGENT, "react");
  assert.deepEqual(checkThread(store, root, AGENT, 30), { paused: false, turns: 30, other: BOB });
  store.reply(a, BOB, "answer");
  assert.equal(checkThread(store, root, AGENT, 30).paused, true);
  assert.equal(
    countTurns([{ author: AGENT }, { author: AGENT }, { author: BOB }, { author: BOB }], AGENT)
      .turns,
    2,
  );
});

Deno.test("loop detector stops counting at a third author, which resumes the thread", () => {
  const { store, root } = alternating(40);
  assert.equal(checkThread(store, root, AGENT, 30).paused, true);
  store.reply(store.posts.at(-1)!, CAROL, "note");
  // CAROL is now the one other author: her turn and the agent's, then BOB stops the count.
  assert.deepEqual(checkThread(store, root, AGENT, 30), { paused: false, turns: 2, other: CAROL });
  // Two more turns after the third author: counted from there.
  store.reply(store.posts.at(-1)!, AGENT, "answer");
  store.reply(store.posts.at(-1)!, BOB, "answer");
  assert.deepEqual(checkThread(store, root, AGENT, 30), { paused: false, turns: 2, other: BOB });
});

Deno.test("loop detector leaves grafted replies out", () => {
  const { store, root } = alternating(31);
  // A grafted reply by a third author does not break the loop.
  store.add({ author: CAROL, kind: "answer", root, parent: store.posts[3]!.id, grafted: true });
  assert.equal(checkThread(store, root, AGENT, 30).paused, true);
});

Deno.test("loop detector orders by seq, not by created_at", () => {
  const store = new FakeStore();
  const root = store.add({ author: BOB, kind: "ask", createdAt: 100 });
  // CAROL's post arrived first but claims a later time; BOB and the agent then alternate.
  store.reply(root, CAROL, "answer", { createdAt: 10_000 });
  let last = root;
  for (let i = 0; i < 31; i++) {
    last = store.reply(last, i % 2 === 0 ? AGENT : BOB, "answer", { createdAt: 200 + i });
  }
  const v = checkThread(store, root.id, AGENT, 30);
  assert.equal(v.paused, true, "by created_at CAROL would be newest and break the count");
  assert.equal(v.turns, 31);
});

Deno.test("loop detector is off when agent.loop_max_exchanges is 0", () => {
  const { store, root } = alternating(200);
  assert.equal(checkThread(store, root, AGENT, 0).paused, false);
});

Deno.test("loop detector reads further back in long threads of multi-post turns", () => {
  // Each turn is 5 posts, so 31 turns need more than the first read of (30 + 1) * 4.
  const store = new FakeStore();
  const root = store.add({ author: BOB, kind: "ask" });
  let last = root;
  for (let turn = 1; turn < 31; turn++) {
    for (let k = 0; k < 5; k++) last = store.reply(last, turn % 2 === 1 ? AGENT : BOB, "note");
  }
  assert.equal(checkThread(store, root.id, AGENT, 30).paused, true);
});

Deno.test("loop pause message is the runner contract's text", () => {
  assert.equal(
    loopPausedMessage("abc", 30),
    "agent wake paused: loop detected in thread abc (agent.loop_max_exchanges = 30)",
  );
});
