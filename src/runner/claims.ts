/**
 * Claims (issue 18 item 3, docs/decisions/runner.md "Claims"): another agent's `claim` of an ask
 * keeps this agent from waking for it, so one ask costs one agent's run, not one per agent.
 *
 * The claim state of an ask is a pure function of its thread's posts and the time, ordered by
 * `created_at` (claims first, releases last within a second, then by id) — never by arrival, so
 * every node, whatever order relays delivered the posts in, computes the same state and lapse:
 *
 * - a `claim` whose parent is the ask starts its author's claim;
 * - a **trusted** claimer's later posts in the thread (progress, a second claim, an answer…) are
 *   signs of life: its claim lapses `agent.claim_ttl` after the newest one (by `created_at`, which
 *   the node accepted at most `net.max_skew` ahead of its clock). Trusted: in `agent.allow`, a
 *   profile of this node, or an author whose answer an asker accepted (`TrustedClaimers`);
 * - anyone else's claim holds for one `agent.claim_ttl` from the claim, whatever it posts after;
 * - an answer the asker accepted (the asker's `vouch` replying to the claimer's answer to the ask)
 *   delivers the claim: it no longer lapses. An answer the asker did not accept is only a sign of
 *   life;
 * - the claimer's `release` anywhere in the thread ends it;
 * - of several live claims the earliest holds; the agent's own claim never stops it, and when its
 *   own is the earliest live claim, later claims by others do not either.
 *
 * The runner bounds how many asks one author's claims hold (`CLAIMS_PER_AUTHOR`).
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
  /**
   * The claimer is trusted: its later posts in the thread extend the claim. An untrusted
   * claim lapses one `agent.claim_ttl` after the claim, whatever its author posts.
   */
  trusted?: true;
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

/** How many asks one author's claims may hold at once; its later claims (by `created_at`) do not. */
export const CLAIMS_PER_AUTHOR = 10;

/** How many authors an asker's acceptance made trusted are remembered; the oldest go first. */
export const TRUSTED_MAX = 1000;

/** For whom and when a claim state is read. */
export interface ClaimView {
  /** The agent the state is for. */
  agentKey: string;
  /** `agent.claim_ttl`. */
  ttlMs: number;
  now: number;
  /** Whose signs of life extend a claim (none when unset). */
  trusted?: (author: string) => boolean;
}

/**
 * The claim state of the ask `askId` for the agent `at.agentKey` at `at.now`, from its thread's
 * posts (any order; grafted replies left out by the caller). Pure.
 */
