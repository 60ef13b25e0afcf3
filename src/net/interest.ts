/**
 * What a node asks its relays for: its interest as NIP-01 filters, instead of the
 * whole firehose of wats kinds (issue 18 item 4; docs/network.md, "Interest
 * filters"; the bounds in docs/decisions/node.md).
 *
 * A node needs, and subscribes to:
 *
 * - posts that tag one of its profiles (`#p`): asks addressed to it, replies to its
 *   posts (a reply tags its parent's author, src/posts/post.ts), halts aimed at it;
 * - its own posts (`authors`): a node restored from its secret elsewhere gets them back;
 * - asks naming one of its caps (`#t` = `cap:NAME`), whatever `agent.open_asks` says;
 * - halts by the authors of `halt.accept` (safety: a halt must reach the node
 *   whatever it tags);
 * - every announce and presence (kind 14480, replaceable): who is out there, with
 *   what caps and in what state (small: one presence per agent, refreshed every
 *   `agent.presence_every`);
 * - every ask while `agent.open_asks` is on, last: NIP-01 cannot ask for "no `p`
 *   tag", so open asks come with all asks; they add to the filters above, never
 *   replace one (issue 33: with the cap filter dropped, the threads of asks naming
 *   its caps were crowded out by everyone's);
 * - the threads it follows (`#e` of their roots), in two sets of places: the
 *   {@linkcode MAX_THREADS} newest threads that concern it (asks addressed to it or
 *   naming its caps, threads its profiles posted in), and the
 *   {@linkcode MAX_ASK_THREADS} newest of the other asks it stored: many open asks
 *   never take a place of a thread that concerns it.
 *
 * Pure: the node's side (src/net/interest_source.ts) reads the store and settings.
 *
 * @module
 */

import type { Filter } from "nostr-tools/filter";
import { CAP_PREFIX } from "../posts/post.ts";
import { NOSTR_KINDS, nostrKindOf } from "../posts/kinds.ts";

/** What the node cares about, from its keys, settings and store. */
export interface Interest {
  /** Hex pubkeys of every profile the node signs for. */
  profiles: readonly string[];
  /** `agent.caps`. */
  caps: readonly string[];
  /** `agent.open_asks`. */
  openAsks: boolean;
  /** Hex pubkeys of `halt.accept` (the node's own profiles are covered by `profiles`). */
  haltAuthors: readonly string[];
  /**
   * Root ids of the threads that concern it (asks addressed to it or naming its
   * caps, threads its profiles posted in), newest first; past
   * {@linkcode MAX_THREADS} dropped.
   */
  threads: readonly string[];
  /**
   * Root ids of the other asks it stored (open asks), newest first; past
   * {@linkcode MAX_ASK_THREADS} dropped. Default none.
   */
  askThreads?: readonly string[];
}

/** One live subscription: at most {@linkcode FILTERS_PER_REQ} filters, named by a stable key. */
export interface Subscription {
  /** Stable across interest changes: the same key is the same part of the interest. */
  key: string;
  filters: Filter[];
}

/**
 * Threads that concern the node followed at most; older ones are only reached
 * through `feed`/`search` with `relays`.
 */
export const MAX_THREADS = 500;
/** Threads of other asks (open asks) followed at most, besides {@linkcode MAX_THREADS}. */
export const MAX_ASK_THREADS = 500;
/**
 * Filters in one REQ at most: wats' own endpoint (`relay_caps.ts`) and common relays
 * (strfry, nostr-rs-relay) refuse more than 10.
 */
export const FILTERS_PER_REQ = 10;
/**
 * Values in one filter's list (`#e`, `#p`, `authors`) at most: a REQ of 100 ids is
 * about 7 KB, well under the message caps of relays (wats' own: 256 KiB; strfry's
 * default: 128 KiB).
 */
export const VALUES_PER_FILTER = 100;
/**
 * Thread roots are spread over this many subscriptions by the first byte of their
 * id (ids are hashes: evenly), so following one more thread replaces one small
 * subscription, not every one.
 */
export const THREAD_BUCKETS = 8;

