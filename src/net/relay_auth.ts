/**
 * The node's side of NIP-42 with one relay, for one connection at a time: it answers
 * the relay's `AUTH` challenge with a kind 22242 event signed by the node's person's
 * key (docs/decisions/relay_auth.md says why that key and only one), and says when
 * what the relay refused `auth-required:` should be sent again.
 *
 * What was refused `auth-required:` (a `CLOSED` subscription, an `OK false` publish)
 * is sent again once, after the relay accepts the AUTH: relay_sync.ts restarts the
 * connection's session (subscriptions, catch-up from the saved cursor, outbox). A
 * relay that still refuses after that is shown in the status, not retried in a loop.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import { npubEncode } from "nostr-tools/nip19";
import { signAuth } from "./auth_event.ts";

/** The key a node authenticates with. */
export interface AuthKey {
  secret: Uint8Array;
  /** Hex. */
  pubkey: string;
}

/** How the node stands with a relay's NIP-42, as the status shows it. */
export interface AuthStatus {
  /** `npub` the relay accepted this connection's AUTH for. */
  as?: string;
  /** Why the relay refused the AUTH or what was sent (`restricted: …`), until accepted. */
  refused?: string;
}

/** Options of {@linkcode RelayAuth}. */
export interface RelayAuthOptions {
  url: string;
  /** Absent: challenges are not answered (a node with no key to offer). */
  key?: AuthKey;
  send: (msg: unknown[]) => boolean;
  log: Logger;
  now: () => number;
  /** What was refused `auth-required:` can be sent again now: the AUTH was accepted. */
  resume: () => void;
  /** The relay refused the AUTH (`reason`, as it said it): what waited for it is refused too. */
  denied?: (reason: string) => void;
}

/** One relay's NIP-42 state, for the current connection. */
export class RelayAuth {
  readonly #opts: RelayAuthOptions;
  /** The id of the AUTH event sent and not yet answered. */
  #pending: string | undefined;
  /** The challenge answered on this connection: a relay that repeats it is not answered twice. */
  #answered: string | undefined;
  #accepted = false;
  /** Why the relay refused this connection's AUTH, once it did. */
  #denied: string | undefined;
  /** Something was refused `auth-required:` since the last resume. */
  #blocked = false;
  /** Resumes since the AUTH was accepted on this connection (one at most). */
  #resumed = 0;
  #status: AuthStatus = {};

  constructor(opts: RelayAuthOptions) {
    this.#opts = opts;
  }

  /** As the status shows it. */
  status(): AuthStatus {
    return { ...this.#status };
  }

  /** The relay's `["AUTH", challenge]`: answers it with a signed event. */
  challenge(challenge: unknown): void {
    const { key, url, log } = this.#opts;
    if (typeof challenge !== "string" || challenge === "" || challenge.length > 256) return;
    if (challenge === this.#answered) return;
    if (!key) {
      log.info("relay {url} asks for NIP-42 AUTH; this node has no key to answer with", { url });
      return;
    }
    const event = signAuth({ secret: key.secret, relayUrl: url, challenge, now: this.#opts.now() });
    this.#pending = event.id;
    this.#answered = challenge;
    this.#opts.send(["AUTH", event]);
  }

  /** An `OK`: true when it answers the AUTH (and is handled), false for a publish's. */
  answered(id: unknown, accepted: unknown, message: unknown): boolean {
    if (this.#pending === undefined || id !== this.#pending) return false;
    this.#pending = undefined;
    const { url, log, key } = this.#opts;
    const npub = npubEncode(key!.pubkey);
    if (accepted === true) {
      this.#accepted = true;
      this.#status = { as: npub };
      log.info("authenticated to relay {url} as {npub}", { url, npub });
      if (this.#blocked) this.#resume();
    } else {
      const reason = typeof message === "string" && message !== "" ? message : "no reason given";
      this.#denied = reason;
      this.#note(`refused AUTH as ${npub}: ${reason}`);
      this.#opts.denied?.(reason);
    }
    return true;
  }

  /**
   * The relay refused something `auth-required:`: it is sent again once the AUTH is
   * accepted (at once when it already was, the first time); refused for good, with
   * the relay's reason, when the AUTH was refused.
   */
  required(): void {
    if (this.#denied !== undefined) return this.#opts.denied?.(this.#denied);
    this.#blocked = true;
    if (!this.#accepted) return;
    if (this.#resumed === 0) return queueMicrotask(() => this.#blocked && this.#resume());
    this.#note("refuses with auth-required: even after AUTH; not retrying on this connection");
  }

  /**
   * The relay refused something `restricted:` (or `blocked:`): its reason is shown,
   * logged once per reason.
   */
  restricted(reason: string): void {
    if (this.#status.refused === reason) return;
    this.#note(reason);
  }

  /** The connection ended: the next one starts unauthenticated. */
  reset(): void {
    this.#pending = undefined;
    this.#answered = undefined;
    this.#denied = undefined;
    this.#accepted = false;
    this.#blocked = false;
    this.#resumed = 0;
    if (this.#status.as !== undefined) this.#status = {};
  }

  #resume(): void {
    this.#blocked = false;
    this.#resumed++;
    this.#opts.resume();
  }

  #note(refused: string): void {
    this.#status = { ...this.#status, refused };
    this.#opts.log.warn("relay {url} {refused}", { url: this.#opts.url, refused });
  }
}
