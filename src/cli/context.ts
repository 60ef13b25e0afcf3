/**
 * What the launcher hands a command running in its Worker: the command line, the
 * resolved paths, a filtered copy of the environment (Workers hold no env
 * permission) and a signal that aborts on SIGINT/SIGTERM.
 *
 * @module
 */

import type { DataPaths } from "../config/paths.ts";

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
