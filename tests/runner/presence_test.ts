import assert from "node:assert/strict";
import type { PresenceState } from "../../src/posts/presence.ts";
import {
  PAUSE_END_SLACK_MS,
  PresenceAnnouncer,
  type PresenceDraft,
} from "../../src/runner/presence.ts";
import { classifyPost, type WakeContext } from "../../src/runner/wake_rules.ts";
import { AGENT, BOB, FakeStore, FakeTime, flush, MemoryLog, PERSON } from "./fakes.ts";

const EVERY = 15 * 60_000;
const T0 = 1_800_000_000_000;

function setup(opts: { fail?: () => boolean } = {}) {
  const time = new FakeTime(T0);
  let state: PresenceState = { state: "running" };
  const posted: (PresenceDraft & { at: number })[] = [];
  const announcer = new PresenceAnnouncer({
    clock: time,
    timers: time,
    log: new MemoryLog(),
    everyMs: EVERY,
    title: "Rust reviewer",
    caps: ["rust", "rust", "review"],
    state: () => state,
    publish: (d) => {
      if (opts.fail?.()) return Promise.reject(new Error("store closed"));
      posted.push({ ...d, at: time.now() });
      return Promise.resolve();
    },
  });
  return {
    time,
    announcer,
    posted,
    set: (s: PresenceState) => {
      state = s;
    },
  };
}

Deno.test("presence is posted at start with caps, title and state, then every presence_every", async () => {
  const { time, announcer, posted } = setup();
  await announcer.start();
  assert.deepEqual(posted, [{
    state: "running",
    title: "Rust reviewer",
    caps: ["rust", "review"],
    createdAt: T0 / 1000,
    at: T0,
  }]);
  assert.equal(time.pending(), 1, "idle, it holds one timer");
  await time.advance(EVERY - 1);
  assert.equal(posted.length, 1);
  await time.advance(1);
  assert.equal(posted.length, 2);
  assert.equal(posted[1]!.at, T0 + EVERY);
  await time.advance(2 * EVERY);
  assert.deepEqual(posted.map((p) => p.at), [T0, T0 + EVERY, T0 + 2 * EVERY, T0 + 3 * EVERY]);
  assert.equal(time.pending(), 1);
  announcer.stop();
  assert.equal(time.pending(), 0);
});

Deno.test("a change of state is posted at once; a check that changes nothing posts nothing", async () => {
  const { time, announcer, posted, set } = setup();
  await announcer.start();
  await time.advance(60_000);
  await announcer.check();
  assert.equal(posted.length, 1, "same state, refresh not due: nothing");
  set({ state: "halted" });
  await announcer.check();
  assert.equal(posted.length, 2);
  assert.equal(posted[1]!.state, "halted");
  assert.equal(posted[1]!.at, T0 + 60_000);
  // Posted in the same second as another change: created_at still grows, so the
  // newest wins under the replaceable rules.
  set({ state: "running" });
  await announcer.check();
  assert.deepEqual(posted.map((p) => p.createdAt), [T0 / 1000, T0 / 1000 + 60, T0 / 1000 + 61]);
  // The refresh counts from the last post.
  await time.advance(EVERY - 1);
  assert.equal(posted.length, 3);
  await time.advance(1);
  assert.equal(posted.length, 4);
  announcer.stop();
});

Deno.test("a budget pause is posted with its end, and its end is posted when it comes", async () => {
  const { time, announcer, posted, set } = setup();
  await announcer.start();
  const until = T0 + 5 * 60_000;
  set({ state: "paused", until });
  await announcer.check();
  assert.deepEqual(posted.map((p) => [p.state, p.until]), [["running", undefined], [
    "paused",
    until,
  ]]);
  assert.equal(time.nextAt(), until + PAUSE_END_SLACK_MS);
  set({ state: "running" }); // the runner's own timer ends the pause
  await time.advanceTo(until + PAUSE_END_SLACK_MS);
  assert.deepEqual(posted.map((p) => p.state), ["running", "paused", "running"]);
  assert.equal(posted[2]!.at, until + PAUSE_END_SLACK_MS);
  announcer.stop();
});

Deno.test("a change seen while a presence is being posted gets its own post right after", async () => {
  const { time, announcer, posted, set } = setup();
  const first = announcer.start();
  set({ state: "halted" });
  void announcer.check();
  await first;
  await flush();
  assert.deepEqual(posted.map((p) => p.state), ["running", "halted"]);
  assert.equal(time.pending(), 1);
  announcer.stop();
});

Deno.test("a presence that cannot be posted is tried again at the next refresh", async () => {
  let failing = true;
  const { time, announcer, posted } = setup({ fail: () => failing });
  await announcer.start();
  assert.equal(posted.length, 0);
  failing = false;
  await time.advance(EVERY);
  assert.equal(posted.length, 1);
  announcer.stop();
});

Deno.test("a presence never wakes the agent, whoever posts it and whatever it says", () => {
  const s = new FakeStore();
  const ctx = {
    agentKey: AGENT,
    localAuthors: () => new Set([AGENT, PERSON]),
    ignoreLocal: true,
    allow: new Set<string>(),
    caps: new Set<string>(),
    capsMatch: "any",
    openAsks: true,
    get: (id: string) => s.get(id),
  } as WakeContext;
  for (const author of [BOB, PERSON]) {
    const p = s.add({ author, kind: "presence" });
    assert.equal(classifyPost(p, ctx).action, "ignore");
  }
});
