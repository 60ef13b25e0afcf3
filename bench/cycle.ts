/** `xs` starting at index `by` (modulo its length) and wrapping around: round `by` of a rotation, so no path always runs right after another. */
export function rotated<T>(xs: readonly T[], by: number): T[] {
  const k = xs.length === 0 ? 0 : by % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

/** The `i`-th item of `xs` taken round and round (authors, kinds, keys dealt out to generated posts). */
export function cyclic<T>(xs: readonly T[], i: number): T {
  const x = xs[i % xs.length];
  if (x === undefined) throw new Error("error: nothing to cycle through; give at least one item");
  return x;
}