const ASK = nostrKindOf("ask");
const HALT = nostrKindOf("halt");
const ANNOUNCE = nostrKindOf("announce");
/** Agents' presence (replaceable, docs/decisions/presence.md): who is out there, and in what state. */
const PRESENCE = nostrKindOf("presence");

/**
 * The subscriptions of `interest`: first `base` (profiles, own posts, caps, asks,
 * halts, announces), then `threads-N` for each non-empty bucket of thread roots.
 * Every list in a filter is sorted and deduplicated, so equal interests give equal
 * filters (the sync compares them to replace only what changed).
 */
export function interestSubscriptions(interest: Interest): Subscription[] {
  const base = baseFilters(interest, true);
  const subs: Subscription[] = [];
  for (let i = 0; i < base.length; i += FILTERS_PER_REQ) {
    subs.push({
      key: i === 0 ? "base" : `base-${i / FILTERS_PER_REQ}`,
      filters: base.slice(i, i + FILTERS_PER_REQ),
    });
  }
  const buckets: string[][] = Array.from({ length: THREAD_BUCKETS }, () => []);
  for (const root of followed(interest)) {
    buckets[(parseInt(root.slice(0, 2), 16) % THREAD_BUCKETS) || 0]!.push(root);
  }
  buckets.forEach((roots, i) => {
    if (roots.length > 0) subs.push({ key: `threads-${i}`, filters: threadFilters(roots) });
  });
  return subs;
}

/**
 * Filters for what `next` wants and `prev` did not: what a live change must catch
 * up on (a new thread's earlier posts, an added cap's asks), without asking again
 * for the threads and keys already followed.
 */
export function addedFilters(prev: Interest, next: Interest): Filter[] {
  const minus = (a: readonly string[], b: readonly string[]) => {
    const had = new Set(b);
    return a.filter((v) => !had.has(v));
  };
  const delta: Interest = {
    profiles: minus(next.profiles, prev.profiles),
    caps: minus(next.caps, prev.caps),
    openAsks: next.openAsks && !prev.openAsks,
    haltAuthors: minus(next.haltAuthors, prev.haltAuthors),
    threads: minus(followed(next), followed(prev)),
  };
  return [...baseFilters(delta, false), ...threadFilters(uniq(delta.threads))];
}

function baseFilters(interest: Interest, announces: boolean): Filter[] {
  const out: Filter[] = [];
  const profiles = uniq(interest.profiles);
  for (const chunk of chunks(profiles)) out.push({ kinds: [...NOSTR_KINDS], "#p": chunk });
  for (const chunk of chunks(profiles)) out.push({ kinds: [...NOSTR_KINDS], authors: chunk });
  const caps = uniq(interest.caps).map((c) => CAP_PREFIX + c);
  for (const chunk of chunks(caps)) out.push({ kinds: [ASK], "#t": chunk });
  for (const chunk of chunks(uniq(interest.haltAuthors))) {
    out.push({ kinds: [HALT], authors: chunk });
  }
  if (announces) out.push({ kinds: [ANNOUNCE, PRESENCE] });
  // Last: a catch-up pages its filters in this order, what concerns the node first.
  if (interest.openAsks) out.push({ kinds: [ASK] });
  return out;
}

/** The roots followed: those that concern the node, then the other asks', each list capped. */
function followed(interest: Interest): string[] {
  return uniq([
    ...interest.threads.slice(0, MAX_THREADS),
    ...(interest.askThreads ?? []).slice(0, MAX_ASK_THREADS),
  ]);
}

function threadFilters(roots: readonly string[]): Filter[] {
  return chunks(roots).map((chunk) => ({ kinds: [...NOSTR_KINDS], "#e": chunk }));
}

/** A filter's canonical text (its lists are already sorted by `interestSubscriptions`). */
export function filterKey(f: Filter): string {
  return JSON.stringify(f);
}

function uniq(values: readonly string[]): string[] {
  return [...new Set(values)].sort();
}

function chunks(values: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < values.length; i += VALUES_PER_FILTER) {
    out.push(values.slice(i, i + VALUES_PER_FILTER));
  }
  return out;
}
