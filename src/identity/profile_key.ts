/**
 * A profile's author key, derived from the node secret and the profile name.
 *
 * `HKDF-SHA256(ikm = node secret, salt = "wats/v1/profile-key", info = UTF-8 name)`
 * gives 48 bytes, reduced to a secp256k1 scalar in [1, n-1] as FIPS 186-5 A.2.1
 * describes (`mapHashToField`). 48 bytes (n + n/2) keep the modulo bias below 2^-128.
 * The name is never published: renaming a profile creates a new author.
 *
 * @module
 */

import { mapHashToField } from "@noble/curves/abstract/modular.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { hkdf } from "@noble/hashes/hkdf.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { npubEncode } from "nostr-tools/nip19";
import { getPublicKey } from "nostr-tools/pure";
import { WatsError } from "../errors.ts";

/** The HKDF salt; a new derivation scheme takes a new salt. */
export const PROFILE_KEY_SALT = "wats/v1/profile-key";

/** The secp256k1 group order n. */
const CURVE_ORDER = secp256k1.Point.Fn.ORDER;

/** A profile's signing key and its public forms. */
export interface ProfileKey {
  /** The 32-byte secret scalar (big-endian), in [1, n-1]. */
  secret: Uint8Array;
  /** The x-only public key as 64 lowercase hex characters (the Nostr `pubkey`). */
  pubkey: string;
  /** The NIP-19 `npub…` form of `pubkey`, for people. */
  npub: string;
}

/**
 * Derives the author key of `profile` from the node secret. Deterministic: the same
 * secret and name always give the same key. The name's UTF-8 bytes are used as they
 * are (no Unicode normalisation, no trimming).
 *
 * @throws {WatsError} code `identity.bad_input` for a secret that is not 32 bytes or an
 * empty profile name.
 */
export function deriveProfileKey(nodeSecret: Uint8Array, profile: string): ProfileKey {
  if (nodeSecret.length !== 32) {
    throw new WatsError(
      "identity.bad_input",
      `Cannot derive a profile key: the node secret is ${nodeSecret.length} bytes, not 32`,
    );
  }
  if (profile === "") {
    throw new WatsError(
      "identity.bad_input",
      "Cannot derive a profile key: the profile name is empty",
    );
  }
  const enc = new TextEncoder();
  const okm = hkdf(sha256, nodeSecret, enc.encode(PROFILE_KEY_SALT), enc.encode(profile), 48);
  const secret = mapHashToField(okm, CURVE_ORDER);
  const pubkey = getPublicKey(secret);
  return { secret, pubkey, npub: npubEncode(pubkey) };
}
