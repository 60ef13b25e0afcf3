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
  parseLstart,
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

async function record(pid: number, leaderStartS?: number): Promise<RunRecord> {
  return {
    id: "20261015T120000000Z-abcdef",
    pgid: pid,
    program: "/bin/sh",
    args: ["-c", "sleep 300 & sleep 300"],
    leader_start_s: leaderStartS ?? await processStartTime(pid),
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
      assert.ok(run.leader_start_s, "ps gave a start time");
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
      const run = await record(proc.pid, 0);
      writeRunnerState(dir, { runtime: "claude", limits: LIMITS, started_at: "x", run });
      const out = await endPreviousRun(dir, new MemoryLog());
      assert.equal(out.outcome, "other");
      assert.ok(await describeProcess(proc.pid), "still running");
      // Another program at the recorded pid is not the run either.
      const info = await describeProcess(proc.pid);
      assert.equal(
        isRecordedLeader({ ...run, leader_start_s: info!.startS, program: "claude" }, info),
        false,
      );
      assert.equal(isRecordedLeader({ ...run, leader_start_s: info!.startS }, info), true);
      // A record without a start time is never enough to kill.
      assert.equal(isRecordedLeader({ ...run, leader_start_s: undefined }, info), false);
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
      leader_start_s: 0,
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
      const run = { ...await record(pgid, 0), program: "sh" };
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

Deno.test("ps's start time reads as one instant however ps pads a one-digit day", () => {
  // ps -o lstart in UTC and the C locale pads days 1-9 with a second space.
  const dec1 = Date.UTC(2026, 11, 1, 23, 39, 38) / 1000;
  assert.equal(parseLstart("Tue Dec  1 23:39:38 2026"), dec1);
  assert.equal(parseLstart("Tue Dec 1 23:39:38 2026"), dec1);
  assert.equal(parseLstart("  Tue Dec  1 23:39:38 2026\n"), dec1);
  assert.equal(parseLstart("Mon Nov 30 16:15:23 2026"), Date.UTC(2026, 10, 30, 16, 15, 23) / 1000);
  assert.equal(parseLstart("Thu Jan  1 00:00:00 1970"), 0);
  for (const text of ["", "Tue Dex  1 23:39:38 2026", "Tue Dec  1 23:39 2026", "1764632378"]) {
    assert.equal(parseLstart(text), undefined, text);
  }
});

Deno.test({
  name: "a record an older daemon wrote with ps's start time as text still names its leader, " +
    "padded or not",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const proc = startGroup();
    try {
      const info = await describeProcess(proc.pid);
      assert.ok(info);
      const run = await record(proc.pid);
      assert.equal(run.leader_start_s, info.startS);
      const { leader_start_s: _s, ...old } = run;
      // The text ps prints for this start time, padded as ps pads it, and as the old
      // daemon normalised it.
      const d = new Date(info.startS * 1000);
      const day = d.toUTCString().slice(0, 3);
      const month = d.toUTCString().slice(8, 11);
      const time = d.toISOString().slice(11, 19);
      const padded = `${day} ${month} ${
        String(d.getUTCDate()).padStart(2, " ")
      } ${time} ${d.getUTCFullYear()}`;
      const plain = `${day} ${month} ${d.getUTCDate()} ${time} ${d.getUTCFullYear()}`;
      assert.equal(isRecordedLeader({ ...old, lstart: padded }, info), true);
      assert.equal(isRecordedLeader({ ...old, lstart: plain }, info), true);
      assert.equal(isRecordedLeader({ ...old, lstart: "Thu Jan  1 00:00:00 1970" }, info), false);
      assert.equal(isRecordedLeader({ ...old, lstart: "not a time" }, info), false);
    } finally {
      proc.kill();
      await proc.status;
    }
  },
});
