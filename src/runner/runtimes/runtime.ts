/**
 * One runtime per `agent.runtime` (claude, codex, acp), each in its folder
 * `src/runner/runtimes/<name>/`, in two parts:
 *
 * - its **facts** (`<name>/facts.ts`, {@linkcode RuntimeFacts}): what other rooms may know
 *   without loading its code — the programs it starts, whether it reports cost and limits
 *   turns, at which access levels its agent runs no command (every other run is sandboxed),
 *   the variables its process keeps, and the parser of its transcripts. `wats agent logs` and
 *   `wats ui` read these, so they load no process code;
 * - the **runtime** it makes for a daemon (`<name>/runtime.ts`, {@linkcode Runtime}): how it
 *   checks its settings (as it is made), what it needs before the runner is built (`prepare`),
 *   the harness runs use, what the OS sandbox is told about its program, how a run's access
 *   level is applied, the check it passes once mcp.sock serves (`ready`), and how it is
 *   reported.
 *
 * src/runner/runtimes/facts.ts and registry.ts list them, keyed by src/contracts/runtime_names.ts,
 * so src/node/agent_runner.ts composes the runner without a branch per runtime, and
 * tests/runner/runtime_registry_test.ts walks them.
 *
 * @module
 */

import type { AcpTables } from "../../config/acp_tables.ts";
import type { DataPaths } from "../../config/paths.ts";
import type { Settings } from "../../config/schema.ts";
import type { RuntimeName } from "../../contracts/runtime_names.ts";
import type { EnvAllowlist } from "../../contracts/run_env.ts";
import type { AccessPlan } from "../../safety/access.ts";
import type { AgentProfile } from "../../safety/sandbox.ts";
import type { Harness, OutputParser, RunContext, SelfCommand } from "../harness.ts";
import type { RunnerLog } from "../ports.ts";

/** What a runtime is made from. */
export interface RuntimeDeps {
  settings: Settings;
  paths: DataPaths;
  /** Where the files generated for runs go (`agent/run-config`). */
  configDir: string;
  /** How to start `wats` itself. */
  selfCommand: SelfCommand;
  /** The person's profile name (wats's entry in Claude Code is theirs). */
  person: string;
  /** The agent's profile name. */
  agent: string;
  home: string;
  /** The daemon's working directory (Claude Code's local and project entries are its). */
  cwd: string;
  /** The daemon's environment (an ACP agent starts from it). */
  env: Record<string, string>;
  /** What a Claude or Codex process starts with: its runtime's allowlist (src/contracts/run_env.ts). */
  runEnv: Record<string, string>;
  /** config.toml's `[harnesses.*]` (agent.runtime = acp runs on agent.harness). */
  acp?: AcpTables;
  log: RunnerLog;
}

/** Puts a program in the run's OS sandbox (src/safety/sandboxer.ts); as it is when there is none. */
export type Wrap = (
  program: string,
  args: readonly string[],
) => { program: string; args: string[] };

/** What the OS sandbox is told about the agent a run starts (src/safety/sandboxer.ts). */
export interface SandboxedAgent {
  /** The agent's program and arguments (they tell which agent it is). */
  program: string;
  args: readonly string[];
  /** The environment it starts with. */
  env: Record<string, string>;
  /** The parts of the data dir it reads besides the run's files. */
  readable: string[];
  /**
   * The agent it is (src/runner/runtimes/agents.ts): its login seeds the private home, its
   * vendor's hosts open. Unset: an agent nobody declared, which gets neither.
   */
  agent?: AgentProfile;
}

/** What a run's access level sets in its context. */
export type RunAccess = Partial<Pick<RunContext, "settingsFile" | "access" | "cwd">>;

/** What a runtime's `ready` check is given. */
export interface ReadyAt {
  /** Creates the runs' working directory when it is the run dir, and returns it. */
  workdir(): string;
  /** A runner session token for a check whose `wats mcp` speaks to mcp.sock. */
  mintToken(runId: string): { token: string; revoke(): void };
}

