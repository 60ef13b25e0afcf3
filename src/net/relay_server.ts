/**
 * The node's own NIP-01 relay endpoint (the `listen` setting): `Deno.serve` with a
 * WebSocket upgrade, so two nodes can peer directly with no third-party relay.
 *
 * - `EVENT` goes through the node's ingest (validation, store) and is answered with
 *   `OK` (`duplicate:`, `invalid:`, `error:` prefixes as NIP-01 says);
 * - `REQ` answers with the stored matches, newest first, then `EOSE`, then every new
 *   event that matches, as the store inserts it (`store.onInsert`);
 * - `CLOSE` ends a subscription; anything unreadable gets a `NOTICE`.
 *
 * Deno's server WebSocket has no backpressure: `send` always buffers. So every
 * message to a client goes through that client's queue, written only while the
 * socket's `bufferedAmount` is low. The stored results of a REQ are written lazily
 * from the query's result. Live events count against `maxQueue`: a client that is
 * already behind (messages waiting) and would go past it has the subscription that
 * could not keep up closed (`CLOSED` … `error: slow consumer`), and its events are
 * no longer queued. A client that reads nothing at all for `stallMs` is
 * disconnected, and one that sends without reading its answers past twice the cap.
 *
 * Requires `--allow-net` on the listen address.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { type Filter, matchFilters } from "nostr-tools/filter";
import { StoreError } from "../errors.ts";
import { MAX_EVENT_BYTES, MAX_TAGS, MAX_TEXT_BYTES, type NostrEvent } from "../posts/post.ts";
import type { Store, StoredPost } from "../store/store.ts";
import type { Ingest } from "./ingest.ts";

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
   * Bytes of messages one client may have waiting before a live subscription of
   * its that needs more is closed as a slow consumer. Default 4 MiB.
   */
  maxQueue?: number;
  /** Open subscriptions per connection. Default 20. */
  maxSubscriptions?: number;
  /** Filters per REQ. Default 10. */
  maxFilters?: number;
  /** Stored events per filter in a REQ's first answer. Default 500. */
  maxLimit?: number;
  /** Disconnect a client whose queue has not moved for this long. Default 60 s. */
  stallMs?: number;
}

/** A running relay endpoint. */
export interface RelayServer {
  /** The port it listens on (the real one when 0 was asked). */
  readonly port: number;
  readonly hostname: string;
  /** How many WebSocket clients are connected. */
  connections(): number;
  /** Stops listening, closes every connection and waits until the server is down. */
  close(): Promise<void>;
}

const DEFAULT_MAX_QUEUE = 4 * 1024 * 1024;
/** Write to the socket only while less than this is buffered in it. */
const HIGH_WATER = 256 * 1024;
/** How often a client's queue is looked at while it waits for the socket. */
const PUMP_MS = 20;
/** Longer messages are refused unread (an event is at most 64 KiB serialised). */
const MAX_MESSAGE_CHARS = 4 * MAX_EVENT_BYTES;
const MAX_SUB_ID_CHARS = 64;

/**
 * Starts the relay endpoint. Resolves once it listens.
 *
 * Requires `--allow-net` on `hostname:port`.
 */
