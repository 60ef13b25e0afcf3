/**
 * Syncing with one relay of `infra`: receive the wats posts the node follows, and
 * publish the node's own.
 *
 * What the node asks for is its interest (interest.ts): a few subscriptions of a
 * few filters each, or, when none is given, every wats kind. On each connection:
 *
 * 1. the live subscriptions (each filter with `limit: 0`) open first, so nothing
 *    that arrives during the catch-up is missed;
 * 2. the catch-up runs filter by filter, one filter per REQ (a relay applies
 *    `limit` per filter or to the whole REQ, and returns several filters' events
 *    in no common order, so the paging below is exact only for one filter). Each
 *    filter pages backwards from the newest event: `{…filter, since, until,
 *    limit}`, each next page `until` the oldest `created_at` of the previous one
 *    (inclusive: `created_at` has one-second resolution, so the same second is asked
 *    again and the store drops what it already has). Relays cap what one REQ returns
 *    (often below what is asked), so paging stops only when a page brings no event
 *    this catch-up had not seen yet. `since` is the saved cursor minus an overlap of
 *    `net.max_skew` (clocks differ; posts reach relays late). Only events that pass
 *    the ingest's validation and lie inside the page's filter count for a page;
 *    a page ends at its EOSE, at `limit` such events, or after `pageTimeoutMs`
 *    (a relay need never send EOSE). What a catch-up remembers is bounded: the ids
 *    of one second (the boundary between two pages), never every id it saw. A
 *    relay that keeps finding new events dated the `until` second gets that second
 *    asked once more, then skipped;
 * 3. after the last page of the last filter, the cursor (the time the live
 *    subscriptions opened) is saved with `store.setCursor`; while connected it moves
 *    forward with each message received (at most one write a second);
 * 4. the outbox (`store.outbox.pending`) is published, a window of events at a time,
 *    and each event leaves the outbox only when the relay answers `OK true` (or
 *    `duplicate:`, or a permanent refusal, which is logged). `Store.insert` queues
 *    local events for the relays the store was opened with, so this relay's URL must
 *    be one of them; they are published as soon as they are inserted.
 *
 * At most {@linkcode MAX_INGESTING} events from one relay are being validated and
 * stored at once; past that the connection is not read (`WsClient.pause`), so a
 * relay that sends faster than the node verifies is slowed by TCP, not buffered.
 *
 * When the interest changes while connected (`setInterest`: the node follows a new
 * thread), each changed subscription is sent again under a new id before the old one
 * is closed: the relay sends every event to one or the other (or both: the store
 * drops the duplicate), and events of any `wats-live-` subscription of this
 * connection are taken, so one in flight when its subscription closed is not lost.
 * Then the filters that are new get a catch-up of their own, with no `since` (a
 * new thread's earlier posts); until it is done they are remembered across
 * reconnections (at most {@linkcode MAX_ADDED} filters).
 *
 * Given an interest, an event outside it is dropped before the ingest and counted
 * (`status().unasked`): some relays match live events on `kinds` and `authors`
 * only and ignore tag filters (`@nostr-relay/core` 0.0.40 does), which would hand
 * the store every ask of the network. Such a relay would also send each event once
 * per live subscription with a tag filter (ten copies of each post measured with
 * bench/relay_interest.ts), so the first live event outside the filters makes the
 * connection fall back to what the node did before interests: one subscription to
 * every wats post, everything it sends stored, no catch-up of added filters (the
 * live subscription brings their posts). Each event then comes once, as before.
 * The same relay may take a CLOSE before the REQ it follows and keep that
 * subscription: events still coming for a closed live id make it be closed again.
 *
 * `fetch` asks once for what the interest leaves out (`feed` with `relays`, a
 * person browsing): one REQ, its events stored, done at its EOSE or after
 * {@linkcode FETCH_TIMEOUT_MS}.
 *
 * Bytes received are counted per connection (`WsClient.bytesReceived`) and summed
 * in `status().bytesReceived`.
 *
 * A lost connection is retried with capped exponential backoff and jitter. Nothing
 * runs while idle: no ping, no poll; the only timer is the reconnect deadline (and
 * a connect timeout while connecting).
 *
 * It speaks the raw protocol over `WsClient` (ws_client.ts: the runtime's WebSocket
 * client holds back messages over 1 KiB for ~40 ms), rather than nostr-tools' `Relay`:
 * every event already goes through `validateEvent` in the ingest (the library would
 * verify each signature a second time and cache the result on the object), and the
 * paging, cursor, outbox and reconnect rules above need the raw messages (EOSE per
 * page, OK per event) with no hidden ping timers or reconnect logic of its own.
 *
 * Requires `--allow-net` on the relay's host and port.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Filter, matchFilters } from "nostr-tools/filter";
import { NOSTR_KINDS } from "../posts/kinds.ts";
import type { NostrEvent } from "../posts/post.ts";
import type { Origin, Store } from "../store/store.ts";
import type { Ingest, IngestResult } from "./ingest.ts";
import { afterPage, type CatchUp, countInPage, newPage, type Page } from "./catch_up.ts";
import { filterKey, type Subscription } from "./interest.ts";
import { CLOSED, OPEN, WsClient } from "./ws_client.ts";

/**
 * The longest reconnect delay, by default: a relay that comes back after a long
 * absence is tried again within this (and half of it at least, once the delays
 * have grown to it).
 */
