/**
 * The runner's state file, `<data dir>/agent/runner.json`: what the daemon's
 * runner is (runtime, budget limits, since when), read by `wats agent runs`,
 * and the run in progress: its process group and the program it runs, so a
 * daemon that starts after a crash can end a run the dead one left behind
 * (orphan.ts), and how long that run was seen alive (`alive_at`, refreshed
 * while it runs), so its recorded duration is how long it ran.
 *
 * The daemon writes it; the CLI only reads it. It lives here, below both.
 * Writes go to a temporary file renamed over the old one, so a reader never
 * sees half a file.
 *
 * Requires `--allow-read` (and `--allow-write` to change it) on the agent directory.
 *
 * @module
 */

import type { BudgetLimits } from "./budget.ts";

/** The state file's name in the agent directory. */
export const RUNNER_STATE_FILE = "runner.json";

/** The run in progress, as recorded while it runs. */
export interface RunRecord {
  /** The run id (its transcript's name). */
  id: string;
  /** The process group the run's processes are in (its leader's pid). */
  pgid: number;
  /** The program and arguments started. */
  program: string;
  args: string[];
  /**
   * The leader's start time as `ps` told it just after the spawn, seconds since
   * the epoch (orphan.ts `processStartTime`). A pid reused by another process
   * has another start time.
   */
  leader_start_s?: number;
  /**
   * The same as `ps -o lstart` text, written by daemons before `leader_start_s`;
   * still read (orphan.ts parses it), never written.
   */
  lstart?: string;
  /** ISO 8601: when the run started. */
  started_at: string;
  /** ISO 8601: the last time the daemon saw the run alive (refreshed each second). */
  alive_at: string;
  /** ISO 8601: set when a later daemon ended the group it left (it was alive until then). */
  ended_at?: string;
}

/** What the daemon records in agent/runner.json. */
export interface RunnerStateFile {
  runtime: string;
  limits: BudgetLimits;
  started_at: string;
  /** The run in progress, or the one a crashed daemon left. */
  run?: RunRecord;
}

/** The path of the state file in `agentDir`. */
export function runnerStatePath(agentDir: string): string {
  return `${agentDir}/${RUNNER_STATE_FILE}`;
}

/** Reads the state file; undefined when it is missing or unreadable. */
export function readRunnerState(agentDir: string): RunnerStateFile | undefined {
  try {
    const v = JSON.parse(Deno.readTextFileSync(runnerStatePath(agentDir)));
    return typeof v === "object" && v !== null ? v as RunnerStateFile : undefined;
  } catch {
    return undefined;
  }
}

/** Replaces the state file (atomically: write a temporary file, rename it). */
export function writeRunnerState(agentDir: string, state: RunnerStateFile): void {
  const path = runnerStatePath(agentDir);
  const tmp = `${path}.tmp`;
  Deno.writeTextFileSync(tmp, JSON.stringify(state) + "\n", { mode: 0o600 });
  Deno.renameSync(tmp, path);
}

/**
 * Where the runner records the run in progress (injected into the Runner; the
 * daemon's is backed by the state file, tests keep it in memory).
 */
export interface RunRecorder {
  /** The process of run `record.id` was spawned. */
  started(record: RunRecord): void;
  /** The run is still alive at `atMs` (called every second while it runs). */
  alive(atMs: number): void;
  /** The run ended and was recorded: forget it. */
  ended(): void;
}

/** A recorder that keeps the run in the state file of `agentDir`. */
export function stateFileRecorder(agentDir: string): RunRecorder {
  const update = (f: (s: RunnerStateFile) => RunnerStateFile | undefined) => {
    const before = readRunnerState(agentDir);
    if (before === undefined) return;
    const after = f(before);
    if (after !== undefined) writeRunnerState(agentDir, after);
  };
  return {
    started: (run) => update((s) => ({ ...s, run })),
    alive: (at) =>
      update((s) =>
        s.run ? { ...s, run: { ...s.run, alive_at: new Date(at).toISOString() } } : undefined
      ),
    ended: () =>
      update((s) => {
        if (!s.run) return undefined;
        const { run: _r, ...rest } = s;
        return rest;
      }),
  };
}
