/**
 * Writing every byte: a write may take only part of what it is given (a pipe,
 * a socket), so these loop until all of it is written. The one home of this
 * loop in wats (std keeps `io/write_all.ts` for the same reason).
 *
 * @module
 */

/** Writes all of `bytes` to `w` before resolving. */
export async function writeAll(
  w: { write(p: Uint8Array): Promise<number> },
  bytes: Uint8Array,
): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await w.write(bytes.subarray(off));
}

/**
 * Writes all of `bytes` to `w` before returning: for stdout/stderr when the
 * process may exit right after, and for files written line by line.
 */
export function writeAllSync(w: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += w.writeSync(bytes.subarray(off));
}
