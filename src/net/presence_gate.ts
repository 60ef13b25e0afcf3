/**
 * The per-author rate bound on presence from the network (docs/decisions/presence.md).
 * A presence is refreshed every `agent.presence_every` (15 min by default) and at
 * each change of its agent's state, so an honest author sends a few an hour; an
 * author who sends more is refused (`too_frequent`) after its signature is checked,
 * so nobody can spend another author's allowance with forged events. The store keeps
 * one presence per author anyway; this bound keeps a flood from costing a write and
 * a wake of every listener per event. What the gate remembers is bounded too: past
 * {@linkcode MAX_GATE_AUTHORS} authors, the one seen longest ago is forgotten.
 *
 * @module
 */

/** How many presences one author may send at once (state changes come in bursts). */
export const PRESENCE_BURST = 6;

/** One more presence is allowed per this many milliseconds, up to the burst. */
export const PRESENCE_REFILL_MS = 60_000;

/** The most authors the gate remembers. */
export const MAX_GATE_AUTHORS = 10_000;

/** Admits or refuses each author's presence by a token bucket per author. */
export class PresenceGate {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #burst: number;
  readonly #refillMs: number;
  readonly #maxAuthors: number;

  constructor(
    opts: { burst?: number; refillMs?: number; maxAuthors?: number } = {},
  ) {
    this.#burst = opts.burst ?? PRESENCE_BURST;
    this.#refillMs = opts.refillMs ?? PRESENCE_REFILL_MS;
    this.#maxAuthors = opts.maxAuthors ?? MAX_GATE_AUTHORS;
  }

  /** True when `author` may send one more presence at `nowMs` (and counts it). */
  admit(author: string, nowMs: number): boolean {
    const b = this.#buckets.get(author);
    let tokens = this.#burst;
    if (b !== undefined) {
      this.#buckets.delete(author); // re-inserted below: the Map keeps recency order
      tokens = Math.min(this.#burst, b.tokens + Math.max(0, nowMs - b.at) / this.#refillMs);
    } else if (this.#buckets.size >= this.#maxAuthors) {
      this.#buckets.delete(this.#buckets.keys().next().value!);
    }
    const ok = tokens >= 1;
    this.#buckets.set(author, { tokens: ok ? tokens - 1 : tokens, at: nowMs });
    return ok;
  }

  /** How many authors the gate remembers now. */
  get size(): number {
    return this.#buckets.size;
  }
}
