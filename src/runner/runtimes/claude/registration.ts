/**
 * Registering wats in the user's Claude Code (docs/decisions/runner.md: `--agent claude`
 * registers wats when the entry is missing or different, silently otherwise).
 * The entry is `wats mcp --profile <person>`: interactive sessions speak as the
 * person; runner sessions get their own generated config instead.
 *
 * The entry is **read as data** from Claude Code's own files, never through
 * `claude mcp get`: that command connects to the server it describes, i.e. starts
 * the entry's command (measured with 2.1.197), and an agent that rewrote
 * `~/.claude.json` had its command run as the person at the daemon's next start
 * (issue 26). Where Claude Code 2.1.197 keeps entries (read in its code, checked
 * with the CLI): user scope in `mcpServers` of its global file — `$CLAUDE_CONFIG_DIR/.claude.json`,
 * else `~/.claude.json`, or a legacy `<config dir>/.config.json` when that exists;
 * local scope in `projects[<project>].mcpServers` of the same file, keyed by the
 * project's git root (else its folder); project scope in `<project>/.mcp.json`.
 * Local wins over project, project over user. Changes still go through `claude mcp
 * remove` and `claude mcp add`, which write the files and start nothing (measured).
 *
 * @module
 */

import { HarnessError } from "../../../errors.ts";
import type { SelfCommand } from "../../harness.ts";
import type { CommandRunner } from "../../spawn.ts";
import { MCP_SERVER_NAME } from "../../../contracts/session.ts";

/** Claude Code's configuration scopes. */
export type ClaudeScope = "user" | "project" | "local";

/** A stdio MCP server entry. */
export interface McpEntry {
  command: string;
  args: string[];
}

/** An entry as Claude Code's files hold it. */
export interface RegisteredEntry {
  scope: ClaudeScope;
  command: string;
  args: string[];
  /**
   * Fields that make it another server than wats's plain entry, even with the same command: a
   * transport other than stdio, environment variables (`LD_PRELOAD`, `NODE_OPTIONS` would run
   * code in the person's sessions), keys this reader does not know.
   */
  extra: string[];
  /** An `http` entry's URL (MCP over HTTP, `wats setup claude --http`). */
  url?: string;
}

/** What registration did. */
export interface RegistrationOutcome {
  action: "unchanged" | "added" | "replaced";
  scope: ClaudeScope;
  /** The entry found before, when there was one. */
  previous?: RegisteredEntry;
}

/** The entry for the person: `wats mcp --profile <profile>` (and `--data-dir` when given). */
export function personEntry(self: SelfCommand, profile: string, dataDir?: string): McpEntry {
  return {
    command: self.command,
    args: [
      ...self.args,
      "mcp",
      "--profile",
      profile,
      ...(dataDir !== undefined ? ["--data-dir", dataDir] : []),
    ],
  };
}

/** Where Claude Code's files are, for {@linkcode readClaudeEntry}. */
export interface ClaudeConfigPlace {
  home: string;
  /** `CLAUDE_CONFIG_DIR` when set. */
  configDir?: string;
  /** The folder Claude Code is started in (the daemon's): local and project scope are its. */
  cwd: string;
}

/**
 * The files {@linkcode readClaudeEntry} may read: the legacy global file, the global file, the
 * project's `.mcp.json` (what a permission set grants).
 */
export function claudeConfigFiles(p: ClaudeConfigPlace): string[] {
  const dir = p.configDir || `${p.home}/.claude`;
  return [`${dir}/.config.json`, `${p.configDir || p.home}/.claude.json`, `${p.cwd}/.mcp.json`];
}

/**
 * The wats entry Claude Code would use in `p.cwd`, read from its files (never by starting
 * anything): local scope, else project, else user; undefined when there is none.
 * `read` returns a file's text, or undefined when it does not exist.
 *
 * @throws {HarnessError} code `claude.register` when a file is not JSON (Claude Code would
 * not start either): the person fixes it, wats does not overwrite it.
 */
export function readClaudeEntry(
  p: ClaudeConfigPlace,
  read: (path: string) => string | undefined,
): RegisteredEntry | undefined {
  const [legacy, global, project] = claudeConfigFiles(p);
  const globalFile = read(legacy!) !== undefined ? legacy! : global!;
  const g = parseJsonFile(globalFile, read(globalFile));
  const projects = objectAt(g, "projects") ?? {};
  // Claude Code keys local scope by the project's git root, a folder at or above cwd: the
  // deepest such key is the one it uses.
  const key = Object.keys(projects).filter((k) => p.cwd === k || p.cwd.startsWith(`${k}/`))
    .sort((a, b) => b.length - a.length)[0];
  const local = key !== undefined ? entryIn(objectAt(projects, key), "local") : undefined;
  if (local) return local;
  const shared = entryIn(parseJsonFile(project!, read(project!)), "project");
  return shared ?? entryIn(g, "user");
}

