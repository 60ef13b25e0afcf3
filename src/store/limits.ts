/**
 * The row limit every store query obeys, checked in one place.
 *
 * @module
 */

import { StoreError } from "../errors.ts";

/** The most rows one query returns; larger limits are lowered to it. */
export const MAX_QUERY_LIMIT = 10_000;

/**
 * The most values one list of a filter (`ids`, `authors`, `#e`…) may hold: each is an
 * index walk of its own (src/store/filter_sql.ts). wats' own client sends at most 100.
 */
export const MAX_FILTER_VALUES = 1000;

/**
 * The most authors whose presence a store keeps (src/store/store.ts): a flood of
 * new authors evicts the oldest instead of growing the store.
 */
export const MAX_PRESENCE_AUTHORS = 10_000;

/**
 * `limit` lowered to {@linkcode MAX_QUERY_LIMIT}.
 *
 * @throws {StoreError} code `store.bad_limit` when it is not a whole number ≥ 1.
 */
export function checkLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new StoreError(
      "store.bad_limit",
      `A query limit must be a whole number ≥ 1, got ${limit}`,
    );
  }
  return Math.min(limit, MAX_QUERY_LIMIT);
}
