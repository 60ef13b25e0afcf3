/**
 * Where the signature-check worker's module is: the verify pool starts it, and the
 * daemon's permission set grants reading exactly this file (a Worker's module is
 * read with its parent's permissions; the worker itself holds none). @module
 */

/** The URL of `verify_worker.ts`. */
export const VERIFY_WORKER_URL: URL = new URL("./verify_worker.ts", import.meta.url);

/**
 * The files the worker's module graph loads from this program's source: a Worker's
 * modules are read with its parent's permissions, so the daemon must be able to
 * read exactly these.
 */
export const VERIFY_WORKER_SOURCES: readonly URL[] = [
  VERIFY_WORKER_URL,
  new URL("../posts/verify.ts", import.meta.url),
];
