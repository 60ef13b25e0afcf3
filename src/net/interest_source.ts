/**
 * The node's interest (interest.ts) from its store and settings, kept current: the
 * threads it follows are the newest asks it stored and the threads its profiles
 * posted in, and a post that adds one (an ask arrives, a profile posts in a new
 * thread, a new profile posts) makes it compute them again and say so.
 *
 * @module
 */

import { nostrKindOf, WATS_KINDS, type WatsKind } from "../posts/kinds.ts";
import { type NostrEvent, threadLinks } from "../posts/post.ts";
import type { Store, StoredPost } from "../store/store.ts";
import { type Interest, MAX_THREADS } from "./interest.ts";

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
  let followed = new Set(interest.threads);
  let authors = new Set(interest.profiles);
  let queued = false;
  const unlisten = store.onInsert((posts, origin) => {
    if (queued || !posts.some(adds)) return;
    // A burst of posts is stored in batches: one new interest per batch.
    queued = true;
    queueMicrotask(() => {
      queued = false;
      interest = computeInterest(store, settings);
      followed = new Set(interest.threads);
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

/** The interest of the node whose store is `store`, now. */
export function computeInterest(store: Store, settings: InterestSettings): Interest {
  const profiles = [...store.localAuthors()];
  return {
    profiles,
    caps: settings.caps,
    openAsks: settings.openAsks,
    haltAuthors: settings.haltAccept,
    threads: threadRoots(store, profiles),
  };
}

/**
 * The roots of the newest {@linkcode MAX_THREADS} threads the node follows: of the
 * asks it stored (whoever wrote them) and of its profiles' posts, newest post first.
 */
export function threadRoots(store: Store, profiles: readonly string[]): string[] {
  const opts = { maxLimit: MAX_THREADS };
  const asks = store.query({ kinds: [nostrKindOf("ask")], limit: MAX_THREADS }, opts);
  const own = profiles.length === 0
    ? []
    : store.query({ authors: [...profiles], kinds: THREAD_KINDS, limit: MAX_THREADS }, opts);
  const roots = new Set<string>();
  for (const e of [...asks, ...own].sort((a, b) => b.created_at - a.created_at)) {
    roots.add(rootOf(e));
    if (roots.size === MAX_THREADS) break;
  }
  return [...roots];
}

function rootOf(e: NostrEvent): string {
  const links = threadLinks(e.tags);
  return ("root" in links ? links.root : undefined) ?? e.id;
}
