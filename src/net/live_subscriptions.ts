/**
 * The live subscriptions of one relay connection: what the node follows from now
 * on (its interest, interest.ts), kept in step with the interest as it changes,
 * and the fallback to one subscription to every wats post for a relay that ignores
 * tag filters on live events.
 *
 * When the interest changes, only the subscriptions whose filters changed are
 * replaced ({@linkcode liveDiff}): the new one is sent under a new id before the
 * old one is closed, and events of any `wats-live-` id are taken, so an event in
 * flight when its subscription closed is not lost (the store drops one sent to
 * both). An event outside the filters asked (and outside those of just before a
 * change, which may still be in flight) is dropped unstored and counted; the first
 * such live event makes the connection fall back to the firehose
 * (`@nostr-relay/core` 0.0.40 sends each post once per tag-filtered subscription:
 * ten copies measured with bench/relay_interest.ts). The same relay may take a
 * CLOSE before the REQ it follows and keep that subscription open: events still
 * coming for a closed live id make it be closed again (once per id).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Filter, matchFilters } from "nostr-tools/filter";
import { NOSTR_KINDS } from "../posts/kinds.ts";
import type { NostrEvent } from "../posts/post.ts";
import type { Subscription } from "./interest.ts";

/** Every live subscription's id starts so (`wats-live-<key>-<n>`). */
export const LIVE = "wats-live-";
/** Every wats kind: what a connection given no interest, or fallen back, asks for. */
export const FIREHOSE: readonly Subscription[] = [
  { key: "all", filters: [{ kinds: [...NOSTR_KINDS] }] },
];
/** Live ids remembered as closed twice, at most. */
const MAX_RECLOSED = 64;

/** An open live subscription: its id and its filters' text. */
export interface OpenLive {
  readonly id: string;
  readonly text: string;
}

/** What {@linkcode liveDiff} decided. */
export interface LiveDiff {
  /** The open subscription of each key afterwards. */
  open: Map<string, OpenLive>;
  /** The messages to send, in order: each new REQ before the CLOSE of what it replaces. */
  messages: unknown[][];
  /** Live ids given so far (ids never repeat on a connection). */
  count: number;
}

/**
 * The REQs and CLOSEs that take the open subscriptions `open` to `wanted`: a key
 * whose filters changed, or that is new, gets a REQ under a new id (each filter
 * with `limit: 0`); the id it replaces, and keys no longer wanted, are closed.
 */
export function liveDiff(
  open: ReadonlyMap<string, OpenLive>,
  wanted: readonly Subscription[],
  count: number,
): LiveDiff {
  const next = new Map(open);
  const messages: unknown[][] = [];
  const keys = new Set<string>();
  for (const sub of wanted) {
    keys.add(sub.key);
    const text = JSON.stringify(sub.filters);
    const old = open.get(sub.key);
    if (old?.text === text) continue;
    const id = `${LIVE}${sub.key}-${++count}`;
    messages.push(["REQ", id, ...sub.filters.map((f) => ({ ...f, limit: 0 }))]);
    next.set(sub.key, { id, text });
    if (old) messages.push(["CLOSE", old.id]);
  }
  for (const [key, { id }] of open) {
    if (keys.has(key)) continue;
    messages.push(["CLOSE", id]);
    next.delete(key);
  }
  return { open: next, messages, count };
}

/** Options of {@linkcode LiveSubscriptions}. */
export interface LiveOptions {
  /** The node's interest; undefined: every wats post, and nothing is checked. */
  subscriptions: readonly Subscription[] | undefined;
  /** Sends a message on the current connection (false when it is not open). */
  send: (msg: unknown[]) => boolean;
  log: Logger;
  url: string;
}

/** The live subscriptions of one relay, across its connections. */
export class LiveSubscriptions {
  readonly #send: (msg: unknown[]) => boolean;
  readonly #log: Logger;
  readonly #url: string;
  /** Given an interest: events are checked against it (else the firehose, taken whole). */
  #checked: boolean;
  #subscriptions: readonly Subscription[];
  /** Every filter of `#subscriptions`, kept: each live event is checked against them. */
  #filters: Filter[];
  /** The filters before the last change: an event in flight for them is not "unasked". */
  #previous: readonly Filter[] = [];
  /** This connection's relay ignores tag filters on live events: one firehose subscription. */
  #fallenBack = false;
  #open: ReadonlyMap<string, OpenLive> = new Map();
  #openIds: ReadonlySet<string> = new Set();
  #count = 0;
  /** Live ids closed again because events still came for them (the newest {@linkcode MAX_RECLOSED}). */
  readonly #reclosed = new Set<string>();
  #unasked = 0;

