import assert from "node:assert/strict";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { decode } from "nostr-tools/nip19";
import { getPublicKey } from "nostr-tools/pure";
import { deriveProfileKey, PROFILE_KEY_SALT } from "../../src/identity/profile_key.ts";
import { WatsError } from "../../src/errors.ts";

const N = secp256k1.Point.Fn.ORDER;
const SECRET = Uint8Array.from({ length: 32 }, (_, i) => i);

/** The derivation done independently: WebCrypto HKDF, then FIPS 186-5 A.2.1 by hand. */
async function reference(secret: Uint8Array<ArrayBuffer>, name: string): Promise<bigint> {
  const enc = new TextEncoder();
  const ikm = await crypto.subtle.importKey("raw", secret, "HKDF", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "HKDF", hash: "SHA-256", salt: enc.encode(PROFILE_KEY_SALT), info: enc.encode(name) },
    ikm,
    48 * 8,
  );
  const num = BigInt("0x" + bytesToHex(new Uint8Array(bits)));
  return (num % (N - 1n)) + 1n;
}

Deno.test("profile key matches an independent HKDF-SHA256 + FIPS 186-5 A.2.1 derivation", async () => {
  for (const name of ["alice", "alice-agent", "é", "a b"]) {
    const key = deriveProfileKey(SECRET, name);
    assert.equal(BigInt("0x" + bytesToHex(key.secret)), await reference(SECRET, name), name);
  }
});

Deno.test("profile key derivation is stable (fixed vector)", () => {
  const key = deriveProfileKey(SECRET, "alice");
  assert.deepEqual(key, deriveProfileKey(SECRET, "alice"));
  assert.equal(key.pubkey, FIXED_ALICE_PUBKEY);
});

Deno.test("profile keys differ per name and per node secret", () => {
  const names = ["alice", "alice-agent", "Alice", "alice ", "bob"];
  const pubkeys = new Set(names.map((n) => deriveProfileKey(SECRET, n).pubkey));
  assert.equal(pubkeys.size, names.length);
  const other = new Uint8Array(32).fill(9);
  assert.notEqual(
    deriveProfileKey(other, "alice").pubkey,
    deriveProfileKey(SECRET, "alice").pubkey,
  );
});

Deno.test("profile key is a scalar in [1, n-1] with matching pubkey and npub", () => {
  for (let i = 0; i < 100; i++) {
    const secret = crypto.getRandomValues(new Uint8Array(32));
    const key = deriveProfileKey(secret, `p${i}`);
    const d = BigInt("0x" + bytesToHex(key.secret));
    assert.ok(d >= 1n && d <= N - 1n);
    assert.equal(key.secret.length, 32);
    if (i < 5) {
      assert.equal(key.pubkey, getPublicKey(key.secret));
      const decoded = decode(key.npub);
      assert.equal(decoded.type, "npub");
      assert.equal(decoded.data, key.pubkey);
    }
  }
});

Deno.test("profile key refuses a short secret and an empty name", () => {
  assert.throws(() => deriveProfileKey(new Uint8Array(31), "alice"), WatsError);
  assert.throws(() => deriveProfileKey(SECRET, ""), /profile name is empty/);
});

// Computed once with this implementation (cross-checked above); must never change.
const FIXED_ALICE_PUBKEY = "bcfb1a2156cabe35843848743a7df326ce7d9def58ef4ebb1ecef01561305af2";
