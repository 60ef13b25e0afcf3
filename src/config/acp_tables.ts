/**
 * The `[harnesses.NAME]` and `[checkouts.NAME]` tables of config.toml (DESIGN
 * §9): the coding agents wats can start over ACP and the git repositories they
 * may work in. Validated when config.toml loads, with the file and line of the
 * bad value, like every other key (docs/acp.md describes them).
 *
 * @module
 */

import { ConfigError } from "../errors.ts";
import { parseDuration } from "../duration.ts";

/** A coding agent that speaks ACP over stdio. */
export interface HarnessConfig {
  /** The table name: the MCP tool's name and the `HARNESS` of policy rules. */
  name: string;
  /** The program (a name on PATH or an absolute path). */
  command: string;
  args: string[];
  /** Added to the agent's environment (`IS_SANDBOX` is always dropped). */
  env: Record<string, string>;
  /** Sent as `_meta` of `session/new` and `session/load` (wats's safety options win). */
  meta: Record<string, unknown>;
  /** Files of the worktree added to each new session's first prompt. */
  context: string[];
  /** Stop the agent after this many ms with no call attached. */
  idle: number;
  /** False: no tool for it. */
  enabled: boolean;
  /**
   * The agent it runs, declared (`agent = "claude"`): one of the runtimes' agents
   * (src/runner/runtimes/agents.ts), checked when the daemon starts. Its sandbox is seeded with
   * that agent's login and reaches that vendor's API. Unset, only a command that is exactly a
   * known agent's ACP adapter counts as that agent; any other gets no login and no vendor host.
   */
  agent?: string;
  /**
   * The state folder of an agent wats does not know (`state = "~/.gemini"`) and the files of it
   * that are its login (`login = ["oauth_creds.json"]`): its sandbox hides the person's and
   * copies the login into its private home at each start (docs/acp.md). A known agent's are its
   * runtime's facts (src/runner/runtimes/agents.ts).
   */
  state?: { dir: `~/${string}`; login: string[] };
}

/** A git repository coding agents may work in, each piece of work in its own worktree. */
export interface CheckoutConfig {
  name: string;
  /** Absolute path of the repository. */
  path: string;
  /** The ref each work's branch is cut from, e.g. `origin/main`. */
  base: string;
  /** `git fetch` before cutting a new branch. */
  fetch: boolean;
  /**
   * How `wats work merge` joins a work to the base (docs/acp.md "Works"):
   * `ff` fast-forwards only (the default: the base gets exactly the commits
   * that were reviewed), `merge` makes a merge commit. Always set when parsed.
   */
  merge?: "ff" | "merge";
}

/** Both tables, validated. */
export interface AcpTables {
  harnesses: Record<string, HarnessConfig>;
  checkouts: Record<string, CheckoutConfig>;
}

/** The idle time of a harness that sets none. */
export const DEFAULT_IDLE_MS = 10 * 60_000;

/** A harness or checkout name: it becomes an MCP tool name and a path segment. */
const NAME = /^[a-z][a-z0-9_-]{0,31}$/;

const HARNESS_KEYS = [
  "command",
  "args",
  "env",
  "meta",
  "context",
  "idle",
  "enabled",
  "agent",
  "state",
  "login",
];
const CHECKOUT_KEYS = ["path", "base", "fetch", "merge"];

/** The empty tables (a config.toml without them). */
export function noAcpTables(): AcpTables {
  return { harnesses: {}, checkouts: {} };
}

/**
 * Validates the parsed `harnesses` and `checkouts` tables. Throws `ConfigError`
 * naming `filePath:line`, the key, the value and what is allowed.
 *
 * `where` turns a dotted key into `file:line` for messages.
 */
