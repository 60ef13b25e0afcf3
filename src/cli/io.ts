/**
 * Small file-system helpers of the CLI.
 *
 * @module
 */

/** True when something (file, folder, socket) is at `path`. Requires `--allow-read` on it. */
export function pathExists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
