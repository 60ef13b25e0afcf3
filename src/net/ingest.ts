/**
 * Ingest: the one door for events that arrive from the network (relays in `infra`,
 * peers on the `listen` endpoint). Each event is validated (`validateEvent`: shape,
 * sizes, kind, date, hash, signature), then stored, then announced on the node's
 * event stream (`post_stored` / `post_rejected`).
 *
 * Events that arrive together are stored together: accepted events wait in a queue
 * that is written in one transaction (up to {@linkcode MAX_BATCH} events) at the
 * next turn of the event loop, about ten times faster than one transaction each. An
 * event already stored is answered at once, before its signature is checked
 * (verification, not SQLite, bounds ingest). Rejections are counted by code and
 * logged at debug level, never thrown.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import type { Logger } from "@logtape/logtape";
import type { EventSink } from "../contracts/node_events.ts";
import { PRESENCE_KIND, watsKindOf } from "../posts/kinds.ts";
import type { NostrEvent } from "../posts/post.ts";
import type { RejectCode } from "../contracts/reject_codes.ts";
import { validateEvent } from "../posts/validate.ts";
import type { InsertResult, Store } from "../store/store.ts";
import type { Verifier } from "./verify_pool.ts";
import { PresenceGate } from "./presence_gate.ts";

/** The most events one store transaction takes. */
export const MAX_BATCH = 500;

/** What happened to one event. */
export interface IngestResult {
  /** True when the event is stored now: newly, or as a duplicate. */
  ok: boolean;
  /** The event's id, when it had a readable one. */
  id?: string;
  /** Set when the event was already stored. */
  duplicate?: boolean;
  /**
   * Why it was not stored: a `RejectCode` of `validateEvent`, or `store` when the
   * store failed to write it (worth retrying later).
   */
  code?: RejectCode | "store";
  /** A sentence for logs and for the peer (the NIP-01 `OK` message). */
  reason?: string;
}

/** Validates and stores events from the network; see {@linkcode createIngest}. */
export interface Ingest {
  /** Validates `input` and stores it; `source` names where it came from (a relay URL…). */
  (input: unknown, source: string): Promise<IngestResult>;
  /** Rejections so far, by code (a fresh copy). */
  rejected(): Record<string, number>;
  /** How many new events this ingest has stored. */
  stored(): number;
  /** Resolves once every ingest call made so far has finished (call before closing the store). */
  settle(): Promise<void>;
}

/** What an ingest needs. */
export interface IngestOptions {
  store: Store;
  /** The node's event stream (`wats node` JSON lines). */
  events: EventSink;
  log: Logger;
  /** Milliseconds since the epoch (validation of future dates). */
  now: () => number;
  /** `net.max_skew`: how far in the future `created_at` may be. */
  maxSkewMs: number;
  /** Checks ids and signatures (a worker pool); default: on this thread. */
  verify?: Verifier;
  /** The bounds on presence (src/net/presence_gate.ts); default its limits. */
  presenceGate?: PresenceGate;
}

interface Waiting {
  event: NostrEvent;
  source: string;
  resolve: (r: IngestResult) => void;
}

