/**
 * Small file-system helpers of the CLI.
 *
 * @module
 */

// Kept until src/cli/mcp.ts imports writeAllSync from src/io/write_all.ts itself
// (another change owns that file); then this line goes.
export { writeAllSync } from "../io/write_all.ts";

/** True when something (file, folder, socket) is at `path`. Requires `--allow-read` on it. */
export function pathExists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
