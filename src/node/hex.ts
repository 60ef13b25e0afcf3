/** Hex encoding of bytes. @module */

/** Lower-case hex of `bytes`. */
export function encodeHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
