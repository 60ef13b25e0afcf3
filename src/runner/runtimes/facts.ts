/**
 * The facts of every runtime (src/runner/runtimes/runtime.ts `RuntimeFacts`), by name: what the
 * transcript renderer, the budget's report, the launcher's permission set and the daemon read
 * of a runtime without loading its code. Keyed by src/contracts/runtime_names.ts, so a name
 * without facts is a type error.
 *
 * @module
 */

import type { RuntimeName } from "../../contracts/runtime_names.ts";
import type { RuntimeFacts } from "./runtime.ts";
import { acpFacts } from "./acp/facts.ts";
import { claudeFacts } from "./claude/facts.ts";
import { codexFacts } from "./codex/facts.ts";

/** Every runtime's facts. */
export const RUNTIME_FACTS: Readonly<Record<RuntimeName, RuntimeFacts>> = {
  claude: claudeFacts,
  codex: codexFacts,
  acp: acpFacts,
};

/**
 * The facts of `name` (a transcript header's `harness`, a state file's `runtime`, a setting),
 * or undefined for a name this version has no runtime of.
 */
export function runtimeFacts(name: string): RuntimeFacts | undefined {
  return Object.hasOwn(RUNTIME_FACTS, name) ? RUNTIME_FACTS[name as RuntimeName] : undefined;
}

/**
 * Whether the runs of `name` report their cost (`RuntimeFacts.reportsCost`); a name with no
 * runtime here (an older transcript's, a test harness's) is read as one that does.
 */
export function reportsCost(name: string): boolean {
  return runtimeFacts(name)?.reportsCost ?? true;
}

/** Whether the runs of `name` are held to `agent.max_turns` (`RuntimeFacts.limitsTurns`). */
export function limitsTurns(name: string): boolean {
  return runtimeFacts(name)?.limitsTurns ?? true;
}