export const RECONNECT_MAX_MS = 60_000;

/** Options of {@linkcode startRelaySync}. */
export interface RelaySyncOptions {
  /** The relay's ws:// or wss:// URL, as written in `infra`. */
  url: string;
  store: Store;
  ingest: Ingest;
  log: Logger;
  /** `net.max_skew`, also the catch-up overlap. */
  maxSkewMs: number;
  /** Milliseconds since the epoch (cursors). Default `Date.now`. */
  now?: () => number;
  /** A number in [0, 1) for the backoff's jitter. Default `Math.random`. */
  random?: () => number;
  /** The first reconnect delay. Default 1 s. */
  backoffBaseMs?: number;
  /** The longest reconnect delay. Default {@linkcode RECONNECT_MAX_MS}. */
  backoffMaxMs?: number;
  /** Give up a connection attempt after this long. Default 15 s. */
  connectTimeoutMs?: number;
  /** `limit` of each catch-up page. Default 1000. */
  pageLimit?: number;
  /** Events published and not yet answered, at most. Default 100. */
  publishWindow?: number;
  /** A catch-up page with no EOSE ends after this long. Default 30 s. */
  pageTimeoutMs?: number;
  /** What to subscribe to (interest.ts). Default: every wats kind, one filter. */
  subscriptions?: readonly Subscription[];
}

/** How one relay is doing. */
export interface RelayStatus {
  url: string;
  connected: boolean;
  /** True once the catch-up of the current connection finished. */
  caughtUp: boolean;
  /** The last problem with this relay, until the next successful catch-up. */
  lastError?: string;
  /** Bytes received from this relay since the node started, all connections together. */
  bytesReceived: number;
  /** Events the relay sent that match no filter asked (dropped unstored), since the start. */
  unasked: number;
}

/** A running sync with one relay. */
export interface RelaySync {
  readonly url: string;
  status(): RelayStatus;
  /**
   * Subscribes to `subscriptions` from now on, replacing the live subscriptions that
   * changed, and catches up on `added` (filters not asked before) with no `since`.
   */
  setInterest(subscriptions: readonly Subscription[], added: readonly Filter[]): void;
  /**
   * Asks the relay once for `filter` and stores what it sends; resolves with the
   * number of valid events received (stored or already there), 0 when not connected.
   */
  fetch(filter: Filter): Promise<number>;
  /** Stops syncing: closes the connection, cancels the reconnect, removes listeners. */
  close(): Promise<void>;
}