export async function serveRelay(opts: RelayServerOptions): Promise<RelayServer> {
  const limits: Limits = {
    maxQueue: opts.maxQueue ?? DEFAULT_MAX_QUEUE,
    maxSubscriptions: opts.maxSubscriptions ?? 20,
    maxFilters: opts.maxFilters ?? 10,
    maxLimit: opts.maxLimit ?? 500,
    stallMs: opts.stallMs ?? 60_000,
  };
  const { store, ingest, log } = opts;
  const conns = new Set<Connection>();
  const abort = new AbortController();

  const unlisten = store.onInsert((posts) => {
    for (const c of conns) c.live(posts);
  });

  let listening!: (addr: Deno.NetAddr) => void;
  const ready = new Promise<Deno.NetAddr>((r) => listening = r);
  const server = Deno.serve({
    hostname: opts.hostname,
    port: opts.port,
    signal: abort.signal,
    onListen: (addr) => listening(addr as Deno.NetAddr),
    onError: (err) => {
      log.debug("relay endpoint request failed: {error}", { error: String(err) });
      return new Response("internal error", { status: 500 });
    },
  }, (req, info) => {
    if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") return infoResponse(req, limits);
    // Read before the upgrade: Deno 2.9 throws "Request closed" on it afterwards.
    const remote = info.remoteAddr as Deno.NetAddr;
    const { socket, response } = Deno.upgradeWebSocket(req);
    const conn = new Connection(socket, `listen:${remote.hostname}:${remote.port}`, {
      store,
      ingest,
      log,
      limits,
    });
    socket.onopen = () => conns.add(conn);
    socket.onclose = () => {
      conns.delete(conn);
      conn.dispose();
    };
    socket.onerror = (e) => {
      log.debug("relay endpoint socket error from {source}: {error}", {
        source: conn.source,
        error: (e as ErrorEvent).message ?? "",
      });
    };
    socket.onmessage = (e) => conn.receive(e.data);
    return response;
  });
  const addr = await ready;
  log.info("relay endpoint listening on ws://{hostname}:{port}", {
    hostname: addr.hostname,
    port: addr.port,
  });

  let closing: Promise<void> | undefined;
  return {
    port: addr.port,
    hostname: addr.hostname,
    connections: () => conns.size,
    close() {
      closing ??= (async () => {
        unlisten();
        for (const c of conns) c.shutdown();
        conns.clear();
        abort.abort();
        await server.finished;
      })();
      return closing;
    },
  };
}

interface Limits {
  maxQueue: number;
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
}

/** The stored answer of a REQ, written one event at a time as the socket allows. */
interface History {
  subId: string;
  events: NostrEvent[];
  next: number;
}

type Item = string | History;

/** One WebSocket client: its subscriptions and its send queue. */
class Connection {
  readonly source: string;
  readonly #socket: WebSocket;
  readonly #d: Deps;
  readonly #subs = new Map<string, Filter[]>();
  #queue: Item[] = [];
  #queuedBytes = 0;
  #histories = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastMoved = performance.now();
  #closed = false;

  constructor(socket: WebSocket, source: string, deps: Deps) {
    this.#socket = socket;
    this.source = source;
    this.#d = deps;
  }

