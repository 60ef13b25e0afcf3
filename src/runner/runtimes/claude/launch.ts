/**
 * Claude Code's part of the launch (src/runner/runtimes/launch.ts): its files that hold the
 * wats entry, which the daemon with this runtime and `wats setup` read as data.
 *
 * @module
 */

import type { RuntimeLaunch } from "../runtime.ts";
import { claudeConfigFiles } from "./registration.ts";

/** Claude Code's launch. */
export const claudeLaunch: RuntimeLaunch = {
  entryFiles: (at) =>
    claudeConfigFiles({
      home: at.env.HOME ?? "",
      cwd: at.cwd,
      ...(at.env.CLAUDE_CONFIG_DIR ? { configDir: at.env.CLAUDE_CONFIG_DIR } : {}),
    }),
};
