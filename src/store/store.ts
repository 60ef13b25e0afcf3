/**
 * The node's store of posts: SQLite through `node:sqlite`, in WAL mode.
 *
 * Every accepted event gets a `seq`, the order this node received it; the runner and
 * the loop detector order by `seq`, never by `created_at` (one-second resolution,
 * other nodes' clocks). Inserts run in one transaction per batch (about ten times
 * faster than one each) and then tell `onInsert` listeners, which is what wakes the
 * runner: nobody polls. The store trusts what it is given: validate events from
 * outside with `validateEvent` first.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { Filter } from "nostr-tools/filter";
import { StoreError } from "../errors.ts";
import { log } from "../log.ts";
import type { WatsKind } from "../posts/kinds.ts";
import { type NostrEvent, plainEvent, type Post, readPost } from "../posts/post.ts";
import { feedSql } from "./feed_sql.ts";
import { filterPlan, ROWS_BY_SEQ } from "./filter_sql.ts";
import { checkLimit, MAX_PRESENCE_AUTHORS } from "./limits.ts";
import { Outbox } from "./outbox.ts";
import { migrate } from "./schema.ts";

/** A post as stored: its arrival order, whether it is grafted, and the raw event. */
export interface StoredPost extends Post {
  /** Arrival order on this node (1, 2, 3…). */
  seq: number;
  /** True when its parent is stored and belongs to another thread. */
  grafted: boolean;
  /** The signed event, as received. */
  event: NostrEvent;
}

/** One event's outcome in `insert`, in input order. */
export interface InsertResult {
  id: string;
  /** The new row's arrival order; absent for a duplicate. */
  seq?: number;
  /** Set when the event was already stored (or came twice in the batch). */
  duplicate?: true;
  /**
   * Set when the event is a replaceable kind (`presence`) and the store holds a
   * newer one of its author: nothing was stored (NIP-01: the newest `created_at`
   * wins, the lowest id on a tie).
   */
  superseded?: true;
}

/** Options of `feed`. */
export interface FeedOptions {
  /** Return posts with a larger seq: the cursor of the previous page, 0 at first. */
  sinceSeq: number;
  limit: number;
  kinds?: readonly WatsKind[];
  /** Hex pubkeys. */
  authors?: readonly string[];
}

/** A page of the feed and the cursor to pass next time. */
export interface FeedPage {
  posts: StoredPost[];
  cursor: number;
}

/**
 * Matches of a search ranked at most, the newest: the time of a search follows its
 * page, not how many posts a common word is in.
 */
export const SEARCH_CANDIDATES = 2000;

/** Options of `search`. */
export interface SearchOptions {
  limit: number;
  /**
   * Treat the query as plain words (each one quoted, all required) instead of SQLite
   * FTS5 syntax. Use it for text typed by people or models.
   */
  plain?: boolean;
}

/** A profile this node has signed for. */
export interface ProfileRecord {
  name: string;
  pubkey: string;
}

/** What a store depends on besides its file. */
export interface StoreOptions {
  /** Milliseconds since the epoch (outbox timestamps). Default `Date.now`. */
  now?: () => number;
  /**
   * Called when an `onInsert` listener throws. Default: an error line on the `store`
   * logger (src/log.ts), which the daemon writes to stderr.
   */
  onListenerError?: (err: unknown) => void;
  /** The relays every local event is queued for (the `infra` setting). Default none. */
  relays?: readonly string[];
  /**
   * The most authors whose presence is kept; a new author past it evicts a
   * never-seen author's presence first, the one that arrived first (see
   * {@linkcode PresencePost.seen}). Default {@linkcode MAX_PRESENCE_AUTHORS}.
   */
  maxPresenceAuthors?: number;
}

/**
 * Where inserted events come from: `"local"` ones were signed on this node and are
 * queued in the outbox for every relay; `"remote"` ones came from the network and
 * never are.
 */
export type Origin = "local" | "remote";

/** Options of `insert`. */
export interface InsertOptions {
  origin: Origin;
}

