/**
 * The caps of the relay endpoint (`relay_server.ts`), resolved once from its options,
 * and the one answer-rate budget its connections share. They live apart from the
 * server so that a connection (`relay_connection.ts`) and the message rules
 * (`relay_messages.ts`) read the same numbers without importing the server.
 *
 * @module
 */

import { MAX_EVENT_BYTES } from "../posts/post.ts";

/** The caps every connection of one endpoint obeys. */
export interface Limits {
  /** Bytes one client may have waiting before a live subscription of its is closed. */
  maxQueue: number;
  /** Bytes all clients together may have waiting before the slowest is disconnected. */
  maxTotalQueue: number;
  maxConnections: number;
  maxSubscriptions: number;
  maxFilters: number;
  maxLimit: number;
  stallMs: number;
}

const DEFAULT_MAX_QUEUE = 4 * 1024 * 1024;
const DEFAULT_MAX_TOTAL_QUEUE = 64 * 1024 * 1024;
/** Characters per second of stored answers, all clients together. */
export const DEFAULT_ANSWER_RATE = 4 * 1024 * 1024;
/** Longer messages are refused unread (an event is at most 64 KiB serialised). */
export const MAX_MESSAGE_CHARS = 4 * MAX_EVENT_BYTES;
export const MAX_SUB_ID_CHARS = 64;
/** Stored answers one connection may have waiting. */
export const MAX_ANSWERS = 4;

/** The caps as the endpoint's options give them (`RelayServerOptions`), defaults filled in. */
export function resolveLimits(opts: Partial<Limits>): Limits {
  return {
    maxQueue: opts.maxQueue ?? DEFAULT_MAX_QUEUE,
    maxTotalQueue: opts.maxTotalQueue ?? DEFAULT_MAX_TOTAL_QUEUE,
    maxConnections: opts.maxConnections ?? 256,
    maxSubscriptions: opts.maxSubscriptions ?? 20,
    maxFilters: opts.maxFilters ?? 10,
    maxLimit: opts.maxLimit ?? 500,
    stallMs: opts.stallMs ?? 60_000,
  };
}

/**
 * A token bucket of characters per second. Stored answers of all clients together
 * are read from the store no faster than this: a crowd of clients that ask for
 * everything and never read cannot make the node churn through hundreds of MiB
 * (what the kernel's socket buffers take before any backpressure shows).
 */
export class Rate {
  readonly #perMs: number;
  readonly #burst: number;
  #tokens: number;
  #at = performance.now();

  constructor(perSecond: number) {
    this.#perMs = perSecond / 1000;
    this.#burst = perSecond / 10;
    this.#tokens = this.#burst;
  }

  /** Whether there is budget left now. */
  ok(): boolean {
    const now = performance.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + (now - this.#at) * this.#perMs);
    this.#at = now;
    return this.#tokens > 0;
  }

  /** Takes `n` characters read from the store out of the budget. */
  spend(n: number): void {
    this.#tokens -= n;
  }
}
