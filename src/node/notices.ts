/**
 * What a notification away from the desk says (docs/notifications.md): which
 * node events are worth one, what waits, and the `wats` command and dashboard
 * path that answer it. Pure: the sender (notify_targets.ts) turns a notice into
 * each target's payload. A notice never holds the login token, the session
 * file's path or any secret: only the event's own words, on one line.
 *
 * @module
 */

import type { NotifyEvent } from "../config/notify_tables.ts";
import type { NodeEvent } from "../contracts/node_events.ts";
import { clip, oneLine } from "../posts/fence.ts";

/** One notification, whatever the target. */
export interface Notice {
  event: NotifyEvent;
  /** Unique per notice, the same on every attempt: receivers drop repeats by it. */
  id: string;
  title: string;
  /** What waits, one line. */
  text: string;
  /** The `wats` command that answers it. */
  command: string;
  /**
   * The dashboard page that answers it (`wats ui`), a path: the address is the
   * person's. A `/go/…` path: it opens the page in the browser's dashboard
   * session, whose own pages live under a random path (src/ui/server.ts).
   */
  path: string;
  /** When the node made it (ISO 8601). */
  at: string;
  /** The node's id. */
  node: string;
}

/** The longest `text` of a notice: a line on a phone's lock screen. */
export const NOTICE_TEXT_MAX = 200;

/** How runs end that a person should hear about: not stopped, halted or interrupted (told otherwise or their own act). */
const FAILED = new Set(["error", "timeout"]);

/**
 * The notice `e` calls for, or undefined when it calls for none. `id` is a
 * fresh unique id; `at` the time in ms.
 */
export function noticeOf(
  e: NodeEvent,
  ctx: { node: string; at: number; id: string },
): Notice | undefined {
  const base = { id: ctx.id, node: ctx.node, at: new Date(ctx.at).toISOString() };
  const line = (s: string) => clip(oneLine(s), NOTICE_TEXT_MAX);
  switch (e.event) {
    case "held": {
      const approve = `wats agent approve ${e.id}`;
      if (e.what === "draft") {
        return {
          ...base,
          event: "draft",
          title: "wats: a draft waits for review",
          text: line(e.summary),
          command: approve,
          path: "/go/review",
        };
      }
      return {
        ...base,
        event: e.what,
        title: e.what === "in_doubt"
          ? "wats: a coding agent's call is in doubt"
          : "wats: a coding agent waits for a decision",
        text: line(e.summary),
        command: approve,
        path: "/go/review",
      };
    }
    case "halted":
      return {
        ...base,
        event: "halted",
        title: "wats: the agent is halted",
        text: line(e.reason === "" ? "halted, no reason given" : `halted: ${e.reason}`),
        command: "wats resume",
        path: "/go/halt",
      };
    case "budget_paused":
      return {
        ...base,
        event: "budget_paused",
        title: "wats: agent runs paused by the budget",
        text: line(`${e.reason}; they resume at ${new Date(e.until).toISOString()}`),
        command: "wats status",
        path: "/go/",
      };
    case "run_ended":
      if (!FAILED.has(e.status)) return undefined;
      return {
        ...base,
        event: "run_failed",
        title: `wats: an agent run ended with ${e.status}`,
        text: line(`run ${e.run}: ${e.error ?? e.status}`),
        command: `wats agent logs --run ${e.run}`,
        path: `/go/runs/${e.run}`,
      };
    case "ask_no_taker":
      return {
        ...base,
        event: "no_taker",
        title: "wats: no agent took your ask",
        text: line(
          `${e.title === "" ? `ask ${e.ask}` : `"${e.title}"`}: nobody answered or claimed it by ${
            new Date(e.since).toISOString()
          }`,
        ),
        command: `wats thread ${e.ask}`,
        path: `/go/posts/thread/${e.ask}`,
      };
    case "work_changed":
      // A call that ended with commits to review; a commit mid-call is no notice.
      if (!e.what.startsWith("call ended") || e.commits === undefined || e.commits === 0) {
        return undefined;
      }
      return {
        ...base,
        event: "work_ready",
        title: "wats: a coding agent's work is ready for review",
        text: line(
          `${e.commits} commit(s) on ${e.branch} in checkout ${e.checkout} (${e.what}): ` +
            "merge, push, send back or discard it",
        ),
        command: `wats work show ${e.work}`,
        path: `/go/works/${e.work}`,
      };
    default:
      return undefined;
  }
}
