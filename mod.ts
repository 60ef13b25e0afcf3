/**
 * wats as a library: the wire format of WeAreTheSwarm posts (Nostr events,
 * docs/protocol.md) and profile identities, for programs that read or write
 * wats posts without running a node. The node itself is the `wats` command
 * (main.ts).
 *
 * @module
 */

export {
  ACTIONABLE,
  FEEDBACK,
  isWatsKind,
  nostrKindOf,
  PROTOCOL_VERSION,
  WATS_KINDS,
  watsKindOf,
} from "./src/posts/kinds.ts";
export type { WatsKind } from "./src/posts/kinds.ts";
export { buildPost, MAX_TAGS, MAX_TEXT_BYTES, readPost } from "./src/posts/post.ts";
export type { NostrEvent, Post, PostDraft } from "./src/posts/post.ts";
export { validateEvent } from "./src/posts/validate.ts";
export type { Validation } from "./src/posts/validate.ts";
export { deriveProfileKey, PROFILE_KEY_SALT } from "./src/identity/profile_key.ts";
export type { ProfileKey } from "./src/identity/profile_key.ts";
