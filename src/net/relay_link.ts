/**
 * The connection to one relay, kept up: a `WsClient` (ws_client.ts) per attempt,
 * an attempt abandoned when it does not open in time, and a lost connection tried
 * again after a capped exponential delay with jitter ({@linkcode backoffDelay}).
 * Nothing runs while connected and idle: no ping, no poll; the only timer is the
 * connect timeout or the reconnect deadline. What a connection is for (the
 * subscriptions, the catch-up, the outbox) is relay_sync.ts's, told through
 * {@linkcode LinkHandlers}.
 *
 * Requires `--allow-net` on the relay's host and port.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { CLOSED, OPEN, WsClient } from "./ws_client.ts";

/**
 * The longest reconnect delay, by default: a relay that comes back after a long
 * absence is tried again within this (and half of it at least, once the delays
 * have grown to it).
 */
export const RECONNECT_MAX_MS = 60_000;

/**
 * Reconnect attempts that wait only the first delay before it starts to double. A relay restarted
 * for a deploy is back within seconds: with doubling from the first attempt, a relay down 2.9 s
 * was reconnected to 2.7 s after it was up again (p50 over 5 nodes, bench/delivery.ts), time every
 * ask posted meanwhile waited.
 */
export const QUICK_TRIES = 3;

/**
 * The wait before reconnect attempt `attempt` (0 first): the first delay for the first
 * {@linkcode QUICK_TRIES} attempts, then `min(max, base × 2^(attempt − QUICK_TRIES + 1))`; half
 * of it fixed and half random (`random` in [0, 1)), so many nodes that lost the same relay do not
 * all return in the same second.
 */
export function backoffDelay(
  attempt: number,
  limits: { baseMs: number; maxMs: number },
  random: () => number,
): number {
  const doublings = Math.min(Math.max(0, attempt - QUICK_TRIES + 1), 30);
  const full = Math.min(limits.maxMs, limits.baseMs * 2 ** doublings);
  return full / 2 + random() * full / 2;
}

/** What a connection tells its owner. */
export interface LinkHandlers {
  /** The connection opened. */
  open(): void;
  /** A text message arrived (a throw is logged, never fatal). */
  message(data: string): void;
  /** Sees the first bytes of a message before it is decoded; false drops it unread. */
  peek(head: Uint8Array): boolean;
  /** The connection (or the attempt) ended; called before any reconnect is planned. */
  lost(): void;
}

/** Options of {@linkcode RelayLink}. */
export interface RelayLinkOptions {
  /** The relay's ws:// or wss:// URL. */
  url: string;
  log: Logger;
  handlers: LinkHandlers;
  /** A number in [0, 1) for the backoff's jitter. Default `Math.random`. */
  random?: () => number;
  /** The first reconnect delay. Default 1 s. */
  backoffBaseMs?: number;
  /** The longest reconnect delay. Default {@linkcode RECONNECT_MAX_MS}. */
  backoffMaxMs?: number;
  /** Give up a connection attempt after this long. Default 15 s. */
  connectTimeoutMs?: number;
}

/** A connection to one relay that reconnects until closed; connects at once. */
export class RelayLink {
  readonly url: string;
  readonly #options: RelayLinkOptions;
  #ws: WsClient | undefined;
  #connected = false;
  #lastError: string | undefined;
  #attempt = 0;
  /** The connect timeout while connecting, the reconnect deadline while waiting. */
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #closedSocket: Promise<void> = Promise.resolve();
  /** Bytes of the connections that ended. */
  #bytesBefore = 0;

  constructor(opts: RelayLinkOptions) {
    this.url = opts.url;
    this.#options = opts;
    this.#connect();
  }

  /** True while a connection is open (and the link not closed). */
  get connected(): boolean {
    return this.#connected && !this.#closed;
  }

  /** The last problem with this relay, until {@linkcode healthy}. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** Bytes received from the relay since the start, all connections together. */
  get bytesReceived(): number {
    return this.#bytesBefore + (this.#ws?.bytesReceived ?? 0);
  }