/** True when `found` is exactly `wanted`: the same stdio command and arguments, nothing else. */
export function sameEntry(found: RegisteredEntry, wanted: McpEntry): boolean {
  return found.extra.length === 0 && found.command === wanted.command &&
    found.args.length === wanted.args.length && found.args.every((a, i) => a === wanted.args[i]);
}

type Json = Record<string, unknown>;

function parseJsonFile(path: string, text: string | undefined): Json | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : {};
  } catch (err) {
    throw new HarnessError(
      "claude.register",
      `${path} is not JSON, so Claude Code cannot read it either: fix it (or move it away), ` +
        "then start wats again",
      { cause: err },
    );
  }
}

function objectAt(v: Json | undefined, key: string): Json | undefined {
  const x = v?.[key];
  return typeof x === "object" && x !== null && !Array.isArray(x) ? x as Json : undefined;
}

function entryIn(config: Json | undefined, scope: ClaudeScope): RegisteredEntry | undefined {
  const e = objectAt(objectAt(config, "mcpServers"), MCP_SERVER_NAME);
  if (e === undefined) return undefined;
  const extra: string[] = [];
  for (const [k, v] of Object.entries(e)) {
    if (k === "command" || k === "args") continue;
    if (k === "type" && v === "stdio") continue;
    if (k === "env" && typeof v === "object" && v !== null && Object.keys(v).length === 0) {
      continue;
    }
    extra.push(k);
  }
  const args = Array.isArray(e.args) ? e.args.map(String) : [];
  if (e.args !== undefined && !Array.isArray(e.args)) extra.push("args");
  const url = e.type === "http" && typeof e.url === "string" ? e.url : undefined;
  return {
    scope,
    command: typeof e.command === "string" ? e.command : "",
    args,
    extra,
    ...(url !== undefined ? { url } : {}),
  };
}

/** Options of `ensureClaudeRegistration`. */
export interface RegistrationOptions {
  run: CommandRunner;
  /** The entry Claude Code has now ({@linkcode readClaudeEntry}), read before anything is run. */
  found: RegisteredEntry | undefined;
  entry: McpEntry;
  /** Where to add it; `user` when unset. */
  scope?: ClaudeScope;
  /** The CLI; `claude` when unset. */
  program?: string;
  /**
   * This node's MCP over HTTP URL when `mcp.listen` is set: an `http` entry at it (with its
   * token header and nothing else) is wats's entry too, the one `wats setup claude --http` made.
   */
  httpUrl?: string;
  /** Register the `http` entry instead of `entry` (`wats setup claude --http`): URL and token. */
  http?: { url: string; token: string };
}

/**
 * Makes sure Claude Code has the wats entry `opts.entry`: adds it when missing,
 * replaces it when different (in the scope it was found), does nothing when equal.
 * Log only when the outcome is not `unchanged`. Runs only `claude mcp remove` and
 * `claude mcp add`, which start no server.
 *
 * @throws {HarnessError} code `claude.register` when `claude mcp add`/`remove` fails.
 */
export async function ensureClaudeRegistration(
  opts: RegistrationOptions,
): Promise<RegistrationOutcome> {
  const program = opts.program ?? "claude";
  const scope = opts.scope ?? "user";
  const previous = opts.found;
  const wanted = opts.entry;
  const httpUrl = opts.http?.url ?? opts.httpUrl;
  const sameHttp = previous?.url !== undefined && previous.url === httpUrl &&
    previous.extra.every((k) => ["type", "url", "headers"].includes(k));
  // A new token is a new entry: `--http` always registers the one it made.
  if (previous !== undefined && !opts.http && (sameEntry(previous, wanted) || sameHttp)) {
    return { action: "unchanged", scope: previous.scope, previous };
  }
  if (previous !== undefined) {
    const rm = await opts.run(program, [
      "mcp",
      "remove",
      MCP_SERVER_NAME,
      "-s",
      previous.scope,
    ]);
    check(rm.code, rm.stderr || rm.stdout, "remove the old wats entry");
  }
  const add = await opts.run(
    program,
    opts.http
      ? [
        "mcp",
        "add",
        "--transport",
        "http",
        "-s",
        scope,
        MCP_SERVER_NAME,
        opts.http.url,
        "--header",
        `Authorization: Bearer ${opts.http.token}`,
      ]
      : ["mcp", "add", "-s", scope, MCP_SERVER_NAME, "--", wanted.command, ...wanted.args],
  );
  check(add.code, add.stderr || add.stdout, "add the wats entry");
  return previous === undefined
    ? { action: "added", scope }
    : { action: "replaced", scope, previous };
}

function check(code: number, output: string, what: string): void {
  if (code === 0) return;
  throw new HarnessError(
    "claude.register",
    `claude mcp could not ${what} (exit code ${code}): ${output.trim()}. ` +
      "Look at the wats entry in ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json), or " +
      "register by hand with `wats setup claude`.",
  );
}
