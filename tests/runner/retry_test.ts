import assert from "node:assert/strict";
import { ActWatch, RETRY_BACKOFF_MS, RETRY_TRIES } from "../../src/runner/retry.ts";
import { ClaudeStreamParser } from "../../src/runner/runtimes/claude/harness.ts";
import { PENDING_META_KEY } from "../../src/runner/pending.ts";
import { renderRunsTable } from "../../src/runner/render.ts";
import { AGENT, BOB, CAROL, type FakeProcess } from "./fakes.ts";
import { HOUR, MIN, promptIds, type Rig, rig, SEC } from "./scheduler_rig.ts";
import { API_ERROR, assistant, init, RESULT_SUCCESS, toolResult } from "./claude_samples.ts";

/** The first retry's wait. */
const FIRST = RETRY_BACKOFF_MS[0]!;

const WATS = [{ name: "wats", status: "connected" }];

// ---- what "could act" means ---------------------------------------------------------

Deno.test("could act: a failed run with no tool call, or one whose wats tools were not connected, did not", () => {
  const none = new ActWatch();
  assert.equal(none.endedBeforeActing("error"), true);
  assert.equal(none.endedBeforeActing("ok"), false, "a run that completed is done");
  assert.equal(none.endedBeforeActing("timeout"), false, "a run that used its timeout is done");
  assert.equal(none.endedBeforeActing("stopped"), false);

  const failedCall = new ActWatch();
  failedCall.see({ type: "tool_call", id: "1", name: "mcp__wats__answer", args: {} });
  failedCall.see({ type: "tool_result", id: "1", text: "no", isError: true });
  assert.equal(failedCall.endedBeforeActing("error"), true, "a call that failed reached no one");

  const called = new ActWatch();
  called.see({ type: "tool_call", id: "1", name: "mcp__wats__feed", args: {} });
  called.see({ type: "tool_result", id: "1", text: "…", isError: false });
  assert.equal(called.endedBeforeActing("error"), false);

  const cut = new ActWatch();
  cut.see({ type: "tool_call", id: "2", name: "Bash", args: {} });
  assert.equal(cut.endedBeforeActing("error"), false, "a call cut off may have done its work");

  const noTools = new ActWatch();
  noTools.see({ type: "init", mcpServers: [{ name: "wats", status: "pending" }], tools: ["Read"] });
  noTools.see({ type: "tool_call", id: "3", name: "Read", args: {} });
  noTools.see({ type: "tool_result", id: "3", text: "file", isError: false });
  assert.equal(
    noTools.endedBeforeActing("error"),
    true,
    "without its wats tools it could not answer",
  );
});

// ---- the runner gives such a run's events back ---------------------------------------

/** The rig with Claude Code's real output parser: the process prints recorded stream-json. */
function claudeRig(settings: Parameters<typeof rig>[0] = {}): Rig {
  const r = rig(settings);
  r.harness.parser = () => new ClaudeStreamParser();
  return r;
}

function print(p: FakeProcess, lines: string[], code: number): void {
  for (const l of lines) p.lines.push(l);
  p.exit(code);
}

/** A run that answers: init with wats connected, the `answer` call and its result, success. */
function answers(r: Rig, p: FakeProcess, askId: string): void {
  r.post({ author: AGENT, kind: "answer", root: askId, parent: askId });
  print(p, [
    init(WATS, ["mcp__wats__answer"]),
    assistant("m1", { type: "tool_use", id: "t1", name: "mcp__wats__answer", input: {} }),
    toolResult("t1", "posted"),
    RESULT_SUCCESS,
  ], 0);
}

/** The model API answered 529 before any tool call (Claude Code's own retries used up). */
const OVERLOADED = API_ERROR.map((l) =>
  l.replaceAll("400 bad thing", "529 overloaded").replace(
    '"api_error_status":400',
    '"api_error_status":529',
  )
);

