/**
 * The outbox: the (event, relay) pairs still to publish, kept in the store's file so
 * they survive a restart. Only the store adds to it, inside `Store.insert` for
 * events of origin `"local"` (see docs/decisions/store.md); the relay sync
 * reads and acknowledges.
 *
 * @module
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";
import { StoreError } from "../errors.ts";
import type { NostrEvent } from "../posts/post.ts";
import { checkLimit } from "./limits.ts";

/** The outbox of one store; reach it as `store.outbox`. */
export class Outbox {
  readonly #ready: () => void;
  readonly #now: () => number;
  readonly #has: StatementSync;
  readonly #add: StatementSync;
  readonly #pending: StatementSync;
  readonly #ack: StatementSync;
  readonly #size: StatementSync;
  readonly #waiting: StatementSync;
  readonly #acked = new Set<(eventId: string, relay: string) => void>();

  /** `ready` throws when the store is closed; `now` stamps the queue order. */
  constructor(db: DatabaseSync, ready: () => void, now: () => number) {
    this.#ready = ready;
    this.#now = now;
    this.#has = db.prepare("SELECT 1 FROM events WHERE id = ?");
    this.#add = db.prepare(
      "INSERT INTO outbox (event_id, relay, added_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
    );
    this.#pending = db.prepare(
      `SELECT e.raw FROM outbox o JOIN events e ON e.id = o.event_id
       WHERE o.relay = ? ORDER BY o.added_at, o.rowid LIMIT ?`,
    );
    this.#ack = db.prepare("DELETE FROM outbox WHERE relay = ? AND event_id = ?");
    this.#size = db.prepare("SELECT count(*) AS n FROM outbox");
    this.#waiting = db.prepare("SELECT relay FROM outbox WHERE event_id = ? ORDER BY relay");
  }

  /**
   * Queues a stored event for each relay until `ack`. Queuing it again for a relay is
   * a no-op. `Store.insert` calls this for local events inside its transaction; call
   * it directly only to queue an already stored event again.
   *
   * @throws {StoreError} code `store.outbox_unknown` when the event is not stored.
   */
  add(eventId: string, relays: readonly string[]): void {
    this.#ready();
    if (this.#has.get(eventId) === undefined) {
      throw new StoreError(
        "store.outbox_unknown",
        `Cannot queue event ${eventId} for publishing: it is not stored. Insert it first.`,
      );
    }
    const at = this.#now();
    for (const relay of relays) this.#add.run(eventId, relay, at);
  }

  /** Events still to publish to `relay`, oldest queued first. */
  pending(relay: string, limit: number): NostrEvent[] {
    this.#ready();
    return (this.#pending.all(relay, checkLimit(limit)) as { raw: string }[]).map((r) =>
      JSON.parse(r.raw) as NostrEvent
    );
  }

  /** Marks the event as accepted by `relay`. Returns false when it was not queued. */
  ack(eventId: string, relay: string): boolean {
    this.#ready();
    const done = Number(this.#ack.run(relay, eventId).changes) > 0;
    if (done) { for (const l of [...this.#acked]) l(eventId, relay); }
    return done;
  }

  /** The relays that have not acknowledged `eventId` yet (none once every one has). */
  waiting(eventId: string): string[] {
    this.#ready();
    return (this.#waiting.all(eventId) as { relay: string }[]).map((r) => r.relay);
  }

  /** Calls `listener` after each acknowledgement `ack` records; returns the unsubscribe. */
  onAck(listener: (eventId: string, relay: string) => void): () => void {
    this.#acked.add(listener);
    return () => this.#acked.delete(listener);
  }

  /** How many (event, relay) pairs wait in the outbox. */
  size(): number {
    this.#ready();
    return (this.#size.get() as { n: number }).n;
  }
}
