/**
 * Publishing the node's own posts to one relay from the store's outbox, a window
 * of unanswered events at a time. A post leaves the outbox for this relay only
 * when the relay answers `OK true` (or `duplicate:`: it has it), or refuses it for
 * good (`invalid:`, `pow:`: the post itself will not change, logged). Any other
 * refusal keeps it queued and it is sent again on the next connection, not in a
 * loop on this one (docs/network.md, "Outbox"): `auth-required:` once the relay
 * accepted the node's AUTH (relay_auth.ts); `restricted:` and `blocked:` (this
 * key may not post here, today) are reported through `refused`, so the sender sees
 * the post refused by that relay instead of losing it quietly.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { NostrEvent } from "../posts/post.ts";

/** NIP-01 prefixes of an `OK false` that will not change on a retry. */
const PERMANENT = ["invalid:", "pow:"];
/** NIP-01/42 prefixes that refuse the author, not the post: shown, kept queued. */
const REFUSED = ["restricted:", "blocked:"];

/** The part of the store's outbox a window uses (`Store.outbox`). */
export interface OutboxQueue {
  /** The oldest `limit` posts waiting for `relay`. */
  pending(relay: string, limit: number): NostrEvent[];
  /** `id` no longer waits for `relay`. */
  ack(id: string, relay: string): void;
}

/** Options of {@linkcode OutboxWindow}. */
export interface OutboxWindowOptions {
  url: string;
  outbox: OutboxQueue;
  log: Logger;
  /** Events published and not yet answered, at most. */
  window: number;
  /** True while the connection is open. */
  connected: () => boolean;
  /** Sends a message on the current connection (false when it is not open). */
  send: (msg: unknown[]) => boolean;
  /** The relay refused post `id` `restricted:` or `blocked:` (`reason` in full); it stays queued. */
  refused?: (id: string, reason: string) => void;
  /** The relay took post `id` (it leaves this relay's outbox). */
  accepted?: (id: string) => void;
  /**
   * The relay refused post `id` `auth-required:` (`reason` in full); it is sent again by
   * the next {@linkcode flush} after {@linkcode reset}.
   */
  authRequired?: (id: string, reason: string) => void;
}

/** The outbox of one relay: what was sent and awaits an answer, and what waits for the next connection. */
export class OutboxWindow {
  readonly #options: OutboxWindowOptions;
  readonly #inFlight = new Set<string>();
  /** Refused for now: not sent again on this connection. */
  readonly #deferred = new Set<string>();
  #flushQueued = false;

  constructor(opts: OutboxWindowOptions) {
    this.#options = opts;
  }

  /** Posts were inserted locally: publish them once this turn's inserts are done. */
  inserted(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => {
      this.#flushQueued = false;
      this.flush();
    });
  }

  /** Sends pending posts, oldest first, until the window is full. */
  flush(): void {
    if (!this.#options.connected()) return;
    const window = this.#options.window;
    if (this.#inFlight.size >= window) return;
    let pending: NostrEvent[];
    try {
      pending = this.#options.outbox.pending(
        this.#options.url,
        window + this.#inFlight.size + this.#deferred.size,
      );
    } catch (err) {
      this.#options.log.warn("cannot read the outbox: {error}", { error: (err as Error).message });
      return;
    }
    for (const event of pending) {
      if (this.#inFlight.size >= window) break;
      if (this.#inFlight.has(event.id) || this.#deferred.has(event.id)) continue;
      if (!this.#options.send(["EVENT", event])) return;
      this.#inFlight.add(event.id);
    }
  }

  /** The relay's `["OK", id, accepted, message]`. */
  answered(id: unknown, accepted: unknown, message: unknown): void {
    if (typeof id !== "string" || !this.#inFlight.delete(id)) return;
    const { url, log, outbox } = this.#options;
    const text = typeof message === "string" ? message : "";
    if (accepted === true || text.startsWith("duplicate:")) {
      outbox.ack(id, url);
      this.#options.accepted?.(id);
    } else if (REFUSED.some((p) => text.startsWith(p))) {
      this.#deferred.add(id);
      this.#options.refused?.(id, text);
    } else if (text.startsWith("auth-required:")) {
      this.#deferred.add(id);
      this.#options.authRequired?.(id, text);
    } else if (PERMANENT.some((p) => text.startsWith(p))) {
      log.warn("relay {url} refused post {id} for good: {reason}; not retrying", {
        url,
        id,
        reason: text,
      });
      outbox.ack(id, url);
    } else {
      // Rate limits, errors: try again on the next connection.
      log.info("relay {url} did not take post {id}: {reason}; retrying later", {
        url,
        id,
        reason: text,
      });
      this.#deferred.add(id);
    }
    if (this.#inFlight.size < this.#options.window / 2 + 1) this.flush();
  }

  /** The connection ended: what was unanswered or refused for now is sent again on the next. */
  reset(): void {
    this.#inFlight.clear();
    this.#deferred.clear();
  }
}
