/**
 * What the launcher works out of a runtime before it starts the daemon's Worker
 * (src/cli/command_inputs.ts), by `agent.runtime`: the files of its CLI the daemon (and
 * `wats setup`) read, what its daemon may do beyond running its programs, and whether it can
 * start at all. The launcher holds the whole environment; the daemon gets a filtered copy.
 * Apart from facts.ts because these load a runtime's process code, which `wats agent logs` and
 * `wats ui` never import; the launcher imports this module only for the commands that need it.
 *
 * @module
 */

import type { RuntimeName } from "../../contracts/runtime_names.ts";
import { claudeLaunch } from "./claude/launch.ts";
import { codexLaunch } from "./codex/launch.ts";
import type { RuntimeLaunch } from "./runtime.ts";

/** Each runtime's part of the launch, by `agent.runtime`. */
export const RUNTIME_LAUNCH: Readonly<Partial<Record<RuntimeName, RuntimeLaunch>>> = {
  claude: claudeLaunch,
  codex: codexLaunch,
};

/** The launch part of `name`, or none (`none`, a runtime with nothing to add). */
export function runtimeLaunch(name: string): RuntimeLaunch | undefined {
  return Object.hasOwn(RUNTIME_LAUNCH, name) ? RUNTIME_LAUNCH[name as RuntimeName] : undefined;
}
