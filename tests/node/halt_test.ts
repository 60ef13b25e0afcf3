import assert from "node:assert/strict";
import { HaltState } from "../../src/node/halt.ts";
import type { StoredPost } from "../../src/store/store.ts";

const GUARD = "a".repeat(64);
const STRANGER = "b".repeat(64);
const AGENT = "c".repeat(64);
const OTHER_AGENT = "d".repeat(64);

function meta() {
  const m = new Map<string, string>();
  return { getMeta: (k: string) => m.get(k), setMeta: (k: string, v: string) => void m.set(k, v) };
}

function haltPost(
  author: string,
  createdAt: number,
  targets: string[] = [],
  text = "stop",
): StoredPost {
  return {
    id: `${createdAt}`.padStart(64, "0"),
    author,
    kind: "halt",
    text,
    caps: [],
    createdAt,
    tags: targets.map((t) => ["p", t]),
    seq: 1,
    grafted: false,
  } as unknown as StoredPost;
}

function setup(now = 1_000_000) {
  const calls: string[] = [];
  const state = new HaltState({
    meta: meta(),
    accepted: [GUARD],
    agentKey: AGENT,
    now: () => now * 1000,
  });
  state.attach({ halt: (r) => calls.push(`halt ${r}`), resume: () => calls.push("resume") });
  return { state, calls };
}

Deno.test("a halt from an accepted author halts the agent and is remembered", () => {
  const { state, calls } = setup();
  assert.ok(state.onPosts([haltPost(GUARD, 10)]));
  assert.equal(calls.length, 1);
  assert.match(
    calls[0],
    /^halt halt 000000000000 by aaaaaaaaaaaa: stop; run `wats resume` to end it$/,
  );
  assert.equal(state.current()?.by, GUARD);
});

Deno.test("a halt from an author not in halt.accept changes nothing", () => {
  const { state, calls } = setup();
  assert.equal(state.onPosts([haltPost(STRANGER, 10)]), undefined);
  assert.deepEqual(calls, []);
  assert.equal(state.current(), null);
});

Deno.test("a halt naming other agents does not halt this one; one naming it does", () => {
  const { state, calls } = setup();
  assert.equal(state.onPosts([haltPost(GUARD, 10, [OTHER_AGENT])]), undefined);
  assert.ok(state.onPosts([haltPost(GUARD, 11, [OTHER_AGENT, AGENT])]));
  assert.equal(calls.length, 1);
});

Deno.test("resume ends the halt, and a halt signed before the resume (a late copy) is ignored", () => {
  const { state, calls } = setup(1000);
  state.onPosts([haltPost(GUARD, 900)]);
  assert.equal(state.resume()?.by, GUARD);
  assert.equal(state.current(), null);
  assert.equal(state.onPosts([haltPost(GUARD, 950)]), undefined, "older than the resume");
  assert.ok(state.onPosts([haltPost(GUARD, 1001)]), "newer than the resume");
  assert.deepEqual(calls.map((c) => c.split(" ")[0]), ["halt", "resume", "halt"]);
});

Deno.test("a halt recorded before a restart applies as soon as the runner attaches", () => {
  const m = meta();
  const first = new HaltState({ meta: m, accepted: [GUARD], agentKey: AGENT, now: () => 0 });
  first.onPosts([haltPost(GUARD, 10)]);
  const calls: string[] = [];
  const second = new HaltState({ meta: m, accepted: [GUARD], agentKey: AGENT, now: () => 0 });
  second.attach({ halt: () => calls.push("halt"), resume: () => calls.push("resume") });
  assert.deepEqual(calls, ["halt"]);
});