/** Every live subscription's id starts so (`wats-live-<key>-<n>`). */
const LIVE = "wats-live-";
/** Every wats kind: what a sync given no interest asks for. */
const FIREHOSE: readonly Subscription[] = [{ key: "all", filters: [{ kinds: [...NOSTR_KINDS] }] }];
/** A one-off fetch with no EOSE ends after this long. */
export const FETCH_TIMEOUT_MS = 10_000;
/** Events of one fetch at most, when its filter names no `limit`. */
const FETCH_LIMIT = 500;
/** One-off fetches at once per relay, at most (past that a fetch gets 0 at once). */
const MAX_FETCHES = 4;
/** Live ids remembered as closed twice, at most. */
const MAX_RECLOSED = 64;
/** Filters added while running still to catch up on, at most (the oldest are dropped). */
export const MAX_ADDED = 64;
/** The subscription id of an EVENT message, read without parsing the message. */
const EVENT_SUB = /^\[\s*"EVENT"\s*,\s*"([^"\\]*)"/;
const PEEK_DECODER = new TextDecoder();
/** Events of one relay being validated and stored at once, at most (see the module doc). */
export const MAX_INGESTING = 256;
/** NIP-01 prefixes of an `OK false` that will not change on a retry. */
const PERMANENT = ["invalid:", "blocked:", "pow:", "restricted:"];

/**
 * Starts syncing with one relay; returns at once (connecting happens in the
 * background). Requires `--allow-net` on the relay's address.
 */
export function startRelaySync(opts: RelaySyncOptions): RelaySync {
  return new Sync(opts);
}

/** A one-off fetch in progress. */
interface Fetch {
  filter: Filter;
  received: number;
  ingesting: Promise<unknown>[];
  done: () => void;
}

class Sync implements RelaySync {
  readonly url: string;
  readonly #o: RelaySyncOptions;
  readonly #store: Store;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #unlisten: () => void;
  #ws: WsClient | undefined;
  #connected = false;
  #caughtUp = false;
  #lastError: string | undefined;
  #attempt = 0;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  #connectTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #closedSocket: Promise<void> = Promise.resolve();
  // Per connection:
  #page: Page | undefined;
  #pageCount = 0;
  /** Ids of the boundary second (the previous page's oldest), already counted. */
  #seen = new Set<string>();
  /** Pages in a row whose events all shared their `until` second. */
  #stuck = 0;
  #ingesting = 0;
  #liveSince = 0;
  #savedCursor = 0;
  #inFlight = new Set<string>();
  #deferred = new Set<string>();
  #flushQueued = false;
  #subscriptions: readonly Subscription[];
  /** Filters added by `setInterest` not caught up on yet (kept across connections). */
  #added: Filter[] = [];
  /** The live subscription of each key on this connection: its id and filters' text. */
  #live = new Map<string, { id: string; text: string }>();
  /** The ids of `#live`. */
  #liveIds = new Set<string>();
  #liveCount = 0;
  /** Filters still to catch up on, this connection; the first is being paged. */
  #queue: CatchUp[] = [];
  /** Bytes of the connections that ended. */
  #bytesBefore = 0;
  /** The filters of every live subscription; undefined: the firehose, nothing to check. */
  #liveFilters: Filter[] | undefined;
  /** The filters before the last change: an event in flight for them is not "unasked". */
  #previousFilters: Filter[] = [];
  /** This connection's relay ignores tag filters on live events: one firehose subscription. */
  #tagBlind = false;
  /** Live ids closed again because events still came for them (the newest {@linkcode MAX_RECLOSED}). */
  #reclosed = new Set<string>();
  #unasked = 0;
  #fetches = new Map<string, Fetch>();
  #fetchCount = 0;

  constructor(opts: RelaySyncOptions) {
    this.url = opts.url;
    this.#o = opts;
    this.#store = opts.store;
    this.#log = opts.log;
    this.#now = opts.now ?? Date.now;
    this.#subscriptions = opts.subscriptions ?? FIREHOSE;
    this.#liveFilters = opts.subscriptions?.flatMap((s) => s.filters);
    this.#unlisten = opts.store.onInsert((_posts, origin) => this.#onInsert(origin));
    this.#connect();
  }

