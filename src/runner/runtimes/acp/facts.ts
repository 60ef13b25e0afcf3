/**
 * What is known of `agent.runtime = "acp"` without its code (src/runner/runtimes/runtime.ts
 * `RuntimeFacts`): the agent of `agent.harness` over ACP, one session per thread. Its program is
 * its `[harnesses.NAME]` command, which config.toml names; it starts from the daemon's
 * environment and its table's `env`.
 *
 * @module
 */

import type { RuntimeFacts } from "../runtime.ts";
import { ACP_RUNTIME, AcpRunParser } from "./parser.ts";

/** The ACP runtime's facts. */
export const acpFacts: RuntimeFacts = {
  name: ACP_RUNTIME,
  programs: [],
  reportsCost: true,
  limitsTurns: true,
  threadPerRun: true,
  // Locked: the wats tools only (docs/decisions/runner.md); every other level runs commands.
  shellless: ["locked"],
  parser: () => new AcpRunParser(),
};
