/**
 * Running one run (src/runner/execute.ts): the locked run directory is
 * recreated empty without following links out of it, the run in progress is
 * recorded and marked alive, and failures after the spawn end the process.
 */

import assert from "node:assert/strict";
import { defaultSettings } from "../../src/config/schema.ts";
import {
  ALIVE_MS,
  denoRunnerFs,
  type ExecuteDeps,
  executeRun,
  WATCH_MS,
} from "../../src/runner/execute.ts";
import type { ProcessRule, RunContext } from "../../src/runner/harness.ts";
import type { ProcessRow } from "../../src/runner/process_watch.ts";
import type { RunRecord, RunRecorder } from "../../src/runner/state_file.ts";
import { Transcripts } from "../../src/runner/transcripts.ts";
import { FakeHarness, FakeSpawner, FakeTime, MemoryLog } from "./fakes.ts";

const T0 = Date.UTC(2026, 9, 15, 12);

function setup(dir: string, over: Partial<ExecuteDeps> = {}, runId = "20261015T120000000Z-abcdef") {
  const time = new FakeTime(T0);
  const spawner = new FakeSpawner();
  const harness = new FakeHarness();
  const runDir = `${dir}/agent/run`;
  const deps: ExecuteDeps = {
    clock: time,
    timers: time,
    log: new MemoryLog(),
    harness,
    spawn: spawner.spawn,
    fs: denoRunnerFs,
    runDir,
    timeoutMs: defaultSettings()["agent.timeout"],
    ...over,
  };
  const ctx: RunContext = {
    runId,
    prompt: "hello",
    maxTurns: 10,
    maxBudgetUsd: 1,
    agentProfile: "helper",
    dataDir: dir,
    cwd: runDir,
    configDir: `${dir}/agent/run-config`,
    selfCommand: { command: "wats", args: [] },
  };
  const transcripts = new Transcripts({
    runsDir: `${dir}/agent/runs`,
    runsIndex: `${dir}/agent/runs.jsonl`,
  });
  const writer = transcripts.begin({
    id: ctx.runId,
    trigger: "events",
    events: [],
    started_at: new Date(T0).toISOString(),
    harness: "fake",
  });
  const control = { started: () => {}, killedWith: () => undefined };
  return { time, spawner, harness, deps, ctx, writer, control, runDir };
}

Deno.test("the locked run directory is recreated empty before a run, and a planted link is removed, not followed", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-exec-" });
  try {
    const s = setup(dir);
    const outside = `${dir}/outside`;
    Deno.mkdirSync(outside);
    Deno.writeTextFileSync(`${outside}/keep.txt`, "the user's file");
    Deno.mkdirSync(`${s.runDir}/sub`, { recursive: true });
    Deno.writeTextFileSync(`${s.runDir}/planted.md`, "left by an earlier run");
    Deno.writeTextFileSync(`${s.runDir}/sub/deeper.md`, "also left");
    Deno.symlinkSync(outside, `${s.runDir}/link-out`);
    const run = executeRun(s.deps, s.ctx, s.writer, s.control);
    await s.time.advance(0);
    assert.deepEqual([...Deno.readDirSync(s.runDir)], [], "nothing planted survives");
    assert.equal(Deno.readTextFileSync(`${outside}/keep.txt`), "the user's file");
    s.spawner.last.finish({ ok: true });
    assert.equal((await run).status, "ok");

    // The run directory itself replaced by a link out of the data dir.
    Deno.removeSync(s.runDir, { recursive: true });
    Deno.symlinkSync(outside, s.runDir);
    const again = setup(dir, {}, "20261015T120001000Z-abcdef");
    const run2 = executeRun(again.deps, again.ctx, again.writer, again.control);
    await again.time.advance(0);
    assert.equal(Deno.lstatSync(s.runDir).isSymlink, false);
    assert.deepEqual([...Deno.readDirSync(s.runDir)], []);
    assert.equal(Deno.readTextFileSync(`${outside}/keep.txt`), "the user's file");
    again.spawner.last.finish({ ok: true });
    await run2;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a workspace run directory is never emptied", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-exec-" });
  try {
    const s = setup(dir);
    const workspace = `${dir}/workspace`;
    Deno.mkdirSync(workspace);
    Deno.writeTextFileSync(`${workspace}/code.ts`, "the user's code");
    const run = executeRun(s.deps, { ...s.ctx, cwd: workspace }, s.writer, s.control);
    await s.time.advance(0);
    s.spawner.last.finish({ ok: true });
    await run;
    assert.equal(Deno.readTextFileSync(`${workspace}/code.ts`), "the user's code");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the run in progress is recorded with its process group, marked alive each second, and forgotten at its end", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-exec-" });
  try {
    const calls: string[] = [];
    const records: RunRecord[] = [];
    const recorder: RunRecorder = {
      started: (r) => void records.push(r),
      alive: (at) => void calls.push(`alive ${at - T0}`),
      ended: () => void calls.push("ended"),
    };
    const s = setup(dir, { recorder, identify: () => Promise.resolve(1792065600) });
    const run = executeRun(s.deps, s.ctx, s.writer, s.control);
    await s.time.advance(0);
    assert.equal(records[0]!.pgid, s.spawner.last.pid);
    assert.equal(records[0]!.program, "fake");
    assert.equal(records[0]!.id, s.ctx.runId);
    assert.equal(
      records.at(-1)!.leader_start_s,
      1792065600,
      "ps's start time joins the record",
    );
    await s.time.advance(3 * ALIVE_MS);
    assert.deepEqual(calls, ["alive 1000", "alive 2000", "alive 3000"]);
    s.spawner.last.finish({ ok: true });
    await run;
    assert.equal(calls.at(-1), "ended");
    assert.equal(s.time.pending(), 0, "no alive timer after the run");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a run whose harness has a process rule is stopped as lock broken when a process it must not have appears", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-exec-" });
  try {
    let rows: ProcessRow[] = [];
    const s = setup(dir, { listProcesses: () => Promise.resolve(rows) });
    const rule: ProcessRule = (args) => args === "fake --run" ? "run" : undefined;
    s.deps.harness = Object.assign(s.harness, { processRule: () => rule });
    const run = executeRun(s.deps, s.ctx, s.writer, s.control);
    await s.time.advance(0);
    const leader = s.spawner.last.pid;
    rows = [{ pid: leader, ppid: 1, pgid: leader, args: "fake --run" }];
    await s.time.advance(3 * WATCH_MS);
    assert.equal(s.spawner.last.killed, 0, "only the run's own processes: it goes on");
    // A process seen once, while it exits (no command line): gone at the next check.
    rows.push({ pid: leader + 9, ppid: leader, pgid: leader, args: "[deno]" });
    await s.time.advance(WATCH_MS);
    rows.pop();
    await s.time.advance(3 * WATCH_MS);
    assert.equal(s.spawner.last.killed, 0, "a process seen by one check only: it goes on");
    rows.push(
      { pid: leader + 1, ppid: leader, pgid: leader + 1, args: "bwrap --new-session -- sh" },
      { pid: leader + 2, ppid: leader + 1, pgid: leader + 1, args: "sleep 60" },
    );
    await s.time.advance(WATCH_MS);
    assert.equal(s.spawner.last.killed, 0, "seen once: not yet");
    await s.time.advance(WATCH_MS);
    assert.equal(s.spawner.last.killed, 1, "stopped once a second check sees it too");
    const footer = await run;
    assert.equal(footer.status, "error");
    assert.equal(
      footer.error,
      'lock broken: fake started a process a locked run never has ("sleep 60"); the run was stopped',
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
