/**
 * The agent's announce (docs/decisions/runner.md, "Role and announce"): on first start, and
 * whenever `agent.about` or `agent.caps` change, the runner posts an announce
 * from the agent profile: title = the first line of about, text = about, tags =
 * the caps as `cap:*`. The node warns when about is empty (and then announces
 * nothing: a post needs text). What was last announced is remembered as a hash
 * in the store's meta table, set only once the announce is published.
 *
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import type { MetaStore } from "./ports.ts";

/** The meta key holding the hash of the last announce. */
export const ANNOUNCED_META_KEY = "runner.announced";

/** The announce to publish, signed with the agent profile. */
export interface AnnounceDraft {
  kind: "announce";
  title: string;
  text: string;
  /** Capability names, published as `cap:<name>` tags. */
  caps: string[];
}

/** What to do at start. */
export interface AnnouncePlan {
  /** The announce to publish now; absent when nothing changed or about is empty. */
  draft?: AnnounceDraft;
  /** A warning for the log (about is empty). */
  warning?: string;
  /** The hash to pass to `markAnnounced` once the draft is published. */
  hash: string;
}

/** A stable hash of (about, caps); caps compare as a set. */
export function announceHash(about: string, caps: readonly string[]): string {
  const canonical = JSON.stringify([about.trim(), [...new Set(caps)].sort()]);
  return bytesToHex(sha256(new TextEncoder().encode(canonical)));
}

/** Decides whether to announce, from the settings and what was last announced. */
export function planAnnounce(
  about: string,
  caps: readonly string[],
  meta: MetaStore,
): AnnouncePlan {
  const hash = announceHash(about, caps);
  const text = about.trim();
  if (text === "") {
    return {
      hash,
      warning: "agent.about is empty: other agents cannot tell what your agent does. " +
        'Describe it with `wats config set agent.about "…"` (its first line is the title).',
    };
  }
  if (meta.getMeta(ANNOUNCED_META_KEY) === hash) return { hash };
  const title = text.split("\n")[0]!.trim();
  return { hash, draft: { kind: "announce", title, text, caps: [...new Set(caps)] } };
}

/** Remembers that the announce with `hash` is published. */
export function markAnnounced(meta: MetaStore, hash: string): void {
  meta.setMeta(ANNOUNCED_META_KEY, hash);
}