/** What is known of one `agent.runtime` without loading its code. */
export interface RuntimeFacts {
  /** The `agent.runtime` value. */
  readonly name: RuntimeName;
  /**
   * The programs its runs start, which the daemon's permission set may run (acp: none here; its
   * `[harnesses.NAME]` command, which config.toml names).
   */
  readonly programs: readonly string[];
  /**
   * Whether its harness reports what a run cost. One that does not (Codex reports tokens, never
   * a price) counts its runs against `agent.max_runs_per_day` only, and the banner, `wats
   * status` and `wats agent runs` say so rather than show $0.
   */
  readonly reportsCost: boolean;
  /** Whether its harness enforces `agent.max_turns` (Codex has no turn limit: docs/codex.md). */
  readonly limitsTurns: boolean;
  /** Each run is about one thread (scheduler.ts `threadPerRun`). */
  readonly threadPerRun: boolean;
  /**
   * The `agent.access` levels at which the agent has no shell and no file tool, only wats's:
   * its runs there start outside the OS sandbox. Unset or empty: every run is sandboxed
   * (`runsSandboxed`), so a runtime that says nothing never runs unwrapped.
   */
  readonly shellless?: readonly string[];
  /**
   * The variables its process keeps beside the common ones (src/contracts/run_env.ts); none for
   * an agent that starts from the daemon's environment (acp: its harness's `env` table).
   */
  readonly env?: EnvAllowlist;
  /**
   * The agent it runs (src/runner/runtimes/agents.ts): the state and login its sandbox's
   * private home holds, its vendor's hosts, and the ACP adapter a `[harnesses.NAME]` runs it
   * through. Unset (acp): its harness's agent, as that table declares it.
   */
  readonly agent?: AgentFacts;
  /** The setting that names one more variable its process gets (`agent.codex_env_key`). */
  readonly keySetting?: "agent.codex_env_key";
  /** The setting whose URL its process is pointed at (`agent.codex_base_url`): one more model host. */
  readonly baseUrlSetting?: "agent.codex_base_url";
  /** A reader of its transcripts' output lines (`wats agent logs`, `wats ui`). */
  parser(): OutputParser;
}

/** A known agent: what its sandbox is told of it, and how a harness is known to run it. */
export interface AgentFacts extends AgentProfile {
  /** Its state folder and login. */
  readonly state: NonNullable<AgentProfile["state"]>;
  /**
   * Its ACP adapter, which a `[harnesses.NAME]` runs without declaring `agent` only when its
   * command is exactly this: the program `bin`, or a JavaScript runtime whose first argument is
   * the file `entry` of `node_modules/<pkg>/`.
   */
  readonly adapter?: { readonly bin: string; readonly pkg: string; readonly entry: string };
}

/** Where the person runs a command: their environment (HOME…) and working directory. */
export interface PersonPlace {
  env: Readonly<Record<string, string>>;
  cwd: string;
}

/** What a runtime's `launch` is given. */
export interface LaunchAt {
  values: Settings;
  /** The launcher's whole environment (the daemon's is a filtered copy). */
  env: Readonly<Record<string, string>>;
  /** For advice: where `service.env` lives. */
  dataDir: string;
}

/** What a runtime's daemon may do beyond running its programs. */
export interface LaunchGrant {
  /** Listen on an ephemeral loopback port (Codex's lock self-check: docs/codex.md). */
  loopbackServer?: boolean;
}

/**
 * One runtime's part of the launch (src/runner/runtimes/launch.ts); a runtime with nothing to
 * add has none.
 */
export interface RuntimeLaunch {
  /**
   * The files of its CLI that hold the wats entry, which its daemon and `wats setup` read as
   * data, never write (Claude Code's).
   */
  entryFiles?(at: PersonPlace): string[];
  /**
   * What its daemon's permission set needs beyond its programs.
   *
   * @throws {ConfigError} when the runtime cannot start (a variable its settings name is unset).
   */
  launch?(at: LaunchAt): LaunchGrant;
}

/** One `agent.runtime`, made for a daemon. */
export interface Runtime {
  /** What is known of it without its code. */
  readonly facts: RuntimeFacts;
  /** How the banner names it. */
  readonly label: string;
  /** Probes and registrations before the runner is built; throws a `ConfigError` when it cannot run. */
  prepare(): Promise<void>;
  /** The harness runs use (after `prepare`); `wrap` starts what it spawns itself in the sandbox. */
  harness(wrap: Wrap): Harness;
  /** What the OS sandbox is told about the agent (after `prepare`). */
  sandboxed(): SandboxedAgent;
  /** Applies the access plan of a run about to start. */
  access(plan: AccessPlan): Promise<RunAccess>;
  /** The check before the first run, once mcp.sock serves; throws when the runtime cannot run. */
  ready(at: ReadyAt): Promise<void>;
}

/** The access of a run whose runtime takes no deny rules: only its working directory. */
export function noDenyRules(plan: AccessPlan): RunAccess {
  return { access: { args: [], allowedTools: [] }, cwd: plan.cwd };
}

/**
 * Whether `runtime`'s runs at `access` start in the OS sandbox: always, unless the runtime
 * declares that level shell-less.
 */
export function runsSandboxed(
  runtime: Pick<RuntimeFacts, "shellless">,
  access: string,
): boolean {
  return !(runtime.shellless ?? []).includes(access);
}
