/**
 * Runs wats in a pseudo-terminal, as a person at a terminal does: util-linux
 * `script` gives the command a PTY for stdin, stdout and stderr. Only there does
 * Deno ask "Allow? [y/n/A]" for a permission a process lacks (without
 * `--no-prompt`); through pipes, as in every other test, it throws instead, so a
 * prompt that freezes wats is only seen here. Output is the terminal's: stdout
 * and stderr interleaved, lines ending in CRLF.
 *
 * Requires `--allow-run --allow-read --allow-write --allow-env` and `script`
 * (Debian's bsdutils; tests check `requireTool("script")`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { type RunningWats, startIsolated, watsCommand, type WatsOptions } from "./cli.ts";

/** What Deno prints when it asks for a permission: the first line, and the question. */
const PROMPT = /Deno requests|Allow\? \[y\/n/;

/** Quotes one word for `sh -c`. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Starts `wats <args>` in a PTY and leaves it running. Always `stop()` it (in `finally`). */
export function startWatsInPty(args: string[], opts: WatsOptions = {}): RunningWats {
  return startInPty([...watsCommand(), ...args], opts);
}

/** Starts any command in a PTY, isolated as {@linkcode startIsolated} does. */
export function startInPty(command: string[], opts: WatsOptions = {}): RunningWats {
  // -q: no "Script started" lines; -f: flush at once; -e: the command's exit
  // code; -c: the command; /dev/null: no typescript file.
  return startIsolated(["script", "-qfec", command.map(shellQuote).join(" "), "/dev/null"], {
    ...opts,
    env: { SHELL: "/bin/sh", ...opts.env },
  });
}

/** Runs `wats <args>` in a PTY to completion; fails if the terminal showed a permission prompt. */
export async function runWatsInPty(
  args: string[],
  opts: WatsOptions = {},
): Promise<{ code: number; output: string }> {
  const p = startWatsInPty(args, opts);
  await p.process.status;
  const r = await p.stop();
  const output = r.stdout.replaceAll("\r", "");
  assertNoPrompt(output);
  return { code: r.code, output };
}

/**
 * Reads the terminal's lines until one satisfies `match` and returns it; fails
 * as soon as a permission prompt shows instead (a prompt waits for an answer
 * that never comes).
 */
export async function waitForLineNoPrompt(
  p: RunningWats,
  match: (line: string) => boolean,
  timeoutMs?: number,
): Promise<string> {
  const line = await p.waitForLine((l) => PROMPT.test(l) || match(l), timeoutMs);
  assertNoPrompt(p.stdoutLines.join("\n"));
  return line;
}

/** Fails, showing the terminal, if it holds a permission prompt. */
export function assertNoPrompt(terminal: string): void {
  assert.ok(!PROMPT.test(terminal), `a permission prompt in the terminal:\n${terminal}`);
}
