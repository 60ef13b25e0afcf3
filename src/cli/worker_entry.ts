/**
 * The Worker side of the launcher protocol: waits for the command's init, runs
 * it, reports the exit code. Errors become `error: …` on stderr, never a crash
 * trace, unless `--verbose`.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { UsageError, WatsError } from "../errors.ts";
import type { Command, FromWorker, ToWorker } from "./context.ts";
import { permissionErrorLine, type PermissionSide } from "./permission_error.ts";
import { useTerminalSafeConsole } from "../io/terminal_text.ts";
import { printErr } from "./output.ts";

/** Serves one command in this Worker. Call once, at the worker module's top level. */
export function serveCommand(command: Command): void {
  // Before the command prints anything: what it prints may come from anyone.
  useTerminalSafeConsole();
  const controller = new AbortController();
  const scope = self as unknown as {
    onmessage: ((e: MessageEvent<ToWorker>) => void) | null;
    postMessage(m: FromWorker): void;
  };
  let verbose = false;
  // A permission error outside the command's promise (a timer, a stream's
  // callback) would print Deno's stack trace: it ends the command with the
  // same one line instead. Other uncaught errors keep Deno's report.
  const uncaught = (err: unknown, event: Event) => {
    if (permissionErrorLine(err, "command") === undefined) return;
    event.preventDefault();
    scope.postMessage({ type: "exit", code: reportError(err, verbose) });
  };
  self.addEventListener("error", (e) => uncaught((e as ErrorEvent).error, e));
  self.addEventListener(
    "unhandledrejection",
    (e) => uncaught((e as PromiseRejectionEvent).reason, e),
  );
  scope.onmessage = (e) => {
    const msg = e.data;
    if (msg.type === "signal") {
      controller.abort(msg.signal);
      return;
    }
    const init = msg.init;
    verbose = init.verbose;
    Promise.resolve()
      .then(() => command({ ...init, signal: controller.signal }))
      .catch((err) => reportError(err, init.verbose))
      .then((code) => scope.postMessage({ type: "exit", code }));
  };
}

/**
 * Prints an error as the user should see it and returns the exit code. `side`:
 * whether the error came from a command's Worker or from the launcher itself.
 */
export function reportError(
  err: unknown,
  verbose: boolean,
  side: PermissionSide = "command",
): number {
  if (err instanceof WatsError) {
    // One line: a usage mistake's message names the command's --help itself (src/cli/usage.ts).
    printErr(`error: ${err.message}`);
    if (verbose && err.cause !== undefined) {
      printErr(`cause: ${Deno.inspect(err.cause, { colors: false })}`);
    }
    return err instanceof UsageError ? 2 : 1;
  }
  const denied = permissionErrorLine(err, side);
  if (denied !== undefined) {
    printErr(denied);
    if (verbose && err instanceof Error) printErr(err.stack ?? err.message);
    return 1;
  }
  printErr(`error: ${errorMessage(err)}`);
  if (verbose && err instanceof Error) printErr(err.stack ?? err.message);
  return 1;
}
