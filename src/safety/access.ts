/**
 * The access levels of docs/decisions/runner.md as a plan for one Claude Code run: where it
 * runs, which flags open or close what, which deny rules apply, what the banner
 * says, and what is wrong with the settings.
 *
 * - `locked` (default): only the wats tools, in the empty run directory
 *   (`<data dir>/agent/run`): no built-in tools, no settings files, no MCP
 *   servers but wats'.
 * - `workspace`: `agent.workdir`'s instructions, skills, settings and MCP
 *   servers, plus the built-in tools of `agent.tools`; file tools are scoped to
 *   the workspace unless the item gives a scope (`Edit(//elsewhere/**)`).
 * - `inherit`: the user's own environment, with no deny rule; the safety
 *   settings are detected (safety.json), not enforced.
 *
 * Pure: the caller lists the data directory (`listDataEntries`) and
 * refuses to run while `problems` is not empty.
 *
 * @module
 */

import type { AgentAccess } from "../config/schema.ts";
import { absolute, type DataPaths, isWithin } from "../config/paths.ts";
import { denyRules } from "./claude_settings.ts";

/** What the plan depends on: the resolved settings and the node's paths. */
export interface AccessInput {
  /** `agent.access`. */
  access: AgentAccess;
  /** `agent.workdir`: an absolute path, or `""` when unset. */
  workdir: string;
  /** `agent.tools`: built-in tool names, each optionally with a scope (`Edit(//x/**)`). */
  tools: string[];
  /** The node's data directory paths. */
  paths: DataPaths;
  /** The user's home directory. */
  home: string;
  /** The directory wats was started in: the cwd of `inherit` runs without a workdir. */
  userCwd: string;
  /** The data directory's entries, from `listDataEntries`; only the fixed names when unset. */
  dataEntries?: string[];
}

/** How one run is set up. */
export interface AccessPlan {
  level: AgentAccess;
  /** The run's working directory. */
  cwd: string;
  /**
   * Flags for `claude` that set the level: locked `--tools "" --setting-sources ""
   * --strict-mcp-config`; workspace `--tools <names> --setting-sources project,local`;
   * inherit none. They replace the runner's own `--tools`/`--setting-sources`/
   * `--strict-mcp-config`.
   */
  claudeArgs: string[];
  /**
   * Rules to add to the run's `--allowedTools` next to `mcp__wats__*`: in `-p`
   * mode a tool call that is not allowed is refused, so an opened tool needs one.
   * Workspace only; file tools scoped to the workspace unless the item has a scope.
   */
  allowedTools: string[];
  /** The `permissions.deny` rules of the run's `--settings` (none at inherit). */
  denyRules: string[];
  /** Lines for the banner: the level, what is open, and warnings. */
  bannerLines: string[];
  /** What prevents a run at this level; the runner must not start one while any is listed. */
  problems: string[];
}

/** The exact warning of an `inherit` banner. */
export const INHERIT_WARNING =
  "warning: agent.access = inherit: the agent runs with your own environment and no deny " +
  "rules; the safety settings are detected, not enforced";

/** Tools that edit files: scoped by an `Edit`-family rule of their own name. */
const EDIT_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);
/** Tools that read files: Claude Code scopes them with `Read(...)` rules. */
const READ_TOOLS = new Set(["Read", "Glob", "Grep"]);

/** Built-in tools this wats knows of; others are passed on with a banner warning. */
export const KNOWN_BUILTIN_TOOLS: ReadonlySet<string> = new Set([
  "Bash",
  "Edit",
  "Glob",
  "Grep",
  "MultiEdit",
  "NotebookEdit",
  "Read",
  "Skill",
  "Task",
  "TodoWrite",
  "WebFetch",
  "WebSearch",
  "Write",
]);

/**
 * Characters the deny rules cannot express in a path: parentheses end the
 * specifier, and `*`, `?`, `[`, `]` are patterns in path rules.
 */
const UNSAFE_PATH_CHARS = /[()*?[\]\n\r]/;

/** Plans a run at `input.access` (see the module doc for each level). */
export function planAccess(input: AccessInput): AccessPlan {
  const paths = input.paths;
  const problems: string[] = [];
  const workdir = input.workdir === "" ? "" : input.workdir.replace(/\/+$/, "") || "/";

  if (workdir !== "") {
    if (!workdir.startsWith("/")) {
      problems.push(
        `agent.workdir = "${input.workdir}" is not an absolute path; ` +
          "set it with `wats config set agent.workdir /absolute/path`",
      );
    } else if (isWithin(paths.dataDir, absolute(workdir, "/"))) {
      problems.push(
        `agent.workdir = "${input.workdir}" is or contains the data directory ` +
          `${paths.dataDir}, which would let the agent rewrite its own settings; ` +
          "choose a folder outside it with `wats config set agent.workdir /path`",
      );
    }
  }

  switch (input.access) {
    case "locked":
      return lockedPlan(input, problems);
    case "workspace":
      return workspacePlan(input, workdir, problems);
    case "inherit":
      return {
        level: "inherit",
        cwd: workdir !== "" ? workdir : input.userCwd,
        claudeArgs: [],
        allowedTools: [],
        denyRules: [],
        bannerLines: [
          `agent access: inherit: the user's own environment (settings, tools, MCP servers), ` +
          `in ${workdir !== "" ? workdir : input.userCwd}`,
          INHERIT_WARNING,
        ],
        problems,
      };
  }
}