/** Builds the ingest function of one node. */
export function createIngest(opts: IngestOptions): Ingest {
  const { store, events, log } = opts;
  const gate = opts.presenceGate ?? new PresenceGate();
  const rejected: Record<string, number> = {};
  let storedCount = 0;
  let queue: Waiting[] = [];
  let scheduled = false;
  let running = 0;
  let idle: (() => void)[] = [];

  // The event stream writes to stdout; a broken pipe must not strand the callers.
  const emit: EventSink = (e) => {
    try {
      events(e);
    } catch (err) {
      log.debug("cannot write a node event: {error}", { error: errorMessage(err) });
    }
  };

  const reject = (
    source: string,
    id: string | undefined,
    code: RejectCode | "store",
    reason: string,
  ): IngestResult => {
    rejected[code] = (rejected[code] ?? 0) + 1;
    log.debug("rejected an event from {source}: {code}: {reason}", { source, id, code, reason });
    emit({ event: "post_rejected", ...(id ? { id } : {}), code, reason, source });
    return { ok: false, ...(id ? { id } : {}), code, reason };
  };

  const insertBatch = (batch: Waiting[]): (InsertResult | Error)[] => {
    try {
      return store.insert(batch.map((w) => w.event), { origin: "remote" });
    } catch (err) {
      if (batch.length === 1) return [err as Error];
    }
    // One bad event must not sink the others: store them one by one.
    return batch.flatMap((w) => insertBatch([w]));
  };

  const flush = () => {
    scheduled = false;
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      queue = queue.slice(batch.length);
      const results = insertBatch(batch);
      batch.forEach((w, i) => {
        const r = results[i] ?? new Error("the store answered no result for it");
        const id = w.event.id;
        if (r instanceof Error) {
          log.warn("cannot store event {id} from {source}: {error}", {
            id,
            source: w.source,
            error: r.message,
          });
          w.resolve(reject(w.source, id, "store", `could not store the event: ${r.message}`));
        } else if (r.duplicate) {
          w.resolve({ ok: true, id, duplicate: true });
        } else if (r.superseded) {
          w.resolve(
            reject(w.source, id, "superseded", "a newer presence of this author is stored"),
          );
        } else {
          storedCount++;
          emit({
            event: "post_stored",
            id,
            seq: r.seq!,
            kind: watsKindOf(w.event.kind) ?? String(w.event.kind),
            author: w.event.pubkey,
            source: w.source,
          });
          w.resolve({ ok: true, id });
        }
      });
    }
  };

  const ingest = async (input: unknown, source: string): Promise<IngestResult> => {
    running++;
    try {
      return await ingestOne(input, source);
    } finally {
      if (--running === 0) {
        const waiting = idle;
        idle = [];
        for (const w of waiting) w();
      }
    }
  };

  const ingestOne = async (input: unknown, source: string): Promise<IngestResult> => {
    const id = readId(input);
    try {
      if (id !== undefined && store.has(id)) return { ok: true, id, duplicate: true };
    } catch (err) {
      return reject(source, id, "store", `could not read the store: ${errorMessage(err)}`);
    }
    const checked = await validateEvent(input, {
      nowMs: opts.now(),
      maxSkewMs: opts.maxSkewMs,
      verify: opts.verify,
    });
    if (!checked.ok) return reject(source, id, checked.code, checked.reason);
    if (checked.event.kind === PRESENCE_KIND) {
      const author = checked.event.pubkey;
      const verdict = gate.admit(author, opts.now(), { source, known: store.hasPresence(author) });
      if (verdict === "too_frequent") {
        return reject(source, id, verdict, "this author sends presence too often");
      }
      if (verdict === "too_many_authors") {
        return reject(
          source,
          id,
          verdict,
          "too many new presence authors from this source or in all; try again later",
        );
      }
    }
    return new Promise<IngestResult>((resolve) => {
      queue.push({ event: checked.event, source, resolve });
      if (queue.length >= MAX_BATCH) {
        flush();
      } else if (!scheduled) {
        scheduled = true;
        // A timer, not a microtask: events of the same burst arrive as separate
        // tasks (one per WebSocket message) and should share the transaction.
        setTimeout(flush, 0);
      }
    });
  };

  return Object.defineProperties(ingest, {
    rejected: { value: () => ({ ...rejected }) },
    stored: { value: () => storedCount },
    settle: {
      value: () => running === 0 ? Promise.resolve() : new Promise<void>((r) => idle.push(r)),
    },
  }) as Ingest;
}

/** The event's id when it looks like one (64 lowercase hex), read once, never throwing. */
export function readId(input: unknown): string | undefined {
  try {
    if (typeof input !== "object" || input === null) return undefined;
    const id = (input as { id?: unknown }).id;
    return typeof id === "string" && /^[0-9a-f]{64}$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}