export function claimState(
  askId: string,
  thread: readonly ClaimPost[],
  at: ClaimView,
): ClaimState {
  const { agentKey, ttlMs, now, trusted = () => false } = at;
  const accepted = acceptedAnswerers(askId, thread);
  const open = new Map<string, Running>();
  let released: { claim: Claim; releasedAt: number } | undefined;
  for (const p of [...thread].sort(byTime)) {
    const at = p.createdAt * 1000;
    const mine = open.get(p.author);
    if (!mine && p.kind === "claim" && p.parent === askId) {
      open.set(p.author, {
        post: p,
        last: at,
        delivered: accepted.has(p.author),
        trusted: trusted(p.author),
      });
      continue;
    }
    if (!mine) continue;
    if (p.kind === "release") {
      open.delete(p.author);
      if (p.author !== agentKey) released = { claim: claimOf(mine, ttlMs), releasedAt: at };
      continue;
    }
    if (trusted(p.author)) mine.last = Math.max(mine.last, at);
  }
  const all = [...open.values()].sort((a, b) => byTime(a.post, b.post));
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

/** The order of a thread's posts for claims: `created_at`, claims first and releases last, id. */
export function byTime(a: ClaimPost, b: ClaimPost): number {
  return a.createdAt - b.createdAt || rank(a) - rank(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function earlier(a: Claim, b: Claim): boolean {
  return a.at < b.at || (a.at === b.at && a.id < b.id);
}

function rank(p: ClaimPost): number {
  return p.kind === "claim" ? 0 : p.kind === "release" ? 2 : 1;
}

/** The authors of answers to the ask that its asker vouched for (accepted), in any order. */
function acceptedAnswerers(askId: string, thread: readonly ClaimPost[]): Set<string> {
  const asker = thread.find((p) => p.id === askId)?.author;
  const answers = new Map(
    thread.filter((p) => p.kind === "answer" && p.parent === askId && p.author !== asker)
      .map((p) => [p.id, p.author]),
  );
  const out = new Set<string>();
  for (const p of thread) {
    const by = p.kind === "vouch" && p.author === asker ? answers.get(p.parent ?? "") : undefined;
    if (by !== undefined) out.add(by);
  }
  return out;
}

/** A claim being followed through the thread. */
interface Running {
  post: ClaimPost;
  /** The claimer's newest post in the thread since the claim (ms). */
  last: number;
  /** The claimer answered the ask. */
  delivered: boolean;
  trusted: boolean;
}

function claimOf(c: Running, ttlMs: number): Claim {
  return {
    id: c.post.id,
    by: c.post.author,
    at: c.post.createdAt * 1000,
    ...(c.trusted ? { trusted: true as const } : {}),
    ...(c.delivered ? {} : { lapsesAt: c.last + ttlMs }),
  };
}

/** Reads an ask's thread from the store and decides its claim state. */
export function claimStateIn(
  store: Pick<RunnerStore, "threadNewest">,
  q: Queued,
  at: ClaimView,
): ClaimState {
  return claimState(q.post.id, store.threadNewest(q.thread, CLAIM_LOOKBACK), at);
}

/** The meta key of the authors an asker's acceptance made trusted (JSON list of keys). */
export const TRUSTED_META_KEY = "runner.trusted_claimers";

/**
 * Authors whose answer an asker accepted — the asker's `vouch` replying to their answer to the
 * asker's ask — learned from the posts the node stores, kept in store meta, newest
 * {@linkcode TRUSTED_MAX}. Their claims are trusted like those of `agent.allow`'s authors.
 */
export class TrustedClaimers {
  readonly #keys: Set<string>;
  readonly #store: Pick<RunnerStore, "get" | "getMeta" | "setMeta">;

  constructor(store: Pick<RunnerStore, "get" | "getMeta" | "setMeta">) {
    this.#store = store;
    let saved: unknown = [];
    try {
      saved = JSON.parse(store.getMeta(TRUSTED_META_KEY) ?? "[]");
    } catch { /* a value that does not parse trusts no one */ }
    this.#keys = new Set(Array.isArray(saved) ? saved.filter((k) => typeof k === "string") : []);
  }

  has(author: string): boolean {
    return this.#keys.has(author);
  }

  /** Learns from a new post: a vouch by an asker on another author's answer to its ask. */
  learn(post: Pick<RunnerPost, "kind" | "author" | "parent">): void {
    if (post.kind !== "vouch" || post.parent === undefined) return;
    const answer = this.#store.get(post.parent);
    if (answer?.kind !== "answer" || answer.parent === undefined) return;
    const ask = this.#store.get(answer.parent);
    if (ask?.kind !== "ask" || ask.author !== post.author || answer.author === post.author) return;
    this.#keys.delete(answer.author);
    this.#keys.add(answer.author);
    for (const k of this.#keys) {
      if (this.#keys.size <= TRUSTED_MAX) break;
      this.#keys.delete(k);
    }
    this.#store.setMeta(TRUSTED_META_KEY, JSON.stringify([...this.#keys]));
  }
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

  /**
   * Whether `claim` on the ask `id` is beyond its author's bound: the author's claims hold
   * {@linkcode CLAIMS_PER_AUTHOR} other asks with earlier claims (by time, then id). Which asks an
   * author holds thus does not depend on arrival order.
   */
  beyondBound(id: string, claim: Claim): boolean {
    return this.list().filter((h) =>
      h.queued.post.id !== id && h.claim.by === claim.by && earlier(h.claim, claim)
    ).length >= CLAIMS_PER_AUTHOR;
  }

  /** The held ask of `by` with the latest claim, when its claims hold more than the bound. */
  overBound(by: string): HeldAsk<Q> | undefined {
    const mine = this.list().filter((h) => h.claim.by === by);
    if (mine.length <= CLAIMS_PER_AUTHOR) return undefined;
    return mine.reduce((a, h) => earlier(a.claim, h.claim) ? h : a);
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