  status(): RelayStatus {
    return {
      url: this.url,
      connected: this.#connected,
      caughtUp: this.#caughtUp,
      ...(this.#lastError !== undefined ? { lastError: this.#lastError } : {}),
      bytesReceived: this.#bytesBefore + (this.#ws?.bytesReceived ?? 0),
      unasked: this.#unasked,
    };
  }

  setInterest(subscriptions: readonly Subscription[], added: readonly Filter[]): void {
    this.#subscriptions = subscriptions;
    this.#previousFilters = this.#liveFilters ?? [];
    this.#liveFilters = subscriptions.flatMap((s) => s.filters);
    const fresh = added.filter((f) => !this.#added.some((a) => filterKey(a) === filterKey(f)));
    this.#added = [...this.#added, ...fresh].slice(-MAX_ADDED);
    if (!this.#connected || this.#closed || this.#tagBlind) return;
    this.#openLive();
    const queued = fresh.map((filter) => ({ filter, since: undefined, added: true }));
    if (queued.length === 0) return;
    const idle = this.#queue.length === 0;
    this.#queue.push(...queued);
    if (idle) this.#requestPage(undefined);
  }

  async fetch(filter: Filter): Promise<number> {
    if (!this.#connected || this.#closed || this.#fetches.size >= MAX_FETCHES) return 0;
    const subId = `wats-fetch-${++this.#fetchCount}`;
    const ended = Promise.withResolvers<void>();
    const f: Fetch = { filter, received: 0, ingesting: [], done: ended.resolve };
    this.#fetches.set(subId, f);
    const timer = setTimeout(f.done, FETCH_TIMEOUT_MS);
    this.#send(["REQ", subId, filter]);
    await ended.promise;
    clearTimeout(timer);
    this.#fetches.delete(subId);
    this.#send(["CLOSE", subId]);
    await Promise.all(f.ingesting);
    return f.received;
  }

  async close(): Promise<void> {
    if (this.#closed) return await this.#closedSocket;
    this.#closed = true;
    this.#unlisten();
    clearTimeout(this.#reconnectTimer);
    clearTimeout(this.#connectTimer);
    const ws = this.#ws;
    if (ws && ws.readyState !== CLOSED) {
      try {
        ws.close(1000, "wats node stopping");
      } catch {
        // Already closing.
      }
    }
    await this.#closedSocket;
  }

  // ---- connection -------------------------------------------------------------

  #connect(): void {
    if (this.#closed) return;
    let ws: WsClient;
    try {
      ws = new WsClient(this.url);
    } catch (err) {
      // A malformed URL will not get better: no retry.
      this.#lastError = `cannot connect: ${(err as Error).message}`;
      this.#log.error("relay {url}: {error}; fix infra", { url: this.url, error: this.#lastError });
      return;
    }
    this.#ws = ws;
    let closedSocket!: () => void;
    this.#closedSocket = new Promise((r) => closedSocket = r);
    const timeoutMs = this.#o.connectTimeoutMs ?? 15_000;
    this.#connectTimer = setTimeout(() => {
      this.#lastError = `no connection within ${timeoutMs / 1000} s`;
      try {
        ws.close();
      } catch {
        // Closing anyway.
      }
    }, timeoutMs);
    ws.onopen = () => {
      clearTimeout(this.#connectTimer);
      if (this.#closed) return;
      this.#connected = true;
      this.#log.info("connected to relay {url}", { url: this.url });
      this.#startSession();
    };
    ws.onmessage = (e) => {
      if (this.#ws !== ws) return;
      try {
        this.#receive(e.data);
      } catch (err) {
        this.#log.warn("relay {url}: cannot handle a message: {error}", {
          url: this.url,
          error: String(err),
        });
      }
    };
    // An EVENT of a subscription no longer open (a page that ended) is dropped
    // before it is even decoded: a relay may keep sending them, each as large as
    // the message cap, and decoding and parsing them only fed the garbage collector.
    ws.onpeek = (head) => {
      const sub = EVENT_SUB.exec(PEEK_DECODER.decode(head))?.[1];
      return sub === undefined || sub.startsWith(LIVE) || sub === this.#page?.subId ||
        this.#fetches.has(sub);
    };
    ws.onerror = (e) => {
      const msg = e.message;
      if (msg) this.#lastError = msg;
    };
    ws.onclose = (e) => {
      clearTimeout(this.#connectTimer);
      const was = this.#connected;
      this.#endSession();
      closedSocket();
      if (this.#ws === ws) {
        this.#bytesBefore += ws.bytesReceived;
        this.#ws = undefined;
      }
      if (this.#closed) return;
      if (was) {
        this.#lastError ??= `connection closed (${e.code}${e.reason ? ` ${e.reason}` : ""})`;
        this.#log.warn("lost relay {url}: {error}", { url: this.url, error: this.#lastError });
      }
      this.#scheduleReconnect();
    };
  }

  #scheduleReconnect(): void {
    const base = this.#o.backoffBaseMs ?? 1_000;
    const max = this.#o.backoffMaxMs ?? RECONNECT_MAX_MS;
    const full = Math.min(max, base * 2 ** Math.min(this.#attempt, 30));
    // Half fixed, half random: many nodes that lost the same relay do not return at once.
    const delay = full / 2 + (this.#o.random ?? Math.random)() * full / 2;
    this.#attempt++;
    this.#log.debug("reconnecting to {url} in {ms} ms", { url: this.url, ms: Math.round(delay) });
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      this.#connect();
    }, delay);
  }

  #send(msg: unknown[]): boolean {
    const ws = this.#ws;
    if (!ws || ws.readyState !== OPEN) return false;
    ws.send(JSON.stringify(msg));
    return true;
  }

  // ---- session: live subscription, catch-up, outbox ---------------------------

  #startSession(): void {
    this.#liveSince = Math.floor(this.#now() / 1000);
    this.#savedCursor = this.#store.getCursor(this.url) ?? 0;
    this.#seen = new Set();
    this.#stuck = 0;
    this.#openLive();
    const since = this.#since();
    this.#queue = [
      ...this.#subscriptions.flatMap((s) => s.filters).map((filter) => ({
        filter,
        since,
        added: false,
      })),
      ...this.#added.map((filter) => ({ filter, since: undefined, added: true })),
    ];
    this.#requestPage(undefined);
    this.#flushOutbox();
  }

  /**
   * Opens the live subscriptions not open yet or whose filters changed (each under a
   * new id, then the old one closed), and closes those no longer wanted.
   */
  #openLive(): void {
    const wanted = new Set<string>();
    for (const sub of this.#tagBlind ? FIREHOSE : this.#subscriptions) {
      wanted.add(sub.key);
      const text = JSON.stringify(sub.filters);
      const old = this.#live.get(sub.key);
      if (old?.text === text) continue;
      const id = `${LIVE}${sub.key}-${++this.#liveCount}`;
      this.#send(["REQ", id, ...sub.filters.map((f) => ({ ...f, limit: 0 }))]);
      this.#live.set(sub.key, { id, text });
      this.#liveIds.add(id);
      if (old) this.#closeLive(old.id);
    }
    for (const [key, { id }] of this.#live) {
      if (wanted.has(key)) continue;
      this.#closeLive(id);
      this.#live.delete(key);
    }
  }

  #endSession(): void {
    this.#connected = false;
    this.#caughtUp = false;
    this.#dropPage();
    this.#queue = [];
    this.#live.clear();
    this.#liveIds.clear();
    this.#reclosed.clear();
    this.#tagBlind = false;
    for (const f of this.#fetches.values()) f.done();
    this.#seen = new Set();
    this.#inFlight.clear();
    this.#deferred.clear();
  }

  #since(): number | undefined {
    const cursor = this.#store.getCursor(this.url);
    if (cursor === undefined) return undefined;
    const overlap = Math.max(1, Math.ceil(this.#o.maxSkewMs / 1000));
    return Math.max(0, cursor - overlap);
  }

  /** Asks for a page of the first filter of the queue. */
  #requestPage(until: number | undefined): void {
    const catchUp = this.#queue[0];
    if (!catchUp) return;
    const subId = `wats-page-${++this.#pageCount}`;
    const since = catchUp.since;
    const filter: Filter = { ...catchUp.filter, limit: this.#o.pageLimit ?? 1000 };
    if (since !== undefined) filter.since = since;
    if (until !== undefined) filter.until = until;
    const page = newPage(subId, catchUp, since, until);
    page.timer = setTimeout(() => {
      this.#log.info("relay {url} sent no EOSE for {sub} within {ms} ms; ending the page", {
        url: this.url,
        sub: subId,
        ms: this.#o.pageTimeoutMs ?? 30_000,
      });
      void this.#endPage(page);
    }, this.#o.pageTimeoutMs ?? 30_000);
    this.#page = page;
    this.#send(["REQ", subId, filter]);
  }

  #dropPage(): void {
    if (this.#page) {
      clearTimeout(this.#page.timer);
      this.#page.ended = true;
      this.#page.drained?.();
    }
    this.#page = undefined;
  }

  /** Counts a validated event of a page (see the module doc). */
  #counted(page: Page, event: { id: string; created_at: number }): void {
    countInPage(page, event, this.#seen);
    if (page.received >= (this.#o.pageLimit ?? 1000)) void this.#endPage(page);
  }

  async #endPage(page: Page): Promise<void> {
    if (page.ended || this.#page !== page) return;
    page.ended = true;
    clearTimeout(page.timer);
    this.#send(["CLOSE", page.subId]);
    // The cursor moves only once the page's events are in the store.
    if (page.ingesting > 0) await new Promise<void>((r) => page.drained = r);
    if (this.#page !== page || !this.#connected) return;
    const next = afterPage(
      page,
      { stuck: this.#stuck, seen: this.#seen },
      this.#o.pageLimit ?? 1000,
    );
    this.#stuck = next.stuck;
    this.#seen = next.seen;
    if (next.skipped !== undefined) {
      this.#log.warn(
        "relay {url} holds more events dated {second} than it returns at once; some may be missed",
        { url: this.url, second: next.skipped },
      );
    }
    if (next.until !== undefined) return this.#requestPage(next.until);
    // This filter is done: the next one starts from the newest event.
    this.#page = undefined;
    this.#queue.shift();
    if (page.catchUp.added) this.#added = this.#added.filter((f) => f !== page.catchUp.filter);
    if (this.#queue.length > 0) return this.#requestPage(undefined);
    if (this.#caughtUp) return;
    this.#caughtUp = true;
    this.#attempt = 0;
    this.#lastError = undefined;
    this.#saveCursor(this.#liveSince, true);
    this.#log.info("caught up with relay {url}", { url: this.url });
  }

  #saveCursor(seconds: number, force = false): void {
    if (!force && seconds <= this.#savedCursor) return;
    this.#savedCursor = seconds;
    try {
      this.#store.setCursor(this.url, seconds);
    } catch (err) {
      this.#log.warn("cannot save the cursor of {url}: {error}", {
        url: this.url,
        error: (err as Error).message,
      });
    }
  }

  #receive(data: unknown): void {
    if (typeof data !== "string") return;
    let msg: unknown;
    try {
      msg = JSON.parse(data);
    } catch {
      this.#log.debug("relay {url} sent something that is not JSON", { url: this.url });
      return;
    }
    if (!Array.isArray(msg)) return;
    // The live subscription has delivered everything up to this moment.
    if (this.#caughtUp) this.#saveCursor(Math.floor(this.#now() / 1000));
    const page = this.#page;
    switch (msg[0]) {
      case "EVENT": {
        const [, subId, event] = msg;
        if (typeof subId === "string" && subId.startsWith(LIVE)) {
          this.#closeAgain(subId);
          if (this.#asked(this.#liveFilters, event, true)) this.#ingest(event);
        } else if (this.#fetches.has(subId)) {
          const f = this.#fetches.get(subId)!;
          if (!this.#asked([f.filter], event)) return;
          // A relay that sends past the limit asked is not read further for it.
          if (f.ingesting.length >= (f.filter.limit ?? FETCH_LIMIT)) return f.done();
          f.ingesting.push(this.#ingest(event).then((r) => r.ok && f.received++));
        } else if (page && !page.ended && subId === page.subId) {
          if (!this.#asked(this.#liveFilters && [page.catchUp.filter], event)) return;
          // Read before the ingest: a valid event's fields are these.
          const at = (event as NostrEvent | null)?.created_at;
          page.ingesting++;
          void this.#ingest(event).then((r) => {
            if (r.ok && r.id !== undefined && typeof at === "number") {
              this.#counted(page, { id: r.id, created_at: at });
            }
            if (--page.ingesting === 0) page.drained?.();
          });
        }
        return;
      }
      case "EOSE":
        if (page && msg[1] === page.subId) void this.#endPage(page);
        this.#fetches.get(msg[1])?.done();
        return;
      case "OK":
        this.#ok(msg[1], msg[2], msg[3]);
        return;
      case "CLOSED": {
        if (this.#liveIds.has(msg[1]) || (page && msg[1] === page.subId)) {
          this.#lastError = `relay closed subscription ${msg[1]}: ${String(msg[2] ?? "")}`;
          this.#log.warn("relay {url}: {error}", { url: this.url, error: this.#lastError });
          if (page && msg[1] === page.subId) this.#dropPage();
        }
        this.#fetches.get(msg[1])?.done();
        return;
      }
      case "NOTICE":
        this.#log.info("relay {url} says: {notice}", { url: this.url, notice: String(msg[1]) });
        return;
      default:
        return;
    }
  }

  #closeLive(id: string): void {
    this.#liveIds.delete(id);
    this.#send(["CLOSE", id]);
  }

  /**
   * Closes a live subscription again when its events still come after its CLOSE: a
   * relay that handles messages out of order (`@nostr-relay/core` registers a REQ
   * after an await) can take the CLOSE before the REQ and keep the subscription
   * open, sending every event twice. Its events keep being taken (see the module doc).
   */
  #closeAgain(subId: string): void {
    if (this.#reclosed.has(subId) || this.#liveIds.has(subId)) return;
    this.#reclosed.add(subId);
    if (this.#reclosed.size > MAX_RECLOSED) {
      this.#reclosed.delete(this.#reclosed.values().next().value!);
    }
    this.#send(["CLOSE", subId]);
  }

  /**
   * Whether `event` matches one of `filters` (undefined: anything); counts it when
   * not, and for a `live` one, makes the connection fall back to the firehose.
   */
  #asked(filters: Filter[] | undefined, event: unknown, live = false): boolean {
    if (filters === undefined || (live && this.#tagBlind)) return true;
    try {
      if (matchFilters(filters, event as NostrEvent)) return true;
      if (live && matchFilters(this.#previousFilters, event as NostrEvent)) return false;
    } catch {
      // Not an event's shape: the ingest refuses it and counts why.
      return true;
    }
    this.#unasked++;
    if (live && !this.#tagBlind) {
      this.#tagBlind = true;
      this.#log.info(
        "relay {url} ignores tag filters on live events; asking it for every wats post in one subscription",
        { url: this.url },
      );
      this.#openLive();
      return true;
    }
    return false;
  }

  #ingest(event: unknown): Promise<IngestResult> {
    if (++this.#ingesting === MAX_INGESTING) this.#ws?.pause();
    return this.#o.ingest(event, this.url).finally(() => {
      if (this.#ingesting-- === MAX_INGESTING) this.#ws?.resume();
    });
  }

  // ---- publishing -----------------------------------------------------------

  #onInsert(origin: Origin): void {
    // Only local events enter the outbox (`Store.insert` queues them); a batch from
    // the network has nothing to publish.
    if (origin !== "local" || this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => {
      this.#flushQueued = false;
      this.#flushOutbox();
    });
  }

  #flushOutbox(): void {
    if (!this.#connected || this.#closed) return;
    const window = this.#o.publishWindow ?? 100;
    if (this.#inFlight.size >= window) return;
    let pending: NostrEvent[];
    try {
      pending = this.#store.outbox.pending(
        this.url,
        window + this.#inFlight.size + this.#deferred.size,
      );
    } catch (err) {
      this.#log.warn("cannot read the outbox: {error}", { error: (err as Error).message });
      return;
    }
    for (const event of pending) {
      if (this.#inFlight.size >= window) break;
      if (this.#inFlight.has(event.id) || this.#deferred.has(event.id)) continue;
      if (!this.#send(["EVENT", event])) return;
      this.#inFlight.add(event.id);
    }
  }

  #ok(id: unknown, accepted: unknown, message: unknown): void {
    if (typeof id !== "string" || !this.#inFlight.delete(id)) return;
    const text = typeof message === "string" ? message : "";
    if (accepted === true || text.startsWith("duplicate:")) {
      this.#store.outbox.ack(id, this.url);
    } else if (PERMANENT.some((p) => text.startsWith(p))) {
      this.#log.warn("relay {url} refused post {id} for good: {reason}; not retrying", {
        url: this.url,
        id,
        reason: text,
      });
      this.#store.outbox.ack(id, this.url);
    } else {
      // Rate limits, errors: try again on the next connection.
      this.#log.info("relay {url} did not take post {id}: {reason}; retrying later", {
        url: this.url,
        id,
        reason: text,
      });
      this.#deferred.add(id);
    }
    if (this.#inFlight.size < (this.#o.publishWindow ?? 100) / 2 + 1) this.#flushOutbox();
  }
}
