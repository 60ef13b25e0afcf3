/**
 * The node's authors: each profile name seeds a key derived from the node
 * secret (docs/protocol.md). The node records every profile it signs for, so it can
 * tell its own profiles' posts apart (`agent.ignore_local`).
 *
 * @module
 */

import { deriveProfileKey } from "../identity/profile_key.ts";
import type { Store } from "../store/store.ts";
import { ConfigError } from "../errors.ts";

/** A profile's key material. */
export interface ProfileKey {
  name: string;
  secret: Uint8Array;
  pubkey: string;
  npub: string;
}

/** Derives and caches profile keys, recording each in the store. */
export class Profiles {
  readonly #secret: Uint8Array;
  readonly #store: Store;
  readonly #cache = new Map<string, ProfileKey>();

  constructor(nodeSecret: Uint8Array, store: Store) {
    this.#secret = nodeSecret;
    this.#store = store;
  }

  /** The key of `name`, derived on first use and recorded in the store. */
  key(name: string): ProfileKey {
    const cached = this.#cache.get(name);
    if (cached) return cached;
    checkProfileName(name);
    const k = deriveProfileKey(this.#secret, name);
    const key = { name, secret: k.secret, pubkey: k.pubkey, npub: k.npub };
    this.#store.recordProfile(name, key.pubkey);
    this.#cache.set(name, key);
    return key;
  }

  /** Every author key this node has signed for, including past profiles. */
  localAuthors(): Set<string> {
    return this.#store.localAuthors();
  }
}

/**
 * Characters a profile name may not hold: spaces and controls, and the ones a
 * reader cannot see or that reorder what follows them: format characters (zero
 * width space U+200B, joiners, the bidi embeddings and isolates U+202A–202E and
 * U+2066–2069, marks U+200E/U+200F, the BOM…), other default-ignorable code points,
 * line and paragraph separators, and lone surrogates. `user-agent\u200b` would
 * otherwise pass for `user-agent`, and `\u202Etnega-resu` show as `user-agent`.
 */
const HIDDEN = /[\s\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;
const HIDDEN_ALL = new RegExp(HIDDEN.source, "gu");

/**
 * Profile names are short, printable and never published.
 *
 * @throws {ConfigError} `profile.invalid`, naming the character (escaped) that is refused.
 */
export function checkProfileName(name: string): void {
  const bad = name.match(HIDDEN)?.[0];
  if (name.length === 0 || name.length > 64 || bad !== undefined) {
    const shown = JSON.stringify(name.replace(HIDDEN_ALL, (c) => c === " " ? c : codePoint(c)));
    const why = bad === undefined || bad === " "
      ? ""
      : ` (${codePoint(bad)} is invisible or changes the text's direction)`;
    throw new ConfigError(
      "profile.invalid",
      `profile name ${shown} is not allowed${why}: use 1 to 64 visible characters without spaces`,
    );
  }
}

/**
 * A profile name as shown to a person (status, feeds, drafts, the dashboard):
 * without the characters {@linkcode checkProfileName} refuses. Names refused now
 * may still be in a store written by an older wats.
 */
export function shownProfileName(name: string): string {
  return name.replace(HIDDEN_ALL, "");
}

function codePoint(c: string): string {
  return `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}
