/**
 * Syncing with one relay of `infra`: receive the wats posts the node follows, and
 * publish the node's own. This file composes the units that each do one part
 * (docs/network.md, "Syncing with a relay", says what a node does and why):
 *
 * - relay_link.ts: the connection, kept up with capped exponential backoff;
 * - live_subscriptions.ts: the live subscriptions of the interest, replaced as it
 *   changes, and the fallback to the firehose for a relay that ignores tag filters;
 * - catch_up.ts: the catch-up, paged backwards one filter at a time, as a pure
 *   reducer over what the relay answers (its effects are run here);
 * - outbox_window.ts: the node's own posts, published a window at a time.
 *
 * On each connection the live subscriptions open first (nothing that arrives
 * during the catch-up is missed), then the catch-up starts from the saved cursor
 * minus `net.max_skew`, then the outbox is published. Once caught up, the cursor
 * (the time the live subscriptions opened) is saved with `store.setCursor`; while
 * connected it moves forward with each message received (at most one write a
 * second). `Store.insert` queues local events for the relays the store was opened
 * with, so this relay's URL must be one of them.
 *
 * At most {@linkcode MAX_INGESTING} events from one relay are being validated and
 * stored at once; past that the connection is not read (`WsClient.pause`), so a
 * relay that sends faster than the node verifies is slowed by TCP, not buffered.
 * An `EVENT` for a subscription no longer open is dropped before it is decoded.
 *
 * A relay that asks for NIP-42 AUTH is answered with the node's person's key
 * (relay_auth.ts); what it refused `auth-required:` before that is sent again once
 * it accepts. A post it refuses `restricted:` stays in the outbox, and the relay's
 * reason shows in the status and the sender's ask state (`refusal`).
 *
 * `fetch` asks once for what the interest leaves out (`feed` with `relays`, a
 * person browsing): one REQ, its events stored, done at its EOSE or after
 * {@linkcode FETCH_TIMEOUT_MS}.
 *
 * Requires `--allow-net` on the relay's host and port.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Filter } from "nostr-tools/filter";
import type { NostrEvent } from "../posts/post.ts";
import type { Store } from "../store/store.ts";
import type { Ingest, IngestResult } from "./ingest.ts";
import {
  type CatchUpEffect,
  type CatchUpInput,
  type CatchUpState,
  initialCatchUp,
  openPage,
  stepCatchUp,
} from "./catch_up.ts";
import type { Subscription } from "./interest.ts";
import { LIVE, LiveSubscriptions } from "./live_subscriptions.ts";
import { OutboxWindow } from "./outbox_window.ts";
import { type AuthKey, type AuthStatus, RelayAuth } from "./relay_auth.ts";
import { RelayLink } from "./relay_link.ts";

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
  /** The longest reconnect delay. Default `RECONNECT_MAX_MS` (relay_link.ts). */
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
  /** The key that answers a relay's NIP-42 AUTH challenge (the person's); absent: none. */
  authKey?: AuthKey;
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
  /** NIP-42: who the relay accepted, or why it refused; absent when it never asked. */
  auth?: AuthStatus;
  /** The node's posts this relay refused (`restricted:`…) and that still wait for it; absent: none. */
  refused?: number;
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
  /** Why this relay refused the node's post `id` (`restricted: …`), while it waits for it. */
  refusal(id: string): string | undefined;
  /** Stops syncing: closes the connection, cancels the reconnect, removes listeners. */
  close(): Promise<void>;
}