/** A listener that throws is a bug of its caller: said, and the insert stands. */
function logListenerError(err: unknown): void {
  log("store").error("a store listener failed: {error}", { error: errorMessage(err) });
}

/** What `onInsert` listeners are told: the new posts in seq order, and their origin. */
export type InsertListener = (posts: StoredPost[], origin: Origin) => void;

/** A stored event as its JSON text, from {@linkcode Store.queryRaw}. */
export interface RawEvent {
  id: string;
  createdAt: number;
  /** The author's public key (hex). */
  pubkey: string;
  /** The wats kind name. */
  kind: string;
  /** The event's JSON (the NIP-01 fields only). */
  raw: string;
}

/** A stored presence, and whether its author is more than a presence here. */
export interface PresencePost extends StoredPost {
  /**
   * The author is one of this node's profiles, or this store holds a post of it
   * besides its presence (an announce, an ask, an answer…): a key that only ever
   * sent a presence costs a flood nothing, so it is evicted first and not counted
   * as reachable (docs/decisions/presence.md).
   */
  seen: boolean;
}

type Row = { seq: number; grafted: number; raw: string };
type StoredRef = { seq: number; id: string; created_at: number };

/** The node's post store. Synchronous; one instance per process and file. */
export class Store {
  readonly #db: DatabaseSync;
  readonly #path: string;
  readonly #relays: readonly string[];
  readonly #maxPresenceAuthors: number;
  readonly #onListenerError: (err: unknown) => void;
  readonly #listeners = new Set<InsertListener>();
  readonly #statements: ReturnType<typeof prepare>;
  readonly #shapes = new Map<string, StatementSync>();
  #closed = false;
  /** The events waiting to be published; only `insert` adds local events to it. */
  readonly outbox: Outbox;

