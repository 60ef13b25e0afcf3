/**
 * The node secret: 32 random bytes in `<data>/node.key`, mode 0600, created once.
 *
 * Every profile's author key derives from it (see `profile_key.ts`), so losing or
 * replacing it changes every author this node speaks for. That is why the file is
 * created with create-new semantics and a file of the wrong size is an error, never
 * silently replaced.
 *
 * @module
 */

import { WatsError } from "../errors.ts";

/** The size of a node secret in bytes. */
export const NODE_KEY_BYTES = 32;

/**
 * Reads the node secret at `path`, creating it (32 random bytes, mode 0600) when the
 * file does not exist. Never overwrites an existing file.
 *
 * Requires `--allow-read` and `--allow-write` on `path` only.
 *
 * @throws {WatsError} code `identity.node_key_size` when the file is not 32 bytes.
 */
export async function loadOrCreateNodeKey(path: string): Promise<Uint8Array> {
  const existing = await readSettled(path);
  if (existing) return checked(existing, path);
  const secret = crypto.getRandomValues(new Uint8Array(NODE_KEY_BYTES));
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
  } catch (err) {
    // Another process created it between our read and our create: use theirs.
    if (err instanceof Deno.errors.AlreadyExists) return checked((await readSettled(path))!, path);
    throw new WatsError("identity.node_key_create", `Cannot create the node key ${path}: ${err}`, {
      cause: err,
    });
  }
  try {
    let written = 0;
    while (written < secret.length) written += await file.write(secret.subarray(written));
    await file.sync();
  } finally {
    file.close();
  }
  return secret;
}

/**
 * Reads the key, waiting a little while it is shorter than 32 bytes: another process
 * (or call) may be between creating the file and writing it. Writing to a temporary
 * file and renaming would avoid that, but would need a grant beyond `path`.
 */
async function readSettled(path: string): Promise<Uint8Array | undefined> {
  let bytes = await readIfPresent(path);
  for (let i = 0; i < 20 && bytes && bytes.length < NODE_KEY_BYTES; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    bytes = await readIfPresent(path);
  }
  return bytes;
}

async function readIfPresent(path: string): Promise<Uint8Array | undefined> {
  try {
    return await Deno.readFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw new WatsError("identity.node_key_read", `Cannot read the node key ${path}: ${err}`, {
      cause: err,
    });
  }
}

function checked(bytes: Uint8Array, path: string): Uint8Array {
  if (bytes.length === NODE_KEY_BYTES) return bytes;
  throw new WatsError(
    "identity.node_key_size",
    `The node key ${path} holds ${bytes.length} bytes, not ${NODE_KEY_BYTES}: it is not a wats ` +
      `node key (or it was truncated). Restore the original file from a backup to keep this ` +
      `node's authors, or move it away to start a new node identity (every profile then gets ` +
      `a new author key).`,
  );
}
