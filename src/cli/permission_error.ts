/**
 * A permission error as one `error:` line that names the missing grant and
 * what to do, never Deno's text with its stack trace.
 *
 * wats runs with `--no-prompt` (`LAUNCHER_FLAGS`), so one step outside a grant
 * throws `NotCapable` instead of asking the person at the terminal; this is
 * what they read then. Who lacks the grant decides what to do: the launcher
 * started without its flags (start it as documented), or a command's Worker
 * stepping outside its declared set (a bug in wats: report it).
 *
 * @module
 */

import { LAUNCHER_FLAGS } from "./permissions.ts";

/** Who lacked the permission: the launcher process, or a command's Worker. */
export type PermissionSide = "launcher" | "command";

/**
 * The `error: …` line for a Deno or OS permission error, or undefined for any
 * other error. Accepts an `Error`, or the text of one that crossed from a
 * Worker (`Uncaught NotCapable: Requires run access to "git", …`).
 */
export function permissionErrorLine(err: unknown, side: PermissionSide): string | undefined {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  if (err instanceof Deno.errors.NotCapable || /\bNotCapable\b/.test(text)) {
    return `error: wats lacks ${missingGrant(text)}: ${WHAT_TO_DO[side]}`;
  }
  if (err instanceof Deno.errors.PermissionDenied || /\bPermissionDenied\b/.test(text)) {
    // The OS refused (a file's owner or mode), not Deno: `chmod`, not a flag.
    const what = text.match(/\(os error \d+\):?\s*(.*)$/)?.[1]?.trim();
    return `error: the system denied access${what ? ` (${what})` : ""}: check the owner and ` +
      `mode of that path (ls -l), or run wats as the user who owns it`;
  }
  return undefined;
}

const WHAT_TO_DO: Record<PermissionSide, string> = {
  launcher: `start wats with \`deno task wats\` or the compiled \`wats\`, or run main.ts with ` +
    `deno.json's flags (${LAUNCHER_FLAGS.join(" ")})`,
  command: `this command is not granted it (docs/permissions.md lists each command's grants): ` +
    `report it as a bug, with the output of the same command with --verbose`,
};

/** `run permission for "git"` from Deno's `Requires run access to "git", …`. */
function missingGrant(text: string): string {
  const m = text.match(/Requires (\w+) access(?: to "([^"]*)")?/);
  if (m === null) return "the permissions its commands need"; // "Can't escalate parent thread permissions"
  return m[2] === undefined ? `${m[1]} permission` : `${m[1]} permission for "${m[2]}"`;
}