export function parseAcpTables(
  sections: Record<string, Record<string, unknown>>,
  where: (key: string) => string,
  home?: string,
): AcpTables {
  const out = noAcpTables();
  const bad = (key: string, shown: unknown, what: string) =>
    new ConfigError(
      "config.bad_value",
      `${where(key)}: ${key} = ${show(shown)} is not allowed; ${what}; ` +
        "fix the line (docs/acp.md lists these keys)",
    );

  for (const [name, raw] of Object.entries(sections.harnesses ?? {})) {
    const at = `harnesses.${name}`;
    const t = table(raw, at, bad);
    checkName(name, at, bad);
    unknownKeys(t, at, HARNESS_KEYS, where);
    const command = t.command;
    if (typeof command !== "string" || command.trim() === "") {
      throw bad(`${at}.command`, command, "a harness needs a command to run");
    }
    const idle = t.idle === undefined ? DEFAULT_IDLE_MS : idleMs(t.idle);
    if (idle === undefined) {
      throw bad(
        `${at}.idle`,
        t.idle,
        "must be a duration such as 90s or 10m (0: stop after each call)",
      );
    }
    out.harnesses[name] = {
      name,
      command: command.trim(),
      args: strings(t.args, `${at}.args`, bad),
      env: stringTable(t.env, `${at}.env`, bad),
      meta: t.meta === undefined ? {} : table(t.meta, `${at}.meta`, bad),
      context: strings(t.context, `${at}.context`, bad).map((f) => {
        if (f.startsWith("/") || f.split("/").includes("..")) {
          throw bad(`${at}.context`, f, "context files are paths inside the worktree");
        }
        return f;
      }),
      idle,
      enabled: bool(t.enabled, true, `${at}.enabled`, bad),
      ...agentOf(t, at, bad),
      ...stateOf(t, at, bad),
    };
  }

  for (const [name, raw] of Object.entries(sections.checkouts ?? {})) {
    const at = `checkouts.${name}`;
    const t = table(raw, at, bad);
    checkName(name, at, bad);
    unknownKeys(t, at, CHECKOUT_KEYS, where);
    let path = t.path;
    if (typeof path === "string" && home && (path === "~" || path.startsWith("~/"))) {
      path = home.replace(/\/+$/, "") + path.slice(1);
    }
    if (typeof path !== "string" || !path.startsWith("/")) {
      throw bad(
        `${at}.path`,
        t.path,
        "must be the absolute path of a git repository",
      );
    }
    const base = t.base ?? "HEAD";
    if (typeof base !== "string" || !/^[A-Za-z0-9._/@^~-]+$/.test(base) || base.startsWith("-")) {
      throw bad(`${at}.base`, base, 'must be a git ref such as "origin/main"');
    }
    out.checkouts[name] = {
      name,
      path: path.replace(/\/+$/, "") || "/",
      base,
      fetch: bool(t.fetch, false, `${at}.fetch`, bad),
      merge: mergeMode(t.merge, `${at}.merge`, bad),
    };
  }
  return out;
}

/** A harness's declared agent: a name; which names are known is the runtimes' to say. */
function agentOf(t: Record<string, unknown>, at: string, bad: Bad): Pick<HarnessConfig, "agent"> {
  if (t.agent === undefined) return {};
  if (typeof t.agent !== "string" || !NAME.test(t.agent)) {
    throw bad(`${at}.agent`, t.agent, 'must name the agent it runs, such as "claude"');
  }
  if (t.state !== undefined) {
    throw bad(
      `${at}.state`,
      t.state,
      `${at}.agent names a known agent, whose state is known: drop state and login, or agent`,
    );
  }
  return { agent: t.agent };
}

/**
 * A harness's declared state: one folder directly under home, and plain file names in it (a
 * deeper path could run through a link the agent planted in its private home).
 */
function stateOf(
  t: Record<string, unknown>,
  at: string,
  bad: Bad,
): Pick<HarnessConfig, "state"> {
  const login = strings(t.login, `${at}.login`, bad);
  if (t.state === undefined) {
    if (login.length > 0) throw bad(`${at}.login`, login, `login needs ${at}.state, its folder`);
    return {};
  }
  const dir = t.state;
  const plain = (n: string) => /^[^/]+$/.test(n) && n !== "." && n !== "..";
  if (typeof dir !== "string" || !dir.startsWith("~/") || !plain(dir.slice(2))) {
    throw bad(`${at}.state`, dir, 'must be one folder directly under home, such as "~/.gemini"');
  }
  const badFile = login.find((f) => !plain(f));
  if (badFile !== undefined) {
    throw bad(`${at}.login`, badFile, `must name files directly in ${dir}`);
  }
  return { state: { dir: dir as `~/${string}`, login } };
}

