/**
 * What the heartbeat runner owes a future run, kept in store meta across
 * restarts (docs/decisions/runner.md): the ids of the queued events (paused
 * threads' and the run in progress's included), of the asks dropped because
 * another agent claimed them (so a claim that lapses while the daemon is down
 * still wakes the agent), and of the feedback not yet told; and the tries of the events runs
 * that could not act gave back (retry.ts), with the newest give-ups. They are classified again
 * when they are loaded.
 *
 * @module
 */

import { answered, feedbackOf } from "./intake.ts";
import type { RunnerLog, RunnerStore } from "./ports.ts";
import type { PromptFeedback } from "./prompt.ts";
import type { QueuedEvent } from "./run_setup.ts";
import { classifyPost, type WakeContext } from "./wake_rules.ts";
import type { RetryNote, SavedTries } from "./retry.ts";

/** The meta key of what is owed to a future run: queued events and feedback (JSON). */
export const PENDING_META_KEY = "runner.pending";

/** The post ids owed to a future run. */
export interface PendingState {
  events: string[];
  feedback: string[];
  /** Asks dropped because another author claimed them (claims.ts); absent in older saves. */
  claimed?: string[];
  /** Each given-back event's tries, and when a waiting one goes again (retry.ts). */
  retries?: SavedTries[];
  /** The newest events given up after their tries. */
  gave_up?: RetryNote[];
}

/** Saves what is owed; a failure is logged, not thrown (the run goes on). */
export function savePending(
  store: Pick<RunnerStore, "setMeta">,
  state: PendingState,
  log: RunnerLog,
): void {
  try {
    store.setMeta(PENDING_META_KEY, JSON.stringify(state));
  } catch (err) {
    log.warn(`cannot save the runner's queue: ${(err as Error).message}`);
  }
}

/** Reads what a previous daemon owed; nothing saved, or a value that does not parse, owes nothing. */
export function loadPending(
  store: Pick<RunnerStore, "getMeta">,
  log: RunnerLog,
): PendingState | undefined {
  try {
    const v = JSON.parse(store.getMeta(PENDING_META_KEY) ?? "null");
    if (!v || !Array.isArray(v.events) || !Array.isArray(v.feedback)) return undefined;
    const ids = (a: unknown[]) => a.filter((id: unknown) => typeof id === "string") as string[];
    return {
      events: ids(v.events),
      feedback: ids(v.feedback),
      ...(Array.isArray(v.claimed) ? { claimed: ids(v.claimed) } : {}),
      ...(Array.isArray(v.retries) ? { retries: v.retries.filter(isSavedTries) } : {}),
      ...(Array.isArray(v.gave_up) ? { gave_up: v.gave_up.filter(isRetryNote) } : {}),
    };
  } catch {
    log.warn(`the runner's saved queue (${PENDING_META_KEY}) does not parse; it is dropped`);
    return undefined;
  }
}

/**
 * What a previous daemon owed, classified again (the settings may have changed
 * since it was queued): the events the agent has not answered yet, the asks
 * dropped for a claim that it has not answered either (the caller decides
 * their claim again), those waiting for their next try (with their saved tries), and the
 * feedback. Posts no longer in the store are dropped.
 */
export function reloadPending(at: {
  store: Pick<RunnerStore, "getMeta" | "get" | "threadNewest">;
  log: RunnerLog;
  wake: WakeContext;
  agentKey: string;
}): {
  events: QueuedEvent[];
  feedback: PromptFeedback[];
  claimed: QueuedEvent[];
  retrying: QueuedEvent[];
  retries: SavedTries[];
  gaveUp: RetryNote[];
} {
  const events: QueuedEvent[] = [];
  const feedback: PromptFeedback[] = [];
  const claimed: QueuedEvent[] = [];
  const retrying: QueuedEvent[] = [];
  const state = loadPending(at.store, at.log);
  const wasClaimed = new Set(state?.claimed ?? []);
  const waiting = new Set((state?.retries ?? []).flatMap((r) => r.at !== undefined ? [r.id] : []));
  const all = state ? [...state.events, ...wasClaimed, ...waiting, ...state.feedback] : [];
  for (const id of new Set(all)) {
    const post = at.store.get(id);
    if (!post) continue;
    const d = classifyPost(post, at.wake);
    if (d.action === "wake" && !answered(at.store, at.agentKey, post.id, d.thread)) {
      const into = wasClaimed.has(id) ? claimed : waiting.has(id) ? retrying : events;
      into.push({ post, reason: d.reason, thread: d.thread });
    } else if (d.action === "feedback") {
      feedback.push(feedbackOf(post));
    }
  }
  return {
    events,
    feedback,
    claimed,
    retrying,
    retries: state?.retries ?? [],
    gaveUp: state?.gave_up ?? [],
  };
}

function isSavedTries(v: unknown): v is SavedTries {
  const r = v as SavedTries;
  return typeof r === "object" && r !== null && typeof r.id === "string" &&
    Number.isInteger(r.tries) && (r.at === undefined || typeof r.at === "number");
}

function isRetryNote(v: unknown): v is RetryNote {
  const n = v as RetryNote;
  return typeof n === "object" && n !== null && typeof n.what === "string" &&
    typeof n.tries === "number" && typeof n.at === "number" && typeof n.error === "string";
}
