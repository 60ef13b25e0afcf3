/**
 * Ending a run a previous daemon left behind. A daemon killed during a run
 * (SIGKILL, a crash, the machine's OOM killer) cannot end the run's process
 * group; the run's own `wats mcp` bridge ends it when the daemon's socket
 * closes (src/cli/mcp.ts), and this is the second line: the next daemon, before
 * it starts anything, reads the run recorded in the state file (state_file.ts)
 * and kills its process group if it still runs.
 *
 * A pid can be reused, so the group is killed only when its leader is still
 * the recorded process: `ps` shows it leading its own process group, with the
 * start time recorded at the spawn and the recorded program in its command
 * line. The start time is compared as epoch seconds, parsed from `ps`'s text in
 * one function (`parseLstart`): `ps` pads a one-digit day with a second space,
 * and two texts of one instant must never differ. `ps` rather than /proc: reading /proc would let the daemon read any
 * file through /proc/<pid>/root, which its permissions must not allow.
 *
 * Requires `--allow-run` for `ps` and `kill`, and read/write on the agent directory.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import type { RunnerLog } from "./ports.ts";
import { signalProcessGroup } from "./spawn.ts";
import { readRunnerState, type RunRecord, writeRunnerState } from "./state_file.ts";

/** The program that describes a process. */
export const PS_PROGRAM = "ps";

