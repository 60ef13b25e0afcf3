/**
 * Desktop notifications for what the review queue holds (agent.notify): a
 * draft, or a coding agent's permission request or call in doubt
 * (docs/acp.md). notify-send on Linux, osascript on macOS. A missing tool is
 * logged once, never an error: a notification is a convenience, the queue is
 * the record.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { IN_DOUBT } from "../contracts/coding_agents.ts";
import type { HeldEvent } from "../contracts/node_events.ts";
import type { PendingDraft } from "../contracts/views.ts";
import { clip, oneLine } from "../posts/fence.ts";
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
            `${program} cannot run (${errorMessage(err)}); install it or turn agent.notify off`,
          ),
      );
    },
  };
}

function appleString(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** The longest body a held item's notification has, in characters. */
export const NOTICE_BODY_MAX = 160;

/**
 * The title and one-line body that tell a person something waits in the
 * review queue. Everything in the body is the agent's or the coding agent's
 * text: made one line by `oneLine` and cut to {@linkcode NOTICE_BODY_MAX}, the
 * locations first, so the request and its work always show.
 */
export function heldNotice(d: PendingDraft): { title: string; body: string } {
  const p = d.permission;
  if (p === undefined) {
    return {
      title: "wats: a draft waits for review",
      body: clip(oneLine(`${d.kind} ${d.id}: ${d.text}`), NOTICE_BODY_MAX),
    };
  }
  const request = clip(oneLine(`${p.harness}/${p.kind}`), 40);
  const work = ` (work ${clip(oneLine(p.work), 40)})`;
  // An execute request is about its command: named before its locations (usually none).
  const command = p.kind === "execute" ? commandOf(p.arguments) : undefined;
  const where = oneLine([...(command ? [`\`${command}\``] : []), ...p.locations].join(" "));
  const room = NOTICE_BODY_MAX - request.length - work.length - 1;
  return {
    title: "wats: a coding agent waits for a decision",
    body: where === "" ? `${request}${work}` : `${request} ${clip(where, room)}${work}`,
  };
}

/** The command line an execute request carries in its arguments (`rawInput.command`), if any. */
function commandOf(args: unknown): string | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const c = (args as { command?: unknown }).command;
  if (typeof c === "string") return c;
  return Array.isArray(c) && c.every((x) => typeof x === "string") ? c.join(" ") : undefined;
}

/** What `onHeld` runs when agent.notify is on: a notification for each held item. */
export function heldNotifier(notifier: Notifier): (d: PendingDraft) => void {
  return (d) => {
    const { title, body } = heldNotice(d);
    notifier.notify(title, body);
  };
}

/** The node event that says `d` now waits in the review queue (notify targets listen for it). */
export function heldEvent(d: PendingDraft): HeldEvent {
  return {
    event: "held",
    id: d.id,
    what: d.permission === undefined
      ? "draft"
      : d.permission.kind === IN_DOUBT
      ? "in_doubt"
      : "permission",
    summary: heldNotice(d).body,
  };
}
