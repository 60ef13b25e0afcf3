/**
 * The interface every harness implements (docs/runner.md): build the command of a run,
 * and read the CLI's output lines into run events and a final result. Each
 * harness lives in its runtime's folder, `src/runner/runtimes/<name>/`. Building is pure: the runner
 * writes the files a command needs, spawns it and deletes the files after.
 *
 * @module
 */

/** The program that starts `wats` itself, e.g. the compiled binary, or `deno run … main.ts`. */
export interface SelfCommand {
  command: string;
  /** Arguments before the wats subcommand. */
  args: string[];
}

/** Splits the argv that runs `wats` again into its program and the arguments before a subcommand. */
export function selfCommandOf(self: readonly string[]): SelfCommand {
  const [command, ...args] = self;
  if (command === undefined) {
    throw new Error("the command that runs wats again is empty: pass its argv as self");
  }
  return { command, args };
}

/** What a harness needs to build one run's command. */
export interface RunContext {
  runId: string;
  /** The thread (root id) the run is about, when it is about one (see `threadPerRun`). */
  thread?: string;
  /** The filled HEARTBEAT prompt, written to stdin. */
  prompt: string;
  /** `agent.max_turns`. */
  maxTurns: number;
  /** What is left of the budget (the smaller of day and month). */
  maxBudgetUsd: number;
  /** The per-run token the daemon minted, passed to `wats mcp` through the MCP config. */
  token?: string;
  agentProfile: string;
  dataDir: string;
  /** The working directory (locked access: the empty `<data dir>/agent/run`). */
  cwd: string;
  /** Where generated files (the MCP config) go; not inside `cwd`. */
  configDir: string;
  selfCommand: SelfCommand;
  /** A validated `--settings` file with deny rules (safety), when there is one. */
  settingsFile?: string;
  /**
   * The access level's flags (src/safety/access.ts): they replace the locked
   * defaults (`--tools "" --setting-sources "" --strict-mcp-config`), and
   * `allowedTools` join `mcp__wats__*` in `--allowedTools`. Unset: locked.
   */
  access?: { args: string[]; allowedTools: string[] };
}

/** A file the command needs, written before the spawn and removed after the run. */
export interface HarnessFile {
  path: string;
  text: string;
  mode: number;
}

/** One process to run. */
export interface HarnessCommand {
  program: string;
  args: string[];
  /** Added to the run's allowlisted environment (src/contracts/run_env.ts); nothing else is inherited. */
  env: Record<string, string>;
  cwd: string;
  /** Written to stdin, which is then closed. */
  stdin: string;
  files: HarnessFile[];
}

/** What happened during a run, read from the CLI's output. */
export type RunEvent =
  | { type: "init"; mcpServers: { name: string; status: string }[]; tools: string[] }
  | { type: "text"; text: string }
  | { type: "tool_call"; id?: string; name: string; args: unknown }
  | { type: "tool_result"; id?: string; text: string; isError: boolean }
  | { type: "cost"; usd: number }
  | { type: "turns"; turns: number }
  | { type: "error"; message: string }
  /**
   * The harness saw something that must not go on (e.g. a Codex tool outside the lock): the
   * runner kills the run at once, and the parser's verdict says why.
   */
  | { type: "stop"; reason: string };

/** How a run ended, as the harness judges it. */
export interface RunResult {
  ok: boolean;
  error?: string;
  /** Only when the CLI reported one. */
  costUsd?: number;
  turns?: number;
}

/** Reads one run's output; one parser per run. */
export interface OutputParser {
  /** One output line in, the events it holds out (none for lines it does not know). */
  push(line: string): RunEvent[];
  /** The verdict after the process exited with `exitCode` (null: killed by a signal). */
  finish(exitCode: number | null): RunResult;
}

/**
 * How a harness judges a process found below a run's leader, by its command
 * line: `run`, one of the run's own (the CLI itself, its `wats mcp`), whose
 * children are judged in turn; `helper`, a tool the CLI runs for itself or
 * wats's own code (`wats mcp`), with all it starts; undefined, a process the run must not have (process_watch.ts).
 */
export type ProcessRule = (args: string) => "run" | "helper" | undefined;

/** A coding agent CLI the runner can wake. */
export interface Harness {
  /** `claude`, as in `agent.runtime` and transcript headers. */
  readonly name: string;
  /** Builds the command of one run. Throws `ConfigError` on a setting it cannot use. */
  command(ctx: RunContext): HarnessCommand;
  /** A fresh parser for one run's output. */
  parser(): OutputParser;
  /**
   * Starts the run's process itself, for a harness that speaks a protocol with it (ACP)
   * rather than writing the prompt to its stdin; its `lines` are what the parser reads.
   * Unset: the runner spawns `command` in a process group of its own.
   */
  launch?(cmd: HarnessCommand, ctx: RunContext): RunningProcess;
  /**
   * Set by a harness whose lock the runner also checks on the processes (Codex): which
   * processes a run of `cmd` may have. The runner ends a run in which another one appears,
   * as "lock broken". Unset: a run's processes are not watched.
   */
  processRule?(cmd: HarnessCommand, ctx: RunContext): ProcessRule;
}

/** How a process ended. */
export interface ProcessStatus {
  /** Null when a signal ended it. */
  code: number | null;
  signal: string | null;
}

/** A started process. */
export interface RunningProcess {
  /** Its pid, which is also its process group's id. */
  pid: number;
  /** Its stdout, line by line (without the newline), until EOF. */
  lines: AsyncIterable<string>;
  /** Resolves when the process exits. */
  status: Promise<ProcessStatus>;
  /** The last few KiB of stderr, for the error of a failed run. */
  stderrTail(): string;
  /** Kills the process and everything it started (its process group). */
  kill(): void;
}
