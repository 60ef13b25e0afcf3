/**
 * A NIP-01 REQ filter as SQL over the events table: the relay endpoint's and
 * `Store.query`'s only translation of a filter.
 *
 * Every statement walks an index in the relay order (`created_at DESC, seq DESC`)
 * and stops at the page's end, so its cost follows what it returns, not the
 * store's size (docs/decisions/store_scale.md). One list of the filter drives: each
 * of its values is one arm walking its own index range (`tags_lookup` for a tag,
 * `events_author_kind` for an author and a kind, `events_author_created` for an
 * author, `events_kind_created` for a kind), and SQLite merges the sorted arms
 * (`MERGE (UNION)`), reading each only as far as the merged page needs. The
 * filter's other lists are checked on each row; an arm with such a check reads at
 * most a budget of index entries per call (`candidates`), so a filter whose other
 * lists match nothing in a large range ends its answer early instead of walking it.
 *
 * @module
 */

import type { Filter } from "nostr-tools/filter";
import { StoreError } from "../errors.ts";
import { WATS_KINDS, type WatsKind, watsKindOf } from "../posts/kinds.ts";
import { checkLimit, MAX_FILTER_VALUES } from "./limits.ts";

/** One SQL statement and its parameters. */
export interface FilterSql {
  sql: string;
  params: (string | number)[];
}

/**
 * How to answer a filter: statements each giving `(createdAt, seq)` of up to
 * `limit` matches newest first (merge them, keep the newest `limit`, then read
 * those rows with {@linkcode ROWS_BY_SEQ}).
 */
export interface FilterPlan {
  keys: FilterSql[];
  limit: number;
}

/** The rows of the seqs in the JSON list `?1`, newest first. */
export const ROWS_BY_SEQ =
  `SELECT e.id, e.created_at AS createdAt, e.author AS pubkey, e.kind, e.raw FROM events e
   WHERE e.seq IN (SELECT value FROM json_each(?1)) ORDER BY e.created_at DESC, e.seq DESC`;

/** Arms merged in one statement at most; more values make more statements. */
export const ARMS_PER_STATEMENT = 32;
/** Author × kind pairs driven by `events_author_kind` at most; past it, authors drive. */
export const MAX_PAIRS = 256;
/**
 * Index entries the arms whose rows are checked against the filter's other lists
 * read per call at most, all arms of a filter together, but at least the page
 * asked for each (the relay endpoint asks 16 at a time, so a hostile REQ of
 * {@linkcode MAX_FILTER_VALUES} values reads at most 16 each).
 */
export const CANDIDATE_BUDGET = 5_000;

const ORDER = "ORDER BY createdAt DESC, seq DESC";

type Param = string | number;

/** Where an arm walks: its index range for one value of the driving list. */
interface Source {
  /** `FROM` text; the walked table is aliased `x`. */
  from: string;
  /** Conditions on `x` picking the value's range. */
  where: string;
  params: Param[];
}

/**
 * The plan for `filter`, at most `maxLimit` rows, or undefined when it can match
 * nothing (a `search`, a multi-letter tag, an empty list, no wats kind, `limit: 0`).
 *
 * @throws {StoreError} code `store.bad_filter` for a filter of the wrong shape.
 */