for (
  const [name, fail] of [
    [
      "the model API answered 529",
      (p: FakeProcess) => print(p, [init(WATS, []), ...OVERLOADED], 1),
    ],
    ["the CLI exited at once", (p: FakeProcess) => p.exit(1)],
    [
      "the wats tools were not connected",
      (p: FakeProcess) =>
        print(p, [init([{ name: "wats", status: "pending" }], []), RESULT_SUCCESS], 0),
    ],
  ] as const
) {
  Deno.test(`${name}: the ask goes again 5 s later and is answered by that run, exactly once`, async () => {
    const r = claudeRig();
    try {
      r.runner.start();
      const ask = r.post({ author: BOB, kind: "ask" });
      await r.time.advance(30 * SEC);
      assert.equal(r.spawner.procs.length, 1);
      fail(r.spawner.last);
      await r.runner.whenIdle();
      const [first] = r.transcripts.index();
      assert.equal(first!.status, "error");
      assert.deepEqual(first!.retry, {
        try: 1,
        of: RETRY_TRIES,
        at: new Date(r.time.now() + FIRST).toISOString(),
      });
      const st = r.runner.status();
      assert.equal(st.retrying.length, 1);
      assert.equal(st.retrying[0]!.post, ask.id);
      assert.equal(st.retrying[0]!.at, r.time.now() + FIRST);
      assert.match(r.log.matching("ended before the agent could act")[0]!, /try 2 of 5/);

      await r.time.advance(FIRST - 1);
      assert.equal(r.spawner.procs.length, 1, "not before its backoff");
      await r.time.advance(1);
      assert.equal(r.spawner.procs.length, 2, "its backoff was its wait: no new debounce");
      assert.deepEqual(promptIds(r.spawner.last.request.stdin, [ask.id]), [ask.id]);
      answers(r, r.spawner.last, ask.id);
      await r.runner.whenIdle();
      assert.equal(r.transcripts.index()[1]!.status, "ok");
      assert.equal(r.runner.status().retrying.length, 0);
      await r.time.advance(3 * HOUR);
      assert.equal(r.spawner.procs.length, 2, "answered once, never woken for it again");
    } finally {
      r.cleanup();
    }
  });
}

Deno.test("a run that acted before it failed is done with its events", async () => {
  const r = claudeRig();
  try {
    r.runner.start();
    r.post({ author: BOB, kind: "ask" });
    await r.time.advance(30 * SEC);
    print(r.spawner.last, [
      init(WATS, ["mcp__wats__feed"]),
      assistant("m1", { type: "tool_use", id: "t1", name: "mcp__wats__feed", input: {} }),
      toolResult("t1", "nothing new"),
      ...OVERLOADED,
    ], 1);
    await r.runner.whenIdle();
    assert.equal(r.transcripts.index()[0]!.retry, undefined);
    await r.time.advance(3 * HOUR);
    assert.equal(r.spawner.procs.length, 1);
  } finally {
    r.cleanup();
  }
});

Deno.test("an ask the agent answered before its run crashed is not run again", async () => {
  const r = claudeRig();
  try {
    r.runner.start();
    const ask = r.post({ author: BOB, kind: "ask" });
    const other = r.post({ author: CAROL, kind: "ask" });
    await r.time.advance(30 * SEC);
    // The answer reached the store, but the CLI died before it printed the call.
    r.post({ author: AGENT, kind: "answer", root: ask.id, parent: ask.id });
    r.spawner.last.exit(null, "SIGSEGV");
    await r.runner.whenIdle();
    await r.time.advance(30 * SEC);
    assert.equal(r.spawner.procs.length, 2);
    assert.deepEqual(promptIds(r.spawner.last.request.stdin, [ask.id, other.id]), [other.id]);
  } finally {
    r.cleanup();
  }
});

Deno.test("an ask answered while it waited for its retry is not run again", async () => {
  const r = claudeRig();
  try {
    r.runner.start();
    const ask = r.post({ author: BOB, kind: "ask" });
    await r.time.advance(30 * SEC);
    r.spawner.last.exit(1);
    await r.runner.whenIdle();
    // An interactive session of the agent's profile answered meanwhile.
    r.post({ author: AGENT, kind: "answer", root: ask.id, parent: ask.id });
    await r.time.advance(HOUR);
    assert.equal(r.spawner.procs.length, 1);
    assert.equal(r.log.matching("is not tried again: the agent replied to it").length, 1);
  } finally {
    r.cleanup();
  }
});

