/**
 * Ending a run a crashed daemon left (src/runner/orphan.ts), with real process
 * groups: the recorded group is killed only while its leader is still the
 * recorded process, never a process that reused its pid.
 */

import assert from "node:assert/strict";
import {
  describeProcess,
  endPreviousRun,
  isRecordedLeader,
  livingMembers,
  processStartTime,
} from "../../src/runner/orphan.ts";
import { spawnProcessGroup } from "../../src/runner/spawn.ts";
import { readRunnerState, type RunRecord, writeRunnerState } from "../../src/runner/state_file.ts";
import { MemoryLog } from "./fakes.ts";

const LIMITS = { usdPerDay: 2, usdPerMonth: 20, runsPerDay: 48 };

/** A process group like a run's: `sh` leading, a `sleep` child in the group. */
function startGroup() {
  return spawnProcessGroup({
    program: "sh",
    args: ["-c", "sleep 300 & sleep 300"],
    env: {},
    cwd: "/",
    stdin: "",
  });
}

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (await describeProcess(pid) === undefined) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

async function record(pid: number, lstart?: string): Promise<RunRecord> {
  return {
    id: "20261015T120000000Z-abcdef",
    pgid: pid,
    program: "/bin/sh",
    args: ["-c", "sleep 300 & sleep 300"],
    lstart: lstart ?? await processStartTime(pid),
    started_at: new Date().toISOString(),
    alive_at: new Date().toISOString(),
  };
}

Deno.test({
  name: "a daemon that starts after a crash kills the group of the run the crashed one recorded",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = Deno.makeTempDirSync({ prefix: "wats-orphan-" });
    const proc = startGroup();
    try {
      const run = await record(proc.pid);
      assert.ok(run.lstart, "ps gave a start time");
      writeRunnerState(dir, { runtime: "claude", limits: LIMITS, started_at: "x", run });
      const log = new MemoryLog();
      const out = await endPreviousRun(dir, log);
      assert.equal(out.outcome, "ended");
      assert.ok(await gone(proc.pid), "the leader is gone");
      await proc.status;
      assert.equal(log.matching("ended run 20261015T120000000Z-abcdef left running").length, 1);
      assert.ok(readRunnerState(dir)!.run!.ended_at, "the record says when it was ended");
    } finally {
      proc.kill();
      await proc.status;
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a recorded pid now used by another process is left alone",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = Deno.makeTempDirSync({ prefix: "wats-orphan-" });
    const proc = startGroup();
    try {
      // Same pid, another start time: what a reused pid looks like.
      const run = await record(proc.pid, "Thu Jan  1 00:00:00 1970");
      writeRunnerState(dir, { runtime: "claude", limits: LIMITS, started_at: "x", run });
      const out = await endPreviousRun(dir, new MemoryLog());
      assert.equal(out.outcome, "other");
      assert.ok(await describeProcess(proc.pid), "still running");
      // Another program at the recorded pid is not the run either.
      const info = await describeProcess(proc.pid);
      assert.equal(
        isRecordedLeader({ ...run, lstart: info!.lstart, program: "claude" }, info),
        false,
      );
      assert.equal(isRecordedLeader({ ...run, lstart: info!.lstart }, info), true);
      // A record without a start time is never enough to kill.
      assert.equal(isRecordedLeader({ ...run, lstart: undefined }, info), false);
    } finally {
      proc.kill();
      await proc.status;
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test("no recorded run, or one whose process is gone, is nothing to do", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-orphan-" });
  try {
    assert.equal((await endPreviousRun(dir, new MemoryLog())).outcome, "none");
    const p = new Deno.Command("true").spawn();
    const pid = p.pid;
    await p.status;
    const run: RunRecord = {
      id: "20261015T120000000Z-abcdef",
      pgid: pid,
      program: "true",
      args: [],
      lstart: "Thu Jan  1 00:00:00 1970",
      started_at: "2026-10-15T12:00:00.000Z",
      alive_at: "2026-10-15T12:00:08.000Z",
    };
    writeRunnerState(dir, { runtime: "claude", limits: LIMITS, started_at: "x", run });
    assert.equal((await endPreviousRun(dir, new MemoryLog())).outcome, "gone");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test({
  name: "a recorded group whose leader exited is still ended: what it started dies, " +
    "and the next run starts beside none of it",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = Deno.makeTempDirSync({ prefix: "wats-orphan-" });
    // The leader leaves a child in its group and exits (as a killed agent's CLI might linger).
    const leader = new Deno.Command("sh", {
      args: ["-c", "sleep 300 & exit 0"],
      detached: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const pgid = leader.pid;
    await leader.status;
    try {
      assert.equal(await livingMembers(pgid), 1, "the sleep lives on in the group");
      const run = { ...await record(pgid, "Thu Jan  1 00:00:00 1970"), program: "sh" };
      writeRunnerState(dir, { runtime: "acp", limits: LIMITS, started_at: "x", run });
      const log = new MemoryLog();
      const out = await endPreviousRun(dir, log);
      assert.equal(out.outcome, "ended");
      assert.equal(await livingMembers(pgid), 0, "nothing of the group lives");
      assert.equal(log.matching("ended what was left of run").length, 1);
    } finally {
      try {
        Deno.kill(-pgid, "SIGKILL");
      } catch { /* gone */ }
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