  private constructor(db: DatabaseSync, path: string, opts: StoreOptions) {
    this.#db = db;
    this.#path = path;
    this.#relays = [...(opts.relays ?? [])];
    this.#maxPresenceAuthors = opts.maxPresenceAuthors ?? MAX_PRESENCE_AUTHORS;
    this.#onListenerError = opts.onListenerError ?? logListenerError;
    this.#statements = prepare(db);
    this.outbox = new Outbox(db, () => this.#open(), opts.now ?? Date.now);
  }

  /**
   * Opens (creating when missing) the store at `path`.
   *
   * Requires `--allow-read` and `--allow-write` on `path` only (SQLite's `-wal` and
   * `-shm` files need no grant).
   *
   * @throws {StoreError} when the file cannot be opened, is not a wats store, or was
   * written by a newer wats.
   */
  static open(path: string, opts: StoreOptions = {}): Store {
    let db: DatabaseSync;
    try {
      db = new DatabaseSync(path);
    } catch (err) {
      throw new StoreError("store.open", `Cannot open the store ${path}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    try {
      db.exec("PRAGMA busy_timeout = 5000");
      db.exec("PRAGMA journal_mode = WAL");
      db.exec("PRAGMA synchronous = NORMAL");
      // Sorts and temporary indexes stay in memory: no file outside the grant.
      db.exec("PRAGMA temp_store = MEMORY");
      migrate(db, path);
      return new Store(db, path, opts);
    } catch (err) {
      db.close();
      if (err instanceof StoreError) throw err;
      throw new StoreError(
        "store.open",
        `Cannot use ${path} as the store: ${errorMessage(err)}. If it is not a wats store, move ` +
          `it away and start again (a new store is created).`,
        { cause: err },
      );
    }
  }

  /** The file this store was opened on. */
  get path(): string {
    return this.#path;
  }

  /**
   * Stores `events` in one transaction. An event already stored is a duplicate, not
   * an error. `root`, `parent` and `grafted` come from the tags; a reply whose parent
   * arrives later gets its `grafted` flag when the parent arrives. Events of origin
   * `"local"` (duplicates too, so a retry queues what a failed call did not) enter
   * the outbox for every relay in the same transaction; `"remote"` ones never do.
   * This is the only place the outbox is filled (docs/decisions/store.md).
   *
   * @throws {StoreError} code `store.not_a_post` (nothing stored) when an event is not
   * a wats post, `store.insert` when SQLite fails (nothing stored).
   */
  insert(events: readonly NostrEvent[], opts: InsertOptions): InsertResult[] {
    this.#open();
    const posts = events.map((e) => {
      try {
        return { post: readPost(e), event: plainEvent(e) };
      } catch (err) {
        throw new StoreError(
          "store.not_a_post",
          `Cannot store event ${e?.id}: ${errorMessage(err)}`,
          {
            cause: err,
          },
        );
      }
    });
    const results: InsertResult[] = [];
    const added: StoredPost[] = [];
    const addedByParent = new Map<string, StoredPost[]>();
    const q = this.#statements;
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      for (const { post, event } of posts) {
        const replaced = post.kind === "presence" ? this.#replaces(post) : [];
        if (replaced === undefined) {
          results.push({ id: post.id, superseded: true });
          continue;
        }
        const grafted = post.parent === undefined ? false : this.#isGraft(post.parent, post.root);
        const res = q.insertEvent.run(
          post.id,
          post.author,
          post.kind,
          post.createdAt,
          post.root ?? null,
          post.parent ?? null,
          grafted ? 1 : 0,
          post.title ?? null,
          post.text,
          JSON.stringify(event),
        );
        if (opts.origin === "local") this.outbox.add(post.id, this.#relays);
        if (Number(res.changes) === 0) {
          results.push({ id: post.id, duplicate: true });
          continue;
        }
        const seq = Number(res.lastInsertRowid);
        // Deleted after the insert, so the largest seq is never freed and never reused.
        for (const o of replaced) {
          q.deleteTags.run(o.seq);
          q.deleteEvent.run(o.seq);
          q.deleteOutbox.run(o.id);
        }
        const seen = new Set<string>();
        for (const t of post.tags) {
          if (t[0]?.length !== 1 || typeof t[1] !== "string") continue;
          const key = `${t[0]}\u0000${t[1]}`;
          if (seen.has(key)) continue;
          seen.add(key);
          q.insertTag.run(seq, t[0], t[1], post.createdAt);
        }
        // A presence has nothing to search, and leaves no FTS row behind when replaced.
        if (post.kind !== "presence") q.insertFts.run(seq, post.title ?? null, post.text);
        // Replies that arrived before this post: now we know whether they are grafts.
        const thread = post.root ?? post.id;
        q.regraft.run(thread, post.id);
        for (const child of addedByParent.get(post.id) ?? []) child.grafted = child.root !== thread;
        const stored: StoredPost = { ...post, seq, grafted, event };
        added.push(stored);
        if (post.parent !== undefined) {
          const list = addedByParent.get(post.parent) ?? [];
          list.push(stored);
          addedByParent.set(post.parent, list);
        }
        results.push({ id: post.id, seq });
      }
      this.#db.exec("COMMIT");
    } catch (err) {
      this.#db.exec("ROLLBACK");
      throw new StoreError(
        "store.insert",
        `Cannot store ${events.length} events: ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
    if (added.length > 0) this.#notify(added, opts.origin);
    return results;
  }

  /**
   * Calls `listener` after each committed `insert` that stored new posts, with those
   * posts in seq order (duplicates left out) and their origin. Runs synchronously inside `insert`:
   * keep it short. Returns the function that removes the listener.
   */
  onInsert(listener: InsertListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Every stored presence (one per author at most), at most `limit` (default the
   * author bound): the seen authors' first (see {@linkcode PresencePost.seen}), each
   * group newest arrival first.
   */
  presence(opts: { limit?: number } = {}): PresencePost[] {
    this.#open();
    const limit = checkLimit(opts.limit ?? this.#maxPresenceAuthors);
    return (this.#statements.presence.all(limit) as (Row & { seen: number })[]).map((r) => ({
      ...toPost(r),
      seen: r.seen === 1,
    }));
  }

  /** How many presences (authors) are stored. */
  presenceCount(): number {
    this.#open();
    return (this.#statements.presenceCount.get() as { n: number }).n;
  }

  /** How many presences are stored, and how many of them are seen authors'. */
  presenceCounts(): { total: number; seen: number } {
    this.#open();
    const r = this.#statements.presenceCounts.get() as { n: number; seen: number | null };
    return { total: r.n, seen: r.seen ?? 0 };
  }

  /** True when a presence of `author` is stored. */
  hasPresence(author: string): boolean {
    this.#open();
    return this.#statements.presenceOf.get(author) !== undefined;
  }

  /** Those of `authors` that are seen (see {@linkcode PresencePost.seen}). */
  seenAuthors(authors: readonly string[]): Set<string> {
    this.#open();
    const rows = this.#statements.seenAuthors.all(JSON.stringify(authors)) as { author: string }[];
    return new Set(rows.map((r) => r.author));
  }

  /** True when an event with this id is stored (check before verifying a signature). */
  has(id: string): boolean {
    this.#open();
    return this.#statements.has.get(id) !== undefined;
  }

  /** The stored post with this id. */
  get(id: string): StoredPost | undefined {
    this.#open();
    const row = this.#statements.get.get(id) as Row | undefined;
    return row && toPost(row);
  }

  /**
   * A thread in seq order: its root (when stored) first, then every post whose root
   * is `rootId` (grafted ones included) and every grafted reply, from another thread,
   * whose parent is in this one. With more than `limit` replies (default 1000), the
   * oldest are left out; the root is always kept.
   */
  thread(rootId: string, opts: { limit?: number } = {}): StoredPost[] {
    this.#open();
    const limit = checkLimit(opts.limit ?? 1000);
    const replies = (this.#statements.thread.all(rootId, limit) as Row[]).map(toPost).reverse();
    const root = this.get(rootId);
    return root ? [root, ...replies] : replies;
  }

  /**
   * The newest posts of a thread, newest first by seq: the root and the replies whose
   * root is `rootId`, grafted replies left out. This is what the loop detector reads.
   */
  threadNewest(rootId: string, limit: number): StoredPost[] {
    this.#open();
    return (this.#statements.threadNewest.all(rootId, checkLimit(limit)) as Row[]).map(toPost);
  }

  /** Posts after `sinceSeq` in seq order, and the cursor that continues after them. */
  feed(opts: FeedOptions): FeedPage {
    this.#open();
    const limit = checkLimit(opts.limit);
    const max = this.maxSeq();
    const q = feedSql({
      sinceSeq: opts.sinceSeq,
      maxSeq: max,
      limit,
      ...(opts.kinds ? { kinds: opts.kinds } : {}),
      ...(opts.authors ? { authors: opts.authors } : {}),
    });
    const rows = this.#statement(q.sql).all(...q.params) as Row[];
    const posts = rows.map(toPost);
    // A short page means every post up to `max` was looked at.
    const last = posts.at(-1);
    const cursor = posts.length === limit && last !== undefined ? last.seq : max;
    return { posts, cursor };
  }

  /**
   * Full-text search over titles and texts, best match first among the newest
   * {@linkcode SEARCH_CANDIDATES} matches (docs/decisions/store_scale.md).
   *
   * @throws {StoreError} code `store.bad_search` for a query FTS5 cannot parse.
   */
  search(query: string, opts: SearchOptions): StoredPost[] {
    this.#open();
    const limit = checkLimit(opts.limit);
    const match = opts.plain ? plainQuery(query) : query;
    if (match === "") return [];
    try {
      const candidates = Math.max(SEARCH_CANDIDATES, limit);
      return (this.#statements.search.all(match, limit, candidates) as Row[]).map(toPost);
    } catch (err) {
      throw new StoreError(
        "store.bad_search",
        `Cannot search for ${JSON.stringify(query)}: ${errorMessage(err)}. Use words, "quoted ` +
          `phrases", AND, OR, NOT and prefix* (SQLite FTS5 syntax), or search as plain words.`,
        { cause: err },
      );
    }
  }

  /**
   * Posts carrying the tag `[name, value, …]` (single-letter tag names only, as relays
   * index them), newest first by `created_at`; `since` in seconds.
   */
  byTag(name: string, value: string, opts: { limit: number; since?: number }): StoredPost[] {
    this.#open();
    return (this.#statements.byTag.all(
      name,
      value,
      opts.since ?? 0,
      checkLimit(opts.limit),
    ) as Row[]).map(
      toPost,
    );
  }

  /**
   * The stored events matching a NIP-01 REQ filter (`ids`, `authors`, `kinds`,
   * `since`, `until`, `#x` single-letter tag lists, `limit`), newest first by
   * `created_at` as relays answer. Kinds outside the wats block match nothing;
   * `search` (NIP-50) is not supported and matches nothing. At most `maxLimit` events
   * (default 500) even when the filter asks for more.
   *
   * @throws {StoreError} code `store.bad_filter` for a filter of the wrong shape.
   */
  query(filter: Filter, opts: { maxLimit?: number } = {}): NostrEvent[] {
    return this.queryRaw(filter, opts).map((r) => JSON.parse(r.raw) as NostrEvent);
  }

  /**
   * `query`, with each event as its stored JSON text (with its id and `created_at`)
   * rather than parsed: for the relay endpoint, which only sends it on.
   *
   * @throws {StoreError} code `store.bad_filter` for a filter of the wrong shape.
   */
  queryRaw(filter: Filter, opts: { maxLimit?: number } = {}): RawEvent[] {
    this.#open();
    const plan = filterPlan(filter, opts.maxLimit ?? 500);
    if (plan === undefined) return [];
    type Key = { createdAt: number; seq: number };
    let keys: Key[] = [];
    for (const q of plan.keys) {
      keys.push(...this.#statement(q.sql).all(...q.params) as unknown as Key[]);
    }
    if (plan.keys.length > 1) {
      // Each statement is sorted and a value may be in several (two of its tags).
      keys.sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq);
      keys = keys.filter((k, i) => i === 0 || k.seq !== keys[i - 1]!.seq);
    }
    const seqs = keys.slice(0, plan.limit).map((k) => k.seq);
    if (seqs.length === 0) return [];
    return this.#statements.rowsBySeq.all(JSON.stringify(seqs)) as unknown as RawEvent[];
  }

  /** The largest seq stored, 0 when empty. */
  maxSeq(): number {
    this.#open();
    return (this.#statements.maxSeq.get() as { m: number | null }).m ?? 0;
  }

  /** How many events are stored. */
  count(): number {
    this.#open();
    return (this.#statements.count.get() as { n: number }).n;
  }

  /** Records that this node signs for `name` with `pubkey`. Idempotent. */
  recordProfile(name: string, pubkey: string): void {
    this.#open();
    this.#statements.recordProfile.run(name, pubkey);
  }

  /** Every pubkey this node has signed for: its own profiles' authors. */
  localAuthors(): Set<string> {
    this.#open();
    return new Set(
      (this.#statements.localAuthors.all() as { pubkey: string }[]).map((r) => r.pubkey),
    );
  }

  /** Every profile this node has signed for, by name. */
  profiles(): ProfileRecord[] {
    this.#open();
    return (this.#statements.profiles.all() as { name: string; pubkey: string }[]).map((r) => ({
      name: r.name,
      pubkey: r.pubkey,
    }));
  }

  /** The `created_at` (seconds) to catch up from on `relay`, if one was saved. */
  getCursor(relay: string): number | undefined {
    this.#open();
    return (this.#statements.getCursor.get(relay) as { since: number } | undefined)?.since;
  }

  /** Saves the catch-up point of `relay`. */
  setCursor(relay: string, createdAt: number): void {
    this.#open();
    this.#statements.setCursor.run(relay, createdAt);
  }

  /** A value saved with `setMeta`. */
  getMeta(key: string): string | undefined {
    this.#open();
    return (this.#statements.getMeta.get(key) as { value: string } | undefined)?.value;
  }

  /** Saves a small value under `key`, replacing the previous one. */
  setMeta(key: string, value: string): void {
    this.#open();
    this.#statements.setMeta.run(key, value);
  }

  /** Closes the database. Further calls throw; closing twice is fine. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#listeners.clear();
    this.#db.close();
  }

  /** A prepared statement for one of `query`'s few SQL shapes, kept for reuse. */
  #statement(sql: string): StatementSync {
    let stmt = this.#shapes.get(sql);
    if (!stmt) {
      if (this.#shapes.size >= 256) this.#shapes.clear();
      stmt = this.#db.prepare(sql);
      this.#shapes.set(sql, stmt);
    }
    return stmt;
  }

  /**
   * NIP-01 replaceable rules for a presence about to be stored: undefined when the
   * author's stored one is newer (later `created_at`, or the same and a lower id);
   * otherwise the rows it replaces: the author's older one and, for a new author
   * past the bound, the one to evict (a never-seen author's before a seen one's,
   * this node's own last; the one that arrived first among them). `insert` deletes them (row,
   * tags, outbox entries) once the new one is in, inside its transaction.
   */
  #replaces(post: Post): StoredRef[] | undefined {
    const q = this.#statements;
    const old = q.presenceOf.all(post.author) as StoredRef[];
    for (const o of old) {
      if (o.id === post.id) return []; // the insert answers "duplicate"
      if (o.created_at > post.createdAt || (o.created_at === post.createdAt && o.id < post.id)) {
        return undefined;
      }
    }
    if (old.length > 0) return old;
    const n = (q.presenceCount.get() as { n: number }).n;
    return n < this.#maxPresenceAuthors
      ? []
      : q.presenceOldest.all(n - this.#maxPresenceAuthors + 1) as StoredRef[];
  }

  #isGraft(parent: string, root: string | undefined): boolean {
    const row = this.#statements.threadOf.get(parent) as { thread: string } | undefined;
    return row !== undefined && row.thread !== root;
  }

  #notify(posts: StoredPost[], origin: Origin): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(posts, origin);
      } catch (err) {
        this.#onListenerError(err);
      }
    }
  }

  #open(): void {
    if (this.#closed) {
      throw new StoreError("store.closed", `The store ${this.#path} is closed`);
    }
  }
}

const COLS = "seq, grafted, raw";

/** Whether the author of presence row `p` is seen (see {@linkcode PresencePost.seen}). */
const SEEN = `(p.author IN (SELECT pubkey FROM profiles)
  OR EXISTS (SELECT 1 FROM events o WHERE o.author = p.author AND o.kind <> 'presence'))`;

/**
 * Every statement the store prepares, by name: tests/store/query_plan_test.ts checks
 * that none reads the whole events table.
 */
export const STORE_SQL = {
  insertEvent:
    `INSERT INTO events (id, author, kind, created_at, root, parent, grafted, title, text, raw)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  insertTag: "INSERT INTO tags (seq, name, value, created_at) VALUES (?, ?, ?, ?)",
  insertFts: "INSERT INTO events_fts (rowid, title, text) VALUES (?, ?, ?)",
  threadOf: "SELECT coalesce(root, id) AS thread FROM events WHERE id = ?",
  regraft: "UPDATE events SET grafted = (root IS NOT ?1) WHERE parent = ?2",
  has: "SELECT 1 FROM events WHERE id = ?",
  presenceOf: "SELECT seq, id, created_at FROM events WHERE kind = 'presence' AND author = ?",
  presenceCount: "SELECT count(*) AS n FROM events WHERE kind = 'presence'",
  // Evicted first: never seen, then seen, then this node's own; the oldest arrival in each.
  presenceOldest: `SELECT seq, id, created_at FROM events p WHERE kind = 'presence'
       ORDER BY p.author IN (SELECT pubkey FROM profiles), ${SEEN}, seq LIMIT ?`,
  presence: `SELECT ${COLS}, ${SEEN} AS seen FROM events p WHERE kind = 'presence'
       ORDER BY seen DESC, seq DESC LIMIT ?`,
  presenceCounts:
    `SELECT count(*) AS n, sum(${SEEN}) AS seen FROM events p WHERE kind = 'presence'`,
  seenAuthors:
    `SELECT value AS author FROM json_each(?1) WHERE value IN (SELECT pubkey FROM profiles)
         OR EXISTS (SELECT 1 FROM events o WHERE o.author = value AND o.kind <> 'presence')`,
  deleteTags: "DELETE FROM tags WHERE seq = ?",
  deleteEvent: "DELETE FROM events WHERE seq = ?",
  deleteOutbox: "DELETE FROM outbox WHERE event_id = ?",
  get: `SELECT ${COLS} FROM events WHERE id = ?`,
  thread: `SELECT ${COLS} FROM events WHERE root = ?1
       UNION
       SELECT ${COLS} FROM events WHERE parent = ?1 AND grafted = 1
       UNION
       SELECT c.seq, c.grafted, c.raw FROM events p JOIN events c ON c.parent = p.id
         WHERE p.root = ?1 AND c.grafted = 1
       ORDER BY seq DESC LIMIT ?2`,
  threadNewest: `SELECT ${COLS} FROM events WHERE root = ?1 AND grafted = 0
       UNION ALL
       SELECT ${COLS} FROM events WHERE id = ?1
       ORDER BY seq DESC LIMIT ?2`,
  // The newest matches by rowid (FTS5 walks its doclists in that order and stops),
  // ranked: ranking every match of a common word costs seconds at a million posts.
  // Only the page's rows are read from events.
  search: `SELECT e.seq, e.grafted, e.raw FROM (
       SELECT seq, rank FROM (
         SELECT rowid AS seq, rank FROM events_fts WHERE events_fts MATCH ?1
         ORDER BY rowid DESC LIMIT ?3
       ) ORDER BY rank, seq DESC LIMIT ?2
     ) m JOIN events e ON e.seq = m.seq ORDER BY m.rank, m.seq DESC`,
  byTag: `SELECT e.seq, e.grafted, e.raw FROM tags t JOIN events e ON e.seq = t.seq
       WHERE t.name = ?1 AND t.value = ?2 AND t.created_at >= ?3
       ORDER BY t.created_at DESC, t.seq DESC LIMIT ?4`,
  rowsBySeq: ROWS_BY_SEQ,
  maxSeq: "SELECT max(seq) AS m FROM events",
  // Kept by triggers (src/store/schema.ts): count(*) reads the whole table.
  count: "SELECT n FROM counts WHERE name = 'events'",
  recordProfile: "INSERT INTO profiles (name, pubkey) VALUES (?, ?) ON CONFLICT DO NOTHING",
  localAuthors: "SELECT DISTINCT pubkey FROM profiles",
  profiles: "SELECT name, pubkey FROM profiles ORDER BY name, pubkey",
  getCursor: "SELECT since FROM cursors WHERE relay = ?",
  setCursor:
    "INSERT INTO cursors (relay, since) VALUES (?, ?) ON CONFLICT (relay) DO UPDATE SET since = excluded.since",
  getMeta: "SELECT value FROM meta WHERE key = ?",
  setMeta:
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
} as const;

function prepare(db: DatabaseSync): { [K in keyof typeof STORE_SQL]: StatementSync } {
  const out: Partial<Record<keyof typeof STORE_SQL, StatementSync>> = {};
  for (const [name, sql] of Object.entries(STORE_SQL)) {
    out[name as keyof typeof STORE_SQL] = db.prepare(sql);
  }
  return out as { [K in keyof typeof STORE_SQL]: StatementSync };
}

function toPost(row: Row): StoredPost {
  const event = JSON.parse(row.raw) as NostrEvent;
  return { ...readPost(event), seq: row.seq, grafted: row.grafted === 1, event };
}

/** Each word quoted (FTS5 string syntax), all of them required. */
export function plainQuery(text: string): string {
  return text.split(/\s+/).filter((w) => w !== "").map((w) => `"${w.replaceAll('"', '""')}"`)
    .join(" ");
}
