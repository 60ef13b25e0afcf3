/**
 * One WebSocket client of the relay endpoint: its subscriptions and its send queue.
 *
 * A WebSocket's `send` has no backpressure (it always buffers), so every message to
 * the client goes through its queue, written only while the socket's
 * `bufferedAmount` is low; a stored answer in the queue (`relay_answer.ts`) is read a
 * page at a time as the socket takes it. What the client's messages mean is
 * `relay_messages.ts`; the caps across all clients are the server's
 * (`relay_server.ts`).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { matchFilters } from "nostr-tools/filter";
import type { Store, StoredPost } from "../store/store.ts";
import type { Ingest } from "./ingest.ts";
import { Answer, type Sub } from "./relay_answer.ts";
import type { AuthGate } from "./relay_auth_gate.ts";
import type { Limits, Rate } from "./relay_caps.ts";
import { ingestAnswer, okIdOf, readMessage, readReq } from "./relay_messages.ts";
import type { WsServerSocket } from "./ws_server.ts";

/** What a connection shares with the endpoint and the other connections. */
export interface Deps {
  store: Store;
  ingest: Ingest;
  log: Logger;
  limits: Limits;
  /** Disconnects the slowest clients while all of them hold too much. */
  trim: () => void;
  /** Shared by every connection's stored answers. */
  answerRate: Rate;
}

/** What is this one client's: its address's message budget and its `net.auth` standing. */
export interface ClientGate {
  auth: AuthGate;
  /** Takes one message of the client address's budget; false: over `net.max_messages_per_ip`. */
  take: () => boolean;
}

/** `readyState` values (`WebSocket`'s). */
const WS_CONNECTING = 0, WS_OPEN = 1;
/** Write to the socket only while less than this is buffered in it. */
const HIGH_WATER = 32 * 1024;
/** How often a client's queue is looked at while it waits for the socket: at first… */
const PUMP_MS = 20;
/** …and at the least, for a client that has not read for a while. */
const MAX_PUMP_MS = 1_000;

type Item = string | Answer;

/** One WebSocket client: its subscriptions and its send queue. */
export class Connection {
  readonly source: string;
  readonly #socket: WsServerSocket;
  readonly #deps: Deps;
  readonly #gate: ClientGate;
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

  constructor(socket: WsServerSocket, source: string, deps: Deps, gate: ClientGate) {
    this.#socket = socket;
    this.source = source;
    this.#deps = deps;
    this.#gate = gate;
    const hello = gate.auth.greeting();
    if (hello) this.#send(hello);
  }

  /** The keys the client proved with NIP-42 AUTH (hex). */
  get keys(): string[] {
    return this.#gate.auth.keys;
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
    const msg = readMessage(data);
    if (!this.#gate.take()) return this.#limited(msg);
    switch (msg.type) {
      case "EVENT": {
        const refused = this.#gate.auth.refuseEvent(
          (msg.event as { pubkey?: unknown } | null)?.pubkey,
        );
        if (refused === undefined) return this.#event(msg.event);
        const okId = okIdOf(msg.event);
        this.#send(okId === undefined ? ["NOTICE", refused] : ["OK", okId, false, refused]);
        return this.#challengeAgain(refused);
      }
      case "REQ": {
        const refused = this.#gate.auth.refuseRead();
        if (refused === undefined) return this.#req(msg.subId, msg.filters);
        if (typeof msg.subId !== "string") return this.#send(["NOTICE", refused]);
        this.#subs.delete(msg.subId);
        this.#send(["CLOSED", msg.subId.slice(0, 64), refused]);
        return this.#challengeAgain(refused);
      }
      case "AUTH": {
        const answer = this.#gate.auth.auth(msg.event);
        this.#send(answer.ok);
        if (answer.close) {
          this.#deps.log.info("disconnecting {source}: too many AUTH attempts", {
            source: this.source,
          });
          // The refusal goes out before the close frame.
          this.#pump();
          this.shutdown(1008, "too many AUTH attempts");
        }
        return;
      }
      case "CLOSE":
        if (typeof msg.subId === "string") this.#subs.delete(msg.subId);
        return;
      case "unreadable":
        this.#send(["NOTICE", msg.notice]);
    }
  }

  /**
   * After an `auth-required:` refusal, the challenge again (the same one): a proxy
   * may have dropped the first, sent before the client's side of it was open.
   */
  #challengeAgain(refused: string): void {
    if (refused.startsWith("auth-required:")) this.#send(["AUTH", this.#gate.auth.challenge]);
  }

  /** A message past the address's rate: answered as its kind expects, never read. */
  #limited(msg: ReturnType<typeof readMessage>): void {
    const reason = "rate-limited: too many messages from your address; slow down";
    if (msg.type === "EVENT" && okIdOf(msg.event) !== undefined) {
      return this.#send(["OK", okIdOf(msg.event), false, reason]);
    }
    if (msg.type === "REQ" && typeof msg.subId === "string") {
      this.#subs.delete(msg.subId);
      return this.#send(["CLOSED", msg.subId.slice(0, 64), reason]);
    }
    this.#send(["NOTICE", reason]);
  }

  #event(input: unknown): void {
    const okId = okIdOf(input);
    this.#deps.ingest(input, this.source).then((r) => {
      if (this.#closed) return;
      this.#send(ingestAnswer(okId, r));
    }, (err) => {
      this.#deps.log.warn("ingest failed: {error}", { error: String(err) });
      if (okId !== undefined) this.#send(["OK", okId, false, "error: the relay failed"]);
    });
  }

  #req(subId: unknown, rawFilters: unknown[]): void {
    const { limits, store } = this.#deps;
    const state = {
      has: (id: string) => this.#subs.has(id),
      subscriptions: this.#subs.size,
      answers: this.#answers,
      buffered: this.buffered(),
    };
    const req = readReq({ subId, filters: rawFilters }, state, store, limits);
    if ("notice" in req) return this.#send(["NOTICE", req.notice]);
    if ("closed" in req) {
      // A refused REQ also ends the subscription of its id, if one was open.
      this.#subs.delete(req.subId);
      return this.#send(["CLOSED", req.subId, req.closed]);
    }
    const sub: Sub = { filters: req.live };
    const answer = new Answer({
      subId: req.subId,
      sub,
      filters: req.queried,
      indexed: req.indexed,
      maxLimit: limits.maxLimit,
    });
    this.#subs.set(req.subId, sub);
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
    while (this.#socket.bufferedAmount < HIGH_WATER) {
      const head = this.#queue[0];
      if (head === undefined) break;
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
