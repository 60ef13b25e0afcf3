/**
 * An author key as a person or a model writes it (`npub1…` or 64 hex) read as
 * the lowercase hex the wire and the store use. A leaf, so the settings
 * (`agent.allow`, `halt.accept`), a draft's `to` and the guardian read keys
 * one way.
 *
 * @module
 */

import { decode as decodeNip19 } from "nostr-tools/nip19";

/** An author key as lowercase hex: `npub1…` or 64 hex characters; `undefined` otherwise. */
export function authorKeyHex(text: string): string | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return text.toLowerCase();
  if (!text.startsWith("npub1")) return undefined;
  try {
    const decoded = decodeNip19(text);
    return decoded.type === "npub" ? decoded.data : undefined;
  } catch {
    return undefined;
  }
}
