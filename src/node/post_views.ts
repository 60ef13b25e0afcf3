/**
 * Stored posts as the MCP tools and the runner's wake prompt show them
 * (`PostView`: the author's npub and local profile name added). Built from the
 * store alone, so the runner can read posts before the node's service exists.
 *
 * @module
 */

import { shownProfileName } from "./profiles.ts";
import { npubEncode } from "nostr-tools/nip19";
import { PostError } from "../errors.ts";
import type { PostView } from "../contracts/views.ts";
import type { Store, StoredPost } from "../store/store.ts";

/** Reads posts from the store as views. */
export class PostViews {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  get(id: string): PostView | undefined {
    const p = this.#store.get(id);
    return p ? this.#view(p, this.#localNames()) : undefined;
  }

  /** The thread of `id`, up to `limit` posts; an unknown id throws `PostError`. */
  thread(id: string, limit: number): PostView[] {
    const p = this.#store.get(id);
    if (!p) {
      throw new PostError(
        "thread.unknown",
        `unknown post ${id}: use an id shown by the feed or search tools`,
      );
    }
    return this.views(this.#store.thread(p.root ?? p.id, { limit }));
  }

  views(posts: StoredPost[]): PostView[] {
    const names = this.#localNames();
    return posts.map((p) => this.#view(p, names));
  }

  /** pubkey → local profile name, read once per tool call. */
  #localNames(): Map<string, string> {
    // Shown without invisible or bidi characters: a name stored before they were refused.
    return new Map(this.#store.profiles().map((r) => [r.pubkey, shownProfileName(r.name)]));
  }

  #view(p: StoredPost, names: Map<string, string>): PostView {
    const local = names.get(p.author);
    return {
      id: p.id,
      seq: p.seq,
      author: p.author,
      authorNpub: npubEncode(p.author),
      localProfile: local,
      kind: p.kind,
      title: p.title,
      text: p.text,
      root: p.root,
      parent: p.parent,
      grafted: p.grafted,
      caps: p.caps,
      ...(p.to.length > 0 ? { to: p.to } : {}),
      createdAt: p.createdAt,
    };
  }
}
