/**
 * What a new post means to the heartbeat runner (docs/decisions/runner.md):
 * ignored (logged as a skip when a setting kept it from waking the agent),
 * remembered as feedback for the next run, or queued to wake the agent; why
 * a queued post waits; and whether the agent already answered one. The wake rules themselves are wake_rules.ts's.
 *
 * @module
 */

import type { BudgetBlock } from "./budget.ts";
import { type RunnerPost, type RunnerStore, threadOf } from "./ports.ts";
import type { PromptFeedback } from "./prompt.ts";
import type { QueuedEvent } from "./run_setup.ts";
import { classifyPost, type WakeContext, type WakeLimiter } from "./wake_rules.ts";

/** What one new post means. */
export type Intake =
  /** With `setting`, a setting kept it from waking the agent (a skip decision, skips.ts). */
  | { do: "ignore"; reason: string; setting?: string }
  | { do: "feedback"; reason: string; feedback: PromptFeedback }
  | { do: "queue"; queued: QueuedEvent };

/** Decides what `post` means; a wake takes one of its author's `agent.wakes_per_author_per_hour`. */
export function intake(
  post: RunnerPost,
  at: { ctx: WakeContext; limiter: WakeLimiter; now: number; wakesPerAuthor: number },
): Intake {
  const d = classifyPost(post, at.ctx);
  if (d.action === "ignore") {
    return {
      do: "ignore",
      reason: d.reason,
      ...(d.setting !== undefined ? { setting: d.setting } : {}),
    };
  }
  if (d.action === "feedback") {
    return { do: "feedback", reason: d.reason, feedback: feedbackOf(post) };
  }
  if (!at.limiter.take(post.author, at.now)) {
    return {
      do: "ignore",
      setting: "agent.wakes_per_author_per_hour",
      reason:
        `${d.reason}, but its author reached agent.wakes_per_author_per_hour = ${at.wakesPerAuthor}`,
    };
  }
  return { do: "queue", queued: { post, reason: d.reason, thread: d.thread } };
}

/** A feedback post as the next run's prompt lists it. */
export function feedbackOf(post: RunnerPost): PromptFeedback {
  return {
    id: post.id,
    kind: post.kind,
    author: post.author,
    parent: post.parent ?? threadOf(post),
  };
}

/**
 * Why a queued post waits, as a skip decision: its thread is paused (`loop`,
 * the loop detector's reason) or a budget is reached; undefined when it does not wait.
 */
export function heldBecause(
  q: QueuedEvent,
  loop: string | undefined,
  blocked: BudgetBlock | undefined,
): { setting: string; reason: string } | undefined {
  if (loop !== undefined) {
    return {
      setting: "agent.loop_max_exchanges",
      reason: `${q.reason} waits: thread ${q.thread} is paused (${loop})`,
    };
  }
  if (blocked === undefined) return undefined;
  return {
    setting: blocked.setting,
    reason: `${q.reason} waits: ${blocked.reason}; runs resume at ${
      new Date(blocked.resetsAt).toISOString()
    }`,
  };
}

/**
 * True when the agent already replied to post `id` (a run that did not
 * complete may have answered before it was cut off): offering it again
 * would make the agent answer twice.
 */
export function answered(
  store: Pick<RunnerStore, "threadNewest">,
  agentKey: string,
  id: string,
  thread: string,
): boolean {
  return store.threadNewest(thread, ANSWERED_LOOKBACK)
    .some((p) => p.author === agentKey && p.parent === id);
}

/** How many of a thread's newest posts are searched for the agent's reply to an event. */
const ANSWERED_LOOKBACK = 200;
