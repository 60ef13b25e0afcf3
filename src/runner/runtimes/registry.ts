/**
 * How each runtime is made (src/runner/runtimes/runtime.ts `Runtime`), by name: the one table
 * src/node/agent_runner.ts picks `agent.runtime` from. Keyed by
 * src/contracts/runtime_names.ts, so a name config accepts without a runtime is a type error.
 * Apart from facts.ts because this one loads the runtimes' process code.
 *
 * @module
 */

import type { RuntimeName } from "../../contracts/runtime_names.ts";
import type { Runtime, RuntimeDeps } from "./runtime.ts";
import { acpRuntime } from "./acp/runtime.ts";
import { claudeRuntime } from "./claude/runtime.ts";
import { codexRuntime } from "./codex/runtime.ts";

/** Makes the runtime of one name for a daemon; throws a `ConfigError` the user can act on. */
export type MakeRuntime = (d: RuntimeDeps) => Runtime;

/** Every runtime, by `agent.runtime`. */
export const RUNTIMES: Readonly<Record<RuntimeName, MakeRuntime>> = {
  claude: claudeRuntime,
  codex: codexRuntime,
  acp: acpRuntime,
};
