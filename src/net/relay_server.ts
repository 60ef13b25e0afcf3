/**
 * The node's own NIP-01 relay endpoint (the `listen` setting), on wats' own
 * WebSocket server (`ws_server.ts`: it counts half-sent messages, which Deno's server
 * WebSocket hides), so two nodes can peer directly with no third-party relay.
 *
 * - `EVENT` goes through the node's ingest (validation, store) and is answered with
 *   `OK` (`duplicate:`, `invalid:`, `error:` prefixes as NIP-01 says);
 * - `REQ` answers with the stored matches, newest first, then `EOSE`, then every new
 *   event that matches, as the store inserts it (`store.onInsert`);
 * - `CLOSE` ends a subscription; anything unreadable gets a `NOTICE`.
 *
 * Memory stays bounded whatever clients do. A WebSocket's `send` has no
 * backpressure (it always buffers), so every message to a client goes through
 * that client's queue, written only while the socket's `bufferedAmount` is low. The
 * stored answer of a REQ is read from the store a page at a time as the socket takes
 * it, never built whole. Per connection, `maxQueue` bytes may wait (queue, answer
 * page, socket and the client's half-sent message together): a client already behind that a live event would take
 * past it has that subscription closed (`CLOSED` … `error: slow consumer`). Past
 * `maxTotalQueue` for all clients together, the slowest readers are
 * disconnected. A client that reads nothing for `stallMs` is disconnected, and one
 * that sends without reading its answers past twice the cap. At most
 * `maxConnections` clients at once; more get HTTP 503.
 *
 * Requires `--allow-net` on the listen address.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Filter, matchFilters } from "nostr-tools/filter";
import { StoreError } from "../errors.ts";
import { nostrKindOf, type WatsKind } from "../posts/kinds.ts";
import { MAX_EVENT_BYTES, MAX_TAGS, MAX_TEXT_BYTES, type NostrEvent } from "../posts/post.ts";
import type { RawEvent, Store, StoredPost } from "../store/store.ts";
import type { Ingest } from "./ingest.ts";
import {
  type HttpAnswer,
  type RequestHead,
  serveWebSockets,
  type WsServerSocket,
} from "./ws_server.ts";

/** Options of {@linkcode serveRelay}. */
export interface RelayServerOptions {
  /** The interface to listen on, e.g. `127.0.0.1`. */
  hostname: string;
  /** The port; 0 picks a free one (read it back from the result). */
  port: number;
  store: Store;
  ingest: Ingest;
  log: Logger;
  /**
   * Bytes one client may have waiting (its queue, the page of a stored answer being
   * written, and what its socket holds) before a live subscription of its that needs
   * more is closed as a slow consumer. Default 4 MiB.
   */
  maxQueue?: number;
  /**
   * Bytes all clients together may have waiting; past it, the slowest reader (of
   * those with something waiting, the one whose socket took nothing for the longest)
   * is disconnected, then the next, until under. Default 64 MiB.
   */
  maxTotalQueue?: number;
  /** Clients connected at once (`net.max_connections`); more get HTTP 503. Default 256. */
  maxConnections?: number;
  /** Open subscriptions per connection. Default 20. */
  maxSubscriptions?: number;
  /** Filters per REQ. Default 10. */
  maxFilters?: number;
  /** Stored events per filter in a REQ's first answer. Default 500. */
  maxLimit?: number;
  /** Disconnect a client whose queue has not moved for this long. Default 60 s. */
  stallMs?: number;
  /** Characters per second of stored answers, all clients together. Default 4 Mi. */
  answerRate?: number;
}

/** A running relay endpoint. */
export interface RelayServer {
  /** The port it listens on (the real one when 0 was asked). */
  readonly port: number;
  readonly hostname: string;
  /** How many WebSocket clients are connected. */
  connections(): number;
  /**
   * Bytes held for clients now, all connections together: queued messages, pages of
   * stored answers being written, and what the sockets hold.
   */
  buffered(): number;
  /** Stops listening, closes every connection and waits until the server is down. */
  close(): Promise<void>;
}

