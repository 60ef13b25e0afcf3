/**
 * The agent's open threads, for a heartbeat with nothing new (issue 13): the
 * threads whose newest post is the agent's own claim, clarify, progress or
 * offer. Nobody has posted after it (a reply to it would have woken the agent),
 * so the next step is the agent's: deliver or release claimed work, or give up
 * on a clarify nobody answered.
 * Listing their ids lets a heartbeat prompt stay small (no thread text, no feed)
 * and still let the agent follow up with one `thread` call.
 *
 * @module
 */

import type { RunnerPost } from "./ports.ts";
import { threadOf } from "./ports.ts";

/** A thread that may need a follow-up from the agent. */
export interface OpenThread {
  /** The thread's root id. */
  root: string;
  /** The agent's post that is the thread's newest. */
  id: string;
  kind: string;
  /** Seconds since the epoch (the post's own clock). */
  createdAt: number;
}

/** Kinds that leave the next step to their author. */
export const FOLLOW_UP_KINDS: ReadonlySet<string> = new Set([
  "claim",
  "clarify",
  "progress",
  "offer",
]);

/** What finding open threads reads from the store. */
export interface OpenThreadStore {
  /** The agent's newest posts, newest first. */
  agentPosts(limit: number): RunnerPost[];
  /** A thread's root and replies, newest first by seq, grafted replies left out. */
  threadNewest(rootId: string, limit: number): RunnerPost[];
}

/**
 * The agent's open threads among its `scan` newest posts, newest first, at
 * most `max`.
 */
export function openThreads(
  store: OpenThreadStore,
  agentKey: string,
  opts: { scan?: number; max?: number } = {},
): OpenThread[] {
  const out: OpenThread[] = [];
  const seen = new Set<string>();
  for (const post of store.agentPosts(opts.scan ?? 50)) {
    const root = threadOf(post);
    if (seen.has(root)) continue;
    seen.add(root);
    const newest = store.threadNewest(root, 1)[0];
    if (newest === undefined || newest.id !== post.id) continue;
    if (newest.author !== agentKey || !FOLLOW_UP_KINDS.has(newest.kind)) continue;
    out.push({ root, id: post.id, kind: post.kind, createdAt: post.createdAt });
    if (out.length >= (opts.max ?? 5)) break;
  }
  return out;
}
