import assert from "node:assert/strict";
import { HaltState } from "../../src/node/halt.ts";
import { Store, type StoredPost } from "../../src/store/store.ts";
import { buildPost } from "../../src/posts/post.ts";
import { deriveProfileKey } from "../../src/identity/profile_key.ts";

const GUARD = "a".repeat(64);
const STRANGER = "b".repeat(64);
const AGENT = "c".repeat(64);
const OTHER_AGENT = "d".repeat(64);

/** The store's meta table and its seq counter: each `haltPost` arrives as the next seq. */
function meta() {
  const m = new Map<string, string>();
  let seq = 0;
  return {
    getMeta: (k: string) => m.get(k),
    setMeta: (k: string, v: string) => void m.set(k, v),
    maxSeq: () => seq,
    nextSeq: () => ++seq,
    raw: m,
  };
}

let lastMeta = meta();

function haltPost(
  author: string,
  createdAt: number,
  targets: string[] = [],
  { text = "stop", store = lastMeta } = {},
): StoredPost {
  return {
    id: `${createdAt}`.padStart(64, "0"),
    author,
    kind: "halt",
    text,
    caps: [],
    createdAt,
    tags: targets.map((t) => ["p", t]),
    seq: store.nextSeq(),
    grafted: false,
  } as unknown as StoredPost;
}

function setup() {
  const calls: string[] = [];
  const warnings: string[] = [];
  lastMeta = meta();
  const state = new HaltState({
    meta: lastMeta,
    accepted: [GUARD],
    agentKey: AGENT,
    warn: (m) => warnings.push(m),
  });
  state.attach({ halt: (r) => calls.push(`halt ${r}`), resume: () => calls.push("resume") });
  return { state, calls, warnings, store: lastMeta };
}

Deno.test("a halt from an accepted author halts the agent and is remembered", () => {
  const { state, calls } = setup();
  assert.ok(state.onPosts([haltPost(GUARD, 10)]));
  assert.equal(calls.length, 1);
  assert.match(
    calls[0]!,
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

Deno.test("resume ends the halt; a halt that arrived before the resume does not come back", () => {
  const { state, calls } = setup();
  const early = haltPost(GUARD, 900);
  const stillInFlight = haltPost(GUARD, 950);
  state.onPosts([early]);
  assert.equal(state.resume()?.by, GUARD);
  assert.equal(state.current(), null);
  assert.equal(state.onPosts([stillInFlight]), undefined, "received before the resume");
  assert.ok(state.onPosts([haltPost(GUARD, 1001)]), "received after the resume");
  assert.deepEqual(calls.map((c) => c.split(" ")[0]), ["halt", "resume", "halt"]);
});

Deno.test("a guardian's halt received after the local resume holds even when its clock is behind", () => {
  const { state, calls } = setup();
  state.onPosts([haltPost(GUARD, 2_000_000_000)]);
  state.resume();
  // The guardian's clock is hours behind this node's: its created_at is older
  // than the resume, but it arrived after it.
  const h = state.onPosts([haltPost(GUARD, 1_000)]);
  assert.ok(h, "the halt was ignored because of the sender's clock");
  assert.equal(state.current()?.at, 1_000);
  assert.deepEqual(calls.map((c) => c.split(" ")[0]), ["halt", "resume", "halt"]);
});

Deno.test("a halt recorded before a restart applies as soon as the runner attaches", () => {
  const m = meta();
  const first = new HaltState({ meta: m, accepted: [GUARD], agentKey: AGENT });
  first.onPosts([haltPost(GUARD, 10, [], { store: m })]);
  const calls: string[] = [];
  const second = new HaltState({ meta: m, accepted: [GUARD], agentKey: AGENT });
  second.attach({ halt: () => calls.push("halt"), resume: () => calls.push("resume") });
  assert.deepEqual(calls, ["halt"]);
});

for (
  const [what, raw] of [
    ["not JSON", '{"id":"abc'],
    ["JSON of the wrong shape", '{"id":7}'],
    ["JSON null", "null"],
  ] as const
) {
  Deno.test(`a halt record that is ${what} reads as halted, with a notice`, () => {
    const m = meta();
    m.setMeta("halt.current", raw);
    const warnings: string[] = [];
    const calls: string[] = [];
    const state = new HaltState({
      meta: m,
      accepted: [GUARD],
      agentKey: AGENT,
      warn: (w) => warnings.push(w),
    });
    state.attach({ halt: (r) => calls.push(r), resume: () => calls.push("resume") });
    const h = state.current();
    assert.ok(h, "an unreadable record must not read as not halted");
    assert.equal(h.unreadable, true);
    assert.match(
      h.reason ?? "",
      /halt record in the store is unreadable, so the agent stays halted: run `wats resume`/,
    );
    assert.equal(calls.length, 1, "the runner was halted at attach");
    assert.match(calls[0]!, /unreadable/);
    assert.equal(warnings.length, 1, "the notice is given once");
    state.current();
    assert.equal(warnings.length, 1);
    assert.deepEqual(state.resume()?.unreadable, true, "resume ends it");
    assert.equal(state.current(), null);
  });
}

Deno.test("with the real store: a guardian's halt signed hours 'before' the local resume still halts", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-halt-" });
  const store = Store.open(`${dir}/store.db`);
  try {
    const guardian = deriveProfileKey(new Uint8Array(32).fill(1), "guardian");
    const agent = deriveProfileKey(new Uint8Array(32).fill(2), "agent");
    const calls: string[] = [];
    const nowS = 1_800_000_000;
    const state = new HaltState({
      meta: store,
      accepted: [guardian.pubkey],
      agentKey: agent.pubkey,
    });
    state.attach({ halt: () => calls.push("halt"), resume: () => calls.push("resume") });
    store.onInsert((posts) => void state.onPosts(posts));
    const halt = (createdAt: number, text: string) =>
      buildPost({ kind: "halt", text, createdAt }, guardian.secret);
    store.insert([halt(nowS - 60, "first")], { origin: "remote" });
    assert.equal(state.current()?.reason, "first");
    state.resume();
    // The guardian's clock is three hours behind: its new halt's created_at is
    // earlier than the resume, but the store received it after.
    store.insert([halt(nowS - 3 * 3600, "again, from a slow clock")], { origin: "remote" });
    assert.equal(state.current()?.reason, "again, from a slow clock");
    // A copy of the first halt arriving again is not stored twice and halts nothing.
    state.resume();
    store.insert([halt(nowS - 60, "first")], { origin: "remote" });
    assert.equal(state.current(), null);
    assert.deepEqual(calls, ["halt", "resume", "halt", "resume"]);
  } finally {
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
