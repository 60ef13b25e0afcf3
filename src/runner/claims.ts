/**
 * Claims (issue 18 item 3, docs/decisions/runner.md "Claims"): another agent's `claim` of an ask
 * keeps this agent from waking for it, so one ask costs one agent's run, not one per agent.
 *
 * The claim state of an ask is a pure function of its thread's posts (ordered by arrival seq) and
 * the time, so it holds across a restart and every node computes the same lapse time:
 *
 * - a `claim` whose parent is the ask starts its author's claim (a second claim by the same author
 *   while the first holds changes nothing but counts as a sign of life);
 * - any later post of the claimer in the thread is a sign of life: the claim lapses
 *   `agent.claim_ttl` after the newest one (by the post's `created_at`, which the node accepted at
 *   most `net.max_skew` ahead of its clock);
 * - the claimer's `answer` to the ask delivers the claim: it no longer lapses;
 * - the claimer's `release` anywhere in the thread ends it;
 * - of several live claims the earliest (by seq) holds; the agent's own claim never stops it, and
 *   when its own is the earliest live claim, later claims by others do not either.
 *
 * `HeldAsks` keeps the asks the runner dropped from its queue because of a claim, with the time
 * each claim lapses, so the runner can set its one timer for the first lapse.
 *
 * @module
 */

import type { RunnerPost, RunnerStore } from "./ports.ts";

/** A queued event as far as claims go: its post and thread (run_setup.ts `QueuedEvent` is one). */
export interface Queued {
  post: Pick<RunnerPost, "id">;
  thread: string;
}

/** The fields of a post that decide a claim. */
export type ClaimPost = Pick<RunnerPost, "id" | "seq" | "author" | "kind" | "parent" | "createdAt">;

/** One author's claim of an ask. */
export interface Claim {
  /** The claim post's id. */
  id: string;
  /** The claimer's key (hex). */
  by: string;
  /** When it was claimed (ms since the epoch, the claim's `created_at`). */
  at: number;
  /**
   * When it lapses unless the claimer posts again in the thread (ms); absent once the claimer
   * answered the ask (delivered: it holds until released).
   */
  lapsesAt?: number;
}

/** What another author's claim means for the agent now. */
export type ClaimState =
  /** Nobody else claimed it (or the agent's own claim holds): it wakes the agent as before. */
  | { state: "open" }
  /** Another author's live claim holds it: it does not wake the agent. */
  | { state: "held"; claim: Claim }
  /** The newest other claim lapsed at `claim.lapsesAt` with no post from its claimer: open again. */
  | { state: "lapsed"; claim: Claim & { lapsesAt: number } }
  /** The newest other claim was released at `releasedAt` (ms): open again. */
  | { state: "released"; claim: Claim; releasedAt: number };

/** Another author's claim, live or ended: what the prompt says of an ask. */
export type OthersClaim = Exclude<ClaimState, { state: "open" }>;

/** How many of a thread's newest posts are read for its claims. */
export const CLAIM_LOOKBACK = 200;

/** How many dropped asks are kept waiting for their claim to end; the oldest go first. */
export const HELD_MAX = 500;

/**
 * The claim state of the ask `askId` for the agent `agentKey` at `now`, from its thread's posts
 * (any order; grafted replies left out by the caller). Pure.
 */