Deno.test("runs that could not act do not use up agent.max_runs_per_hour, across a restart too", async () => {
  const r = claudeRig({ "agent.max_runs_per_hour": 1 });
  try {
    r.runner.start();
    const ask = r.post({ author: BOB, kind: "ask" });
    await r.time.advance(30 * SEC);
    r.spawner.last.exit(1);
    await r.runner.whenIdle();
    await r.time.advance(30 * SEC);
    assert.equal(r.spawner.procs.length, 2, "the retry ran within the hour");
    r.spawner.last.exit(1);
    await r.runner.whenIdle();
    await r.runner.stop();

    // A restarted daemon reads the hour's runs from the index: neither counts.
    const again = rig({ "agent.max_runs_per_hour": 1 }, {
      store: r.store,
      transcriptsDir: r.dir,
      start: r.time.now(),
    });
    again.harness.parser = () => new ClaudeStreamParser();
    again.runner.start();
    assert.equal(again.runner.status().retrying[0]?.tries, 2, "the tries survive the restart");
    await again.time.advance(2 * MIN);
    assert.equal(again.spawner.procs.length, 1, "the third try, 2 min after the second");
    answers(again, again.spawner.last, ask.id);
    await again.runner.whenIdle();
    // The one full run of the hour: the next ask waits for the cap.
    again.post({ author: CAROL, kind: "ask" });
    await again.time.advance(MIN);
    assert.equal(again.spawner.procs.length, 1);
    assert.equal(again.log.matching("hourly cap").length, 1);
    await again.runner.stop();
  } finally {
    r.cleanup();
  }
});

Deno.test("after 5 runs that could not act the ask is given up, marked so in the index, the log and status", async () => {
  const r = claudeRig();
  try {
    r.runner.start();
    const ask = r.post({ author: BOB, kind: "ask" });
    await r.time.advance(30 * SEC);
    const waits = [5 * SEC, 30 * SEC, 2 * MIN, 8 * MIN];
    assert.deepEqual(waits, RETRY_BACKOFF_MS);
    for (const wait of waits) {
      const before = r.spawner.procs.length;
      r.spawner.last.exit(1);
      await r.runner.whenIdle();
      await r.time.advance(wait);
      assert.equal(r.spawner.procs.length, before + 1, `tried again after ${wait / SEC}s`);
    }
    r.spawner.last.exit(1);
    await r.runner.whenIdle();
    const last = r.transcripts.index().at(-1)!;
    assert.deepEqual(last.retry, { try: 5, of: 5, gave_up: 1 });
    const st = r.runner.status();
    assert.equal(st.retrying.length, 0);
    assert.equal(st.gaveUp.length, 1);
    assert.equal(st.gaveUp[0]!.post, ask.id);
    assert.equal(st.gaveUp[0]!.tries, 5);
    assert.match(st.gaveUp[0]!.error, /exited with code 1/);
    assert.equal(
      r.log.lines.filter((l) => l.level === "warn" && /gave up on/.test(l.message)).length,
      1,
    );
    assert.match(
      renderRunsTable(r.transcripts.index(), undefined, undefined, r.time.now()),
      /gave up after 5 tries/,
    );
    const saved = JSON.parse(r.store.getMeta(PENDING_META_KEY)!);
    assert.equal(saved.gave_up.length, 1, "the give-up is kept across a restart");
    await r.time.advance(3 * HOUR);
    assert.equal(r.spawner.procs.length, 5, "never again");
  } finally {
    r.cleanup();
  }
});

Deno.test("a permission decision given to a run that could not act wakes the agent again", async () => {
  const r = rig();
  try {
    r.runner.start();
    r.runner.permissionDecided("permission decided: claude/edit on work notes was approved");
    await r.time.advance(0);
    assert.equal(r.spawner.procs.length, 1);
    r.spawner.last.exit(1);
    await r.runner.whenIdle();
    assert.match(r.runner.status().retrying[0]!.what, /permission decided/);
    await r.time.advance(FIRST);
    assert.equal(r.spawner.procs.length, 2);
    assert.match(r.spawner.last.request.stdin, /permission decided: claude\/edit/);
  } finally {
    r.cleanup();
  }
});

Deno.test("wats agent runs says retrying in … while a retry waits", async () => {
  const r = claudeRig();
  try {
    r.runner.start();
    r.post({ author: BOB, kind: "ask" });
    await r.time.advance(30 * SEC);
    r.spawner.last.exit(1);
    await r.runner.whenIdle();
    const table = renderRunsTable(
      r.transcripts.index(),
      undefined,
      undefined,
      r.time.now() + 2 * SEC,
    );
    assert.match(table, /error, before acting: retrying in 3s \(try 2 of 5\)/);
    const later = renderRunsTable(r.transcripts.index(), undefined, undefined, r.time.now() + MIN);
    assert.match(later, /error, before acting: tried again at /);
  } finally {
    r.cleanup();
  }
});
