/**
 * What the launcher hands a command running in its Worker: the command line, the
 * resolved paths, a filtered copy of the environment (Workers hold no env
 * permission) and a signal that aborts on SIGINT/SIGTERM.
 *
 * PATH is made trustworthy first ({@linkcode trustedPath}): started as the README says
 * (`npx -y deno@… task start`), the process's PATH begins with a `node_modules/.bin` for the
 * checkout and every folder above it, so any user who can write `/tmp/node_modules/.bin` chose
 * the `claude`, `git` or `bwrap` a node started from a checkout under /tmp ran (issue 26). The
 * launcher sets the cleaned PATH in its own process before any Worker starts, so the programs the
 * Workers run and the run grants Deno resolves for them come from the same folders.
 *
 * @module
 */

import type { DataPaths } from "../config/paths.ts";
import { anyRunEnv } from "../contracts/run_env.ts";

/** The serialisable part, posted from the launcher to the Worker. */
export interface CommandInit {
  /** The command's own words and flags, after the command name(s). */
  argv: string[];
  /** The command path as typed, e.g. `["config", "set"]`; `[]` for the daemon. */
  words: string[];
  paths: DataPaths;
  env: Record<string, string>;
  cwd: string;
  os: string;
  /** The OS user name: the default profile. */
  user: string;
  /** The command that runs this program again (`wats mcp` starts a daemon with it). */
  self: string[];
  stdinIsTerminal: boolean;
  stdoutIsTerminal: boolean;
  verbose: boolean;
  /** `wats try`: the empty directory the launcher made for it, removed once it ends. */
  scratch?: string;
  /** The daemon: the variables a heartbeat run may get (src/contracts/run_env.ts `anyRunEnv`). */
  agentEnv?: Record<string, string>;
  /** The PATH entries the launcher left out ({@linkcode trustedPath}), for the banner. */
  droppedPath?: string[];
}

/** What a command receives. */
export interface CommandContext extends CommandInit {
  /** Aborted when the user asks the program to stop (SIGINT, SIGTERM). */
  signal: AbortSignal;
}

/** A command: returns its exit code; throws a `WatsError` for a clean failure. */
export type Command = (ctx: CommandContext) => Promise<number>;

/** Messages from the launcher to a Worker. */
export type ToWorker =
  | { type: "run"; init: CommandInit }
  | { type: "signal"; signal: "SIGINT" | "SIGTERM" };

/** Messages from a Worker to the launcher. */
export type FromWorker = { type: "exit"; code: number };

/** Environment variables a Worker may see: settings, identity, editor, display. */
export function filterEnv(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (
      k.startsWith("WATS_") ||
      [
        "HOME",
        "USER",
        "LOGNAME",
        "XDG_DATA_HOME",
        "XDG_CONFIG_HOME",
        "PATH",
        "EDITOR",
        "VISUAL",
        "NO_COLOR",
        "TERM",
        "TMPDIR",
        "CODEX_HOME",
        "CLAUDE_CONFIG_DIR",
        // Where the agents' models are: the model-only sandbox's proxy opens these hosts.
        "ANTHROPIC_BASE_URL",
        "OPENAI_BASE_URL",
      ].includes(k)
    ) out[k] = v;
  }
  return out;
}

/**
 * PATH without the entries that let someone other than the person choose the programs wats
 * runs, and those entries, in order:
 *
 * - relative and empty entries (they resolve against the working directory: `.` would make
 *   `./git` the daemon's git);
 * - `<dir>/node_modules/.bin` where `<dir>` is `cwd` or a folder above it: npm's `npx` (and
 *   `npm exec`, `npm run`) adds one for each, so from a checkout under /tmp a `claude` planted in
 *   `/tmp/node_modules/.bin` would come first;
 * - folders inside npx's own cache (`…/_npx/<hash>/…`), which hold whatever package npx fetched.
 *
 * A `node_modules/.bin` elsewhere stays: the person put it on PATH themselves (npm's global
 * prefix is `<prefix>/bin`, not a `node_modules/.bin`).
 */
export function trustedPath(path: string, cwd: string): { path: string; dropped: string[] } {
  const above = new Set<string>();
  for (let dir = cwd.replace(/\/+$/, ""); dir !== ""; dir = dir.slice(0, dir.lastIndexOf("/"))) {
    above.add(dir);
  }
  above.add("");
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const entry of path === "" ? [] : path.split(":")) {
    const e = entry.replace(/(.)\/+$/, "$1");
    const npxBin = e.endsWith("/node_modules/.bin") &&
      above.has(e.slice(0, -"/node_modules/.bin".length));
    const bad = !e.startsWith("/") || npxBin || e.split("/").includes("_npx");
    (bad ? dropped : kept).push(entry);
  }
  return { path: kept.join(":"), dropped };
}

/**
 * What the launcher hands a command of its environment: the filtered copy with a trusted PATH,
 * the PATH entries left out, and for the daemon the variables its heartbeat runs may get.
 */
export function launchEnv(
  env: Readonly<Record<string, string>>,
  cwd: string,
  daemon: boolean,
): { env: Record<string, string>; droppedPath: string[]; agentEnv?: Record<string, string> } {
  const { path, dropped } = trustedPath(env.PATH ?? "", cwd);
  const trusted = env.PATH === undefined ? { ...env } : { ...env, PATH: path };
  return {
    env: filterEnv(trusted),
    droppedPath: dropped,
    ...(daemon ? { agentEnv: anyRunEnv(trusted) } : {}),
  };
}
