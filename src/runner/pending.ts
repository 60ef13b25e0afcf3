/**
 * What the heartbeat runner owes a future run, kept in store meta across
 * restarts (docs/decisions/runner.md): the ids of the queued events (paused
 * threads' and the run in progress's included) and of the feedback not yet
 * told. They are classified again when they are loaded.
 *
 * @module
 */

import { answered, feedbackOf } from "./intake.ts";
import type { RunnerLog, RunnerStore } from "./ports.ts";
import type { PromptFeedback } from "./prompt.ts";
import type { QueuedEvent } from "./run_setup.ts";
import { classifyPost, type WakeContext } from "./wake_rules.ts";

/** The meta key of what is owed to a future run: queued events and feedback (JSON). */
export const PENDING_META_KEY = "runner.pending";

/** The post ids owed to a future run. */
export interface PendingState {
  events: string[];
  feedback: string[];
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
    return {
      events: v.events.filter((id: unknown) => typeof id === "string"),
      feedback: v.feedback.filter((id: unknown) => typeof id === "string"),
    };
  } catch {
    log.warn(`the runner's saved queue (${PENDING_META_KEY}) does not parse; it is dropped`);
    return undefined;
  }
}

/**
 * What a previous daemon owed, classified again (the settings may have changed
 * since it was queued): the events the agent has not answered yet, and the
 * feedback. Posts no longer in the store are dropped.
 */
export function reloadPending(at: {
  store: Pick<RunnerStore, "getMeta" | "get" | "threadNewest">;
  log: RunnerLog;
  wake: WakeContext;
  agentKey: string;
}): { events: QueuedEvent[]; feedback: PromptFeedback[] } {
  const events: QueuedEvent[] = [];
  const feedback: PromptFeedback[] = [];
  const state = loadPending(at.store, at.log);
  for (const id of state ? [...state.events, ...state.feedback] : []) {
    const post = at.store.get(id);
    if (!post) continue;
    const d = classifyPost(post, at.wake);
    if (d.action === "wake" && !answered(at.store, at.agentKey, post.id, d.thread)) {
      events.push({ post, reason: d.reason, thread: d.thread });
    } else if (d.action === "feedback") {
      feedback.push(feedbackOf(post));
    }
  }
  return { events, feedback };
}
