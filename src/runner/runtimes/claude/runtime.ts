/**
 * `agent.runtime = "claude"`: Claude Code in `-p` mode (docs/decisions/runner.md).
 * Before the runner is built, wats is registered in Claude Code when the entry
 * is missing or different (and nothing is said otherwise); each run's access
 * level is a validated deny-rules settings file written before it starts.
 *
 * @module
 */

import { errorMessage } from "../../../error_message.ts";
import { claudeSettings, writeClaudeSettings } from "../../../safety/claude_settings.ts";
import { claudeHarness } from "./harness.ts";
import { ensureClaudeRegistration, personEntry, readClaudeEntry } from "./registration.ts";
import { runCommand } from "../../spawn.ts";
import { claudeFacts } from "./facts.ts";
import { noDenyRules, type Runtime, type RuntimeDeps } from "../runtime.ts";
import { mcpHttpUrl } from "../../../contracts/session.ts";

/** The Claude Code runtime. */
export function claudeRuntime(d: RuntimeDeps): Runtime {
  return {
    facts: claudeFacts,
    label: "claude",
    prepare: async () => {
      try {
        // Read as data: the entry's command is never started here (issue 26).
        const found = readClaudeEntry({
          home: d.home,
          cwd: d.cwd,
          ...(d.env.CLAUDE_CONFIG_DIR ? { configDir: d.env.CLAUDE_CONFIG_DIR } : {}),
        }, readTextIfAny);
        const r = await ensureClaudeRegistration({
          run: runCommand,
          found,
          entry: personEntry(d.selfCommand, d.person, d.paths.dataDir),
          // `wats setup claude --http` registered this node's HTTP endpoint: that is wats too.
          ...(d.settings["mcp.listen"] ? { httpUrl: mcpHttpUrl(d.settings["mcp.listen"]) } : {}),
        });
        if (r.action !== "unchanged") {
          d.log.info(`registered wats in Claude Code (${r.action}, scope ${r.scope})`);
        }
      } catch (err) {
        d.log.warn(`could not register wats in Claude Code: ${errorMessage(err)}`);
      }
    },
    // Claude's own processes are wrapped where the runner spawns them.
    harness: () => claudeHarness(),
    sandboxed: () => ({
      program: "claude",
      args: [],
      env: { ...d.runEnv },
      readable: [d.configDir],
      agent: claudeFacts.agent,
    }),
    // Claude silently ignores an invalid settings file: writeClaudeSettings validates it.
    access: async (p) => {
      if (p.level === "inherit") return noDenyRules(p);
      const settingsFile = `${d.configDir}/claude-settings.json`;
      await writeClaudeSettings(settingsFile, claudeSettings(p.denyRules));
      return {
        settingsFile,
        access: { args: p.claudeArgs, allowedTools: p.allowedTools },
        cwd: p.cwd,
      };
    },
    ready: () => Promise.resolve(),
  };
}

/** A file's text, or undefined when it does not exist. Requires `--allow-read` on `path`. */
export function readTextIfAny(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}