const DEFAULT_MAX_QUEUE = 4 * 1024 * 1024;
const DEFAULT_MAX_TOTAL_QUEUE = 64 * 1024 * 1024;
const DEFAULT_ANSWER_RATE = 4 * 1024 * 1024;
/** `readyState` values (`WebSocket`'s). */
const WS_CONNECTING = 0, WS_OPEN = 1;
/** Write to the socket only while less than this is buffered in it. */
const HIGH_WATER = 32 * 1024;
/** Stored events read from the store at a time for a REQ's answer. */
const PAGE = 16;
/** Stored answers one connection may have waiting. */
const MAX_ANSWERS = 4;
/** How often a client's queue is looked at while it waits for the socket: at first… */
const PUMP_MS = 20;
/** …and at the least, for a client that has not read for a while. */
const MAX_PUMP_MS = 1_000;
/** Longer messages are refused unread (an event is at most 64 KiB serialised). */
const MAX_MESSAGE_CHARS = 4 * MAX_EVENT_BYTES;
const MAX_SUB_ID_CHARS = 64;

/**
 * Starts the relay endpoint. Resolves once it listens (at once: `Deno.listen`
 * binds before it returns, and a port already taken throws here).
 *
 * Requires `--allow-net` on `hostname:port`.
 */
export function serveRelay(opts: RelayServerOptions): Promise<RelayServer> {
  const limits: Limits = {
    maxQueue: opts.maxQueue ?? DEFAULT_MAX_QUEUE,
    maxTotalQueue: opts.maxTotalQueue ?? DEFAULT_MAX_TOTAL_QUEUE,
    maxConnections: opts.maxConnections ?? 256,
    maxSubscriptions: opts.maxSubscriptions ?? 20,
    maxFilters: opts.maxFilters ?? 10,
    maxLimit: opts.maxLimit ?? 500,
    stallMs: opts.stallMs ?? 60_000,
  };
  const { store, ingest, log } = opts;
  const conns = new Set<Connection>();
  const answerRate = new Rate(opts.answerRate ?? DEFAULT_ANSWER_RATE);
  /** Upgraded sockets not yet closed (open ones and those still opening). */
  let sockets = 0;

  const buffered = () => {
    let total = 0;
    for (const c of conns) total += c.buffered();
    return total;
  };
  // Memory stays bounded whatever the clients do: past the total cap, the slowest
  // readers go first: those whose socket has taken nothing for the longest.
  const trim = () => {
    let total = buffered();
    while (total > limits.maxTotalQueue) {
      let worst: Connection | undefined;
      for (const c of conns) {
        if (c.buffered() === 0) continue;
        if (!worst || c.lastMoved < worst.lastMoved) worst = c;
      }
      if (!worst) return;
      total -= worst.buffered();
      log.info("disconnecting {source}: the slowest reader while clients hold too much", {
        source: worst.source,
      });
      conns.delete(worst);
      worst.shutdown(1008, "slow consumer");
    }
  };

  const unlisten = store.onInsert((posts) => {
    for (const c of conns) c.live(posts);
    trim();
  });

  const server = serveWebSockets({
    hostname: opts.hostname,
    port: opts.port,
    // Past MAX_MESSAGE_CHARS a message gets a NOTICE; past three times that (the
    // most UTF-8 bytes so many characters take) the connection closes (1009).
    maxMessageBytes: 3 * MAX_MESSAGE_CHARS,
    handler: (head, remote) => {
      if (head.headers.get("upgrade")?.toLowerCase() !== "websocket") {
        return infoResponse(head, limits);
      }
      if (sockets >= limits.maxConnections) {
        log.info("refused {source}: {max} clients already connected (net.max_connections)", {
          source: `listen:${remote.hostname}:${remote.port}`,
          max: limits.maxConnections,
        });
        return {
          status: 503,
          headers: { "retry-after": "10" },
          body:
            `error: this relay endpoint already has ${limits.maxConnections} clients; try again later\n`,
        };
      }
      sockets++;
      return "upgrade";
    },
    onSocket: (socket, remote) => {
      const source = `listen:${remote.hostname}:${remote.port}`;
      const conn = new Connection(socket, source, { store, ingest, log, limits, trim, answerRate });
      socket.onopen = () => conns.add(conn);
      socket.onclose = () => {
        sockets--;
        conns.delete(conn);
        conn.dispose();
      };
      socket.onerror = (e) => {
        log.debug("relay endpoint socket error from {source}: {error}", {
          source: conn.source,
          error: e.message,
        });
      };
      socket.onmessage = (e) => {
        conn.receive(e.data);
      };
      // Half-sent messages count in the caps like answers waiting to be read.
      socket.onheld = trim;
    },
  });
  const addr = server.addr;
  log.info("relay endpoint listening on ws://{hostname}:{port}", {
    hostname: addr.hostname,
    port: addr.port,
  });

  let closing: Promise<void> | undefined;
  return Promise.resolve({
    port: addr.port,
    hostname: addr.hostname,
    connections: () => conns.size,
    buffered,
    close() {
      closing ??= (async () => {
        unlisten();
        for (const c of conns) c.shutdown();
        conns.clear();
        await server.close();
      })();
      return closing;
    },
  });
}