  /** Handles one incoming message; never throws. */
  receive(data: unknown): void {
    try {
      this.#receive(data);
    } catch (err) {
      this.#d.log.debug("relay endpoint failed on a message from {source}: {error}", {
        source: this.source,
        error: String(err),
      });
      this.#send(["NOTICE", "error: the relay failed on this message"]);
    }
  }

  /** Queues each new post for the subscriptions it matches (store.onInsert). */
  live(posts: StoredPost[]): void {
    if (this.#closed) return;
    // A client with nothing waiting kept up so far: it gets this whole burst (at most
    // one ingest batch). The cap applies to a client that is already behind.
    const behind = this.#queuedBytes > 0;
    for (const [subId, filters] of this.#subs) {
      for (const post of posts) {
        if (!matchFilters(filters, post.event)) continue;
        const msg = JSON.stringify(["EVENT", subId, post.event]);
        if (behind && this.#queuedBytes + msg.length > this.#d.limits.maxQueue) {
          this.#subs.delete(subId);
          this.#d.log.info("closed subscription {subId} of {source}: slow consumer", {
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
    this.#d.ingest(input, this.source).then((r) => {
      if (this.#closed) return;
      const reason = r.ok
        ? (r.duplicate ? "duplicate: already have this event" : "")
        : r.code === "store"
        ? "error: could not store the event; try again later"
        : `invalid: ${r.reason} (${r.code})`;
      if (okId === undefined) this.#send(["NOTICE", reason]);
      else this.#send(["OK", okId, r.ok, reason]);
    }, (err) => {
      this.#d.log.warn("ingest failed: {error}", { error: String(err) });
      if (okId !== undefined) this.#send(["OK", okId, false, "error: the relay failed"]);
    });
  }

  #req(subId: unknown, rawFilters: unknown[]): void {
    const { limits, store } = this.#d;
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
    if (this.#histories >= 4 || this.#queuedBytes > limits.maxQueue) {
      return closed("rate-limited: too many answers waiting to be read; read them first");
    }
    const filters: Filter[] = [];
    const found = new Map<string, NostrEvent>();
    for (const f of rawFilters) {
      if (typeof f !== "object" || f === null || Array.isArray(f)) {
        return closed("invalid: a filter is a JSON object");
      }
      const filter = f as Filter;
      if (filter.search !== undefined) return closed("unsupported: search (NIP-50)");
      try {
        for (const e of store.query(filter, { maxLimit: limits.maxLimit })) found.set(e.id, e);
      } catch (err) {
        if (err instanceof StoreError && err.code === "store.bad_filter") {
          return closed(`invalid: ${err.message}`);
        }
        throw err;
      }
      // Tags with longer names are not indexed: such a filter matches nothing.
      if (Object.keys(filter).some((k) => k.startsWith("#") && k.length !== 2)) continue;
      filters.push(filter);
    }
    const events = [...found.values()].sort((a, b) =>
      b.created_at - a.created_at || (a.id < b.id ? -1 : 1)
    );
    // Registered in the same turn as the query: no insert can fall in between.
    this.#subs.set(subId, filters);
    this.#histories++;
    this.#queue.push({ subId, events, next: 0 });
    this.#pump();
  }

  #send(msg: unknown[]): void {
    this.#enqueue(JSON.stringify(msg));
  }

  #enqueue(text: string, live = false): void {
    if (this.#closed) return;
    // A client that sends without ever reading the answers: cut it off.
    if (!live && this.#queuedBytes > 2 * this.#d.limits.maxQueue) {
      this.#d.log.info("disconnecting {source}: it does not read what it is sent", {
        source: this.source,
      });
      this.shutdown(1008, "slow consumer");
      return;
    }
    this.#queue.push(text);
    this.#queuedBytes += text.length;
    this.#pump();
  }

  #pump(): void {
    if (this.#closed) return;
    if (this.#socket.readyState !== WebSocket.OPEN) {
      if (this.#socket.readyState === WebSocket.CONNECTING) this.#later();
      return;
    }
    let moved = false;
    while (this.#queue.length > 0 && this.#socket.bufferedAmount < HIGH_WATER) {
      const head = this.#queue[0];
      let text: string;
      if (typeof head === "string") {
        this.#queue.shift();
        this.#queuedBytes -= head.length;
        text = head;
      } else if (!this.#subs.has(head.subId)) {
        // Closed before its stored answer was read: drop the rest of it.
        this.#queue.shift();
        this.#histories--;
        continue;
      } else if (head.next < head.events.length) {
        text = JSON.stringify(["EVENT", head.subId, head.events[head.next++]]);
      } else {
        this.#queue.shift();
        this.#histories--;
        text = JSON.stringify(["EOSE", head.subId]);
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
    if (now - this.#lastMoved > this.#d.limits.stallMs) {
      this.#d.log.info("disconnecting {source}: it read nothing for {seconds} s", {
        source: this.source,
        seconds: Math.round(this.#d.limits.stallMs / 1000),
      });
      this.shutdown(1008, "slow consumer");
      return;
    }
    this.#later();
  }

  #later(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#pump();
    }, PUMP_MS);
  }
}

/** The NIP-11 document for `Accept: application/nostr+json`, else a short text. */
function infoResponse(req: Request, limits: Limits): Response {
  if (!(req.headers.get("accept") ?? "").includes("application/nostr+json")) {
    return new Response(
      "This is the Nostr relay endpoint of a wats node: connect with a WebSocket.\n",
      { headers: { "content-type": "text/plain; charset=utf-8" } },
    );
  }
  return Response.json({
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
  }, {
    headers: {
      "content-type": "application/nostr+json",
      "access-control-allow-origin": "*",
    },
  });
}
