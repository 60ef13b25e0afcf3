/**
 * The bearer tokens of MCP over HTTP (docs/mcp.md, "MCP over HTTP"). Each token is bound to one
 * profile: a request that shows it gets an interactive session of that profile, never a runner
 * session (a run's token lives only in the runner's memory and opens only its own socket:
 * docs/decisions/run_socket.md).
 *
 * `<data dir>/mcp_tokens.json` (mode 0600) holds only each token's SHA-256, its id (the hash's
 * first 12 hex characters, which `list` and `revoke` name), its profile, its label and when it was
 * made: the token itself is printed once by `wats mcp token create` and kept nowhere. A token is
 * 32 random bytes, so one unsalted hash is enough: nobody can search a space of 2^256.
 *
 * `wats mcp token` (and `wats setup --http`) write the file, one at a time (a lock on
 * `<file>.lock`), each write renamed into place; the daemon only reads it, at the first request after it
 * changed (its size or modification time), so a revoked token stops working at once, without a
 * restart. A file that cannot be read as tokens opens nothing (and is reported once).
 *
 * @module
 */

import { WatsError } from "../errors.ts";

/** What a token's line in the file holds. */
export interface TokenRecord {
  /** The first 12 hex characters of the token's SHA-256: what `list` shows and `revoke` takes. */
  id: string;
  /** The token's SHA-256, hex. */
  sha256: string;
  /** The profile every session of this token speaks for. */
  profile: string;
  /** A name the person gave it (`--label`), or empty. */
  label: string;
  /** When it was made, ISO 8601. */
  created: string;
}

/** The file's shape. */
interface TokenFileData {
  version: 1;
  tokens: TokenRecord[];
}

/** Who a presented token speaks for. */
export interface TokenGrant {
  id: string;
  profile: string;
}

/** How every token starts: a reader (and a secret scanner) knows what it is. */
export const TOKEN_PREFIX = "wats_mcp_";

/** A new token: the prefix and 32 random bytes, base64url. */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const b64 = btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
  return TOKEN_PREFIX + b64;
}

/** The SHA-256 of a token, hex. */
export async function tokenHash(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Reads the token file; an absent file holds no tokens.
 *
 * @throws {WatsError} `mcp.token_file` when it is not a token file.
 */
export async function readTokens(path: string): Promise<TokenRecord[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  return parseTokens(path, text);
}

function parseTokens(path: string, text: string): TokenRecord[] {
  const bad = (why: string) =>
    new WatsError(
      "mcp.token_file",
      `${path} is not a wats token file (${why}): move it away and create the tokens again ` +
        "with `wats mcp token create`",
    );
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw bad("not JSON");
  }
  const tokens = (data as Partial<TokenFileData> | null)?.tokens;
  if ((data as Partial<TokenFileData> | null)?.version !== 1 || !Array.isArray(tokens)) {
    throw bad("no version 1 token list");
  }
  for (const t of tokens as unknown[]) {
    const r = t as Partial<TokenRecord> | null;
    const ok = typeof r?.id === "string" && typeof r.sha256 === "string" &&
      /^[0-9a-f]{64}$/.test(r.sha256) && r.sha256.startsWith(r.id) &&
      typeof r.profile === "string" && r.profile !== "" && typeof r.label === "string" &&
      typeof r.created === "string";
    if (!ok) throw bad("a token entry is malformed");
  }
  return tokens as TokenRecord[];
}

/**
 * Writes the token list: a file beside it, flushed, renamed over it, mode 0600, so a reader (the
 * daemon, `list`) sees the old list or the new one, never half of one. Only under
 * {@linkcode withTokenLock}: the `.tmp` name is one for all writers.
 */
async function writeTokens(path: string, tokens: TokenRecord[]): Promise<void> {
  const data: TokenFileData = { version: 1, tokens };
  const tmp = `${path}.tmp`;
  const file = await Deno.open(tmp, { write: true, create: true, truncate: true, mode: 0o600 });
  try {
    // A `.tmp` left by a crash keeps its old mode through `mode`: set it again.
    await Deno.chmod(tmp, 0o600);
    let rest = new TextEncoder().encode(JSON.stringify(data, null, 1) + "\n");
    while (rest.length > 0) rest = rest.subarray(await file.write(rest));
    // On disk before the rename: a crash then leaves the old list or the new, not an empty file.
    await file.syncData();
  } finally {
    file.close();
  }
  await Deno.rename(tmp, path);
}