export function filterPlan(filter: Filter, maxLimit: number): FilterPlan | undefined {
  const list = (key: string, value: unknown): string[] => {
    if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
      throw new StoreError("store.bad_filter", `Filter field ${key} must be a list of strings`);
    }
    if (value.length > MAX_FILTER_VALUES) {
      throw new StoreError(
        "store.bad_filter",
        `Filter field ${key} has ${value.length} values; give at most ${MAX_FILTER_VALUES} ` +
          `(split the filter over several REQs)`,
      );
    }
    return [...new Set(value)].sort();
  };
  const ids = filter.ids === undefined ? undefined : list("ids", filter.ids);
  const authors = filter.authors === undefined ? undefined : list("authors", filter.authors);
  let kinds: WatsKind[] | undefined;
  if (filter.kinds !== undefined) {
    if (!Array.isArray(filter.kinds) || !filter.kinds.every((k) => typeof k === "number")) {
      throw new StoreError("store.bad_filter", "Filter field kinds must be a list of numbers");
    }
    kinds = [...new Set(filter.kinds.map(watsKindOf).filter((k) => k !== undefined))].sort();
  }
  const range: { since?: number; until?: number } = {};
  for (const key of ["since", "until"] as const) {
    const v = filter[key];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isFinite(v)) {
      throw new StoreError("store.bad_filter", `Filter field ${key} must be a number (seconds)`);
    }
    range[key] = v;
  }
  const tags: [string, string[]][] = [];
  let unindexed = false;
  for (const [key, value] of Object.entries(filter)) {
    if (!key.startsWith("#")) continue;
    const values = list(key, value);
    if (key.length !== 2) unindexed = true; // only single-letter tags are indexed
    tags.push([key.slice(1), values]);
  }
  const asked = filter.limit;
  if (asked !== undefined && (typeof asked !== "number" || !(asked >= 0))) {
    throw new StoreError("store.bad_filter", "Filter field limit must be a number ≥ 0");
  }
  const max = checkLimit(maxLimit);
  const limit = Math.min(max, asked === undefined ? max : Math.floor(asked));
  if (filter.search !== undefined || unindexed || limit === 0) return undefined;
  if ([ids, authors, kinds, ...tags.map((t) => t[1])].some((l) => l?.length === 0)) {
    return undefined;
  }
  // Every stored event is of a wats kind: a list of them all checks nothing.
  if (kinds?.length === WATS_KINDS.length) kinds = undefined;
  tags.sort((a, b) => a[1].length - b[1].length || (a[0] < b[0] ? -1 : 1));

  if (ids !== undefined) {
    const check = residual({ authors, kinds, tags });
    const where = ["e.id IN (SELECT value FROM json_each(?))", ...rangeSql("e", range).where];
    if (check.where) where.push(check.where);
    const sql = `SELECT e.created_at AS createdAt, e.seq AS seq FROM events e
      WHERE ${where.join(" AND ")} ${ORDER} LIMIT ?`;
    const params = [JSON.stringify(ids), ...rangeSql("e", range).params, ...check.params, limit];
    return { keys: [{ sql, params }], limit };
  }
  const [tag, ...otherTags] = tags;
  let sources: Source[];
  let check: FilterSql;
  if (tag !== undefined && kinds?.length === 1 && kinds[0] === "presence") {
    // At most one presence per author and a bounded number of authors
    // (MAX_PRESENCE_AUTHORS): fewer rows than a cap's tag, which asks carry too.
    sources = [{
      from: "events x INDEXED BY events_kind_created",
      where: "x.kind = ?",
      params: ["presence"],
    }];
    check = residual({ authors, tags });
  } else if (tag !== undefined) {
    sources = tag[1].map((value) => ({
      from: "tags x INDEXED BY tags_lookup",
      where: "x.name = ? AND x.value = ?",
      params: [tag[0], value],
    }));
    check = residual({ authors, kinds, tags: otherTags });
  } else if (authors !== undefined && kinds !== undefined) {
    if (authors.length * kinds.length <= MAX_PAIRS) {
      sources = authors.flatMap((a) =>
        kinds!.map((k) => ({
          from: "events x INDEXED BY events_author_kind",
          where: "x.author = ? AND x.kind = ?",
          params: [a, k],
        }))
      );
      check = residual({});
    } else {
      sources = authors.map(authorSource);
      check = residual({ kinds });
    }
  } else if (authors !== undefined) {
    sources = authors.map(authorSource);
    check = residual({});
  } else if (kinds !== undefined) {
    sources = kinds.map((k) => ({
      from: "events x INDEXED BY events_kind_created",
      where: "x.kind = ?",
      params: [k],
    }));
    check = residual({});
  } else {
    sources = [{ from: "events x INDEXED BY events_created", where: "1", params: [] }];
    check = residual({});
  }
  const candidates = Math.max(limit, Math.floor(CANDIDATE_BUDGET / sources.length));
  const keys: FilterSql[] = [];
  for (let i = 0; i < sources.length; i += ARMS_PER_STATEMENT) {
    const chunk = padded(sources.slice(i, i + ARMS_PER_STATEMENT));
    const arms = chunk.map((s) => arm(s, { range, check, candidates }));
    keys.push({
      sql: `${arms.map((a) => a.sql).join("\n UNION ")}\n ${ORDER} LIMIT ?`,
      params: [...arms.flatMap((a) => a.params), limit],
    });
  }
  return { keys, limit };
}

function authorSource(author: string): Source {
  return {
    from: "events x INDEXED BY events_author_created",
    where: "x.author = ?",
    params: [author],
  };
}

/**
 * `sources` padded to a power of two by repeating the last (the UNION drops the
 * repeats): a few statement shapes, each prepared once and kept.
 */
function padded(sources: Source[]): Source[] {
  let n = 1;
  while (n < sources.length) n *= 2;
  const last = sources[sources.length - 1]!;
  return [...sources, ...Array.from({ length: n - sources.length }, () => last)];
}

function arm(
  s: Source,
  o: { range: { since?: number; until?: number }; check: FilterSql; candidates: number },
): FilterSql {
  const r = rangeSql("x", o.range);
  const where = [s.where, ...r.where].join(" AND ");
  const walk = `SELECT x.created_at AS createdAt, x.seq AS seq FROM ${s.from} WHERE ${where}`;
  if (o.check.sql === "") return { sql: walk, params: [...s.params, ...r.params] };
  // A budget of index entries, then the check on each: never a walk of the whole range.
  return {
    sql: `SELECT c.createdAt AS createdAt, c.seq AS seq FROM (${walk} ${ORDER} LIMIT ?) c
      JOIN events e ON e.seq = c.seq WHERE ${o.check.sql}`,
    params: [...s.params, ...r.params, o.candidates, ...o.check.params],
  };
}

function rangeSql(
  alias: string,
  range: { since?: number; until?: number },
): { where: string[]; params: Param[] } {
  const where: string[] = [];
  const params: Param[] = [];
  if (range.until !== undefined) {
    where.push(`${alias}.created_at <= ?`);
    params.push(range.until);
  }
  if (range.since !== undefined) {
    where.push(`${alias}.created_at >= ?`);
    params.push(range.since);
  }
  return { where, params };
}

/** The check of a row `e` against the lists that do not drive; `sql` empty: none. */
function residual(
  o: { authors?: string[]; kinds?: string[]; tags?: [string, string[]][] },
): FilterSql & { where?: string } {
  const where: string[] = [];
  const params: Param[] = [];
  if (o.authors !== undefined) {
    where.push("e.author IN (SELECT value FROM json_each(?))");
    params.push(JSON.stringify(o.authors));
  }
  if (o.kinds !== undefined) {
    where.push("e.kind IN (SELECT value FROM json_each(?))");
    params.push(JSON.stringify(o.kinds));
  }
  for (const [name, values] of o.tags ?? []) {
    where.push(
      "EXISTS (SELECT 1 FROM tags t INDEXED BY tags_seq WHERE t.seq = e.seq AND t.name = ? " +
        "AND t.value IN (SELECT value FROM json_each(?)))",
    );
    params.push(name, JSON.stringify(values));
  }
  const sql = where.join(" AND ");
  return { sql, params, where: sql || undefined };
}
