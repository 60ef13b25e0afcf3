import assert from "node:assert/strict";
import { defaultSettings } from "../../src/config/schema.ts";
import { log } from "../../src/log.ts";
import { checkThread } from "../../src/runner/loop_detector.ts";
import type { RunnerLog } from "../../src/runner/ports.ts";
import { Runner } from "../../src/runner/scheduler.ts";
import { Transcripts } from "../../src/runner/transcripts.ts";
import { Store } from "../../src/store/store.ts";
import { alice, bob, carol, post, reply, tempStore } from "../store/post_factory.ts";
import { FakeHarness, FakeSpawner, FakeTime } from "./fakes.ts";

Deno.test("a loop pause lives in the store: it holds after reopening, and a third author lifts it", async () => {
  const { store, path, dir } = await tempStore();
  let reopened: Store | undefined;
  try {
    const agent = alice.pubkey;
    const ask = post(bob, "ask", "how?");
    const events = [ask];
    for (let i = 1; i < 31; i++) {
      events.push(reply(i % 2 === 1 ? alice : bob, "answer", `turn ${i}`, events.at(-1)!));
    }
    store.insert(events, { origin: "remote" });
    assert.equal(checkThread(store, ask.id, agent, 30).paused, true);
    store.close();
    reopened = Store.open(path);
    assert.equal(checkThread(reopened, ask.id, agent, 30).paused, true, "after a restart");
    reopened.insert([reply(carol, "note", "you two are looping", ask)], { origin: "remote" });
    assert.equal(checkThread(reopened, ask.id, agent, 30).paused, false);
  } finally {
    reopened?.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("claims through the real store: a claim heard before its ask holds it; the release wakes the agent", async () => {
  const { store, dir, cleanup } = await tempStore();
  try {
    const time = new FakeTime(Date.UTC(2026, 9, 15, 12));
    const spawner = new FakeSpawner();
    const runner = new Runner({
      world: { clock: time, timers: time, log: log("runner") },
      records: {
        store,
        transcripts: new Transcripts({
          runsDir: `${dir}/agent/runs`,
          runsIndex: `${dir}/agent/runs.jsonl`,
        }),
      },
      settings: { ...defaultSettings(), "agent.profile": "alice-agent" },
      agent: {
        agentKey: alice.pubkey,
        user: "alice",
        localAuthors: () => store.localAuthors(),
        template: "{events}",
      },
      launch: {
        harness: new FakeHarness(),
        spawn: spawner.spawn,
        paths: { dataDir: dir, runDir: `${dir}/agent/run`, configDir: `${dir}/agent/run-config` },
        selfCommand: { command: "wats", args: [] },
      },
    });
    store.onInsert((posts) => runner.onPosts(posts));
    runner.start();
    const now = () => Math.floor(time.now() / 1000);
    const ask = post(bob, "ask", "who takes this?", { createdAt: now() });
    const thread = { root: ask.id, parent: ask.id, parentAuthor: bob.pubkey };
    const claim = post(carol, "claim", "mine", { ...thread, createdAt: now() });
    // The relay delivers the claim first.
    store.insert([claim], { origin: "remote" });
    store.insert([ask], { origin: "remote" });
    await time.advance(10 * 60_000);
    assert.equal(spawner.procs.length, 0);
    assert.deepEqual(runner.status().claimed.map((c) => [c.ask, c.claim.by]), [[
      ask.id,
      carol.pubkey,
    ]]);
    store.insert([post(carol, "release", "gave up", { ...thread, createdAt: now() })], {
      origin: "remote",
    });
    await time.advance(30_000);
    assert.equal(spawner.procs.length, 1);
    assert.match(spawner.last.request.stdin, new RegExp(`${ask.id}: ask .*; released 30s ago`));
    spawner.last.finish({ ok: true, costUsd: 0.01 });
    await runner.stop();
  } finally {
    await cleanup();
  }
});

Deno.test("the runner takes the store's inserts and LogTape's logger as they are", async () => {
  const { store, dir, cleanup } = await tempStore();
  try {
    const time = new FakeTime(Date.UTC(2026, 9, 15, 12));
    const spawner = new FakeSpawner();
    const logger: RunnerLog = log("runner");
    const runner = new Runner({
      world: { clock: time, timers: time, log: logger },
      records: {
        store,
        transcripts: new Transcripts({
          runsDir: `${dir}/agent/runs`,
          runsIndex: `${dir}/agent/runs.jsonl`,
        }),
      },
      settings: { ...defaultSettings(), "agent.profile": "alice-agent" },
      agent: {
        agentKey: alice.pubkey,
        user: "alice",
        localAuthors: () => store.localAuthors(),
        template: "{events}",
      },
      launch: {
        harness: new FakeHarness(),
        spawn: spawner.spawn,
        paths: { dataDir: dir, runDir: `${dir}/agent/run`, configDir: `${dir}/agent/run-config` },
        selfCommand: { command: "wats", args: [] },
      },
    });
    store.onInsert((posts) => runner.onPosts(posts));
    runner.start();
    const ask = post(bob, "ask", "anyone?");
    store.insert([ask, reply(carol, "answer", "sibling", ask)], { origin: "remote" });
    await time.advance(30_000);
    assert.equal(spawner.procs.length, 1);
    assert.match(spawner.last.request.stdin, new RegExp(`${ask.id}: ask`));
    assert.equal(
      spawner.last.request.stdin.match(/: (ask|answer) by/g)?.length,
      1,
      "the sibling answer did not wake it",
    );
    spawner.last.finish({ ok: true, costUsd: 0.01 });
    await runner.stop();
  } finally {
    await cleanup();
  }
});

Deno.test("the store's runner view carries an ask's to and caps: only the asks for the agent wake it", async () => {
  const { store, dir, cleanup } = await tempStore();
  try {
    const time = new FakeTime(Date.UTC(2026, 9, 15, 12));
    const spawner = new FakeSpawner();
    const runner = new Runner({
      world: { clock: time, timers: time, log: log("runner") },
      records: {
        store,
        transcripts: new Transcripts({
          runsDir: `${dir}/agent/runs`,
          runsIndex: `${dir}/agent/runs.jsonl`,
        }),
      },
      settings: {
        ...defaultSettings(),
        "agent.profile": "alice-agent",
        "agent.caps": ["Deno"],
        "agent.open_asks": false,
      },
      agent: {
        agentKey: alice.pubkey,
        user: "alice",
        localAuthors: () => store.localAuthors(),
        template: "{events}",
      },
      launch: {
        harness: new FakeHarness(),
        spawn: spawner.spawn,
        paths: { dataDir: dir, runDir: `${dir}/agent/run`, configDir: `${dir}/agent/run-config` },
        selfCommand: { command: "wats", args: [] },
      },
    });
    store.onInsert((posts) => runner.onPosts(posts));
    runner.start();
    const toAlice = post(bob, "ask", "for alice", { mentions: [alice.pubkey] });
    const toCarol = post(bob, "ask", "for carol", { mentions: [carol.pubkey], caps: ["deno"] });
    const deno = post(bob, "ask", "deno question", { caps: ["deno", "wasm"] });
    const rust = post(bob, "ask", "rust question", { caps: ["rust"] });
    const open = post(bob, "ask", "anyone?");
    store.insert([toAlice, toCarol, deno, rust, open], { origin: "remote" });
    await time.advance(30_000);
    assert.equal(spawner.procs.length, 1);
    const stdin = spawner.last.request.stdin;
    assert.deepEqual(
      [...stdin.matchAll(/([0-9a-f]{64}): ask/g)].map((m) => m[1]),
      [toAlice.id, deno.id],
    );
    spawner.last.finish({ ok: true, costUsd: 0.01 });
    await runner.stop();
  } finally {
    await cleanup();
  }
});
