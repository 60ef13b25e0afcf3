/**
 * The store's SQLite schema, versioned with `PRAGMA user_version`.
 *
 * A new database gets the latest schema in one transaction; an older one is migrated
 * step by step; a newer one (written by a later wats) is refused rather than
 * misread.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { StoreError } from "../errors.ts";

/** The schema version this code reads and writes. */
export const SCHEMA_VERSION = 3;

const V1 = `
CREATE TABLE events (
  seq        INTEGER PRIMARY KEY,       -- arrival order on this node
  id         TEXT NOT NULL UNIQUE,
  author     TEXT NOT NULL,
  kind       TEXT NOT NULL,             -- wats kind name
  created_at INTEGER NOT NULL,
  root       TEXT,
  parent     TEXT,
  grafted    INTEGER NOT NULL DEFAULT 0,
  title      TEXT,
  text       TEXT NOT NULL,
  raw        TEXT NOT NULL              -- the event as JSON
);
CREATE INDEX events_author  ON events (author);
CREATE INDEX events_kind    ON events (kind);
CREATE INDEX events_root    ON events (root);
CREATE INDEX events_parent  ON events (parent);
CREATE INDEX events_created ON events (created_at);

CREATE TABLE tags (
  seq        INTEGER NOT NULL,
  name       TEXT NOT NULL,
  value      TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX tags_lookup ON tags (name, value, created_at, seq);

CREATE VIRTUAL TABLE events_fts USING fts5 (
  title, text, content = 'events', content_rowid = 'seq'
);

CREATE TABLE outbox (
  event_id TEXT NOT NULL,
  relay    TEXT NOT NULL,
  added_at INTEGER NOT NULL,
  UNIQUE (relay, event_id)
);
CREATE INDEX outbox_pending ON outbox (relay, added_at);

CREATE TABLE profiles (
  name   TEXT NOT NULL,
  pubkey TEXT NOT NULL,
  PRIMARY KEY (name, pubkey)
);

CREATE TABLE cursors (
  relay TEXT PRIMARY KEY,
  since INTEGER NOT NULL
);

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`;

/**
 * Indexes that bound every read by what it returns (docs/decisions/store_scale.md):
 * `(author, created_at)` and `(author, kind, created_at)` (the rowid, `seq`, ends
 * each index, so each walks in the relay order `created_at DESC, seq DESC`), `(kind,
 * created_at)`, the tags of one event by `seq` (deleting a replaced presence's tags,
 * and a filter's second tag list), the outbox by event (a replaced presence leaves
 * it), and the number of events kept by triggers (a
 * count(*) reads the whole table).
 */
const V2 = `
DROP INDEX events_author;
DROP INDEX events_kind;
CREATE INDEX events_author_created ON events (author, created_at);
CREATE INDEX events_author_kind    ON events (author, kind, created_at);
CREATE INDEX events_kind_created   ON events (kind, created_at);
CREATE INDEX tags_seq ON tags (seq, name, value);
CREATE INDEX outbox_event ON outbox (event_id);

CREATE TABLE counts (
  name TEXT PRIMARY KEY,
  n    INTEGER NOT NULL
);
INSERT INTO counts (name, n) SELECT 'events', count(*) FROM events;
CREATE TRIGGER events_counted AFTER INSERT ON events BEGIN
  UPDATE counts SET n = n + 1 WHERE name = 'events';
END;
CREATE TRIGGER events_uncounted AFTER DELETE ON events BEGIN
  UPDATE counts SET n = n - 1 WHERE name = 'events';
END;
`;

/**
 * `(kind, seq)`: a feed of some kinds (the MCP `feed` tool, src/store/feed_sql.ts)
 * walks each kind's posts in arrival order from its cursor and stops at its page,
 * instead of every post after the cursor.
 */
const V3 = `
CREATE INDEX events_kind_seq ON events (kind, seq);
`;

/** Each step takes the schema from version `i` to `i + 1`. */
export const MIGRATIONS: readonly string[] = [V1, V2, V3];

/** Creates or migrates the schema of `db`, opened on `path` (named in errors). */
export function migrate(db: DatabaseSync, path: string): void {
  const row = db.prepare("PRAGMA user_version").get() as { user_version: number };
  const version = row.user_version;
  if (version > SCHEMA_VERSION) {
    throw new StoreError(
      "store.newer_schema",
      `The store ${path} has schema version ${version}, newer than this wats knows ` +
        `(${SCHEMA_VERSION}): it was written by a later wats. Upgrade wats, or use another ` +
        `data directory.`,
    );
  }
  if (version === SCHEMA_VERSION) return;
  db.exec("BEGIN IMMEDIATE");
  try {
    // Another process may have migrated while this one waited for the write lock.
    const now = (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
    for (let v = now; v < SCHEMA_VERSION; v++) {
      const step = MIGRATIONS[v];
      if (step === undefined) {
        throw new Error(`this wats has no migration from schema version ${v}`);
      }
      db.exec(step);
    }
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    db.exec("COMMIT");
  } catch (err) {
    db.exec("ROLLBACK");
    throw new StoreError("store.migrate", `Cannot create the tables of the store ${path}: ${err}`, {
      cause: err,
    });
  }
}