  /** Notes a problem (shown in the status until {@linkcode healthy}). */
  problem(message: string): void {
    this.#lastError = message;
  }

  /** The relay served this connection well: the next reconnect starts from the first delay. */
  healthy(): void {
    this.served();
    this.#lastError = undefined;
  }

  /**
   * The relay answers on this connection (a subscription's EOSE): a reconnect after it starts
   * from the first delay again, though the catch-up has not finished. A relay restarted every
   * 30 s under load dropped connections before their catch-up ended, so the delay grew across
   * restarts to the 60 s cap and asks waited minutes (bench/delivery.ts, issue 27).
   */
  served(): void {
    this.#attempt = 0;
  }

  /** Reconnect attempts since the relay last served (0 while it does). */
  get attempts(): number {
    return this.#attempt;
  }

  /** Sends a message as JSON; false when no connection is open. */
  send(msg: unknown[]): boolean {
    const ws = this.#ws;
    if (!ws || ws.readyState !== OPEN) return false;
    ws.send(JSON.stringify(msg));
    return true;
  }

  /** Stops reading the connection until {@linkcode resume} (`WsClient.pause`). */
  pause(): void {
    this.#ws?.pause();
  }

  /** Reads the connection again after {@linkcode pause}. */
  resume(): void {
    this.#ws?.resume();
  }

  /** Closes the connection and cancels any reconnect; resolves once the socket closed. */
  async close(): Promise<void> {
    if (this.#closed) return await this.#closedSocket;
    this.#closed = true;
    clearTimeout(this.#timer);
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

  #connect(): void {
    if (this.#closed) return;
    const { url, log, handlers } = this.#options;
    let ws: WsClient;
    try {
      ws = new WsClient(url);
    } catch (err) {
      // A malformed URL will not get better: no retry.
      this.#lastError = `cannot connect: ${(err as Error).message}`;
      log.error("relay {url}: {error}; fix infra", { url, error: this.#lastError });
      return;
    }
    this.#ws = ws;
    const closedSocket = Promise.withResolvers<void>();
    this.#closedSocket = closedSocket.promise;
    const timeoutMs = this.#options.connectTimeoutMs ?? 15_000;
    this.#timer = setTimeout(() => {
      this.#lastError = `no connection within ${timeoutMs / 1000} s`;
      try {
        ws.close();
      } catch {
        // Closing anyway.
      }
    }, timeoutMs);
    ws.onopen = () => {
      clearTimeout(this.#timer);
      if (this.#closed) return;
      this.#connected = true;
      log.info("connected to relay {url}", { url });
      handlers.open();
    };
    ws.onmessage = (e) => {
      if (this.#ws !== ws) return;
      try {
        handlers.message(e.data);
      } catch (err) {
        log.warn("relay {url}: cannot handle a message: {error}", { url, error: String(err) });
      }
    };
    ws.onpeek = handlers.peek;
    ws.onerror = (e) => {
      if (e.message) this.#lastError = e.message;
    };
    ws.onclose = (e) => {
      clearTimeout(this.#timer);
      const was = this.#connected;
      this.#connected = false;
      handlers.lost();
      closedSocket.resolve();
      if (this.#ws === ws) {
        this.#bytesBefore += ws.bytesReceived;
        this.#ws = undefined;
      }
      if (this.#closed) return;
      if (was) {
        this.#lastError ??= `connection closed (${e.code}${e.reason ? ` ${e.reason}` : ""})`;
        log.warn("lost relay {url}: {error}", { url, error: this.#lastError });
      }
      this.#scheduleReconnect();
    };
  }

  #scheduleReconnect(): void {
    const delay = backoffDelay(
      this.#attempt,
      {
        baseMs: this.#options.backoffBaseMs ?? 1_000,
        maxMs: this.#options.backoffMaxMs ?? RECONNECT_MAX_MS,
      },
      this.#options.random ?? Math.random,
    );
    this.#attempt++;
    this.#options.log.debug("reconnecting to {url} in {ms} ms", {
      url: this.url,
      ms: Math.round(delay),
    });
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#connect();
    }, delay);
  }
}
