/**
 * The feed (posts after a cursor, in arrival order: the MCP `feed` tool) as SQL.
 *
 * A feed of some kinds walks `events_kind_seq (kind, seq)`, one arm per kind in
 * `seq` order, merged (`MERGE (UNION ALL)`), so it reads about as many rows as it
 * returns: a feed of a kind with a few posts among 100k reads those few, not every
 * post after its cursor (docs/decisions/store_scale.md). A feed of every kind walks
 * `seq`, where nearly every row matches (presences are left out, a few per author).
 *
 * @module
 */

import type { FilterSql } from "./filter_sql.ts";

/** What a feed page asks for. */
export interface FeedQuery {
  /** Posts with a larger seq. */
  sinceSeq: number;
  /** Posts up to this seq (the store's newest when the page was asked for). */
  maxSeq: number;
  limit: number;
  /** Wats kind names; undefined: every kind but presence. */
  kinds?: readonly string[];
  /** Hex pubkeys, checked on each row. */
  authors?: readonly string[];
}

const COLS = "seq, grafted, raw";

/** The statement of one feed page: `(seq, grafted, raw)` rows in `seq` order. */
export function feedSql(q: FeedQuery): FilterSql {
  const byAuthor = q.authors !== undefined
    ? {
      sql: " AND author IN (SELECT value FROM json_each(?))",
      params: [JSON.stringify(q.authors)],
    }
    : { sql: "", params: [] };
  if (q.kinds === undefined) {
    return {
      sql:
        `SELECT ${COLS} FROM events WHERE seq > ? AND seq <= ? AND kind <> 'presence'${byAuthor.sql}
        ORDER BY seq LIMIT ?`,
      params: [q.sinceSeq, q.maxSeq, ...byAuthor.params, q.limit],
    };
  }
  const kinds = [...new Set(q.kinds)].sort();
  if (kinds.length === 0) return { sql: `SELECT ${COLS} FROM events WHERE 0`, params: [] };
  // The kinds are distinct, so the arms never share a row: UNION ALL, no row compared.
  const arm = `SELECT ${COLS} FROM events INDEXED BY events_kind_seq
    WHERE kind = ? AND seq > ? AND seq <= ?${byAuthor.sql}`;
  return {
    sql: `${kinds.map(() => arm).join("\n UNION ALL ")}\n ORDER BY seq LIMIT ?`,
    params: [...kinds.flatMap((k) => [k, q.sinceSeq, q.maxSeq, ...byAuthor.params]), q.limit],
  };
}
