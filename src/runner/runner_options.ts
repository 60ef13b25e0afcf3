/**
 * What the heartbeat runner (scheduler.ts) is given, in groups by what each
 * part is for: the world it lives in, its records, the agent it wakes, how a
 * run is launched, and the daemon's hooks. Everything is injected (STYLE.md
 * rule 7), so tests build it from fakes.
 *
 * @module
 */

import type { Settings } from "../config/schema.ts";
import type { RunnerFs } from "./execute.ts";
import type { Harness, RunContext, SelfCommand } from "./harness.ts";
import type { Clock, RunnerLog, RunnerStore, Timers } from "./ports.ts";
import type { ProcessRow } from "./process_watch.ts";
import type { PostReader, PromptRejection } from "./prompt.ts";
import type { SpawnFn } from "./spawn.ts";
import type { RunRecorder } from "./state_file.ts";
import type { Retention, Transcripts } from "./transcripts.ts";
import type { RunIndexEntry } from "../contracts/runs.ts";

/** The settings the runner reads (values as the daemon started with: no live reload). */
export type RunnerSettings = Pick<
  Settings,
  | "agent.profile"
  | "agent.every"
  | "agent.heartbeat"
  | "agent.max_runs_per_hour"
  | "agent.timeout"
  | "agent.max_turns"
  | "agent.max_usd_per_day"
  | "agent.max_usd_per_month"
  | "agent.max_runs_per_day"
  | "agent.reserve_usd"
  | "agent.ignore_local"
  | "agent.allow"
  | "agent.caps"
  | "agent.caps_match"
  | "agent.open_asks"
  | "agent.about"
  | "agent.loop_max_exchanges"
  | "agent.wakes_per_author_per_hour"
  | "agent.claim_ttl"
>;

/** The world the runner lives in. */
export interface RunnerWorld {
  clock: Clock;
  timers: Timers;
  /** Where decisions go; messages are passed as literal text (braces escaped). */
  log: RunnerLog;
  /** Run ids' random part (transcripts.ts `newRunId`). */
  random?: () => number;
}

/** Where the runner reads posts and writes down what it owes and what runs did. */
export interface RunnerRecords {
  store: RunnerStore;
  transcripts: Pick<
    Transcripts,
    "begin" | "index" | "recoverInterrupted" | "prune" | "spend" | "appendAfterEnd"
  >;
  retention?: Retention;
  /**
   * When a run a previous daemon left unfinished was last seen alive (ms), if
   * known: its recorded duration ends there rather than at its last output.
   */
  lastSeen?: (runId: string) => number | undefined;
}

/** The agent the runner wakes, and what its wake prompt tells it. */
export interface RunnerAgent {
  /** The agent profile's author key (hex). */
  agentKey: string;
  /** The person's name for {user}. */
  user: string;
  /** Every author key this node signs for (for `agent.ignore_local`). */
  localAuthors: () => ReadonlySet<string>;
  /** The HEARTBEAT.md text. */
  template: string;
  /** Reads the events' threads into the prompt; without it the prompt lists ids only. */
  posts?: PostReader;
  /** Review rejections not yet told to a run; drained at each run start. */
  rejections?: () => PromptRejection[];
}

/** How a run is launched and watched (execute.ts). */
export interface RunnerLaunch {
  harness: Harness;
  spawn: SpawnFn;
  /** `dataDir`; `runDir`, the run's working directory; `configDir`, for generated files. */
  paths: { dataDir: string; runDir: string; configDir: string };
  /** How to start `wats` itself (for the generated MCP config). */
  selfCommand: SelfCommand;
  /** A validated `--settings` file of deny rules, passed to the harness. */
  settingsFile?: string;
  /**
   * Called before each run's command is built: the daemon writes and validates
   * the run's deny-rules settings file and applies the access plan here. A
   * throw fails the run with that message (no harness is started).
   */
  prepare?: (
    ctx: RunContext,
  ) => Promise<Partial<Pick<RunContext, "settingsFile" | "access" | "cwd">>>;
  fs?: RunnerFs;
  /** Where the run in progress is recorded (its process group, alive each second). */
  recorder?: RunRecorder;
  /** The start time `ps` gives a pid, recorded so a reused pid is never taken for the run. */
  identify?: (pid: number) => Promise<number | undefined>;
  /**
   * The machine's processes (process_watch.ts `listProcesses`): a run whose harness has a
   * `processRule` is ended as "lock broken" when a process it must not have appears.
   */
  listProcesses?: () => Promise<ProcessRow[]>;
  /**
   * Each run is about one thread (the ACP runtime keeps one session per
   * thread): a run takes the queued events of one thread, the oldest first,
   * and the others wait for the runs right after it.
   */
  threadPerRun?: boolean;
}

/** The daemon's hooks at a run's start and end. */
export interface RunnerHooks {
  /** Called as a run starts; returns the per-run token the daemon minted for it. */
  onRunStart?: (runId: string) => string | undefined;
  /** Called when a run has ended and is indexed (revoke its token here). */
  onRunEnd?: (entry: RunIndexEntry) => void;
  /** Called once as a budget pause begins: why, and when it ends (ms). */
  onBudgetPause?: (reason: string, until: number) => void;
}

/** Everything the runner is given. */
export interface RunnerOptions {
  settings: RunnerSettings;
  world: RunnerWorld;
  records: RunnerRecords;
  agent: RunnerAgent;
  launch: RunnerLaunch;
  hooks?: RunnerHooks;
}