/**
 * Runs one read-modify-write of the token file while holding an exclusive lock on
 * `<file>.lock`, so two `wats mcp token create` (or a create and a revoke) at once never lose
 * each other's change. The lock file is never removed: removing it would let a third writer lock
 * a new file while the second still holds the old one. The lock ends with the process, too.
 * Requires read and write on `path.lock`.
 */
async function withTokenLock<T>(path: string, change: () => Promise<T>): Promise<T> {
  const lock = await Deno.open(`${path}.lock`, { write: true, create: true, mode: 0o600 });
  try {
    await lock.lock(true);
    return await change();
  } finally {
    // Closing the file releases its lock.
    lock.close();
  }
}

/** What {@linkcode createToken} made: the token (shown once) and its record. */
export interface CreatedToken {
  token: string;
  record: TokenRecord;
}

/** Makes a token for `profile` and adds its hash to the file. */
export async function createToken(
  path: string,
  opts: { profile: string; label?: string; now?: Date },
): Promise<CreatedToken> {
  const token = newToken();
  const sha256 = await tokenHash(token);
  const record: TokenRecord = {
    id: sha256.slice(0, 12),
    sha256,
    profile: opts.profile,
    label: opts.label ?? "",
    created: (opts.now ?? new Date()).toISOString().replace(/\.\d{3}Z$/, "Z"),
  };
  await withTokenLock(path, async () => writeTokens(path, [...await readTokens(path), record]));
  return { token, record };
}

/**
 * Removes the token whose id is `id` (or which starts with it, when only one does).
 *
 * @throws {WatsError} `mcp.token_unknown` when no token, or more than one, matches.
 */
export function revokeToken(path: string, id: string): Promise<TokenRecord> {
  return withTokenLock(path, () => revokeLocked(path, id));
}

async function revokeLocked(path: string, id: string): Promise<TokenRecord> {
  const tokens = await readTokens(path);
  const hits = id.length >= 4 ? tokens.filter((t) => t.id.startsWith(id.toLowerCase())) : [];
  if (hits.length !== 1) {
    throw new WatsError(
      "mcp.token_unknown",
      hits.length === 0
        ? `no token has the id ${JSON.stringify(id)}: see the ids with \`wats mcp token list\``
        : `${hits.length} tokens start with ${JSON.stringify(id)}: give more of the id`,
    );
  }
  const [gone] = hits as [TokenRecord];
  await writeTokens(path, tokens.filter((t) => t !== gone));
  return gone;
}

/**
 * The daemon's view of the token file: looked up at each request, read again when the file
 * changed. Never writes.
 */
export class TokenBook {
  readonly #path: string;
  readonly #warn: (message: string) => void;
  #stamp = "";
  #byHash = new Map<string, TokenGrant>();
  /** Tokens already found live since the file last changed: no hash per request for them. */
  #known = new Map<string, TokenGrant>();

  constructor(path: string, warn: (message: string) => void = () => {}) {
    this.#path = path;
    this.#warn = warn;
  }

  /** Who `token` speaks for, or undefined when it is no live token. */
  async lookup(token: string): Promise<TokenGrant | undefined> {
    await this.#refresh();
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return undefined;
    const seen = this.#known.get(token);
    if (seen !== undefined) return seen;
    const grant = this.#byHash.get(await tokenHash(token));
    // Only live tokens are kept, so what a stranger sends never grows the map.
    if (grant !== undefined) this.#known.set(token, grant);
    return grant;
  }

  /** True while the token with this id is still in the file. */
  async live(id: string): Promise<boolean> {
    await this.#refresh();
    for (const g of this.#byHash.values()) if (g.id === id) return true;
    return false;
  }

  async #refresh(): Promise<void> {
    let stamp: string;
    try {
      // Sync: one stat per request, far cheaper than an async op's round trip under load.
      const info = Deno.statSync(this.#path);
      stamp = `${info.size}:${info.mtime?.getTime() ?? 0}:${info.ino ?? 0}`;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      stamp = "absent";
    }
    if (stamp === this.#stamp) return;
    let tokens: TokenRecord[] = [];
    try {
      tokens = await readTokens(this.#path);
    } catch (err) {
      // Fail closed: a file that cannot be read opens nothing.
      this.#warn(err instanceof Error ? err.message : String(err));
    }
    this.#byHash = new Map(tokens.map((t) => [t.sha256, { id: t.id, profile: t.profile }]));
    this.#known = new Map();
    this.#stamp = stamp;
  }
}
