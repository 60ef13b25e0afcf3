/**
 * The runner's view of the world: the few things it reads from the store, and
 * the clock, timers and logger it is given. Everything the runner does over time
 * goes through these, so its timing is tested with a fake clock, not with sleeps
 * (docs/architecture.md §8). `Store` (src/store/store.ts) satisfies `RunnerStore`
 * structurally; LogTape's `Logger` satisfies `RunnerLog`.
 *
 * @module
 */

/** The fields of a stored post the runner reads. */
export interface RunnerPost {
  /** Event id (64 hex). */
  id: string;
  /** Arrival order on this node: the loop detector orders by it, never by createdAt. */
  seq: number;
  /** Author key, 64 lowercase hex. */
  author: string;
  /** The wats kind name (`ask`, `answer`, …). */
  kind: string;
  /** The thread's root id; absent for a root post. */
  root?: string;
  /** The post this one answers; absent for a root post. */
  parent?: string;
  /** True when its parent belongs to another thread (left out by the loop detector). */
  grafted: boolean;
  /** The authors (hex keys) an ask is for; empty when it is for anyone (wake_rules.ts). */
  to: string[];
  /** The capability names the post names (`cap:` tags). */
  caps: string[];
  /** Seconds since the epoch, as the author's clock said (display only). */
  createdAt: number;
}

/** A small key-value table that survives a restart (the store's `meta` table). */
export interface MetaStore {
  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
}

/** What the runner reads from the store. */
export interface RunnerStore extends MetaStore {
  /** The stored post with this id. */
  get(id: string): RunnerPost | undefined;
  /** A thread's root and replies, newest first by seq, grafted replies left out. */
  threadNewest(rootId: string, limit: number): RunnerPost[];
  /** The largest seq stored, 0 when empty. */
  maxSeq(): number;
}

/** Milliseconds since the epoch; injected so tests control time. */
export interface Clock {
  now(): number;
}

/** One-shot timers; injected so tests fire them by advancing a fake clock. */
export interface Timers {
  setTimer(ms: number, fn: () => void): unknown;
  clearTimer(handle: unknown): void;
}

/**
 * A structured logger: LogTape's `Logger` fits. Messages are LogTape templates
 * (`{name}` is replaced by a property): wrap text that may hold braces with
 * `literalLog`.
 */
export interface RunnerLog {
  debug(message: string, properties?: Record<string, unknown>): void;
  info(message: string, properties?: Record<string, unknown>): void;
  warn(message: string, properties?: Record<string, unknown>): void;
  error(message: string, properties?: Record<string, unknown>): void;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** Real timers (`setTimeout`). */
export const systemTimers: Timers = {
  setTimer: (ms, fn) => setTimeout(fn, Math.max(0, ms)),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** The thread a post belongs to: its root, or itself when it is a root. */
export function threadOf(post: Pick<RunnerPost, "id" | "root">): string {
  return post.root ?? post.id;
}

/**
 * A logger that passes messages as literal text: braces are doubled, which
 * LogTape reads as plain braces. Run errors and reasons can quote JSON.
 */
export function literalLog(log: RunnerLog): RunnerLog {
  const esc = (m: string) => m.replaceAll("{", "{{").replaceAll("}", "}}");
  return {
    debug: (m, p) => log.debug(esc(m), p),
    info: (m, p) => log.info(esc(m), p),
    warn: (m, p) => log.warn(esc(m), p),
    error: (m, p) => log.error(esc(m), p),
  };
}
