/**
 * A NIP-01 REQ filter as one SQL query over the events table: the relay endpoint's
 * and `Store.query`'s only translation of a filter.
 *
 * @module
 */

import type { Filter } from "nostr-tools/filter";
import { StoreError } from "../errors.ts";
import { watsKindOf } from "../posts/kinds.ts";
import { checkLimit } from "./limits.ts";

/** The SQL of one filter and its parameters, the limit last. */
export interface FilterSql {
  sql: string;
  params: (string | number)[];
}

/**
 * The query for `filter`, at most `maxLimit` rows, or undefined when it can match
 * nothing (a `search`, a multi-letter tag, `limit: 0`).
 *
 * @throws {StoreError} code `store.bad_filter` for a filter of the wrong shape.
 */
export function filterSql(filter: Filter, maxLimit: number): FilterSql | undefined {
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
  if (filter.search !== undefined) return undefined;
  for (const [key, value] of Object.entries(filter)) {
    if (!key.startsWith("#")) continue;
    if (key.length !== 2) return undefined; // only single-letter tags are indexed
    // Driven by the tags index; a correlated EXISTS would scan the tags table.
    where.push(
      "e.seq IN (SELECT t.seq FROM tags t WHERE t.name = ? AND t.value IN (SELECT value FROM json_each(?)))",
    );
    params.push(key.slice(1), JSON.stringify(list(key, value)));
  }
  const max = checkLimit(maxLimit);
  const asked = filter.limit;
  if (asked !== undefined && (typeof asked !== "number" || !(asked >= 0))) {
    throw new StoreError("store.bad_filter", "Filter field limit must be a number ≥ 0");
  }
  const limit = Math.min(max, asked === undefined ? max : Math.floor(asked));
  if (limit === 0) return undefined;
  // Walking events_created backwards stops after `limit` rows; the kind or author
  // index instead sorts every match first (150 ms for a page of 32 over 10,000
  // posts, 0.1 ms this way), and the relay endpoint reads its answers page by page.
  const sql = `SELECT e.id, e.created_at AS createdAt, e.author AS pubkey, e.kind, e.raw
    FROM events e ${
    where.length ? "WHERE " + where.join(" AND ") : ""
  } ORDER BY e.created_at DESC, e.seq DESC LIMIT ?`;
  return { sql, params: [...params, limit] };
}
