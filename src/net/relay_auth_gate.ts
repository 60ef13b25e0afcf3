/**
 * Who the relay endpoint serves (`net.auth`, `net.members`; docs/decisions/relay_auth.md).
 *
 * With `net.auth = "open"` every client is served, as before. With `"required"`, each
 * connection is sent a fresh random challenge on connect (NIP-42) and is served only
 * once it has answered with an AUTH event signed by one of `net.members`:
 *
 * - `REQ` before that: `CLOSED` `auth-required:` (no AUTH yet) or `restricted:` (an
 *   AUTH by a key that is not a member); nothing is read for it.
 * - `EVENT` before that: `OK false` with the same prefixes; nothing is stored. From
 *   a member's connection, an event whose author is not a member is refused
 *   `restricted:` too: membership is about what the store takes, not only who is
 *   connected, so a member cannot launder an outsider's posts into the swarm.
 * - A connection may prove several keys (a node answers once, with its person's key;
 *   another client may send more), up to {@linkcode MAX_AUTHED_KEYS}; AUTH attempts
 *   beyond {@linkcode MAX_AUTH_ATTEMPTS} close it.
 *
 * Per client address (the socket's, or `X-Forwarded-For`'s last hop when
 * `net.trust_forwarded` says a proxy of the operator's sets it), at most
 * `maxPerIp` connections at once and a message rate shared by them all
 * ({@linkcode IpLimits}).
 *
 * @module
 */

import { checkAuth } from "./auth_event.ts";

/** `net.auth` and `net.members` as the endpoint applies them. */
export interface EndpointAuth {
  required: boolean;
  /** Member author keys, lowercase hex. */
  members: ReadonlySet<string>;
}

/** AUTH messages one connection may send; the next one closes it. */
export const MAX_AUTH_ATTEMPTS = 8;
/** Distinct keys one connection may prove. */
export const MAX_AUTHED_KEYS = 4;

/** What an AUTH message gets: its `OK`, and whether the connection must close after. */
export interface AuthAnswer {
  ok: unknown[];
  close?: boolean;
}

/** One connection's standing with the endpoint's `net.auth`. */
export class AuthGate {
  readonly #policy: EndpointAuth;
  readonly #host: string;
  readonly #now: () => number;
  readonly challenge: string;
  readonly #keys = new Set<string>();
  #attempts = 0;

  /** `host` is what the client connected to (`hostOf` of its `Host` header). */
  constructor(opts: { policy: EndpointAuth; host: string; now?: () => number }) {
    this.#policy = opts.policy;
    this.#host = opts.host;
    this.#now = opts.now ?? Date.now;
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    this.challenge = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  /** The keys this connection proved (hex), in the order proved. */
  get keys(): string[] {
    return [...this.#keys];
  }

  /** The message to send on connect: the challenge, when authentication is required. */
  greeting(): unknown[] | undefined {
    return this.#policy.required ? ["AUTH", this.challenge] : undefined;
  }

  /** Answers an AUTH message carrying `event`. */
  auth(event: unknown): AuthAnswer {
    const id = (event as { id?: unknown } | null)?.id;
    const okId = typeof id === "string" ? id.slice(0, 64) : "";
    if (++this.#attempts > MAX_AUTH_ATTEMPTS) {
      return {
        ok: ["OK", okId, false, `rate-limited: more than ${MAX_AUTH_ATTEMPTS} AUTH attempts`],
        close: true,
      };
    }
    const r = checkAuth(event, { challenge: this.challenge, host: this.#host, now: this.#now() });
    if ("reason" in r) return { ok: ["OK", okId, false, r.reason] };
    if (!this.#keys.has(r.pubkey) && this.#keys.size >= MAX_AUTHED_KEYS) {
      return {
        ok: ["OK", okId, false, `restricted: at most ${MAX_AUTHED_KEYS} keys a connection`],
      };
    }
    this.#keys.add(r.pubkey);
    if (this.#policy.required && !this.#policy.members.has(r.pubkey)) {
      return { ok: ["OK", okId, false, "restricted: this key is not a member of this relay"] };
    }
    return { ok: ["OK", okId, true, ""] };
  }

  /** Why this connection may not read (`auth-required:`/`restricted:`), or undefined. */
  refuseRead(): string | undefined {
    if (!this.#policy.required || this.#member()) return undefined;
    return this.#keys.size === 0
      ? "auth-required: this relay serves its members only; answer the AUTH challenge"
      : "restricted: the key you authenticated with is not a member of this relay";
  }

  /** Why an event by `author` is not taken from this connection, or undefined. */
  refuseEvent(author: unknown): string | undefined {
    const read = this.refuseRead();
    if (read !== undefined) return read;
    if (!this.#policy.required || this.#policy.members.has(author as string)) return undefined;
    return "restricted: the event's author is not a member of this relay";
  }

  #member(): boolean {
    for (const k of this.#keys) if (this.#policy.members.has(k)) return true;
    return false;
  }
}

/** A token bucket of messages, one per client address. */
class Bucket {
  tokens: number;
  at: number;
  connections = 0;
  constructor(burst: number, now: number) {
    this.tokens = burst;
    this.at = now;
  }
}

/** Connections and messages per client address. */
export class IpLimits {
  readonly #maxConnections: number;
  readonly #perSecond: number;
  readonly #now: () => number;
  readonly #ips = new Map<string, Bucket>();

  constructor(
    opts: { maxConnections: number; messagesPerSecond: number; now?: () => number },
  ) {
    this.#maxConnections = opts.maxConnections;
    this.#perSecond = opts.messagesPerSecond;
    this.#now = opts.now ?? (() => performance.now());
  }

  /** Whether `ip` may open one more connection now. */
  canConnect(ip: string): boolean {
    return (this.#ips.get(ip)?.connections ?? 0) < this.#maxConnections;
  }

  /** A connection from `ip` opened. */
  opened(ip: string): void {
    let b = this.#ips.get(ip);
    if (!b) this.#ips.set(ip, b = new Bucket(2 * this.#perSecond, this.#now()));
    b.connections++;
  }

  /** A connection from `ip` closed; an address with none left is forgotten. */
  closed(ip: string): void {
    const b = this.#ips.get(ip);
    if (b && --b.connections <= 0) this.#ips.delete(ip);
  }

  /** Takes one message of `ip`'s budget; false when it has none left now. */
  take(ip: string): boolean {
    const b = this.#ips.get(ip);
    if (!b) return true;
    const now = this.#now();
    if (this.#perSecond === Infinity) return true;
    b.tokens = Math.min(2 * this.#perSecond, b.tokens + (now - b.at) * this.#perSecond / 1000);
    b.at = now;
    if (b.tokens < 1) return false;
    b.tokens--;
    return true;
  }

  /** Addresses with a connection open. */
  get size(): number {
    return this.#ips.size;
  }
}

/**
 * The client's address for the per-IP limits: the socket's peer, or with
 * `trustForwarded` the last `X-Forwarded-For` hop (the one the operator's proxy
 * appended; earlier hops are whatever the client wrote).
 */
export function clientIp(
  remote: string,
  headers: Headers,
  trustForwarded: boolean,
): string {
  if (!trustForwarded) return remote;
  const hops = (headers.get("x-forwarded-for") ?? "").split(",").map((h) => h.trim())
    .filter((h) => h !== "");
  return hops.at(-1) ?? remote;
}
