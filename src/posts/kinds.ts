/**
 * The wats kinds and their Nostr event kind numbers (protocol version 1).
 *
 * Each wats kind has its own regular event kind (NIP-01 range 1000–9999), so a relay
 * can filter wats posts, or only asks, with a plain `kinds` filter. Version 1 is the
 * contiguous block 4470–4481, which no NIP and no kind known to nostr-tools uses. A
 * later incompatible protocol version takes a new block; the numbers below never
 * change meaning. `presence` is the one kind outside the block: a NIP-01 replaceable
 * kind (10000–19999), so relays and stores keep only each author's newest
 * (docs/decisions/presence.md). `docs/protocol.md` is the contract.
 *
 * @module
 */

/** The protocol version this block of kind numbers belongs to. */
export const PROTOCOL_VERSION = 1;

/** The first Nostr kind number of the version 1 block. */
export const KIND_BASE = 4470;

/**
 * The Nostr kind of `presence`: replaceable (NIP-01 10000–19999), so a refresh
 * replaces the author's previous one wherever it is stored.
 */
export const PRESENCE_KIND = 14480;

/**
 * Every wats kind: the block in the order of their kind numbers (`KIND_BASE + index`),
 * then `presence` ({@linkcode PRESENCE_KIND}).
 */
export const WATS_KINDS = [
  "ask",
  "answer",
  "clarify",
  "offer",
  "claim",
  "release",
  "react",
  "vouch",
  "progress",
  "note",
  "announce",
  "halt",
  "presence",
] as const;

/** A wats kind name. */
export type WatsKind = typeof WATS_KINDS[number];

/** Kinds that can wake an agent (docs/decisions/runner.md). */
export const ACTIONABLE = [
  "ask",
  "answer",
  "clarify",
  "offer",
  "claim",
  "release",
] as const satisfies readonly WatsKind[];

/** Kinds that never wake an agent: listed in the next run's prompt instead. */
export const FEEDBACK = [
  "react",
  "vouch",
  "progress",
  "note",
] as const satisfies readonly WatsKind[];

/**
 * Kinds people and agents post through MCP. `announce` and `presence` (the
 * node's) and `halt` (`wats guardian halt`) are the node's own.
 */
export const POSTABLE = [...ACTIONABLE, ...FEEDBACK] as const;

/** The kind number of each wats kind. */
const NUMBER = new Map<string, number>(
  WATS_KINDS.map((k, i) => [k, k === "presence" ? PRESENCE_KIND : KIND_BASE + i]),
);
const NAME = new Map<number, WatsKind>(WATS_KINDS.map((k) => [NUMBER.get(k)!, k]));

/** Every wats Nostr kind number, for a relay subscription's `kinds` filter. */
export const NOSTR_KINDS: readonly number[] = [...NAME.keys()];

/** Kinds of which a store keeps only each author's newest (NIP-01 replaceable). */
export const REPLACEABLE = ["presence"] as const satisfies readonly WatsKind[];

const ACTIONABLE_SET = new Set<string>(ACTIONABLE);
const FEEDBACK_SET = new Set<string>(FEEDBACK);
const POSTABLE_SET = new Set<string>(POSTABLE);

/** True when `name` is a wats kind. */
export function isWatsKind(name: string): name is WatsKind {
  return NUMBER.has(name);
}

/** The Nostr event kind number of a wats kind. */
export function nostrKindOf(kind: WatsKind): number {
  const n = NUMBER.get(kind);
  if (n === undefined) {
    throw new RangeError(`Unknown wats kind "${kind}"; known: ${WATS_KINDS.join(" ")}`);
  }
  return n;
}

/** The wats kind of a Nostr event kind number, or `undefined` when it is not one. */
export function watsKindOf(n: number): WatsKind | undefined {
  return NAME.get(n);
}

/** True for the kinds that can wake an agent. */
export function isActionable(kind: WatsKind): boolean {
  return ACTIONABLE_SET.has(kind);
}

/** True for the kinds an MCP session may post (`POSTABLE`). */
export function isPostable(name: string): boolean {
  return POSTABLE_SET.has(name);
}

/** True for the feedback kinds (react, vouch, progress, note). */
export function isFeedback(kind: WatsKind): boolean {
  return FEEDBACK_SET.has(kind);
}