/** Makes the `config.bad_value` error of one key. */
export type Bad = (key: string, shown: unknown, what: string) => ConfigError;

function mergeMode(v: unknown, key: string, bad: Bad): "ff" | "merge" {
  if (v === undefined) return "ff";
  if (v === "ff" || v === "merge") return v;
  throw bad(key, v, 'must be "ff" (fast-forward only) or "merge" (a merge commit)');
}

/** Shared with the other passthrough tables (notify_tables.ts). */
export function table(v: unknown, key: string, bad: Bad): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v) || v instanceof Date) {
    throw bad(key, v, "must be a table");
  }
  return v as Record<string, unknown>;
}

/** Shared with the other passthrough tables (notify_tables.ts). */
export function checkName(name: string, key: string, bad: Bad): void {
  if (!NAME.test(name)) {
    throw bad(
      key,
      name,
      "the name must be lowercase letters, digits, - or _, starting with a letter",
    );
  }
}

/** Shared with the other passthrough tables (notify_tables.ts). */
export function unknownKeys(
  t: Record<string, unknown>,
  at: string,
  known: string[],
  where: (key: string) => string,
): void {
  for (const k of Object.keys(t)) {
    if (!known.includes(k)) {
      throw new ConfigError(
        "config.unknown_key",
        `${where(`${at}.${k}`)}: unknown key ${at}.${k}; the keys of [${
          at.split(".")[0]
        }.NAME] are ${known.join(", ")}`,
      );
    }
  }
}

/** Shared with the other passthrough tables (notify_tables.ts). */
export function strings(v: unknown, key: string, bad: Bad): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) {
    throw bad(key, v, "must be a list of strings");
  }
  return v as string[];
}

function stringTable(v: unknown, key: string, bad: Bad): Record<string, string> {
  if (v === undefined) return {};
  const t = table(v, key, bad);
  for (const [k, x] of Object.entries(t)) {
    if (typeof x !== "string") throw bad(`${key}.${k}`, x, "environment values must be strings");
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) {
      throw bad(`${key}.${k}`, x, `${k} is not a variable name`);
    }
  }
  return t as Record<string, string>;
}

function bool(v: unknown, dflt: boolean, key: string, bad: Bad): boolean {
  if (v === undefined) return dflt;
  if (typeof v !== "boolean") throw bad(key, v, "must be true or false");
  return v;
}

function idleMs(v: unknown): number | undefined {
  if (v === 0) return 0;
  return typeof v === "string" ? parseDuration(v) : undefined;
}

/** Shared with the other passthrough tables (notify_tables.ts). */
export function show(v: unknown): string {
  if (v === undefined) return "(missing)";
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(show).join(", ")}]`;
  if (typeof v === "object" && v !== null) return "{ … }";
  return String(v);
}

/**
 * One line per `[harnesses.NAME]` and `[checkouts.NAME]` of config.toml, as
 * the banner and `wats config list` show them: what coding agents there are,
 * what they run, and where they may work.
 */
export function acpLines(acp: AcpTables): string[] {
  const harnesses = Object.values(acp.harnesses).map((h) =>
    `[harnesses.${h.name}] ${[h.command, ...h.args].join(" ")}${h.enabled ? "" : " (disabled)"}`
  );
  const checkouts = Object.values(acp.checkouts).map((c) =>
    `[checkouts.${c.name}] ${c.path} · base ${c.base} · merge ${c.merge ?? "ff"}${
      c.fetch ? " · fetch" : ""
    }`
  );
  return [...harnesses, ...checkouts];
}
