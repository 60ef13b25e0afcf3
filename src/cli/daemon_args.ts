/**
 * The daemon's command line: `wats [flags]` and `wats node [flags]`. Flags map
 * to settings (they win over env and config.toml, and never write the file).
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { DAEMON_FLAGS, type FlagValue } from "../config/settings.ts";
import { parseDuration } from "../duration.ts";
import { parseCommandArgs } from "./usage.ts";

/** The daemon's parsed command line. */
export interface DaemonArgs {
  help: boolean;
  /** Settings given as flags, by key. */
  flags: Record<string, FlagValue>;
  /** Started in the background by `wats mcp`: never runs agents, stops when idle. */
  startedByMcp: boolean;
  /**
   * Started by `wats try` as its throwaway node: runs no agent, posts no presence, and
   * stops when its stdin closes (the `wats try` that holds the pipe ended, SIGKILL included).
   */
  startedByTry: boolean;
  /** `--mcp-idle`: how long a node started by `wats mcp` waits with no MCP session. */
  idleStopMs?: number;
  logLevel: "debug" | "info" | "warning" | "error";
}

/** The daemon's usage text. */
export const DAEMON_HELP = `Usage: wats [flags]        run the node in the foreground
       wats node [flags]   the same, plus one JSON line per event on stdout

The node keeps the store of signed posts, serves MCP on <data dir>/mcp.sock for
\`wats mcp\` sessions, and runs the agent runner when agent.runtime is set.
Flags override WATS_* variables and config.toml for this run only.

Flags:
  --agent claude|codex|acp|none   run the agent runner with this runtime
  --agent-harness NAME            with --agent acp: the [harnesses.NAME] it runs on
  --agent-profile P               the profile the agent posts as (default <user>-agent)
  --every D, --agent-every D      debounce: wait D after an actionable post (e.g. 30s)
  --heartbeat D                   a run every D even with nothing new (0: off)
  --max-runs-per-hour N           cap on runs per hour
  --run-timeout D                 stop a run after D (agent.timeout)
  --allow KEYS                    only these authors (npub or hex, comma-separated) wake it
  --listen HOST:PORT              serve a Nostr relay endpoint for direct peering
  --infra URLS                    relays to sync with (comma-separated ws:// or wss://)
  --profile P                     the person's profile (default: your OS user name)
  --log-level debug|info|warning|error   (default info)
  --data-dir DIR                  the data directory
  -h, --help                      this help

Stop it with Ctrl-C or SIGTERM. A node that \`wats mcp\` started in the background
stops for it (one line says so); any other node already running is an error.
Settings: wats config list; docs/configuration.md.
`;

/** Parses the daemon's flags. */
export function parseDaemonArgs(argv: string[]): DaemonArgs {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {
    help: { type: "boolean", short: "h" },
    "started-by-mcp": { type: "boolean" },
    // Not in the help: set by `wats try` for its throwaway node (src/cli/try.ts).
    "started-by-try": { type: "boolean" },
    // Not in the help: how long a node started by `wats mcp` waits for a
    // session before it stops. Tests set it short instead of waiting 10 min.
    "mcp-idle": { type: "string" },
    "log-level": { type: "string" },
  };
  for (const flag of Object.keys(DAEMON_FLAGS)) options[flag] = { type: "string" };
  const parsed = parseCommandArgs("wats", {
    args: argv,
    options,
    allowPositionals: true,
  });
  const [extra] = parsed.positionals.filter((p) => p !== "node");
  if (extra !== undefined) {
    throw new UsageError(`unknown command "${extra}": see "wats --help" for the commands`);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const flags: Record<string, FlagValue> = {};
  for (const [flag, key] of Object.entries(DAEMON_FLAGS)) {
    const v = values[flag];
    if (typeof v !== "string") continue;
    if (flags[key] !== undefined) {
      throw new UsageError(`${flags[key].flag} and --${flag} both set ${key}: give one`);
    }
    flags[key] = { flag: `--${flag}`, value: v };
  }
  const level = (values["log-level"] as string | undefined) ?? "info";
  if (!["debug", "info", "warning", "error"].includes(level)) {
    throw new UsageError(`--log-level ${level} is not allowed; use debug, info, warning or error`);
  }
  const startedByMcp = values["started-by-mcp"] === true;
  if (startedByMcp) {
    // A node started in the background by `wats mcp` never runs agents,
    // whatever the flags or config say (docs/decisions/runner.md).
    flags["agent.runtime"] = { flag: "--started-by-mcp", value: "none" };
  }
  const startedByTry = values["started-by-try"] === true;
  if (startedByTry) flags["agent.runtime"] = { flag: "--started-by-try", value: "none" };
  let idleStopMs: number | undefined;
  const idle = values["mcp-idle"];
  if (typeof idle === "string") {
    if (!startedByMcp) throw new UsageError("--mcp-idle is only for a node started by `wats mcp`");
    const ms = parseDuration(idle);
    if (ms === undefined || ms <= 0) {
      throw new UsageError(`--mcp-idle ${idle} is not a duration such as 30s or 10m`);
    }
    idleStopMs = ms;
  }
  return {
    help: values.help === true,
    flags,
    startedByMcp,
    startedByTry,
    ...(idleStopMs !== undefined ? { idleStopMs } : {}),
    logLevel: level as DaemonArgs["logLevel"],
  };
}
