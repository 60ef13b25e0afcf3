/**
 * What is known of `agent.runtime = "claude"` without its code (src/runner/runtimes/runtime.ts
 * `RuntimeFacts`): Claude Code in `-p` mode, which reports a run's cost and enforces
 * `agent.max_turns`.
 *
 * @module
 */

import { RUN_ENV } from "../../../contracts/run_env.ts";
import type { RuntimeFacts } from "../runtime.ts";
import { ClaudeStreamParser } from "./harness.ts";

/** The Claude Code runtime's facts. */
export const claudeFacts: RuntimeFacts = {
  name: "claude",
  programs: ["claude"],
  reportsCost: true,
  limitsTurns: true,
  threadPerRun: false,
  // Locked: the wats tools only (docs/decisions/runner.md); every other level runs commands.
  shellless: ["locked"],
  agent: {
    name: "claude",
    // Never Claude's settings.json or `.claude.json`: hooks and MCP servers there are programs.
    state: {
      dir: "~/.claude",
      dirEnv: "CLAUDE_CONFIG_DIR",
      hide: ["~/.claude.json"],
      login: [".credentials.json"],
    },
    // The model API and the host that refreshes a subscription login (Claude Code 2.1.197's
    // `TOKEN_URL`).
    hosts: ["api.anthropic.com:443", "platform.claude.com:443"],
    baseUrlEnv: "ANTHROPIC_BASE_URL",
    adapter: {
      bin: "claude-agent-acp",
      pkg: "@agentclientprotocol/claude-agent-acp",
      entry: "dist/index.js",
    },
  },
  env: RUN_ENV.claude,
  parser: () => new ClaudeStreamParser(),
};