  constructor(opts: LiveOptions) {
    this.#send = opts.send;
    this.#log = opts.log;
    this.#url = opts.url;
    this.#checked = opts.subscriptions !== undefined;
    this.#subscriptions = opts.subscriptions ?? FIREHOSE;
    this.#filters = this.#subscriptions.flatMap((s) => s.filters);
  }

  /** Every filter of the interest: what a connection catches up on. */
  get filters(): readonly Filter[] {
    return this.#filters;
  }

  /** Events dropped because they match no filter asked, since the start. */
  get unasked(): number {
    return this.#unasked;
  }

  /** True while this connection's relay gets one subscription to every wats post. */
  get fallenBack(): boolean {
    return this.#fallenBack;
  }

  /** Whether `subId` is a live subscription open on this connection. */
  isOpen(subId: unknown): boolean {
    return this.#openIds.has(subId as string);
  }

  /** Takes a new interest; {@linkcode open} then sends it. */
  setInterest(subscriptions: readonly Subscription[]): void {
    this.#previous = this.#checked ? this.#filters : [];
    this.#subscriptions = subscriptions;
    this.#filters = subscriptions.flatMap((s) => s.filters);
    this.#checked = true;
  }

  /** Opens what is not open yet or changed, and closes what is no longer wanted. */
  open(): void {
    const diff = liveDiff(
      this.#open,
      this.#fallenBack ? FIREHOSE : this.#subscriptions,
      this.#count,
    );
    this.#open = diff.open;
    this.#openIds = new Set([...diff.open.values()].map((o) => o.id));
    this.#count = diff.count;
    for (const msg of diff.messages) this.#send(msg);
  }

  /** The connection ended: nothing is open, and the next one tries the interest again. */
  reset(): void {
    this.#open = new Map();
    this.#openIds = new Set();
    this.#reclosed.clear();
    this.#fallenBack = false;
  }

  /**
   * Whether to take a live event of `subId` (a `wats-live-` id): yes when it matches
   * the filters asked; the first that does not makes the connection fall back to
   * the firehose (and is taken). A subscription still sending after its CLOSE is
   * closed again.
   */
  admit(subId: string, event: unknown): boolean {
    this.#closeAgain(subId);
    if (!this.#checked || this.#fallenBack) return true;
    try {
      if (matchFilters(this.#filters, event as NostrEvent)) return true;
      if (matchFilters(this.#previous as Filter[], event as NostrEvent)) return false;
    } catch {
      // Not an event's shape: the ingest refuses it and counts why.
      return true;
    }
    this.#unasked++;
    this.#fallenBack = true;
    this.#log.info(
      "relay {url} ignores tag filters on live events; asking it for every wats post in one subscription",
      { url: this.#url },
    );
    this.open();
    return true;
  }

  /**
   * Whether a catch-up page's or a fetch's event matches `filter`; counted as
   * unasked when not. With `always` false, only checked when given an interest.
   */
  asked(filter: Filter, event: unknown, always: boolean): boolean {
    if (!always && !this.#checked) return true;
    try {
      if (matchFilters([filter], event as NostrEvent)) return true;
    } catch {
      return true;
    }
    this.#unasked++;
    return false;
  }

  /**
   * Closes a live subscription again when its events still come after its CLOSE: a
   * relay that handles messages out of order (`@nostr-relay/core` registers a REQ
   * after an await) can take the CLOSE before the REQ and keep the subscription
   * open, sending every event twice. Its events keep being taken.
   */
  #closeAgain(subId: string): void {
    if (this.#reclosed.has(subId) || this.#openIds.has(subId)) return;
    this.#reclosed.add(subId);
    if (this.#reclosed.size > MAX_RECLOSED) {
      this.#reclosed.delete(this.#reclosed.values().next().value!);
    }
    this.#send(["CLOSE", subId]);
  }
}
