/**
 * The one way to turn a caught value into the words a log line or an
 * `error:` line shows. JavaScript can throw anything: a library may throw a
 * string or a JSON-RPC error object, and `(err as Error).message` on those
 * prints `undefined`. A leaf: it imports nothing.
 *
 * @module
 */

/**
 * The message of `err`: an `Error`'s own message, a thrown string as it is,
 * an object's string `message` field (JSON-RPC and DOM-like errors), and
 * anything else as JSON or, when it has none, as `String(err)`.
 */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  if (typeof err === "object" && err !== null) {
    const m = (err as { message?: unknown }).message;
    if (typeof m === "string") return m;
    try {
      const json = JSON.stringify(err);
      if (json !== undefined) return json;
    } catch {
      // A cycle or a BigInt: fall back to String below.
    }
  }
  return String(err);
}