/** A one-off fetch with no EOSE ends after this long. */
export const FETCH_TIMEOUT_MS = 10_000;
/** Events of one fetch at most, when its filter names no `limit`. */
const FETCH_LIMIT = 500;
/** One-off fetches at once per relay, at most (past that a fetch gets 0 at once). */
const MAX_FETCHES = 4;
/** The subscription id of an EVENT message, read without parsing the message. */
const EVENT_SUB = /^\[\s*"EVENT"\s*,\s*"([^"\\]*)"/;
const PEEK_DECODER = new TextDecoder();
/** Refused posts remembered per relay, at most (the outbox keeps them all queued). */
const MAX_REFUSALS = 1000;
/** Events of one relay being validated and stored at once, at most (see the module doc). */
export const MAX_INGESTING = 256;

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
  readonly #options: RelaySyncOptions;
  readonly #now: () => number;
  readonly #unlisten: () => void;
  readonly #link: RelayLink;
  readonly #live: LiveSubscriptions;
  readonly #outbox: OutboxWindow;
  readonly #fetches = new Map<string, Fetch>();
  readonly #auth: RelayAuth;
  /** The node's posts this relay refused, with its reason, while they wait for it. */
  readonly #refused = new Map<string, string>();
  /** Posts refused `auth-required:` on this connection: refused for good if the AUTH is. */
  readonly #awaitingAuth = new Set<string>();
  #catchUp: CatchUpState;
  #pageTimer: ReturnType<typeof setTimeout> | undefined;
  #ingesting = 0;
  /** When this connection's live subscriptions opened: the cursor once caught up. */
  #liveSince = 0;
  #savedCursor = 0;
  #fetchCount = 0;

  constructor(opts: RelaySyncOptions) {
    this.url = opts.url;
    this.#options = opts;
    this.#now = opts.now ?? Date.now;
    this.#catchUp = initialCatchUp(opts.pageLimit ?? 1000);
    const send = (msg: unknown[]) => this.#link.send(msg);
    this.#live = new LiveSubscriptions({
      subscriptions: opts.subscriptions,
      send,
      log: opts.log,
      url: opts.url,
    });
    this.#outbox = new OutboxWindow({
      url: opts.url,
      outbox: opts.store.outbox,
      log: opts.log,
      window: opts.publishWindow ?? 100,
      connected: () => this.#link.connected,
      send,
      refused: (id, reason) => {
        this.#refuse(id, reason);
        this.#auth.restricted(`refuses the node's posts: ${reason}`);
      },
      accepted: (id) => this.#refused.delete(id),
      authRequired: (id) => {
        if (this.#awaitingAuth.size < MAX_REFUSALS) this.#awaitingAuth.add(id);
        this.#auth.required();
      },
    });
    this.#auth = new RelayAuth({
      url: opts.url,
      key: opts.authKey,
      send,
      log: opts.log,
      now: this.#now,
      resume: () => this.#restartSession(),
      denied: (reason) => {
        for (const id of this.#awaitingAuth) this.#refuse(id, reason);
        this.#awaitingAuth.clear();
      },
    });
    this.#unlisten = opts.store.onInsert((_posts, origin) => {
      // Only local events enter the outbox (`Store.insert` queues them).
      if (origin === "local") this.#outbox.inserted();
    });
    this.#link = new RelayLink({
      ...opts,
      handlers: {
        open: () => this.#startSession(),
        message: (data) => this.#receive(data),
        peek: (head) => this.#wanted(head),
        lost: () => this.#endSession(),
      },
    });
  }

  status(): RelayStatus {
    const lastError = this.#link.lastError;
    const auth = this.#auth.status();
    return {
      url: this.url,
      connected: this.#link.connected,
      caughtUp: this.#catchUp.caughtUp,
      ...(lastError !== undefined ? { lastError } : {}),
      bytesReceived: this.#link.bytesReceived,
      unasked: this.#live.unasked,
      ...(auth.as !== undefined || auth.refused !== undefined ? { auth } : {}),
      ...(this.#refused.size > 0 ? { refused: this.#refused.size } : {}),
    };
  }

  refusal(id: string): string | undefined {
    return this.#refused.get(id);
  }

  #refuse(id: string, reason: string): void {
    this.#refused.delete(id);
    this.#refused.set(id, reason);
    if (this.#refused.size > MAX_REFUSALS) {
      this.#refused.delete(this.#refused.keys().next().value!);
    }
  }

  setInterest(subscriptions: readonly Subscription[], added: readonly Filter[]): void {
    this.#live.setInterest(subscriptions);
    // A relay fallen back to the firehose brings the added filters' posts live.
    const now = this.#link.connected && !this.#live.fallenBack;
    if (now) this.#live.open();
    this.#step({ type: "add", filters: added, now });
  }

  async fetch(filter: Filter): Promise<number> {
    if (!this.#link.connected || this.#fetches.size >= MAX_FETCHES) return 0;
    const subId = `wats-fetch-${++this.#fetchCount}`;
    const ended = Promise.withResolvers<void>();
    const f: Fetch = { filter, received: 0, ingesting: [], done: ended.resolve };
    this.#fetches.set(subId, f);
    const timer = setTimeout(f.done, FETCH_TIMEOUT_MS);
    this.#link.send(["REQ", subId, filter]);
    await ended.promise;
    clearTimeout(timer);
    this.#fetches.delete(subId);
    this.#link.send(["CLOSE", subId]);
    await Promise.all(f.ingesting);
    return f.received;
  }

  async close(): Promise<void> {
    this.#unlisten();
    await this.#link.close();
  }

  #startSession(): void {
    this.#liveSince = Math.floor(this.#now() / 1000);
    this.#savedCursor = this.#options.store.getCursor(this.url) ?? 0;
    this.#live.open();
    this.#step({ type: "start", filters: this.#live.filters, since: this.#since() });
    this.#outbox.flush();
  }

  #endSession(): void {
    this.#step({ type: "stop" });
    this.#live.reset();
    for (const f of this.#fetches.values()) f.done();
    this.#outbox.reset();
    this.#auth.reset();
    this.#awaitingAuth.clear();
  }

  /**
   * The relay accepted the AUTH after refusing things `auth-required:`: the session
   * starts over on the same connection (subscriptions, catch-up, outbox).
   */
  #restartSession(): void {
    if (!this.#link.connected) return;
    this.#step({ type: "stop" });
    this.#live.reset();
    this.#outbox.reset();
    this.#awaitingAuth.clear();
    this.#startSession();
  }

  /** The catch-up's `since`: the saved cursor minus `net.max_skew` (at least 1 s). */
  #since(): number | undefined {
    const cursor = this.#options.store.getCursor(this.url);
    if (cursor === undefined) return undefined;
    const overlap = Math.max(1, Math.ceil(this.#options.maxSkewMs / 1000));
    return Math.max(0, cursor - overlap);
  }

  #step(input: CatchUpInput): void {
    const { state, effects } = stepCatchUp(this.#catchUp, input);
    this.#catchUp = state;
    for (const effect of effects) this.#run(effect);
  }

  #run(effect: CatchUpEffect): void {
    const { url, log } = this.#options;
    switch (effect.type) {
      case "req":
        this.#link.send(["REQ", effect.subId, effect.filter]);
        return;
      case "close":
        this.#link.send(["CLOSE", effect.subId]);
        return;
      case "arm": {
        clearTimeout(this.#pageTimer);
        const ms = this.#options.pageTimeoutMs ?? 30_000;
        this.#pageTimer = setTimeout(() => {
          log.info("relay {url} sent no EOSE for {sub} within {ms} ms; ending the page", {
            url,
            sub: effect.subId,
            ms,
          });
          this.#step({ type: "timeout", subId: effect.subId });
        }, ms);
        return;
      }
      case "disarm":
        clearTimeout(this.#pageTimer);
        return;
      case "skipped":
        log.warn(
          "relay {url} holds more events dated {second} than it returns at once; some may be missed",
          { url, second: effect.second },
        );
        return;
      case "caughtUp":
        this.#link.healthy();
        this.#saveCursor(this.#liveSince, true);
        log.info("caught up with relay {url}", { url });
        return;
    }
  }

  #saveCursor(seconds: number, force = false): void {
    if (!force && seconds <= this.#savedCursor) return;
    this.#savedCursor = seconds;
    try {
      this.#options.store.setCursor(this.url, seconds);
    } catch (err) {
      this.#options.log.warn("cannot save the cursor of {url}: {error}", {
        url: this.url,
        error: (err as Error).message,
      });
    }
  }

  /**
   * Whether a message is worth decoding, from its first bytes: an EVENT of a
   * subscription no longer open (a page that ended) is dropped unread, since a relay
   * may keep sending them, each as large as the message cap.
   */
  #wanted(head: Uint8Array): boolean {
    const sub = EVENT_SUB.exec(PEEK_DECODER.decode(head))?.[1];
    return sub === undefined || sub.startsWith(LIVE) || sub === this.#catchUp.page?.subId ||
      this.#fetches.has(sub);
  }

  #receive(data: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(data);
    } catch {
      this.#options.log.debug("relay {url} sent something that is not JSON", { url: this.url });
      return;
    }
    if (!Array.isArray(msg)) return;
    // The live subscription has delivered everything up to this moment.
    if (this.#catchUp.caughtUp) this.#saveCursor(Math.floor(this.#now() / 1000));
    switch (msg[0]) {
      case "EVENT":
        return this.#event(msg[1], msg[2]);
      case "EOSE":
        if (typeof msg[1] === "string" && this.#live.isOpen(msg[1])) this.#link.served();
        this.#step({ type: "eose", subId: msg[1] });
        this.#fetches.get(msg[1])?.done();
        return;
      case "OK":
        if (this.#auth.answered(msg[1], msg[2], msg[3])) return;
        return this.#outbox.answered(msg[1], msg[2], msg[3]);
      case "AUTH":
        return this.#auth.challenge(msg[1]);
      case "CLOSED": {
        if (this.#live.isOpen(msg[1]) || this.#catchUp.page?.subId === msg[1]) {
          const reason = String(msg[2] ?? "");
          if (reason.startsWith("auth-required:")) this.#auth.required();
          else if (reason.startsWith("restricted:") || reason.startsWith("blocked:")) {
            this.#auth.restricted(`refuses to serve this node: ${reason}`);
          }
          const error = `relay closed subscription ${msg[1]}: ${reason}`;
          this.#link.problem(error);
          this.#options.log.warn("relay {url}: {error}", { url: this.url, error });
          this.#step({ type: "closed", subId: msg[1] });
        }
        this.#fetches.get(msg[1])?.done();
        return;
      }
      case "NOTICE":
        this.#options.log.info("relay {url} says: {notice}", {
          url: this.url,
          notice: String(msg[1]),
        });
        return;
      default:
        return;
    }
  }

  #event(subId: unknown, event: unknown): void {
    if (typeof subId === "string" && subId.startsWith(LIVE)) {
      if (this.#live.admit(subId, event)) this.#ingest(event);
      return;
    }
    const f = this.#fetches.get(subId as string);
    if (f) {
      if (!this.#live.asked(f.filter, event, true)) return;
      // A relay that sends past the limit asked is not read further for it.
      if (f.ingesting.length >= (f.filter.limit ?? FETCH_LIMIT)) return f.done();
      f.ingesting.push(this.#ingest(event).then((r) => r.ok && f.received++));
      return;
    }
    const page = openPage(this.#catchUp, subId);
    if (!page || !this.#live.asked(page.catchUp.filter, event, false)) return;
    // Read before the ingest: a valid event's fields are these.
    const at = (event as NostrEvent | null)?.created_at;
    this.#step({ type: "event", subId: page.subId });
    void this.#ingest(event).then((r) => {
      const valid = r.ok && r.id !== undefined && typeof at === "number";
      this.#step({
        type: "stored",
        subId: page.subId,
        ...(valid ? { event: { id: r.id!, created_at: at } } : {}),
      });
    });
  }

  #ingest(event: unknown): Promise<IngestResult> {
    if (++this.#ingesting === MAX_INGESTING) this.#link.pause();
    return this.#options.ingest(event, this.url).finally(() => {
      if (this.#ingesting-- === MAX_INGESTING) this.#link.resume();
    });
  }
}
