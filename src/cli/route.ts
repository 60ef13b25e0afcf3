/**
 * Decides which command a command line names, and so which Worker and which
 * permission set runs it. Pure: the launcher and the tests share it.
 *
 * @module
 */

import type { CommandId } from "./permissions.ts";
import { needsValue } from "./usage.ts";

/** The launcher's reading of a command line. */
export interface Route {
  id: CommandId;
  /** The worker module, relative to `src/workers/`. */
  worker: string;
  /** Command words as typed (`["config", "set"]`); `[]` for the bare daemon. */
  words: string[];
  /** Everything else, in order, global flags removed. */
  argv: string[];
  dataDir?: string;
  verbose: boolean;
}

/** Flags (anywhere on the line) that take a value, so their value is no command word. */
export const VALUE_FLAGS: ReadonlySet<string> = new Set([
  "--data-dir",
  "--agent",
  "--agent-profile",
  "--profile",
  "--every",
  "--agent-every",
  "--heartbeat",
  "--agent-heartbeat",
  "--max-runs-per-hour",
  "--agent-max-runs-per-hour",
  "--run-timeout",
  "--agent-run-timeout",
  "--allow",
  "--agent-allow",
  "--scope",
  "--about",
  "--run",
  "--reason",
  "--listen",
  "--infra",
  "--log-level",
  "--text",
  "--timeout",
  "--to",
  "--caps",
  "--limit",
]);

const SUBCOMMANDS: Record<string, Record<string, CommandId>> = {
  config: {
    get: "config-read",
    list: "config-read",
    set: "config-write",
    unset: "config-write",
    ack: "config-ack",
  },
  guardian: {
    list: "config-read",
    add: "config-write",
    remove: "config-write",
    halt: "control",
  },
  agent: {
    runs: "agent-read",
    logs: "agent-read",
    attach: "agent-read",
    pending: "agent-read",
    approve: "agent-decide",
    reject: "agent-decide",
    // Asks the daemon (it owns the worktrees and knows which are in use): a control line.
    sweep: "control",
  },
  // `wats work …`: requests to the daemon, which does the work (src/cli/work.ts).
  work: {
    list: "work",
    show: "work",
    merge: "work",
    push: "work",
    send: "work",
    discard: "work",
  },
  service: {
    install: "service-install",
    uninstall: "service-uninstall",
    status: "service-status",
  },
};

const WORKERS: Record<CommandId, string> = {
  help: "help_worker.ts",
  daemon: "daemon_worker.ts",
  mcp: "mcp_worker.ts",
  "mcp-token": "mcp_token_worker.ts",
  "agent-read": "agent_worker.ts",
  "agent-decide": "agent_worker.ts",
  "agent-edit": "agent_worker.ts",
  "config-read": "config_worker.ts",
  "config-write": "config_worker.ts",
  "config-ack": "config_worker.ts",
  "safety-init": "safety_init_worker.ts",
  setup: "setup_worker.ts",
  status: "status_worker.ts",
  ui: "ui_worker.ts",
  control: "guardian_worker.ts",
  work: "work_worker.ts",
  "service-install": "service_worker.ts",
  "service-uninstall": "service_worker.ts",
  "service-status": "service_worker.ts",
  try: "try_worker.ts",
  ask: "ask_worker.ts",
  thread: "thread_worker.ts",
};

/** The worker module file of a command. */
export function workerOf(id: CommandId): string {
  return WORKERS[id];
}

/**
 * Every worker module the launcher can start, relative to `src/workers/`. The
 * compiled binary must embed each one (tests/build/compile_test.ts).
 */
export function workerModules(): string[] {
  return [...new Set(Object.values(WORKERS))].sort();
}

/**
 * Reads a command line into a route. Unknown words go to `help`, which explains.
 *
 * @throws {UsageError} when `--data-dir` has no value.
 */
export function route(args: string[]): Route {
  let dataDir: string | undefined;
  let verbose = false;
  const rest: string[] = [];
  const positional: number[] = [];
  const words = args.values();
  for (const a of words) {
    if (a === "--data-dir" || a.startsWith("--data-dir=")) {
      dataDir = a === "--data-dir" ? words.next().value : a.slice("--data-dir=".length);
      // Global: whatever the command, its help is `wats --help`.
      if (!dataDir) throw needsValue("wats", "--data-dir");
    } else if (a === "--verbose" || a === "-v") {
      verbose = true;
    } else if (a === "--") {
      rest.push(a, ...words);
      break;
    } else {
      if (!a.startsWith("-")) positional.push(rest.length);
      rest.push(a);
      const value = VALUE_FLAGS.has(a) ? words.next() : undefined;
      if (value?.done === false) rest.push(value.value);
    }
  }
  const base = { dataDir, verbose };
  const [firstAt, subAt] = positional;
  const first = firstAt === undefined ? undefined : rest[firstAt];
  const without = (idx: number[]) => rest.filter((_, i) => !idx.includes(i));
  const make = (id: CommandId, words: string[], used: number[]): Route => ({
    ...base,
    id,
    worker: WORKERS[id],
    words,
    argv: without(used),
  });

  if (firstAt === undefined || first === undefined) {
    const asksHelp = rest.some((a) => a === "--help" || a === "-h" || a === "--version");
    return asksHelp ? make("help", [], []) : make("daemon", [], []);
  }
  switch (first) {
    case "node":
      return make("daemon", ["node"], [firstAt]);
    case "mcp":
      // `wats mcp token …`: the tokens of MCP over HTTP, a command of its own (its own grants).
      if (subAt !== undefined && rest[subAt] === "token") {
        return make("mcp-token", ["mcp", "token"], positional.slice(0, 2));
      }
      return make(first, [first], [firstAt]);
    case "setup":
    case "status":
    case "ui":
    case "try":
    case "ask":
    case "thread":
      return make(first, [first], [firstAt]);
    case "help":
      return make("help", ["help"], [firstAt]);
    case "resume":
      return make("control", ["resume"], [firstAt]);
    case "config":
    case "guardian":
    case "agent":
    case "work":
    case "service": {
      const sub = subAt === undefined ? undefined : rest[subAt];
      const id = sub !== undefined ? SUBCOMMANDS[first]?.[sub] : undefined;
      if (id === undefined) {
        // `wats config`, `wats agent --help`, `wats config frob`: the group's help.
        return make("help", [first, ...(sub !== undefined ? [sub] : [])], positional.slice(0, 2));
      }
      const edits = id === "agent-decide" && sub === "approve" && rest.includes("--edit");
      const r = make(edits ? "agent-edit" : id, [first, sub!], positional.slice(0, 2));
      return first === "guardian" || id === "control" ? { ...r, worker: "guardian_worker.ts" } : r;
    }
    default:
      // `wats --evry 5m`: the word follows a flag the router does not know, so
      // it is that flag's value; the daemon's strict parser names the flag.
      if (rest[firstAt - 1]?.startsWith("-")) {
        return make("daemon", [], []);
      }
      return make("help", [first], [firstAt]);
  }
}
