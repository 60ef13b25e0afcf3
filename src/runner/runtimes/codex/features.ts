/**
 * Which Codex features a run switches off (docs/decisions/runner.md, Codex; docs/harness_facts.md).
 *
 * A locked run disables the shell, the browser, apps, computer use, plugins,
 * sub-agents and the like with `--disable NAME`. But `--disable` with a name
 * the installed Codex does not know is a hard error (exit 1, "Unknown feature
 * flag"), and the list of names changes between releases. So the daemon asks
 * the installed Codex once (`codex features list`), keeps the answer, and each
 * run disables the lock-down names this Codex knows. Names it lists as
 * `removed` are still accepted by `--disable`, so every listed name counts.
 *
 * @module
 */

import { HarnessError } from "../../../errors.ts";
import type { CommandRunner } from "../../spawn.ts";

/**
 * Features a locked run turns off, where the installed Codex knows them.
 * `shell_tool` must be off, not merely sandboxed: under the read-only sandbox
 * the shell still reads files. `unbounded_connection_retries` (on by default)
 * makes an unreachable model server retry forever.
 */
export const LOCKDOWN_FEATURES: readonly string[] = [
  "shell_tool",
  "unified_exec",
  "shell_snapshot",
  "view_image",
  "image_generation",
  "browser_use",
  "browser_use_external",
  "browser_use_full_cdp_access",
  "in_app_browser",
  "computer_use",
  "apps",
  "enable_mcp_apps",
  "plugins",
  "remote_plugin",
  "plugin_sharing",
  "recommended_plugins",
  "tool_suggest",
  "skill_search",
  "skill_mcp_dependency_install",
  "memories",
  "multi_agent",
  "multi_agent_v2",
  "goals",
  "sleep_tool",
  "hooks",
  "code_mode",
  "code_mode_only",
  "request_permissions_tool",
  "standalone_web_search",
  "network_proxy",
  "send_message_to_user_async",
  "agent_message_board",
  "agent_message_board_mcp",
  "workspace_dependencies",
  "unbounded_connection_retries",
];

/**
 * The feature names in `codex features list` output: one feature a line,
 * `name  stage  enabled` (e.g. `shell_tool   stable   true`). Lines of
 * another shape (warnings) are skipped.
 */
export function parseFeatureList(stdout: string): string[] {
  const names: string[] = [];
  for (const line of stdout.split("\n")) {
    const m = line.match(/^([a-z0-9_.]+)\s+\S.*\s(true|false)\s*$/);
    const name = m?.[1];
    if (name !== undefined) names.push(name);
  }
  return names;
}

/** The lock-down features `known` contains, in {@linkcode LOCKDOWN_FEATURES} order. */
export function lockdownDisables(known: Iterable<string>): string[] {
  const set = new Set(known);
  return LOCKDOWN_FEATURES.filter((f) => set.has(f));
}

/** Asks a Codex program which features it knows; the answer is kept per program. */
export type CodexFeatureProbe = (program: string) => Promise<string[]>;

/**
 * A probe that runs `<program> features list` through `run` once per program
 * and keeps the names (a failed probe is not kept: the next call tries again).
 * One per daemon: the installed Codex does not change while it runs.
 *
 * @throws {HarnessError} code `harness.codex_features` when the program fails
 *   or lists no features (e.g. a Codex too old to have `features list`).
 */
export function codexFeatureProbe(run: CommandRunner): CodexFeatureProbe {
  const cache = new Map<string, Promise<string[]>>();
  return (program) => {
    let p = cache.get(program);
    if (p === undefined) {
      p = probe(run, program);
      cache.set(program, p);
      p.catch(() => cache.delete(program));
    }
    return p;
  };
}

async function probe(run: CommandRunner, program: string): Promise<string[]> {
  const out = await run(program, ["features", "list"]);
  const names = out.code === 0 ? parseFeatureList(out.stdout) : [];
  if (names.length === 0) {
    const why = out.code !== 0
      ? `exited with code ${out.code}: ${(out.stderr || out.stdout).trim().slice(-300)}`
      : "listed no features";
    throw new HarnessError(
      "harness.codex_features",
      `\`${program} features list\` ${why}. wats needs it to lock Codex down; ` +
        `install Codex 0.160 or newer (npm install -g @openai/codex), or check agent.runtime`,
    );
  }
  return names;
}
