/**
 * The prevention side of the runner contract's (docs/decisions/runner.md) safety settings for Claude Code: the
 * `permissions.deny` rules of the `--settings` file a run gets at `locked` and
 * `workspace` access, the check of that file, and the writer the runner calls
 * before every run.
 *
 * An agent runs as the user, so whatever it can run it can use to switch off
 * what keeps it in check (config.toml, safety.json, `wats resume`…). The deny
 * rules make that impossible by default; detection (safety.json) catches the
 * rest. Claude Code silently ignores a settings file that is bad JSON or has the
 * wrong shape (docs/harness_facts.md), so {@linkcode writeClaudeSettings} refuses to
 * write one that {@linkcode validateClaudeSettings} finds fault with.
 *
 * Path rules use Claude Code's syntax: in `Edit(...)`/`Write(...)`/`Read(...)`
 * a single leading `/` is relative to the settings file's folder, so absolute
 * paths are written `//abs/path`; directories as `//abs/dir/**`, files as
 * `//abs/file`. See docs/safety.md for why each rule exists.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { HarnessError } from "../errors.ts";
import { absolute, dataPaths, isWithin } from "../config/paths.ts";

/** What the deny rules depend on. */
export interface DenyInput {
  /** The data directory (absolute). */
  dataDir: string;
  /**
   * The entries now in the data directory, as paths relative to it; a trailing
   * `/` marks a directory (`"config.toml"`, `"agent/"`). When the run directory
   * lies inside, also list the entries of each directory on the way to it
   * (`"agent/runs/"`, `"agent/pending/"`, `"agent/run/"`): those are denied one by
   * one. {@linkcode listDataEntries} reads them.
   */
  dataEntries: string[];
  /** The run directory: the empty working directory of locked runs (`DataPaths.runDir`). */
  runDir: string;
  /** The user's home directory, for the `~/…` and `$HOME/…` forms. */
  home: string;
  /** The workspace of `workspace` access, when it is not the run directory. */
  workdir?: string;
}

/** The `--settings` file wats generates for Claude Code. */
export interface ClaudeSettings {
  permissions: {
    deny: string[];
    /** `"disable"`: the session cannot be switched to `bypassPermissions`. */
    disableBypassPermissionsMode: "disable";
  };
}

/**
 * The entries of DataPaths (relative to the data dir) that are denied even before
 * they exist, so an agent cannot plant one. Directories end with `/`. config.toml
 * and safety.json are the runner contract's; the others are the node's own files: the secret,
 * the store and SQLite's side files (a planted hot journal would be replayed into
 * the store), the socket, the lock, the worktrees and the agent's records.
 */
function fixedEntries(dataDir: string): string[] {
  const p = dataPaths(dataDir);
  const rel = (abs: string) => abs.slice(p.dataDir.length + 1);
  return [
    rel(p.config),
    rel(p.safety),
    rel(p.nodeKey),
    rel(p.store),
    `${rel(p.store)}-wal`,
    `${rel(p.store)}-shm`,
    `${rel(p.store)}-journal`,
    rel(p.socket),
    rel(p.lock),
    `${rel(p.worktrees)}/`,
    `${rel(p.agentDir)}/`,
    `${rel(p.runsDir)}/`,
    rel(p.runsIndex),
    `${rel(p.pendingDir)}/`,
    `${rel(p.runDir)}/`,
  ];
}

/** The wats commands an agent must not run: they write settings or lift a halt. */
export const DENIED_WATS_COMMANDS: readonly string[] = [
  "wats config",
  "wats resume",
  "wats guardian",
  "wats setup",
];

/**
 * The `permissions.deny` rules for a run at `locked` or `workspace` access, in a
 * stable order without duplicates (docs/decisions/runner.md, "Safety settings"):
 *
 * - `Edit`/`Write` on every entry of the data directory except those on the path
 *   to the run directory when it lies inside (so the run directory stays writable
 *   and `agent/` itself is not denied, but `agent/runs/**` and `agent/pending/**`
 *   are); the whole directory when the run directory lies outside. config.toml
 *   and safety.json (and the node's other fixed files) are denied even before they
 *   exist.
 * - `Edit`/`Write` on `.claude/**` and `.mcp.json` of the run directory and of the
 *   workspace: the settings, hooks and MCP servers a later session would load.
 * - `Bash(*<data dir>*)`, also as `~/…`, `$HOME/…` and `${HOME}/…` when the data
 *   directory lies under home (and with `\ ` for spaces); `Bash(*config.toml*)`,
 *   `Bash(*safety.json*)`, `Bash(*wats config*)`, `Bash(*wats resume*)`,
 *   `Bash(*wats guardian*)`, `Bash(*wats setup*)`.
 * - `Bash(*..*)` when the workspace (`workdir`, else the run directory) lies inside
 *   the data directory: from there a relative path reaches everything.
 * - `Read` on node.key (beyond the runner contract's list, see docs/safety.md): the secret
 *   every profile key derives from.
 */
