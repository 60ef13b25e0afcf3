/**
 * The version of wats, shown by `--version`, the banner and MCP. deno.json's
 * `version` is the one source: this module reads it, so the two cannot drift.
 *
 * @module
 */

import denoJson from "../deno.json" with { type: "json" };
import { BUILD_COMMIT } from "./build_info.ts";

/** The version printed by `wats --version`. */
export const VERSION: string = denoJson.version;

/**
 * The `wats --version` text: the wats version, the Deno runtime this program
 * runs on (for a compiled binary, the one it was built with) and the git commit
 * the release build stamped into src/build_info.ts. A source checkout has no
 * stamp: `git rev-parse HEAD` in the checkout names its commit.
 */
export function versionText(
  commit: string = BUILD_COMMIT,
  deno: string = Deno.version.deno,
): string {
  const c = commit !== "" ? commit : "none (source checkout: see git rev-parse HEAD)";
  return `wats ${VERSION}\ndeno ${deno}\ncommit ${c}\n`;
}
