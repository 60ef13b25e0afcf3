/**
 * A harness that cannot start, said when the daemon starts (issue 29, item
 * 8): the launcher checks before it starts the daemon (it may read every
 * path; the daemon's own permissions may not cover a harness's files), and
 * the daemon checks again what it can read.
 *
 * Requires `--allow-read` of the paths checked; a path that may not be read is
 * not judged.
 *
 * @module
 */

import type { HarnessConfig } from "./acp_tables.ts";

/**
 * Why the harness `h` cannot start, when its command or an absolute path in
 * its args names a file that is not there (a moved npm install, a typo): said
 * at daemon start with the fix, not at the first call. A path the daemon may
 * not read is not judged (the call's start will say).
 */
export async function missingHarnessFile(h: HarnessConfig): Promise<string | undefined> {
  const fix = `fix [harnesses.${h.name}] in config.toml (or set enabled = false)`;
  const gone = async (p: string) => {
    try {
      await Deno.stat(p);
      return false;
    } catch (err) {
      return err instanceof Deno.errors.NotFound;
    }
  };
  // A bare name is looked up on the daemon's PATH when the harness starts (its own,
  // trusted PATH, not this process's): only a file the table names is judged here.
  if (h.command.includes("/") && await gone(h.command)) {
    return `[harnesses.${h.name}] command ${h.command} does not exist: ${fix}`;
  }
  for (const a of h.args) {
    if (a.startsWith("/") && await gone(a)) {
      return `[harnesses.${h.name}] args name ${a}, which does not exist: ${fix}`;
    }
  }
  return undefined;
}