interface Limits {
  maxQueue: number;
  maxTotalQueue: number;
  maxConnections: number;
  maxSubscriptions: number;
  maxFilters: number;
  maxLimit: number;
  stallMs: number;
}

interface Deps {
  store: Store;
  ingest: Ingest;
  log: Logger;
  limits: Limits;
  /** Disconnects the slowest clients while all of them hold too much. */
  trim: () => void;
  /** Shared by every connection's stored answers. */
  answerRate: Rate;
}

/**
 * A token bucket of characters per second. Stored answers of all clients together
 * are read from the store no faster than this: a crowd of clients that ask for
 * everything and never read cannot make the node churn through hundreds of MiB
 * (what the kernel's socket buffers take before any backpressure shows).
 */
class Rate {
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

  spend(n: number): void {
    this.#tokens -= n;
  }
}

/** An open subscription: its filters for live events. */
interface Sub {
  filters: Filter[];
}

/**
 * The stored answer of a REQ, read from the store a page at a time as the socket
 * takes it: never built whole. Each filter is paged backwards by `created_at`
 * (inclusive `until`, skipping the ids already sent of that second), up to its limit.
 * An event that an earlier filter of the same REQ already covered is not sent again;
 * what each finished filter covered is kept as a date and the ids of that one second,
 * not as a list of everything sent.
 */
class Answer {
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

