/**
 * What makes the dashboard live (issue 19 item 4): one watch of the daemon's
 * events over mcp.sock (`{"wats":"watch"}`), kept open while `wats ui` runs
 * and opened again after the daemon restarts; the newest of them as the
 * overview's activity timeline; and each one handed to the open pages as a
 * Server-Sent Event, so they redraw what changed without polling.
 *
 * @module
 */

import { usd } from "../money.ts";

/** One line of the activity timeline. */
export interface Activity {
  /** Milliseconds since the epoch, when `wats ui` heard of it. */
  at: number;
  /** The node event's name (`run_started`, `post_stored`, …). */
  event: string;
  /** What happened, in a few words. */
  text: string;
  /** A dashboard path about it (the run, the thread, the review queue). */
  href?: string;
}

/** Watches the daemon: resolves when the watch ends, throws when no daemon answers. */
export type WatchFn = (
  onEvent: (event: Record<string, unknown>) => void,
  signal: AbortSignal,
  onReady: () => void,
) => Promise<void>;

/** How many activity lines are kept. */
export const ACTIVITY_KEPT = 50;
/** Live pages served at once; one more is refused (each holds a connection). */
export const MAX_LIVE_PAGES = 16;

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 10_000;

/** The daemon's events, kept and handed on. */
export class LiveFeed {
  readonly #watch: WatchFn;
  readonly #now: () => number;
  readonly #activity: Activity[] = [];
  readonly #pages = new Set<(a: Activity) => void>();
  #connected = false;

  constructor(watch: WatchFn, now: () => number = Date.now) {
    this.#watch = watch;
    this.#now = now;
  }

  /**
   * Watches until `signal` aborts; after the daemon goes away, tries again
   * with a growing wait (a stopped daemon costs a connect every 10 s).
   */
  async run(signal: AbortSignal): Promise<void> {
    let wait = RETRY_MIN_MS;
    while (!signal.aborted) {
      try {
        await this.#watch((e) => this.take(e), signal, () => {
          this.#connected = true;
          wait = RETRY_MIN_MS;
        });
      } catch {
        // No daemon (or it refused): try again later.
      } finally {
        this.#connected = false;
      }
      if (signal.aborted) return;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, wait);
        signal.addEventListener("abort", () => {
          clearTimeout(t);
          resolve();
        }, { once: true });
      });
      wait = Math.min(RETRY_MAX_MS, wait * 2);
    }
  }

  /** Records one event and hands it to every open page. */
  take(event: Record<string, unknown>): void {
    const a = describe(event, this.#now());
    if (a === undefined) return;
    this.#activity.unshift(a);
    this.#activity.length = Math.min(this.#activity.length, ACTIVITY_KEPT);
    for (const page of [...this.#pages]) page(a);
  }

  /** True while the daemon's events reach the feed. */
  get connected(): boolean {
    return this.#connected;
  }

  /** The newest activity first. */
  activity(): readonly Activity[] {
    return this.#activity;
  }

  /** Adds an open page; undefined when {@linkcode MAX_LIVE_PAGES} are open already. */
  open(page: (a: Activity) => void): (() => void) | undefined {
    if (this.#pages.size >= MAX_LIVE_PAGES) return undefined;
    this.#pages.add(page);
    return () => this.#pages.delete(page);
  }
}

/** An event as one timeline line; undefined for events the timeline leaves out. */
export function describe(e: Record<string, unknown>, at: number): Activity | undefined {
  const s = (k: string) => (typeof e[k] === "string" ? e[k] as string : "");
  const short = (k: string) => s(k).slice(0, 12);
  const event = s("event");
  switch (event) {
    case "post_stored":
      return {
        at,
        event,
        text: `${s("kind")} ${short("id")} ${s("source") === "local" ? "posted here" : "arrived"}`,
        href: `/posts/thread/${s("id")}`,
      };
    case "post_rejected":
      return { at, event, text: `a post was refused (${s("code")})` };
    case "run_started":
      return {
        at,
        event,
        text: `the agent woke: run ${s("run")} started`,
        href: `/runs/${s("run")}`,
      };
    case "run_ended": {
      const cost = typeof e.cost_usd === "number" ? ` · ${usd(e.cost_usd)}` : "";
      return {
        at,
        event,
        text: `run ${s("run")} ended: ${s("status")}${cost}`,
        href: `/runs/${s("run")}`,
      };
    }
    case "halted":
      return {
        at,
        event,
        text: `agents halted${s("reason") && `: ${s("reason")}`}`,
        href: "/halt",
      };
    case "held": {
      const what = s("what") === "permission"
        ? "a coding agent's request"
        : s("what") === "in_doubt"
        ? "a call in doubt"
        : "a draft";
      return { at, event, text: `${what} waits for review: ${s("summary")}`, href: "/review" };
    }
    case "ask_answered":
      return {
        at,
        event,
        text: `your ask ${short("ask")} was answered by ${short("by")}…`,
        href: `/posts/thread/${s("ask")}`,
      };
    case "ask_no_taker":
      return {
        at,
        event,
        text: `no agent took your ask ${s("title") ? `"${s("title")}"` : short("ask")}`,
        href: `/posts/thread/${s("ask")}`,
      };
    case "budget_paused":
      return { at, event, text: `the agent paused: ${s("reason")}`, href: "/" };
    case "resumed":
      return { at, event, text: "agents resumed", href: "/halt" };
    case "acp_permission":
      return {
        at,
        event,
        text: `${s("harness")} asked to ${s("request")}: ${s("verdict")}`,
        ...(s("verdict") === "ask" ? { href: "/review" } : {}),
      };
    case "acp_sweep": {
      const removed = Array.isArray(e.removed)
        ? e.removed.filter((d): d is string => typeof d === "string")
        : [];
      // Named by work (the folder's last part), so a work that went is never silent.
      const names = removed.map((d) => d.split("/").at(-1) ?? d);
      return removed.length > 0
        ? {
          at,
          event,
          text: `the sweep removed ${removed.length} work(s) already in their base: ${
            names.slice(0, 10).join(", ")
          }${names.length > 10 ? `, and ${names.length - 10} more` : ""}`,
          href: "/works",
        }
        : undefined;
    }
    case "work_changed":
      return {
        at,
        event,
        text: `work ${s("branch").split("/").at(-1)} (${s("checkout")}): ${s("what")}`,
        href: `/works/${encodeURIComponent(s("work"))}`,
      };
    case "started":
      return { at, event, text: "the node started" };
    case "stopped":
      return { at, event, text: `the node stopped${s("reason") && `: ${s("reason")}`}` };
    case "":
      return undefined;
    default:
      // A newer event this page does not know yet: named, so it is not lost.
      return { at, event, text: event.replaceAll("_", " ") };
  }
}

/** One Server-Sent Event carrying `a` (`event: activity`, JSON data on one line). */
export function sseMessage(a: Activity): string {
  return `event: activity\ndata: ${JSON.stringify(a)}\n\n`;
}
