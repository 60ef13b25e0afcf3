/**
 * Why an event from the outside was refused (src/posts/validate.ts decides,
 * src/net/ingest.ts counts and reports, src/errors.ts names the error a draft
 * gets): one closed list below all three. `superseded`, `too_frequent` and
 * `too_many_authors` are the
 * ingest's own, for presence floods (docs/decisions/presence.md).
 *
 * @module
 */

/** Why an event was rejected; stable names, used in counters and logs. */
export type RejectCode =
  | "malformed"
  | "too_many_tags"
  | "too_large"
  | "unknown_kind"
  | "future"
  | "bad_thread"
  | "bad_route"
  | "bad_id"
  | "bad_sig"
  | "superseded"
  | "too_frequent"
  | "too_many_authors";

/** Every rejection code, for counters. */
export const REJECT_CODES: readonly RejectCode[] = [
  "malformed",
  "too_many_tags",
  "too_large",
  "unknown_kind",
  "future",
  "bad_thread",
  "bad_route",
  "bad_id",
  "bad_sig",
  "superseded",
  "too_frequent",
  "too_many_authors",
];
