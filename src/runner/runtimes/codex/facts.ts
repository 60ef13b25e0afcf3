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
  agent: {
    name: "codex",
    // Codex's provider (its endpoint, the variable holding its key) lives in config.toml: without
    // it a person on their own provider is not logged in (measured with codex-acp).
    state: { dir: "~/.codex", dirEnv: "CODEX_HOME", login: ["auth.json", "config.toml"] },
    // The model API, the ChatGPT backend and its auth server.
    hosts: ["api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"],
    baseUrlEnv: "OPENAI_BASE_URL",
    adapter: { bin: "codex-acp", pkg: "@agentclientprotocol/codex-acp", entry: "dist/index.js" },
  },
  env: RUN_ENV.codex,
  keySetting: "agent.codex_env_key",
  baseUrlSetting: "agent.codex_base_url",
  parser: () => new CodexJsonParser(),
};
