/**
 * The Worker side of the launcher protocol: waits for the command's init, runs
 * it, reports the exit code. Errors become `error: …` on stderr, never a crash
 * trace, unless `--verbose`.
 *
 * @module
 */

import { UsageError, WatsError } from "../errors.ts";
import type { Command, FromWorker, ToWorker } from "./context.ts";
import { useTerminalSafeConsole } from "../io/terminal_text.ts";

/** Serves one command in this Worker. Call once, at the worker module's top level. */
export function serveCommand(command: Command): void {
  // Before the command prints anything: what it prints may come from anyone.
  useTerminalSafeConsole();
  const controller = new AbortController();
  const scope = self as unknown as {
    onmessage: ((e: MessageEvent<ToWorker>) => void) | null;
    postMessage(m: FromWorker): void;
  };
  scope.onmessage = (e) => {
    const msg = e.data;
    if (msg.type === "signal") {
      controller.abort(msg.signal);
      return;
    }
    const init = msg.init;
    Promise.resolve()
      .then(() => command({ ...init, signal: controller.signal }))
      .catch((err) => reportError(err, init.verbose))
      .then((code) => scope.postMessage({ type: "exit", code }));
  };
}

/** Prints an error as the user should see it and returns the exit code. */
export function reportError(err: unknown, verbose: boolean): number {
  if (err instanceof WatsError) {
    console.error(`error: ${err.message}`);
    if (err instanceof UsageError) console.error("Run with --help for usage.");
    if (verbose && err.cause !== undefined) console.error("cause:", err.cause);
    return err instanceof UsageError ? 2 : 1;
  }
  if (err instanceof Deno.errors.NotCapable) {
    console.error(`error: not permitted: ${(err as Error).message}`);
    console.error("This command's permissions do not allow it (see docs/permissions.md).");
    return 1;
  }
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
  if (verbose && err instanceof Error) console.error(err.stack);
  return 1;
}
