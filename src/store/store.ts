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
import { type WatsKind, watsKindOf } from "../posts/kinds.ts";
import { type NostrEvent, plainEvent, type Post, readPost } from "../posts/post.ts";
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
  /** Called when an `onInsert` listener throws. Default: `console.error`. */
  onListenerError?: (err: unknown) => void;
}

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

/** The most rows one query returns; larger limits are lowered to it. */
export const MAX_QUERY_LIMIT = 10_000;

type Row = { seq: number; grafted: number; raw: string };

/** The node's post store. Synchronous; one instance per process and file. */
export class Store {
  readonly #db: DatabaseSync;
  readonly #path: string;
  readonly #now: () => number;
  readonly #onListenerError: (err: unknown) => void;
  readonly #listeners = new Set<(posts: StoredPost[]) => void>();
  readonly #statements: ReturnType<typeof prepare>;
  readonly #shapes = new Map<string, StatementSync>();
  #closed = false;

  private constructor(db: DatabaseSync, path: string, opts: StoreOptions) {
    this.#db = db;
    this.#path = path;
    this.#now = opts.now ?? Date.now;
    this.#onListenerError = opts.onListenerError ??
      ((err) => console.error("error: a store listener failed:", err));
    this.#statements = prepare(db);
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
   * arrives later gets its `grafted` flag when the parent arrives.
   *
   * @throws {StoreError} code `store.not_a_post` (nothing stored) when an event is not
   * a wats post, `store.insert` when SQLite fails (nothing stored).
   */
  insert(events: readonly NostrEvent[]): InsertResult[] {
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
        if (Number(res.changes) === 0) {
          results.push({ id: post.id, duplicate: true });
          continue;
        }
        const seq = Number(res.lastInsertRowid);
        const seen = new Set<string>();
        for (const t of post.tags) {
          if (t[0]?.length !== 1 || typeof t[1] !== "string") continue;
          const key = `${t[0]}\u0000${t[1]}`;
          if (seen.has(key)) continue;
          seen.add(key);
          q.insertTag.run(seq, t[0], t[1], post.createdAt);
        }
        q.insertFts.run(seq, post.title ?? null, post.text);
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
    if (added.length > 0) this.#notify(added);
    return results;
  }

  /**
   * Calls `listener` after each committed `insert` that stored new posts, with those
   * posts in seq order (duplicates left out). Runs synchronously inside `insert`:
   * keep it short. Returns the function that removes the listener.
   */
  onInsert(listener: (posts: StoredPost[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
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
    const rows = this.#statements.feed.all(
      opts.sinceSeq,
      max,
      opts.kinds ? JSON.stringify(opts.kinds) : null,
      opts.authors ? JSON.stringify(opts.authors) : null,
      limit,
    ) as Row[];
    const posts = rows.map(toPost);
    // A short page means every post up to `max` was looked at.
    const cursor = posts.length === limit ? posts[posts.length - 1].seq : max;
    return { posts, cursor };
  }

  /**
   * Full-text search over titles and texts, best match first.
   *
   * @throws {StoreError} code `store.bad_search` for a query FTS5 cannot parse.
   */
  search(query: string, opts: SearchOptions): StoredPost[] {
    this.#open();
    const limit = checkLimit(opts.limit);
    const match = opts.plain ? plainQuery(query) : query;
    if (match === "") return [];
    try {
      return (this.#statements.search.all(match, limit) as Row[]).map(toPost);
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
    const where: string[] = [];
    const params: (string | number)[] = [];
    const list = (key: string, value: unknown): string[] => {
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
        throw new StoreError("store.bad_filter", `Filter field ${key} must be a list of strings`);
      }
      return value;
    };
    if (filter.ids !== undefined) {
      where.push("e.id IN (SELECT value FROM json_each(?))");
      params.push(JSON.stringify(list("ids", filter.ids)));
    }
    if (filter.authors !== undefined) {
      // `+` keeps SQLite on the created_at index (see the ORDER BY below).
      where.push("+e.author IN (SELECT value FROM json_each(?))");
      params.push(JSON.stringify(list("authors", filter.authors)));
    }
    if (filter.kinds !== undefined) {
      if (!Array.isArray(filter.kinds) || !filter.kinds.every((k) => typeof k === "number")) {
        throw new StoreError("store.bad_filter", "Filter field kinds must be a list of numbers");
      }
      const names = filter.kinds.map(watsKindOf).filter((k) => k !== undefined);
      where.push("+e.kind IN (SELECT value FROM json_each(?))");
      params.push(JSON.stringify(names));
    }
    for (const key of ["since", "until"] as const) {
      const v = filter[key];
      if (v === undefined) continue;
      if (typeof v !== "number" || !Number.isFinite(v)) {
        throw new StoreError("store.bad_filter", `Filter field ${key} must be a number (seconds)`);
      }
      where.push(key === "since" ? "e.created_at >= ?" : "e.created_at <= ?");
      params.push(v);
    }
    if (filter.search !== undefined) return [];
    for (const [key, value] of Object.entries(filter)) {
      if (!key.startsWith("#")) continue;
      if (key.length !== 2) return []; // only single-letter tags are indexed
      // Driven by the tags index; a correlated EXISTS would scan the tags table.
      where.push(
        "e.seq IN (SELECT t.seq FROM tags t WHERE t.name = ? AND t.value IN (SELECT value FROM json_each(?)))",
      );
      params.push(key.slice(1), JSON.stringify(list(key, value)));
    }
    const max = checkLimit(opts.maxLimit ?? 500);
    const asked = filter.limit;
    if (asked !== undefined && (typeof asked !== "number" || !(asked >= 0))) {
      throw new StoreError("store.bad_filter", "Filter field limit must be a number ≥ 0");
    }
    const limit = Math.min(max, asked === undefined ? max : Math.floor(asked));
    if (limit === 0) return [];
    // Walking events_created backwards stops after `limit` rows; the kind or author
    // index instead sorts every match first (150 ms for a page of 32 over 10,000
    // posts, 0.1 ms this way), and the relay endpoint reads its answers page by page.
    const sql = `SELECT e.id, e.created_at AS createdAt, e.author AS pubkey, e.kind, e.raw
      FROM events e ${
      where.length ? "WHERE " + where.join(" AND ") : ""
    } ORDER BY e.created_at DESC, e.seq DESC LIMIT ?`;
    return this.#statement(sql).all(...params, limit) as unknown as RawEvent[];
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

  /**
   * Queues a stored event for each relay until `outboxAck`. Queuing it again for a
   * relay is a no-op.
   *
   * @throws {StoreError} code `store.outbox_unknown` when the event is not stored.
   */
  outboxAdd(eventId: string, relays: readonly string[]): void {
    this.#open();
    if (!this.has(eventId)) {
      throw new StoreError(
        "store.outbox_unknown",
        `Cannot queue event ${eventId} for publishing: it is not stored. Insert it first.`,
      );
    }
    const at = this.#now();
    this.#transaction(() => {
      for (const relay of relays) this.#statements.outboxAdd.run(eventId, relay, at);
    });
  }

  /** Events still to publish to `relay`, oldest queued first. */
  outboxPending(relay: string, limit: number): NostrEvent[] {
    this.#open();
    return (this.#statements.outboxPending.all(relay, checkLimit(limit)) as { raw: string }[]).map((
      r,
    ) => JSON.parse(r.raw) as NostrEvent);
  }

  /** Marks the event as accepted by `relay`. Returns false when it was not queued. */
  outboxAck(eventId: string, relay: string): boolean {
    this.#open();
    return Number(this.#statements.outboxAck.run(relay, eventId).changes) > 0;
  }

  /** How many (event, relay) pairs wait in the outbox. */
  outboxSize(): number {
    this.#open();
    return (this.#statements.outboxSize.get() as { n: number }).n;
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
      if (this.#shapes.size >= 100) this.#shapes.clear();
      stmt = this.#db.prepare(sql);
      this.#shapes.set(sql, stmt);
    }
    return stmt;
  }

  #isGraft(parent: string, root: string | undefined): boolean {
    const row = this.#statements.threadOf.get(parent) as { thread: string } | undefined;
    return row !== undefined && row.thread !== root;
  }

  #transaction(fn: () => void): void {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      fn();
      this.#db.exec("COMMIT");
    } catch (err) {
      this.#db.exec("ROLLBACK");
      throw new StoreError(
        "store.write",
        `Cannot write to the store ${this.#path}: ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
  }

  #notify(posts: StoredPost[]): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(posts);
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

function prepare(db: DatabaseSync) {
  const p = (sql: string): StatementSync => db.prepare(sql);
  return {
    insertEvent: p(
      `INSERT INTO events (id, author, kind, created_at, root, parent, grafted, title, text, raw)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    ),
    insertTag: p("INSERT INTO tags (seq, name, value, created_at) VALUES (?, ?, ?, ?)"),
    insertFts: p("INSERT INTO events_fts (rowid, title, text) VALUES (?, ?, ?)"),
    threadOf: p("SELECT coalesce(root, id) AS thread FROM events WHERE id = ?"),
    regraft: p("UPDATE events SET grafted = (root IS NOT ?1) WHERE parent = ?2"),
    has: p("SELECT 1 FROM events WHERE id = ?"),
    get: p(`SELECT ${COLS} FROM events WHERE id = ?`),
    thread: p(
      `SELECT ${COLS} FROM events WHERE root = ?1
       UNION
       SELECT ${COLS} FROM events WHERE parent = ?1 AND grafted = 1
       UNION
       SELECT c.seq, c.grafted, c.raw FROM events p JOIN events c ON c.parent = p.id
         WHERE p.root = ?1 AND c.grafted = 1
       ORDER BY seq DESC LIMIT ?2`,
    ),
    threadNewest: p(
      `SELECT ${COLS} FROM events WHERE root = ?1 AND grafted = 0
       UNION ALL
       SELECT ${COLS} FROM events WHERE id = ?1
       ORDER BY seq DESC LIMIT ?2`,
    ),
    feed: p(
      `SELECT ${COLS} FROM events WHERE seq > ?1 AND seq <= ?2
         AND (?3 IS NULL OR kind IN (SELECT value FROM json_each(?3)))
         AND (?4 IS NULL OR author IN (SELECT value FROM json_each(?4)))
       ORDER BY seq LIMIT ?5`,
    ),
    search: p(
      `SELECT e.seq, e.grafted, e.raw FROM events_fts JOIN events e ON e.seq = events_fts.rowid
       WHERE events_fts MATCH ?1 ORDER BY events_fts.rank LIMIT ?2`,
    ),
    byTag: p(
      `SELECT e.seq, e.grafted, e.raw FROM tags t JOIN events e ON e.seq = t.seq
       WHERE t.name = ?1 AND t.value = ?2 AND t.created_at >= ?3
       ORDER BY t.created_at DESC, t.seq DESC LIMIT ?4`,
    ),
    maxSeq: p("SELECT max(seq) AS m FROM events"),
    count: p("SELECT count(*) AS n FROM events"),
    outboxAdd: p(
      "INSERT INTO outbox (event_id, relay, added_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
    ),
    outboxPending: p(
      `SELECT e.raw FROM outbox o JOIN events e ON e.id = o.event_id
       WHERE o.relay = ? ORDER BY o.added_at, o.rowid LIMIT ?`,
    ),
    outboxAck: p("DELETE FROM outbox WHERE relay = ? AND event_id = ?"),
    outboxSize: p("SELECT count(*) AS n FROM outbox"),
    recordProfile: p("INSERT INTO profiles (name, pubkey) VALUES (?, ?) ON CONFLICT DO NOTHING"),
    localAuthors: p("SELECT DISTINCT pubkey FROM profiles"),
    profiles: p("SELECT name, pubkey FROM profiles ORDER BY name, pubkey"),
    getCursor: p("SELECT since FROM cursors WHERE relay = ?"),
    setCursor: p(
      "INSERT INTO cursors (relay, since) VALUES (?, ?) ON CONFLICT (relay) DO UPDATE SET since = excluded.since",
    ),
    getMeta: p("SELECT value FROM meta WHERE key = ?"),
    setMeta: p(
      "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ),
  };
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

function checkLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new StoreError(
      "store.bad_limit",
      `A query limit must be a whole number ≥ 1, got ${limit}`,
    );
  }
  return Math.min(limit, MAX_QUERY_LIMIT);
}
