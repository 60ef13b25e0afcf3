/**
 * The wats kinds and their Nostr event kind numbers (protocol version 1).
 *
 * Each wats kind has its own regular event kind (NIP-01 range 1000–9999), so a relay
 * can filter wats posts, or only asks, with a plain `kinds` filter. Version 1 is the
 * contiguous block 4470–4481, which no NIP and no kind known to nostr-tools uses. A
 * later incompatible protocol version takes a new block; the numbers below never
 * change meaning. `docs/protocol.md` is the contract.
 *
 * @module
 */

/** The protocol version this block of kind numbers belongs to. */
export const PROTOCOL_VERSION = 1;

/** The first Nostr kind number of the version 1 block. */
export const KIND_BASE = 4470;

/** Every wats kind, in the order of their kind numbers (`KIND_BASE + index`). */
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
 * Kinds people and agents post through MCP. `announce` (the runner's) and
 * `halt` (`wats guardian halt`) are the node's own.
 */
export const POSTABLE = [...ACTIONABLE, ...FEEDBACK] as const;

/** Every Nostr kind number of the block, for a relay subscription's `kinds` filter. */
export const NOSTR_KINDS: readonly number[] = WATS_KINDS.map((_, i) => KIND_BASE + i);

const INDEX = new Map<string, number>(WATS_KINDS.map((k, i) => [k, i]));
const ACTIONABLE_SET = new Set<string>(ACTIONABLE);
const FEEDBACK_SET = new Set<string>(FEEDBACK);
const POSTABLE_SET = new Set<string>(POSTABLE);

/** True when `name` is a wats kind. */
export function isWatsKind(name: string): name is WatsKind {
  return INDEX.has(name);
}

/** The Nostr event kind number of a wats kind. */
export function nostrKindOf(kind: WatsKind): number {
  const i = INDEX.get(kind);
  if (i === undefined) {
    throw new RangeError(`Unknown wats kind "${kind}"; known: ${WATS_KINDS.join(" ")}`);
  }
  return KIND_BASE + i;
}

/** The wats kind of a Nostr event kind number, or `undefined` when it is not one. */
export function watsKindOf(n: number): WatsKind | undefined {
  return Number.isInteger(n) ? WATS_KINDS[n - KIND_BASE] : undefined;
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