function lockedPlan(input: AccessInput, problems: string[]): AccessPlan {
  const paths = input.paths;
  checkDataDirPath(paths.dataDir, problems);
  const bannerLines = [
    `agent access: locked: only the wats tools, in the empty directory ${paths.runDir}`,
  ];
  if (input.tools.length > 0) {
    bannerLines.push(
      `note: agent.tools (${input.tools.join(", ")}) is used only with agent.access = workspace`,
    );
  }
  return {
    level: "locked",
    cwd: paths.runDir,
    claudeArgs: ["--tools", "", "--setting-sources", "", "--strict-mcp-config"],
    allowedTools: [],
    denyRules: denyRules({
      dataDir: paths.dataDir,
      dataEntries: input.dataEntries ?? [],
      runDir: paths.runDir,
      home: input.home,
    }),
    bannerLines,
    problems,
  };
}

function workspacePlan(input: AccessInput, workdir: string, problems: string[]): AccessPlan {
  const paths = input.paths;
  checkDataDirPath(paths.dataDir, problems);
  if (workdir === "") {
    problems.push(
      "agent.access = workspace needs a workspace, and agent.workdir is not set; " +
        "set it with `wats config set agent.workdir /path`",
    );
  } else if (UNSAFE_PATH_CHARS.test(workdir)) {
    problems.push(
      `agent.workdir = "${workdir}" contains one of ( ) * ? [ ], which Claude Code ` +
        "permission rules cannot express; choose a folder without them",
    );
  }

  const tools = input.tools.map(parseTool);
  for (const t of tools) if (t.problem) problems.push(t.problem);
  const names = [...new Set(tools.filter((t) => !t.problem).map((t) => t.name))];
  // Skills are part of what workspace opens (docs/decisions/runner.md); they reach the model
  // through the Skill tool.
  const withSkill = names.includes("Skill") ? names : [...names, "Skill"];
  const scope = `/${workdir}/**`;
  const allowed: string[] = [];
  for (const t of tools) {
    if (t.problem) continue;
    if (t.scope !== undefined) allowed.push(`${t.name}(${absoluteScope(t.scope)})`);
    else if (EDIT_TOOLS.has(t.name)) allowed.push(`${t.name}(${scope})`);
    else if (READ_TOOLS.has(t.name)) allowed.push(`Read(${scope})`);
    else allowed.push(t.name);
  }

  const unknown = names.filter((n) => !KNOWN_BUILTIN_TOOLS.has(n));
  const bannerLines = [
    `agent access: workspace: ${workdir || "(agent.workdir not set)"}, with its ` +
    "instructions, skills, settings and MCP servers",
    names.length > 0
      ? `built-in tools: ${names.join(", ")} (file tools scoped to the workspace unless ` +
        "agent.tools gives a scope)"
      : "built-in tools: none (agent.tools is empty)",
  ];
  if (unknown.length > 0) {
    bannerLines.push(
      `warning: agent.tools names ${unknown.join(", ")}, which wats does not know; ` +
        "Claude Code ignores tool names it does not have",
    );
  }
  if (names.includes("Bash")) {
    bannerLines.push(
      "warning: Bash is open: the deny rules stop the plain ways into the data directory, " +
        "not every way a shell has; agent.review is not a boundary with a shell",
    );
  }
  return {
    level: "workspace",
    cwd: workdir,
    claudeArgs: ["--tools", withSkill.join(","), "--setting-sources", "project,local"],
    allowedTools: [...new Set(allowed)],
    denyRules: denyRules({
      dataDir: paths.dataDir,
      dataEntries: input.dataEntries ?? [],
      runDir: paths.runDir,
      home: input.home,
      ...(workdir !== "" ? { workdir } : {}),
    }),
    bannerLines,
    problems,
  };
}

/** The data directory must be expressible in the deny rules, or they would not bite. */
function checkDataDirPath(dataDir: string, problems: string[]): void {
  if (UNSAFE_PATH_CHARS.test(dataDir)) {
    problems.push(
      `the data directory ${dataDir} contains one of ( ) * ? [ ], which Claude Code ` +
        "permission rules cannot express; move it (--data-dir or WATS_DATA_DIR)",
    );
  }
}

interface ParsedTool {
  name: string;
  scope?: string;
  problem?: string;
}

/** `Name` or `Name(scope)`. */
function parseTool(item: string): ParsedTool {
  const m = /^([A-Za-z][A-Za-z0-9_]*)(?:\((.+)\))?$/.exec(item);
  if (m === null) {
    return {
      name: item,
      problem: `agent.tools item "${item}" is not a tool name or Name(scope) ` +
        '(e.g. "Read" or "Edit(//home/me/notes/**)"); fix it with `wats config set agent.tools ...`',
    };
  }
  const [, name = item, scope] = m;
  return scope === undefined ? { name } : { name, scope };
}

/** A scope written as `/abs/**` means an absolute path: Claude Code needs `//abs/**`. */
function absoluteScope(scope: string): string {
  return scope.startsWith("/") && !scope.startsWith("//") ? `/${scope}` : scope;
}