/** What `ps` says about one process. */
export interface ProcessInfo {
  pgid: number;
  /** Its start time, seconds since the epoch (from `ps -o lstart`, see `parseLstart`). */
  startS: number;
  /** Its command line. */
  args: string;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * Seconds since the epoch of a start time as `ps -o lstart` prints it in UTC
 * and the C locale (`Tue Dec  1 23:39:38 2026`, `Mon Nov 30 16:15:23 2026`),
 * however it is spaced; undefined for any other text. The one place that reads
 * `ps`'s start time, so a record and a check always agree.
 */
export function parseLstart(text: string): number | undefined {
  const m = /^[A-Z][a-z]{2}\s+([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{2}):(\d{2}):(\d{2})\s+(\d{4})$/
    .exec(text.trim());
  if (!m) return undefined;
  const [, monthName = "", ...fields] = m;
  const month = MONTHS.indexOf(monthName);
  if (month < 0) return undefined;
  // Every group matched: the fields are all digits.
  const [day = NaN, h = NaN, min = NaN, s = NaN, year = NaN] = fields.map(Number);
  return Date.UTC(year, month, day, h, min, s) / 1000;
}

/**
 * Describes process `pid` with `ps` (in UTC and the C locale, so two daemons
 * read the same start time); undefined when no such process runs (a zombie,
 * dead but not yet reaped, runs no more).
 */
export async function describeProcess(pid: number): Promise<ProcessInfo | undefined> {
  const out = await new Deno.Command(PS_PROGRAM, {
    args: ["-o", "pgid=", "-o", "stat=", "-o", "lstart=", "-o", "args=", "-p", String(pid)],
    env: { TZ: "UTC", LC_ALL: "C" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const line = new TextDecoder().decode(out.stdout).split("\n").find((l) => l.trim() !== "");
  if (!out.success || line === undefined) return undefined;
  // `  1234 Ss Mon Nov 30 16:15:23 2026 claude -p …`: the start time is five words.
  const words = line.trim().split(/\s+/);
  const pgid = Number(words[0]);
  if (!Number.isInteger(pgid) || words.length < 7 || words[1]?.startsWith("Z")) return undefined;
  const startS = parseLstart(words.slice(2, 7).join(" "));
  if (startS === undefined) return undefined;
  return { pgid, startS, args: words.slice(7).join(" ") };
}

/**
 * The start time of `pid` for the run record, epoch seconds (see
 * `RunnerLaunch.identify`). Requires `--allow-run` for `ps`.
 */
export async function processStartTime(pid: number): Promise<number | undefined> {
  return (await describeProcess(pid))?.startS;
}

/**
 * The recorded leader's start time, epoch seconds: `leader_start_s`, or the
 * `lstart` text a daemon before it wrote (parsed the same way, so an old
 * record still ends its run whether its text was padded or not).
 */
function recordedStart(run: RunRecord): number | undefined {
  if (typeof run.leader_start_s === "number") return run.leader_start_s;
  return typeof run.lstart === "string" ? parseLstart(run.lstart) : undefined;
}

/**
 * How many processes of group `pgid` still live (zombies are dead, only not reaped yet).
 * Requires `--allow-run` for `ps`.
 */
export async function livingMembers(pgid: number): Promise<number> {
  const out = await new Deno.Command(PS_PROGRAM, {
    args: ["-e", "-o", "pgid=", "-o", "stat="],
    env: { LC_ALL: "C" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([group, stat]) =>
      Number(group) === pgid && stat !== undefined && !stat.startsWith("Z")
    )
    .length;
}

/** True when `info` is the recorded run's leader (not a process that reused its pid). */
export function isRecordedLeader(run: RunRecord, info: ProcessInfo | undefined): boolean {
  const start = recordedStart(run);
  if (info === undefined || start === undefined) return false;
  const program = run.program.slice(run.program.lastIndexOf("/") + 1);
  return info.pgid === run.pgid && info.startS === start && info.args.includes(program);
}

/** What `endPreviousRun` found. */
export type PreviousRun =
  | { outcome: "none" }
  | { outcome: "gone"; run: RunRecord }
  | { outcome: "ended"; run: RunRecord }
  | { outcome: "other"; run: RunRecord; reason: string };

/** How long to wait for a killed group to be gone. */
const GONE_MS = 3000;

/**
 * Ends the process group of the run the state file in `agentDir` records, if
 * its leader still runs and is that run's process. Logs what it did; marks
 * the record `ended_at` when it killed it (the run was alive until then).
 */
export async function endPreviousRun(
  agentDir: string,
  log: RunnerLog,
  now: () => number = Date.now,
): Promise<PreviousRun> {
  const state = readRunnerState(agentDir);
  const run = state?.run;
  if (!state || !run) return { outcome: "none" };
  let info: ProcessInfo | undefined;
  try {
    info = await describeProcess(run.pgid);
  } catch (err) {
    const reason = `cannot run ${PS_PROGRAM}: ${errorMessage(err)}`;
    log.warn(
      `cannot check whether run ${run.id} (process group ${run.pgid}) still runs: ${reason}`,
    );
    return { outcome: "other", run, reason };
  }
  if (info === undefined) {
    // The leader exited, but what it started may still run in its group. While any of them
    // does, no new process can take the group's id, so the signal reaches only them.
    if (await livingMembers(run.pgid).catch(() => 0) === 0) return { outcome: "gone", run };
    return await endGroup({ agentDir, state, log, now }, run, "what was left of ");
  }
  if (!isRecordedLeader(run, info)) {
    const reason = `pid ${run.pgid} is now another process (${info.args.slice(0, 80)})`;
    log.info(`run ${run.id} left by the previous daemon is gone; ${reason}, left alone`);
    return { outcome: "other", run, reason };
  }
  return await endGroup({ agentDir, state, log, now }, run, "");
}

/** Kills the recorded group, waits until none of it lives, and marks the record ended. */
async function endGroup(
  at: {
    agentDir: string;
    state: NonNullable<ReturnType<typeof readRunnerState>>;
    log: RunnerLog;
    now: () => number;
  },
  run: RunRecord,
  what: string,
): Promise<PreviousRun> {
  const { agentDir, state, log, now } = at;
  await signalProcessGroup(run.pgid, "SIGKILL");
  // Dying takes the kernel a moment: the next run must not start beside any of it.
  const until = now() + GONE_MS;
  while (now() < until && await livingMembers(run.pgid).catch(() => 0) > 0) {
    await new Promise((r) => setTimeout(r, 50));
  }
  log.warn(
    `ended ${what}run ${run.id} left running by the previous daemon (process group ${run.pgid}, ${run.program})`,
  );
  const ended = { ...run, ended_at: new Date(now()).toISOString() };
  writeRunnerState(agentDir, { ...state, run: ended });
  return { outcome: "ended", run: ended };
}
