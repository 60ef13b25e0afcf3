/**
 * Desktop notifications for drafts held for review (agent.notify): notify-send
 * on Linux, osascript on macOS. A missing tool is logged once, never an error:
 * a notification is a convenience, the queue is the record.
 *
 * @module
 */

import type { CommandRunner } from "../runner/spawn.ts";

/** The program that shows notifications on `os`, or undefined where none is known. */
export function notifierProgram(os: string): string | undefined {
  return os === "darwin" ? "osascript" : os === "linux" ? "notify-send" : undefined;
}

/** Sends notifications; `notify` never throws and never waits. */
export interface Notifier {
  notify(title: string, body: string): void;
}

/** The real notifier. Requires `--allow-run` for `notifierProgram(os)`. */
export function desktopNotifier(opts: {
  os: string;
  run: CommandRunner;
  warn: (message: string) => void;
}): Notifier {
  const program = notifierProgram(opts.os);
  let warned = false;
  const warnOnce = (why: string) => {
    if (warned) return;
    warned = true;
    opts.warn(`agent.notify: ${why}; drafts still wait in \`wats agent pending\``);
  };
  return {
    notify(title, body) {
      if (program === undefined) {
        warnOnce(`no notification program is known on ${opts.os}`);
        return;
      }
      const args = program === "osascript"
        ? ["-e", `display notification ${appleString(body)} with title ${appleString(title)}`]
        : ["--app-name=wats", title, body];
      opts.run(program, args).then(
        (r) => {
          if (r.code !== 0) warnOnce(`${program} failed (exit ${r.code}): ${r.stderr.trim()}`);
        },
        (err) =>
          warnOnce(
            `${program} cannot run (${
              (err as Error).message
            }); install it or turn agent.notify off`,
          ),
      );
    },
  };
}

function appleString(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
