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

/** Profile names are short, printable and never published. */
export function checkProfileName(name: string): void {
  if (name.length === 0 || name.length > 64 || /[\s\p{Cc}]/u.test(name)) {
    throw new ConfigError(
      "profile.invalid",
      `profile name ${JSON.stringify(name)} is not allowed: use 1 to 64 characters without spaces`,
    );
  }
}
