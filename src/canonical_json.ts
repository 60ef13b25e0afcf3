/**
 * JSON text with every object's keys sorted: equal values give equal text
 * whatever order their keys came in (a TOML table reordered, an agent's
 * arguments sent again). The one home of that comparison in wats.
 *
 * @module
 */

/** `JSON.stringify` of `v` with object keys sorted; `undefined` for a value JSON cannot hold. */
export function canonicalJson(v: unknown): string | undefined {
  return JSON.stringify(
    v,
    (_k, x) =>
      typeof x === "object" && x !== null && !Array.isArray(x)
        ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : x,
  );
}
