/**
 * The node's interest (interest.ts) from its store and settings, kept current: the
 * threads it follows are those of the asks addressed to it or naming its caps and
 * those its profiles posted in, and besides them the newest other asks it stored, and a post that adds one (an ask arrives, a profile posts in a new
 * thread, a new profile posts) makes it compute them again and say so.
 *
 * @module
 */

import { nostrKindOf, WATS_KINDS, type WatsKind } from "../posts/kinds.ts";
import { CAP_PREFIX, type NostrEvent, threadLinks } from "../posts/post.ts";
import type { Store, StoredPost } from "../store/store.ts";
import { type Interest, MAX_ASK_THREADS, MAX_THREADS } from "./interest.ts";

/**
 * The node's own posts of these kinds start no thread it follows: nobody replies to
 * an announce (posted again every `agent.presence_every`) or a halt, and each would
 * take one of the {@linkcode MAX_THREADS} places.
 */
const NO_THREAD: ReadonlySet<WatsKind> = new Set(["announce", "halt"]);
const THREAD_KINDS = WATS_KINDS.filter((k) => !NO_THREAD.has(k)).map(nostrKindOf);

/** The settings an interest comes from. */
export interface InterestSettings {
  /** `agent.caps`. */
  caps: readonly string[];
  /** `agent.open_asks`. */
  openAsks: boolean;
  /** `halt.accept`, hex pubkeys. */
  haltAccept: readonly string[];
}

/** A node's interest, watched. */
export interface InterestSource {
  /** The interest now. */
  current(): Interest;
  /** Stops watching the store. */
  stop(): void;
}

/**
 * Computes the interest of the node whose store is `store` and watches new posts;
 * `onChange` gets each new interest (at most once per batch of posts stored).
 */
export function watchInterest(
  store: Store,
  settings: InterestSettings,
  onChange: (interest: Interest) => void,
): InterestSource {
  let interest = computeInterest(store, settings);
  let followed = followedOf(interest);
  let authors = new Set(interest.profiles);
  let queued = false;
  const unlisten = store.onInsert((posts, origin) => {
    if (queued || !posts.some(adds)) return;
    // A burst of posts is stored in batches: one new interest per batch.
    queued = true;
    queueMicrotask(() => {
      queued = false;
      interest = computeInterest(store, settings);
      followed = followedOf(interest);
      authors = new Set(interest.profiles);
      onChange(interest);
    });

    function adds(p: StoredPost): boolean {
      const local = origin === "local" || authors.has(p.author);
      if (local && !authors.has(p.author)) return true;
      if (NO_THREAD.has(p.kind)) return false;
      return (local || p.kind === "ask") && !followed.has(p.root ?? p.id);
    }
  });
  return { current: () => interest, stop: unlisten };
}

function followedOf(interest: Interest): Set<string> {
  return new Set([...interest.threads, ...interest.askThreads ?? []]);
}

/** The interest of the node whose store is `store`, now. */
export function computeInterest(store: Store, settings: InterestSettings): Interest {
  const profiles = [...store.localAuthors()];
  const threads = threadRoots(store, { profiles, caps: settings.caps });
  return {
    profiles,
    caps: settings.caps,
    openAsks: settings.openAsks,
    haltAuthors: settings.haltAccept,
    threads,
    askThreads: askRoots(store, new Set(threads)),
  };
}

const ASK = nostrKindOf("ask");

/**
 * The roots of the newest {@linkcode MAX_THREADS} threads that concern the node:
 * asks addressed to its profiles, asks naming its caps, and threads its profiles
 * posted in, newest post first. Each is one index walk that stops at the cap
 * (src/store/filter_sql.ts), whatever the store holds besides.
 */
export function threadRoots(
  store: Store,
  of: { profiles: readonly string[]; caps: readonly string[] },
): string[] {
  const opts = { maxLimit: MAX_THREADS };
  const limit = MAX_THREADS;
  const profiles = [...of.profiles];
  const caps = of.caps.map((c) => CAP_PREFIX + c);
  const posts = [
    ...profiles.length === 0 ? [] : [
      ...store.query({ kinds: [ASK], "#p": profiles, limit }, opts),
      ...store.query({ authors: profiles, kinds: THREAD_KINDS, limit }, opts),
    ],
    ...caps.length === 0 ? [] : store.query({ kinds: [ASK], "#t": caps, limit }, opts),
  ];
  return newestRoots(posts, MAX_THREADS, new Set());
}

/** The roots of the newest {@linkcode MAX_ASK_THREADS} other asks stored (open asks). */
export function askRoots(store: Store, concerning: ReadonlySet<string>): string[] {
  const limit = MAX_ASK_THREADS + concerning.size;
  const asks = store.query({ kinds: [ASK], limit }, { maxLimit: limit });
  return newestRoots(asks, MAX_ASK_THREADS, concerning);
}

function newestRoots(posts: NostrEvent[], max: number, skip: ReadonlySet<string>): string[] {
  const roots = new Set<string>();
  for (const e of posts.sort((a, b) => b.created_at - a.created_at)) {
    const root = rootOf(e);
    if (skip.has(root)) continue;
    roots.add(root);
    if (roots.size === max) break;
  }
  return [...roots];
}

function rootOf(e: NostrEvent): string {
  const links = threadLinks(e.tags);
  return ("root" in links ? links.root : undefined) ?? e.id;
}