export function denyRules(input: DenyInput): string[] {
  const data = absolute(input.dataDir, "/");
  const run = absolute(input.runDir, "/");
  const home = absolute(input.home, "/");
  const workspace = input.workdir ? absolute(input.workdir, "/") : run;
  const rules: string[] = [];
  const editWrite = (spec: string) => rules.push(`Edit(${spec})`, `Write(${spec})`);

  for (const target of dataTargets(data, run, input.dataEntries)) editWrite(target);
  const sessionDirs = [run, ...(workspace !== run ? [workspace] : [])];
  for (const dir of sessionDirs) {
    editWrite(`/${join(dir, ".claude")}/**`);
    editWrite(`/${join(dir, ".mcp.json")}`);
  }
  rules.push(`Read(/${dataPaths(data).nodeKey})`);

  for (const form of pathForms(data, home)) rules.push(`Bash(*${form}*)`);
  rules.push("Bash(*config.toml*)", "Bash(*safety.json*)");
  for (const cmd of DENIED_WATS_COMMANDS) rules.push(`Bash(*${cmd}*)`);
  if (isWithin(workspace, data)) rules.push("Bash(*..*)");
  return [...new Set(rules)];
}

/** `dir/name`, without doubling the slash of the root. */
function join(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/**
 * The `//abs` specifiers of the data-dir entries to deny: each entry not on the
 * way to the run directory, nothing at or under the run directory, and nothing
 * under an entry already denied with `/**`.
 */
function dataTargets(data: string, run: string, listed: string[]): string[] {
  const always = [`/${dataPaths(data).config}`, `/${dataPaths(data).safety}`];
  if (!isWithin(run, data)) return [`/${data === "/" ? "" : data}/**`, ...always];

  const dirs = new Set<string>();
  const all = new Set<string>();
  for (const raw of [...fixedEntries(data), ...listed]) {
    const isDir = raw.endsWith("/");
    const rel = raw.split("/").filter((s) => s !== "" && s !== ".").join("/");
    if (rel === "" || rel.split("/").includes("..")) continue;
    all.add(rel);
    if (isDir) dirs.add(rel);
    // Every ancestor of a listed entry is a directory of the data dir too.
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) {
      const anc = parts.slice(0, i).join("/");
      all.add(anc);
      dirs.add(anc);
    }
  }

  const runRel = run === data ? "" : run.slice(data.length + 1);
  const onPath = new Set<string>([""]);
  const runParts = runRel === "" ? [] : runRel.split("/");
  for (let i = 1; i <= runParts.length; i++) onPath.add(runParts.slice(0, i).join("/"));

  const out: string[] = [];
  for (const rel of [...all].sort()) {
    if (onPath.has(rel)) continue;
    const parent = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "";
    // Only children of directories above the run dir: deeper entries are covered
    // by their denied ancestor, and entries under the run dir stay writable.
    if (!onPath.has(parent) || (parent === runRel && runRel !== "")) continue;
    const abs = join(data, rel);
    out.push(dirs.has(rel) ? `/${abs}/**` : `/${abs}`);
  }
  for (const a of always) if (!out.includes(a)) out.push(a);
  return out;
}

/** The spellings of the data directory a shell command could use. */
function pathForms(data: string, home: string): string[] {
  const forms = [data];
  if (home !== "/" && isWithin(data, home)) {
    const rest = data === home ? "" : data.slice(home.length);
    forms.push(`~${rest}`, `$HOME${rest}`, `\${HOME}${rest}`);
  }
  const escaped = forms.filter((f) => f.includes(" ")).map((f) => f.replaceAll(" ", "\\ "));
  return [...forms, ...escaped];
}

/** The settings object for `--settings`: the deny rules, and bypass mode disabled. */
export function claudeSettings(rules: string[]): ClaudeSettings {
  return { permissions: { deny: [...rules], disableBypassPermissionsMode: "disable" } };
}

/** Built-in tool names a rule may name (plus any `mcp__…`). */
export const KNOWN_RULE_TOOLS: ReadonlySet<string> = new Set([
  "Bash",
  "Edit",
  "Write",
  "Read",
  "MultiEdit",
  "NotebookEdit",
  "WebFetch",
  "WebSearch",
  "Glob",
  "Grep",
]);

/** Tools whose specifier is a path: a single leading `/` is not absolute there. */
const PATH_TOOLS = new Set(["Edit", "Write", "Read", "MultiEdit", "NotebookEdit"]);

const TOP_LEVEL_KEYS = new Set(["$schema", "permissions"]);
const PERMISSION_KEYS = new Set(["deny", "allow", "ask", "disableBypassPermissionsMode"]);

/**
 * The problems of a settings value wats is about to hand to Claude Code; empty
 * when it is valid. Checks the shape (an object whose `permissions.deny` is a
 * non-empty array of strings, no keys wats does not write) and each rule: `Tool`
 * or `Tool(specifier)`, a known tool or `mcp__…`, balanced parentheses, no empty
 * specifier, absolute paths in path rules written `//abs`.
 */
