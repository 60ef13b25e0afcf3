/**
 * The stored part of a REQ's answer on the relay endpoint, read from the store a page
 * at a time as the client's socket takes it (`relay_connection.ts` pulls it), so a
 * REQ for everything never holds everything in memory.
 *
 * @module
 */

import { type Filter, matchFilters } from "nostr-tools/filter";
import { nostrKindOf, type WatsKind } from "../posts/kinds.ts";
import type { NostrEvent } from "../posts/post.ts";
import type { RawEvent, Store } from "../store/store.ts";

/** Stored events read from the store at a time for a REQ's answer. */
const PAGE = 16;

/** An open subscription: its filters for live events. */
export interface Sub {
  filters: Filter[];
}

/** What an {@linkcode Answer} answers: a REQ as `readReq` let it through. */
export interface AnswerOptions {
  subId: string;
  /** The subscription the REQ opened (its live filters). */
  sub: Sub;
  /** The filters the stored answer runs, one per filter of the REQ. */
  filters: Filter[];
  /** Whether each of `filters` can match anything stored (long tag names are not indexed). */
  indexed: boolean[];
  /** The most events one filter is answered with, whatever its own `limit`. */
  maxLimit: number;
}

/**
 * The stored answer of a REQ, read from the store a page at a time as the socket
 * takes it: never built whole. Each filter is paged backwards by `created_at`
 * (inclusive `until`, skipping the ids already sent of that second), up to its limit.
 * An event that an earlier filter of the same REQ already covered is not sent again;
 * what each finished filter covered is kept as a date and the ids of that one second,
 * not as a list of everything sent.
 */
export class Answer {
  readonly subId: string;
  readonly sub: Sub;
  readonly #filters: Filter[];
  /** Whether each filter can match anything stored (long tag names are not indexed). */
  readonly #indexed: boolean[];
  readonly #maxLimit: number;
  readonly #subIdJson: string;
  readonly #done: Covered[] = [];
  #at = 0;
  #left: number;
  #exhausted = false;
  #until: number | undefined;
  #sentAtUntil = new Set<string>();
  #page: string[] = [];
  /** Characters of the page not yet written. */
  bytes = 0;
  /** Characters read from the store so far (sent or not). */
  read = 0;

  constructor({ subId, sub, filters, indexed, maxLimit }: AnswerOptions) {
    this.subId = subId;
    this.sub = sub;
    this.#filters = filters;
    this.#indexed = indexed;
    this.#maxLimit = maxLimit;
    this.#subIdJson = JSON.stringify(subId);
    this.#left = this.#limitOf(0);
    this.#until = filters[0]?.until;
  }

  /** The next message to write: an EVENT, or undefined once the answer is complete. */
  next(store: Store): string | undefined {
    if (this.#page.length === 0) this.#fill(store);
    const text = this.#page.shift();
    if (text !== undefined) this.bytes -= text.length;
    return text;
  }

  #limitOf(i: number): number {
    const asked = this.#filters[i]?.limit;
    return Math.min(this.#maxLimit, asked === undefined ? this.#maxLimit : Math.floor(asked));
  }

  /** Whether an earlier filter of this REQ sent `row` already. */
  #covered(row: RawEvent): boolean {
    let event: NostrEvent | undefined;
    return this.#done.some((d) => {
      if (
        !(d.all || row.createdAt > d.until! ||
          (row.createdAt === d.until && d.idsAtUntil.has(row.id)))
      ) return false;
      const f = d.filter;
      if (f.ids && !f.ids.includes(row.id)) return false;
      if (f.authors && !f.authors.includes(row.pubkey)) return false;
      if (f.kinds && !f.kinds.includes(nostrKindOf(row.kind as WatsKind))) return false;
      if (f.since !== undefined && row.createdAt < f.since) return false;
      if (f.until !== undefined && row.createdAt > f.until) return false;
      if (!Object.keys(f).some((k) => k.startsWith("#"))) return true;
      // Only a filter on tags needs the event itself.
      event ??= JSON.parse(row.raw) as NostrEvent;
      return matchFilters([f], event);
    });
  }

  #fill(store: Store): void {
    while (this.#at < this.#filters.length) {
      if (this.#left > 0) {
        const ask = Math.min(PAGE, this.#left);
        const limit = ask + this.#sentAtUntil.size;
        const rows = store.queryRaw(
          { ...this.#filters[this.#at], until: this.#until, limit },
          { maxLimit: limit },
        );
        let fresh = 0;
        for (const e of rows) {
          this.read += e.raw.length;
          if (this.#sentAtUntil.has(e.id) || this.#left === 0) continue;
          fresh++;
          this.#left--;
          if (this.#until === undefined || e.createdAt < this.#until) {
            this.#until = e.createdAt;
            this.#sentAtUntil = new Set();
          }
          this.#sentAtUntil.add(e.id);
          if (this.#covered(e)) continue;
          // The stored text as it is: no parse and serialise per event.
          const text = `["EVENT",${this.#subIdJson},${e.raw}]`;
          this.#page.push(text);
          this.bytes += text.length;
        }
        if (rows.length < limit || fresh === 0) {
          this.#left = 0;
          this.#exhausted = true;
        }
        if (this.#page.length > 0) return;
        continue;
      }
      const filter = this.#filters[this.#at];
      if (filter !== undefined && this.#indexed[this.#at]) {
        this.#done.push({
          filter,
          all: this.#exhausted || this.#until === undefined,
          until: this.#until,
          idsAtUntil: this.#sentAtUntil,
        });
      }
      this.#at++;
      this.#left = this.#limitOf(this.#at);
      this.#exhausted = false;
      this.#until = this.#filters[this.#at]?.until;
      this.#sentAtUntil = new Set();
    }
  }
}

/** What a finished filter of a stored answer sent: every match, or those down to a date. */
interface Covered {
  filter: Filter;
  /** Every stored match (the filter ran out before its limit). */
  all: boolean;
  /** Else: the matches after this `created_at`… */
  until: number | undefined;
  /** …and these of that second. */
  idsAtUntil: Set<string>;
}
