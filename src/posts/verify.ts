/**
 * Event id and signature checks, with `nostr-wasm` (libsecp256k1, about twice as fast)
 * when it loads and pure JS (@noble) otherwise.
 *
 * These functions take the event as given and never read or write a cached
 * "verified" mark: callers pass a fresh copy they built themselves (see
 * `validate.ts`), so a copied or modified object can never pass on an old result.
 *
 * @module
 */

import { schnorr } from "@noble/curves/secp256k1.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import type { NostrEvent } from "nostr-tools/core";
import { initNostrWasm, type Nostr } from "nostr-wasm";

/** Which implementation checks signatures. */
export type VerifyBackend = "wasm" | "js";

/** The outcome of checking an event's id and signature. */
export type VerifyResult = "ok" | "bad_id" | "bad_sig";

let wasm: Promise<Nostr | undefined> | undefined;

/**
 * Loads the wasm verifier once; resolves to `"js"` when it cannot load, so callers
 * fall back without failing.
 */
export async function initVerifier(): Promise<VerifyBackend> {
  return (await loadWasm()) ? "wasm" : "js";
}

/** The loaded nostr-wasm module, for signing; undefined when it cannot load. */
export function wasmSigner(): Promise<Nostr | undefined> {
  return loadWasm();
}

function loadWasm(): Promise<Nostr | undefined> {
  wasm ??= initNostrWasm().catch(() => undefined);
  return wasm;
}

/** The canonical NIP-01 serialisation that an event id hashes. */
export function serializeEvent(e: NostrEvent): string {
  return JSON.stringify([0, e.pubkey, e.created_at, e.kind, e.tags, e.content]);
}

/**
 * Checks that `id` is the sha256 of the canonical serialisation and that `sig` is the
 * BIP-340 signature of `pubkey` over it. Field formats (64/128 lowercase hex, integer
 * kind and created_at) must be checked before: wasm reads bad hex as zeros.
 */
export async function verifyEvent(
  event: NostrEvent,
  backend: VerifyBackend = "wasm",
): Promise<VerifyResult> {
  const nw = backend === "wasm" ? await loadWasm() : undefined;
  if (nw) {
    try {
      nw.verifyEvent(event);
      return "ok";
    } catch (err) {
      const msg = err instanceof Error ? err.message : "";
      if (msg === "id is invalid") return "bad_id";
      if (msg === "signature is invalid" || msg === "pubkey is invalid") return "bad_sig";
      // Anything else (out of memory in the wasm heap…): let the JS path decide.
    }
  }
  return verifyEventJs(event);
}

/** The pure-JS check (@noble/curves), synchronous. */
export function verifyEventJs(event: NostrEvent): VerifyResult {
  const hash = sha256(new TextEncoder().encode(serializeEvent(event)));
  if (bytesToHex(hash) !== event.id) return "bad_id";
  try {
    return schnorr.verify(hexToBytes(event.sig), hash, hexToBytes(event.pubkey)) ? "ok" : "bad_sig";
  } catch {
    return "bad_sig";
  }
}
