/**
 * Signed posts for store tests: three authors and a clock that ticks one second
 * per post unless told otherwise.
 *
 * @module
 */

import { deriveProfileKey, type ProfileKey } from "../../src/identity/profile_key.ts";
import type { WatsKind } from "../../src/posts/kinds.ts";
import { buildPost, type NostrEvent, type PostDraft } from "../../src/posts/post.ts";
import { Store } from "../../src/store/store.ts";

/** The node secret the three authors (and any test's others) are derived from. */
export const NODE = new Uint8Array(32).fill(5);
export const alice: ProfileKey = deriveProfileKey(NODE, "alice");
export const bob: ProfileKey = deriveProfileKey(NODE, "bob");
export const carol: ProfileKey = deriveProfileKey(NODE, "carol");

let clock = 1_790_000_000;

/** A signed post; `createdAt` defaults to a clock that advances one second per call. */
export function post(
  who: ProfileKey,
  kind: WatsKind,
  text: string,
  more: Partial<PostDraft> = {},
): NostrEvent {
  return buildPost({ kind, text, createdAt: clock++, ...more }, who.secret);
}

/** A reply to `parent` (root or not) in the parent's thread. */
export function reply(
  who: ProfileKey,
  kind: WatsKind,
  text: string,
  parent: NostrEvent,
): NostrEvent {
  const root = parent.tags.find((t) => t[0] === "e" && t[3] === "root")?.[1] ?? parent.id;
  return post(who, kind, text, { root, parent: parent.id, parentAuthor: parent.pubkey });
}

/** Opens a store in a new temp dir; `cleanup` closes it and removes the dir. */
export async function tempStore(
  opts?: Parameters<typeof Store.open>[1],
): Promise<{ store: Store; dir: string; path: string; cleanup: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "wats-store-" });
  const path = `${dir}/store.db`;
  const store = Store.open(path, opts);
  return {
    store,
    dir,
    path,
    cleanup: async () => {
      store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
