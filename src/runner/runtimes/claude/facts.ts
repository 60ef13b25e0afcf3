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
  agent: "claude",
  env: RUN_ENV.claude,
  parser: () => new ClaudeStreamParser(),
};
