/**
 * What is known of `agent.runtime = "codex"` without its code (src/runner/runtimes/runtime.ts
 * `RuntimeFacts`): Codex reports tokens, never a price, so its runs count against
 * `agent.max_runs_per_day`; it has no turn limit (docs/codex.md); its process gets the one
 * variable `agent.codex_env_key` names.
 *
 * @module
 */

import { RUN_ENV } from "../../../contracts/run_env.ts";
import type { RuntimeFacts } from "../runtime.ts";
import { CodexJsonParser } from "./parser.ts";

/** The Codex runtime's facts. */
export const codexFacts: RuntimeFacts = {
  name: "codex",
  programs: ["codex"],
  reportsCost: false,
  limitsTurns: false,
  threadPerRun: false,
  // Locked: the wats tools only (docs/decisions/runner.md); every other level runs commands.
  shellless: ["locked"],
  agent: "codex",
  env: RUN_ENV.codex,
  keySetting: "agent.codex_env_key",
  parser: () => new CodexJsonParser(),
};
