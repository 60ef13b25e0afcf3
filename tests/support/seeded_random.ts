/**
 * A small seeded PRNG (mulberry32) for fuzz tests, so a failure replays from
 * its seed.
 *
 * @module
 */

/** A generator of numbers in [0, 1) that depends only on `seed`. */
export function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
