/**
 * The CLI's one way to the terminal: what a command answers goes to stdout (`print`, `out`),
 * what it says about itself — progress, warnings, errors — to stderr (`printErr`, `err`). The
 * only module under src/ that touches `console` (tools/lint_plugin.ts `no-console`), so where
 * output goes is decided once, and a command that takes an {@linkcode Output} is tested with
 * arrays instead of a terminal. The console it writes to is the Worker's (or the launcher's),
 * made terminal-safe first (src/io/terminal_text.ts `useTerminalSafeConsole`).
 *
 * @module
 */

/** Where a command writes. */
export interface Output {
  /** One answer line (or lines) to stdout. */
  out(text: string): void;
  /** One line to stderr: progress, a warning, an error. */
  err(text: string): void;
}

/** The console of this Worker (or of the launcher). */
export const consoleOutput: Output = {
  out: (text) => console.log(text),
  err: (text) => console.error(text),
};

/** Writes `text` to stdout: what the command answers. */
export function print(text: string): void {
  consoleOutput.out(text);
}

/** Writes `text` to stderr: progress, warnings and errors, never the answer. */
export function printErr(text: string): void {
  consoleOutput.err(text);
}