export function claimState(
  askId: string,
  thread: readonly ClaimPost[],
  agentKey: string,
  ttlMs: number,
  now: number,
): ClaimState {
  const open = new Map<string, Running>();
  let released: { claim: Claim; releasedAt: number } | undefined;
  for (const p of [...thread].sort((a, b) => a.seq - b.seq)) {
    const at = p.createdAt * 1000;
    const mine = open.get(p.author);
    if (p.kind === "claim" && p.parent === askId) {
      if (mine) mine.last = Math.max(mine.last, at);
      else open.set(p.author, { post: p, last: at, delivered: false });
      continue;
    }
    if (!mine) continue;
    if (p.kind === "release") {
      open.delete(p.author);
      if (p.author !== agentKey) released = { claim: claimOf(mine, ttlMs), releasedAt: at };
      continue;
    }
    mine.last = Math.max(mine.last, at);
    if (p.kind === "answer" && p.parent === askId) mine.delivered = true;
  }
  const all = [...open.values()].sort((a, b) => a.post.seq - b.post.seq);
  const holder = all.find((c) => c.delivered || c.last + ttlMs > now);
  if (holder !== undefined) {
    return holder.post.author === agentKey
      ? { state: "open" }
      : { state: "held", claim: claimOf(holder, ttlMs) };
  }
  // Nothing holds: say how the newest other claim ended, for the prompt.
  let lapsed: (Claim & { lapsesAt: number }) | undefined;
  for (const c of all) {
    if (c.post.author === agentKey) continue;
    const claim = { ...claimOf(c, ttlMs), lapsesAt: c.last + ttlMs };
    if (lapsed === undefined || claim.lapsesAt > lapsed.lapsesAt) lapsed = claim;
  }
  if (lapsed !== undefined && (released === undefined || lapsed.lapsesAt > released.releasedAt)) {
    return { state: "lapsed", claim: lapsed };
  }
  if (released !== undefined) return { state: "released", ...released };
  return { state: "open" };
}

/** A claim being followed through the thread. */
interface Running {
  post: ClaimPost;
  /** The claimer's newest post in the thread since the claim (ms). */
  last: number;
  /** The claimer answered the ask. */
  delivered: boolean;
}

function claimOf(c: Running, ttlMs: number): Claim {
  return {
    id: c.post.id,
    by: c.post.author,
    at: c.post.createdAt * 1000,
    ...(c.delivered ? {} : { lapsesAt: c.last + ttlMs }),
  };
}

/** Reads an ask's thread from the store and decides its claim state. */
export function claimStateIn(
  store: Pick<RunnerStore, "threadNewest">,
  q: Queued,
  at: { agentKey: string; ttlMs: number; now: number },
): ClaimState {
  return claimState(
    q.post.id,
    store.threadNewest(q.thread, CLAIM_LOOKBACK),
    at.agentKey,
    at.ttlMs,
    at.now,
  );
}

/** An ask dropped from the queue because of a claim, and the claim. */
export interface HeldAsk<Q extends Queued = Queued> {
  queued: Q;
  claim: Claim;
}

/**
 * The asks the runner dropped from its queue because another author claimed them, until the claim
 * lapses or is released. Bounded by {@linkcode HELD_MAX}: past it the oldest is forgotten (it then
 * never wakes the agent again, as without claims it would have woken it once).
 */
export class HeldAsks<Q extends Queued = Queued> {
  readonly #held = new Map<string, HeldAsk<Q>>();

  /** Holds `queued` under `claim` (again: the claim may have changed); returns the one forgotten, if any. */
  hold(queued: Q, claim: Claim): HeldAsk<Q> | undefined {
    // Holding again keeps the ask's place: only the claim (its lapse time) changes.
    this.#held.set(queued.post.id, { queued, claim });
    if (this.#held.size <= HELD_MAX) return undefined;
    const [oldest] = this.#held.values();
    if (oldest) this.#held.delete(oldest.queued.post.id);
    return oldest;
  }

  /** Stops holding the ask `id`; returns it. */
  take(id: string): HeldAsk<Q> | undefined {
    const h = this.#held.get(id);
    this.#held.delete(id);
    return h;
  }

  has(id: string): boolean {
    return this.#held.has(id);
  }

  /** The held asks, oldest hold first. */
  list(): HeldAsk<Q>[] {
    return [...this.#held.values()];
  }

  /** The held asks in `thread`. */
  inThread(thread: string): HeldAsk<Q>[] {
    return this.list().filter((h) => h.queued.thread === thread);
  }

  /** The threads of the asks whose claim lapses at or before `now`. */
  dueThreads(now: number): Set<string> {
    const out = new Set<string>();
    for (const h of this.#held.values()) {
      if (h.claim.lapsesAt !== undefined && h.claim.lapsesAt <= now) out.add(h.queued.thread);
    }
    return out;
  }

  /** The first time a held claim lapses, if any does. */
  nextLapse(): number | undefined {
    let first: number | undefined;
    for (const h of this.#held.values()) {
      const t = h.claim.lapsesAt;
      if (t !== undefined && (first === undefined || t < first)) first = t;
    }
    return first;
  }
}
