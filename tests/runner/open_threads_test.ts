import assert from "node:assert/strict";
import { openThreads } from "../../src/runner/open_threads.ts";
import { AGENT, BOB, FakeStore } from "./fakes.ts";

function reader(store: FakeStore) {
  return {
    agentPosts: (limit: number) =>
      store.posts.filter((p) => p.author === AGENT).sort((a, b) => b.seq - a.seq).slice(0, limit),
    threadNewest: (root: string, limit: number) => store.threadNewest(root, limit),
  };
}

Deno.test("a thread is open when its newest post is the agent's claim, clarify, progress or offer", () => {
  const s = new FakeStore();
  const claimed = s.add({ author: BOB, kind: "ask" });
  s.add({ author: AGENT, kind: "claim", root: claimed.id });
  const asked = s.add({ author: BOB, kind: "ask" });
  s.add({ author: AGENT, kind: "clarify", root: asked.id });
  // Answered by the agent: done.
  const answered = s.add({ author: BOB, kind: "ask" });
  s.add({ author: AGENT, kind: "answer", root: answered.id });
  // Someone posted after the agent's claim: that post woke it (or was feedback).
  const moved = s.add({ author: BOB, kind: "ask" });
  s.add({ author: AGENT, kind: "claim", root: moved.id });
  s.add({ author: BOB, kind: "react", root: moved.id });
  const open = openThreads(reader(s), AGENT);
  assert.deepEqual(open.map((t) => [t.root, t.kind]), [
    [asked.id, "clarify"],
    [claimed.id, "claim"],
  ]);
});

Deno.test("open threads are the newest first, at most max, each thread once", () => {
  const s = new FakeStore();
  const roots = [];
  for (let i = 0; i < 8; i++) {
    const r = s.add({ author: BOB, kind: "ask" });
    s.add({ author: AGENT, kind: "progress", root: r.id });
    s.add({ author: AGENT, kind: "progress", root: r.id });
    roots.push(r.id);
  }
  const open = openThreads(reader(s), AGENT, { max: 3 });
  assert.deepEqual(open.map((t) => t.root), roots.slice(-3).reverse());
});
