/**
 * The rate bounds on presence from the network (docs/decisions/presence.md).
 *
 * Per author: a presence is refreshed every `agent.presence_every` (15 min by
 * default) and at each change of its agent's state, so an honest author sends a few
 * an hour; an author who sends more is refused (`too_frequent`).
 *
 * Per new author: a key costs nothing to make, so a flood can come from fresh keys,
 * one presence each, which no per-author bound sees. A presence from an author whose
 * presence the store does not hold spends a token of its source's budget (one relay,
 * or one connection to the endpoint) and of the node's overall budget; with either
 * spent it is refused (`too_many_authors`). Both refill by the hour, so a node
 * joining a large swarm still learns every agent, at the pace of their refreshes.
 *
 * Both are checked after the signature, so nobody can spend another author's
 * allowance with forged events. What the gate remembers is bounded: past
 * {@linkcode MAX_GATE_AUTHORS} authors (or sources), the one seen longest ago is
 * forgotten.
 *
 * @module
 */

/** How many presences one author may send at once (state changes come in bursts). */
export const PRESENCE_BURST = 6;

/** One more presence is allowed per this many milliseconds, up to the burst. */
export const PRESENCE_REFILL_MS = 60_000;

/** How many new authors one source may bring at once. */
export const NEW_AUTHORS_PER_SOURCE_BURST = 200;

/** How many new authors one source may bring per hour, past its burst. */
export const NEW_AUTHORS_PER_SOURCE_HOUR = 200;

/** How many new authors all sources together may bring at once. */
export const NEW_AUTHORS_BURST = 1_000;

/** How many new authors all sources together may bring per hour, past the burst. */
export const NEW_AUTHORS_HOUR = 1_000;

/** The most authors (and the most sources) the gate remembers. */
export const MAX_GATE_AUTHORS = 10_000;

const HOUR_MS = 3_600_000;

/** What the gate decided about one presence. */
export type PresenceVerdict = "ok" | "too_frequent" | "too_many_authors";

/** The limits of a {@linkcode PresenceGate}; each defaults to its constant above. */
export interface PresenceGateOptions {
  burst?: number;
  refillMs?: number;
  maxAuthors?: number;
  newPerSourceBurst?: number;
  newPerSourceHour?: number;
  newBurst?: number;
  newHour?: number;
}

/** Who sent a presence, and whether its author is already known. */
export interface PresenceOrigin {
  /** Where it came from (a relay URL, `listen:host:port`). */
  source: string;
  /** True when the store holds a presence of this author already. */
  known: boolean;
}

/** Token buckets by key, the one used longest ago forgotten past a bound. */
class Buckets {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    readonly burst: number,
    readonly refillMs: number,
    readonly max: number,
  ) {}

  /** The tokens `key` has at `nowMs` (not spent). */
  peek(key: string, nowMs: number): number {
    const b = this.#buckets.get(key);
    if (b === undefined) return this.burst;
    return Math.min(this.burst, b.tokens + Math.max(0, nowMs - b.at) / this.refillMs);
  }

  /** Records `key`'s tokens at `nowMs`, as the most recently used. */
  set(key: string, tokens: number, nowMs: number): void {
    if (!this.#buckets.delete(key) && this.#buckets.size >= this.max) {
      this.#buckets.delete(this.#buckets.keys().next().value!);
    }
    this.#buckets.set(key, { tokens, at: nowMs });
  }

  get size(): number {
    return this.#buckets.size;
  }
}

/** Admits or refuses each presence: a budget per author, per source's new authors, overall. */
export class PresenceGate {
  readonly #authors: Buckets;
  readonly #sources: Buckets;
  readonly #all: Buckets;

  constructor(opts: PresenceGateOptions = {}) {
    const max = opts.maxAuthors ?? MAX_GATE_AUTHORS;
    this.#authors = new Buckets(
      opts.burst ?? PRESENCE_BURST,
      opts.refillMs ?? PRESENCE_REFILL_MS,
      max,
    );
    const perSource = opts.newPerSourceHour ?? NEW_AUTHORS_PER_SOURCE_HOUR;
    this.#sources = new Buckets(
      opts.newPerSourceBurst ?? NEW_AUTHORS_PER_SOURCE_BURST,
      HOUR_MS / perSource,
      max,
    );
    this.#all = new Buckets(
      opts.newBurst ?? NEW_AUTHORS_BURST,
      HOUR_MS / (opts.newHour ?? NEW_AUTHORS_HOUR),
      1,
    );
  }

  /**
   * Whether `author` may send one more presence at `nowMs`, from `origin` (a source
   * only when given); what is admitted is counted. A refused presence spends nothing.
   */
  admit(author: string, nowMs: number, origin?: PresenceOrigin): PresenceVerdict {
    const own = this.#authors.peek(author, nowMs);
    if (own < 1) {
      this.#authors.set(author, own, nowMs);
      return "too_frequent";
    }
    if (origin !== undefined && !origin.known) {
      const source = this.#sources.peek(origin.source, nowMs);
      const all = this.#all.peek("", nowMs);
      if (source < 1 || all < 1) return "too_many_authors";
      this.#sources.set(origin.source, source - 1, nowMs);
      this.#all.set("", all - 1, nowMs);
    }
    this.#authors.set(author, own - 1, nowMs);
    return "ok";
  }

  /** How many authors the gate remembers now. */
  get size(): number {
    return this.#authors.size;
  }
}