export function validateClaudeSettings(value: unknown): string[] {
  if (!isObject(value)) return [`the settings must be a JSON object, not ${kind(value)}`];
  const problems: string[] = [];
  for (const key of Object.keys(value)) {
    if (!TOP_LEVEL_KEYS.has(key)) problems.push(`unexpected key "${key}"`);
  }
  const perms = value.permissions;
  if (!isObject(perms)) {
    problems.push(`"permissions" must be an object, not ${kind(perms)}`);
    return problems;
  }
  for (const key of Object.keys(perms)) {
    if (!PERMISSION_KEYS.has(key)) problems.push(`unexpected key "permissions.${key}"`);
  }
  if (
    "disableBypassPermissionsMode" in perms && perms.disableBypassPermissionsMode !== "disable"
  ) {
    problems.push(`"permissions.disableBypassPermissionsMode" must be "disable"`);
  }
  for (const list of ["deny", "allow", "ask"] as const) {
    if (!(list in perms) && list !== "deny") continue;
    const rules = perms[list];
    const at = `permissions.${list}`;
    if (!Array.isArray(rules)) {
      problems.push(`"${at}" must be an array of rules, not ${kind(rules)}`);
      continue;
    }
    if (list === "deny" && rules.length === 0) {
      problems.push(`"${at}" is empty: the settings would prevent nothing`);
    }
    rules.forEach((rule, i) => {
      if (typeof rule !== "string") {
        problems.push(`${at}[${i}] must be a string, not ${kind(rule)}`);
      } else {
        for (const p of ruleProblems(rule)) {
          problems.push(`${at}[${i}] ${JSON.stringify(rule)}: ${p}`);
        }
      }
    });
  }
  return problems;
}

/** The problems of one permission rule. */
export function ruleProblems(rule: string): string[] {
  const open = rule.indexOf("(");
  const tool = open === -1 ? rule : rule.slice(0, open);
  const problems: string[] = [];
  if (!KNOWN_RULE_TOOLS.has(tool) && !/^mcp__[A-Za-z0-9_-]+(__[A-Za-z0-9_*-]+)?$/.test(tool)) {
    problems.push(
      `unknown tool "${tool}" (known: ${[...KNOWN_RULE_TOOLS].join(", ")}, or mcp__server__tool)`,
    );
  }
  if (open === -1) {
    if (rule.includes(")")) problems.push("unbalanced parentheses");
    return problems;
  }
  if (!rule.endsWith(")")) {
    problems.push("the specifier must end with ')'");
    return problems;
  }
  const spec = rule.slice(open + 1, -1);
  let depth = 0;
  for (const c of spec) {
    if (c === "(") depth++;
    if (c === ")" && --depth < 0) break;
  }
  if (depth !== 0) problems.push("unbalanced parentheses");
  if (spec.trim() === "") problems.push("empty specifier (write the bare tool name instead)");
  if (PATH_TOOLS.has(tool) && spec.startsWith("/") && !spec.startsWith("//")) {
    problems.push(
      `"${spec}" is relative to the settings file's folder; write an absolute path as "/${spec}"`,
    );
  }
  return problems;
}

/**
 * Validates `settings` and writes it to `path` as JSON (through a temporary file
 * renamed into place, so Claude Code never reads half a file). The runner calls
 * it before every run: a settings file Claude Code would silently ignore must
 * never reach it. Requires `--allow-write` on `path`'s folder.
 *
 * @throws {HarnessError} code `safety.bad_settings` listing the problems, before
 *   anything is written.
 */
export async function writeClaudeSettings(path: string, settings: unknown): Promise<void> {
  const problems = validateClaudeSettings(settings);
  if (problems.length > 0) {
    throw new HarnessError(
      "safety.bad_settings",
      `refusing to write the Claude Code settings ${path}: Claude Code would ignore ` +
        `them and run without deny rules:\n  ${problems.join("\n  ")}\n` +
        "this is a bug in wats; please report it with these lines",
    );
  }
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(tmp, JSON.stringify(settings, null, 2) + "\n", { mode: 0o644 });
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw new HarnessError(
      "safety.settings_write",
      `cannot write the Claude Code settings ${path}: ${errorMessage(err)}`,
      { cause: err },
    );
  }
}

/**
 * Lists the data directory for {@linkcode DenyInput.dataEntries}: its entries,
 * and those of each directory on the way to `runDir` when it lies inside.
 * Directories end with `/`. A directory that does not exist lists as empty.
 * Requires `--allow-read` on the data directory.
 */
export async function listDataEntries(dataDir: string, runDir: string): Promise<string[]> {
  const data = absolute(dataDir, "/");
  const run = absolute(runDir, "/");
  const out: string[] = [];
  const rels = [""];
  if (isWithin(run, data) && run !== data) {
    const parts = run.slice(data.length + 1).split("/");
    for (let i = 1; i < parts.length; i++) rels.push(parts.slice(0, i).join("/"));
  }
  for (const rel of rels) {
    try {
      for await (const e of Deno.readDir(rel === "" ? data : join(data, rel))) {
        const name = rel === "" ? e.name : `${rel}/${e.name}`;
        out.push(e.isDirectory ? `${name}/` : name);
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return out.sort();
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function kind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return v === undefined ? "missing" : `a ${typeof v}`;
}
