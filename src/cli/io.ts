/**
 * Writing to stdout/stderr so that nothing is lost when the process exits right
 * after: a synchronous loop until every byte is written (a pipe may take a
 * write in parts).
 *
 * @module
 */

/** Writes all of `bytes` to `file` before returning. */
export function writeAllSync(file: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
}

/** True when something (file, folder, socket) is at `path`. Requires `--allow-read` on it. */
export function pathExists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
