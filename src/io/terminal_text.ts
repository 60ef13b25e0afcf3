/**
 * Text made safe for a terminal. Commands print strings from outside the
 * process (remote posts, drafts, a coding agent's request, a relay's NOTICE,
 * transcripts); a control sequence in them would act on the person's terminal
 * (OSC 52 writes the clipboard, `ESC [2K` erases a line, a bidi override
 * reorders what a line shows). So every line a command prints goes through
 * `terminalSafe` at one place: the console of each command's Worker and of the
 * launcher (`useTerminalSafeConsole`), which `log.ts` and every `console.*`
 * call write through (docs/decisions/terminal.md).
 *
 * @module
 */

/**
 * C0 controls but tab and newline, DEL, C1 controls, the bidi embeddings,
 * overrides, isolates and marks, and the Unicode line and paragraph
 * separators: each would act on a terminal or hide what a line says.
 */
const UNSAFE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/**
 * `text` with every character that could act on a terminal shown escaped
 * instead (`\x1b`, `\x0d`, `\u202e`); newline and tab are kept, since what a
 * command prints is often several lines. Safe to apply to text already safe.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}

/** `\xHH` below U+0100, `\uHHHH` above. */
function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** What `terminalSafe` escapes, and newline and tab as well. */
const UNSAFE_IN_LINE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/**
 * A one-line field (a title, a reason, a path) for a terminal: like
 * `terminalSafe`, and newline and tab shown escaped too, so the field cannot
 * start a line that reads as another field.
 */
export function terminalLine(text: string): string {
  return text.replace(UNSAFE_IN_LINE, escapeChar);
}

/** The `console` methods that print: every one goes through `terminalSafe`. */
const PRINTING = ["log", "info", "debug", "warn", "error"] as const;

/** Set on a console already made safe, so installing twice wraps once. */
const SAFE = Symbol.for("wats.terminalSafeConsole");

/**
 * Makes this Worker's (or the launcher's) `console` print only terminal-safe
 * text: arguments are joined as `console.log` joins them (strings as they
 * are, anything else inspected), escaped, then printed as one string, so no
 * `%` directive and no object's inspection can bring a raw control through.
 */
export function useTerminalSafeConsole(target: Console = console): void {
  const marked = target as Console & { [SAFE]?: true };
  if (marked[SAFE]) return;
  for (const name of PRINTING) {
    const print = target[name].bind(target);
    target[name] = (...args: unknown[]) => print(terminalSafe(joinArgs(args)));
  }
  marked[SAFE] = true;
}

function joinArgs(args: unknown[]): string {
  return args.map((a) => typeof a === "string" ? a : Deno.inspect(a, { colors: false })).join(
    " ",
  );
}

/**
 * JSON text (one `JSON.stringify` result) whose every unsafe character is a
 * `\uXXXX` escape: JSON escapes C0 controls itself but passes DEL, C1 and bidi
 * characters raw, and `wats node` prints its events where a person may read
 * them. It parses back to the same value.
 */
export function jsonTerminalSafe(json: string): string {
  return json.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