  constructor(subId: string, sub: Sub, filters: Filter[], indexed: boolean[], maxLimit: number) {
    this.subId = subId;
    this.sub = sub;
    this.#filters = filters;
    this.#indexed = indexed;
    this.#maxLimit = maxLimit;
    this.#subIdJson = JSON.stringify(subId);
    this.#left = this.#limitOf(0);
    this.#until = filters[0].until;
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
      if (this.#indexed[this.#at]) {
        this.#done.push({
          filter: this.#filters[this.#at],
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

type Item = string | Answer;

/** One WebSocket client: its subscriptions and its send queue. */
class Connection {
  readonly source: string;
  readonly #socket: WsServerSocket;
  readonly #deps: Deps;
  readonly #subs = new Map<string, Sub>();
  #queue: Item[] = [];
  /** Characters waiting in `#queue`, the pages of stored answers included. */
  #queuedBytes = 0;
  #answers = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastMoved = performance.now();
  /** When its socket last took a message (`performance.now()`). */
  get lastMoved(): number {
    return this.#lastMoved;
  }
  /** The delay before the pump looks at the socket again. */
  #wait = PUMP_MS;
  #closed = false;

  constructor(socket: WsServerSocket, source: string, deps: Deps) {
    this.#socket = socket;
    this.source = source;
    this.#deps = deps;
  }

  /**
   * Bytes held for this client: its queue, what its socket has not sent yet, and
   * what it sent that is not a whole message yet (fragments, unread bytes).
   */
  buffered(): number {
    if (this.#closed) return 0;
    return this.#queuedBytes + this.#socket.bufferedAmount + this.#socket.held;
  }

  /** Handles one incoming message; never throws. */
  receive(data: unknown): void {
    try {
      this.#receive(data);
    } catch (err) {
      this.#deps.log.debug("relay endpoint failed on a message from {source}: {error}", {
        source: this.source,
        error: String(err),
      });
      this.#send(["NOTICE", "error: the relay failed on this message"]);
    }
    this.#deps.trim();
  }

  /** Queues each new post for the subscriptions it matches (store.onInsert). */
  live(posts: StoredPost[]): void {
    if (this.#closed) return;
    // A client with nothing waiting kept up so far: it gets this whole burst (at most
    // one ingest batch; the total cap still holds). The cap applies to a client that
    // is already behind.
    const behind = this.#queue.length > 0;
    for (const [subId, sub] of this.#subs) {
      for (const post of posts) {
        if (!matchFilters(sub.filters, post.event)) continue;
        const msg = JSON.stringify(["EVENT", subId, post.event]);
        if (behind && this.buffered() + msg.length > this.#deps.limits.maxQueue) {
          this.#subs.delete(subId);
          this.#deps.log.info("closed subscription {subId} of {source}: slow consumer", {
            subId,
            source: this.source,
          });
          this.#send(["CLOSED", subId, "error: slow consumer: read faster or ask for less"]);
          break;
        }
        this.#enqueue(msg, true);
      }
    }
  }

  /** Stops the timers of a connection that closed. */
  dispose(): void {
    this.#closed = true;
    this.#subs.clear();
    this.#queue = [];
    this.#queuedBytes = 0;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Closes the connection from this side. */
  shutdown(code = 1001, reason = "relay shutting down"): void {
    this.dispose();
    try {
      this.#socket.close(code, reason);
    } catch {
      // Already closing.
    }
  }

  #receive(data: unknown): void {
    if (typeof data !== "string") {
      this.#send(["NOTICE", "invalid: binary messages are not supported; send JSON text"]);
      return;
    }
    if (data.length > MAX_MESSAGE_CHARS) {
      this.#send(["NOTICE", `invalid: message too large (over ${MAX_MESSAGE_CHARS} characters)`]);
      return;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(data);
    } catch {
      this.#send(["NOTICE", "invalid: could not parse the message as JSON"]);
      return;
    }
    if (!Array.isArray(msg) || typeof msg[0] !== "string") {
      this.#send(["NOTICE", 'invalid: a message is a JSON array such as ["REQ", id, filter]']);
      return;
    }
    switch (msg[0]) {
      case "EVENT":
        this.#event(msg[1]);
        return;
      case "REQ":
        this.#req(msg[1], msg.slice(2));
        return;
      case "CLOSE":
        if (typeof msg[1] === "string") this.#subs.delete(msg[1]);
        return;
      default:
        this.#send(["NOTICE", `unsupported: ${String(msg[0]).slice(0, 20)} messages`]);
    }
  }

  #event(input: unknown): void {
    const rawId = (input as { id?: unknown } | null)?.id;
    const okId = typeof rawId === "string" ? rawId.slice(0, 64) : undefined;
    this.#deps.ingest(input, this.source).then((r) => {
      if (this.#closed) return;
      const reason = r.ok
        ? (r.duplicate ? "duplicate: already have this event" : "")
        : r.code === "store"
        ? "error: could not store the event; try again later"
        : `invalid: ${r.reason} (${r.code})`;
      if (okId === undefined) this.#send(["NOTICE", reason]);
      else this.#send(["OK", okId, r.ok, reason]);
    }, (err) => {
      this.#deps.log.warn("ingest failed: {error}", { error: String(err) });
      if (okId !== undefined) this.#send(["OK", okId, false, "error: the relay failed"]);
    });
  }

  #req(subId: unknown, rawFilters: unknown[]): void {
    const { limits, store } = this.#deps;
    if (typeof subId !== "string" || subId === "" || subId.length > MAX_SUB_ID_CHARS) {
      this.#send([
        "NOTICE",
        `invalid: a subscription id is a string of 1–${MAX_SUB_ID_CHARS} characters`,
      ]);
      return;
    }
    const closed = (reason: string) => {
      this.#subs.delete(subId);
      this.#send(["CLOSED", subId, reason]);
    };
    if (rawFilters.length === 0 || rawFilters.length > limits.maxFilters) {
      return closed(`invalid: give 1–${limits.maxFilters} filters`);
    }
    if (!this.#subs.has(subId) && this.#subs.size >= limits.maxSubscriptions) {
      return closed(
        `rate-limited: at most ${limits.maxSubscriptions} subscriptions; CLOSE one first`,
      );
    }
    if (this.#answers >= MAX_ANSWERS || this.buffered() > limits.maxQueue) {
      return closed("rate-limited: too many answers waiting to be read; read them first");
    }
    const queried: Filter[] = [];
    const indexed: boolean[] = [];
    const live: Filter[] = [];
    for (const f of rawFilters) {
      if (typeof f !== "object" || f === null || Array.isArray(f)) {
        return closed("invalid: a filter is a JSON object");
      }
      const filter = f as Filter;
      if (filter.search !== undefined) return closed("unsupported: search (NIP-50)");
      const limit = filter.limit;
      if (limit !== undefined && (typeof limit !== "number" || !(limit >= 0))) {
        return closed("invalid: Filter field limit must be a number ≥ 0");
      }
      try {
        // Checks the filter's shape without reading anything.
        store.query({ ...filter, limit: 0 });
      } catch (err) {
        if (err instanceof StoreError && err.code === "store.bad_filter") {
          return closed(`invalid: ${err.message}`);
        }
        throw err;
      }
      queried.push(filter);
      // Tags with longer names are not indexed: such a filter matches nothing.
      const matches = !Object.keys(filter).some((k) => k.startsWith("#") && k.length !== 2);
      indexed.push(matches);
      if (matches) live.push(filter);
    }
    const sub: Sub = { filters: live };
    const answer = new Answer(subId, sub, queried, indexed, limits.maxLimit);
    this.#subs.set(subId, sub);
    this.#answers++;
    this.#queue.push(answer);
    // Registered before any page is read: a post inserted meanwhile comes live, and
    // may also come in the stored answer (twice, never not at all).
    this.#pump();
  }

  #send(msg: unknown[]): void {
    this.#enqueue(JSON.stringify(msg));
  }

  #enqueue(text: string, live = false): void {
    if (this.#closed) return;
    // A client that sends without ever reading the answers: cut it off.
    if (!live && this.buffered() > 2 * this.#deps.limits.maxQueue) {
      this.#deps.log.info("disconnecting {source}: it does not read what it is sent", {
        source: this.source,
      });
      this.shutdown(1008, "slow consumer");
      return;
    }
    this.#queue.push(text);
    this.#queuedBytes += text.length;
    this.#pump();
  }

  /** Writes while the socket takes it, then looks again later. */
  #pump(): void {
    if (this.#closed) return;
    const { store } = this.#deps;
    if (this.#socket.readyState !== WS_OPEN) {
      if (this.#socket.readyState === WS_CONNECTING) this.#later();
      return;
    }
    let moved = false;
    while (this.#queue.length > 0 && this.#socket.bufferedAmount < HIGH_WATER) {
      const head = this.#queue[0];
      let text: string | undefined;
      if (typeof head === "string") {
        this.#queue.shift();
        this.#queuedBytes -= head.length;
        text = head;
      } else if (this.#subs.get(head.subId) !== head.sub) {
        // Closed or replaced before its stored answer was read: drop the rest of it.
        this.#queue.shift();
        this.#queuedBytes -= head.bytes;
        this.#answers--;
        continue;
      } else {
        // A new page is read only within the shared rate.
        if (head.bytes === 0 && !this.#deps.answerRate.ok()) break;
        const [before, read] = [head.bytes, head.read];
        text = head.next(store);
        this.#queuedBytes += head.bytes - before;
        this.#deps.answerRate.spend(head.read - read);
        if (text === undefined) {
          this.#queue.shift();
          this.#answers--;
          text = JSON.stringify(["EOSE", head.subId]);
        }
      }
      try {
        this.#socket.send(text);
      } catch {
        this.dispose();
        return;
      }
      moved = true;
    }
    const now = performance.now();
    if (moved) this.#lastMoved = now;
    if (this.#queue.length === 0) return;
    if (now - this.#lastMoved > this.#deps.limits.stallMs) {
      this.#deps.log.info("disconnecting {source}: it read nothing for {seconds} s", {
        source: this.source,
        seconds: Math.round(this.#deps.limits.stallMs / 1000),
      });
      this.shutdown(1008, "slow consumer");
      return;
    }
    // A socket that took something is likely draining: look again at once. One that
    // took nothing is looked at less and less often (a stalled client costs little).
    this.#wait = moved ? 1 : Math.min(MAX_PUMP_MS, Math.max(PUMP_MS, this.#wait * 2));
    this.#later(this.#wait);
  }

  #later(ms = PUMP_MS): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#pump();
    }, ms);
  }
}

/** The NIP-11 document for `Accept: application/nostr+json`, else a short text. */
function infoResponse(req: RequestHead, limits: Limits): HttpAnswer {
  if (!(req.headers.get("accept") ?? "").includes("application/nostr+json")) {
    return {
      status: 200,
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "This is the Nostr relay endpoint of a wats node: connect with a WebSocket.\n",
    };
  }
  const body = JSON.stringify({
    name: "wats node",
    description: "The relay endpoint of a wats node: wats posts only (kinds 4470–4481).",
    software: "wats",
    supported_nips: [1, 11],
    limitation: {
      max_message_length: MAX_MESSAGE_CHARS,
      max_subscriptions: limits.maxSubscriptions,
      max_limit: limits.maxLimit,
      max_subid_length: MAX_SUB_ID_CHARS,
      max_event_tags: MAX_TAGS,
      max_content_length: MAX_TEXT_BYTES,
    },
  });
  return {
    status: 200,
    headers: { "content-type": "application/nostr+json", "access-control-allow-origin": "*" },
    body,
  };
}
