/**
 * NIP-42's authentication event (kind 22242), both ways: signing one for a relay's
 * challenge (the node as a client, `relay_auth.ts`) and judging one a client sent
 * (the node's endpoint, `relay_auth_gate.ts`). Kept in one file so the two sides
 * agree on what a valid answer to a challenge is.
 *
 * @module
 */

import { finalizeEvent } from "nostr-tools/pure";
import type { NostrEvent } from "../posts/post.ts";
import { verifyEventJs } from "../posts/verify.ts";

/** The kind of a NIP-42 authentication event. */
export const AUTH_KIND = 22242;
/** How far an AUTH event's `created_at` may be from now, either way (NIP-42 suggests ~10 min). */
export const AUTH_MAX_AGE_S = 600;

/** Signs the answer to `challenge` from the relay at `relayUrl` with `secret`. */
export function signAuth(
  opts: { secret: Uint8Array; relayUrl: string; challenge: string; now: number },
): NostrEvent {
  return finalizeEvent({
    kind: AUTH_KIND,
    created_at: Math.floor(opts.now / 1000),
    tags: [["relay", opts.relayUrl], ["challenge", opts.challenge]],
    content: "",
  }, opts.secret) as NostrEvent;
}

/** What a valid AUTH event must match. */
export interface AuthExpectation {
  /** The challenge sent on this connection. */
  challenge: string;
  /** The `host[:port]` the client connected to (its `Host` header), lowercase. */
  host: string;
  /** Milliseconds since the epoch. */
  now: number;
}

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;

/**
 * Judges an AUTH event: the pubkey it proves, or the NIP-42 reason (`invalid:`…) it
 * is refused with. Cheap checks come before the signature.
 */
export function checkAuth(
  input: unknown,
  want: AuthExpectation,
): { pubkey: string } | { reason: string } {
  const e = input as Partial<NostrEvent> | null;
  const bad = (why: string) => ({ reason: `invalid: ${why}` });
  if (typeof e !== "object" || e === null) return bad("an AUTH message carries an event");
  if (
    typeof e.id !== "string" || !HEX64.test(e.id) || typeof e.pubkey !== "string" ||
    !HEX64.test(e.pubkey) || typeof e.sig !== "string" || !HEX128.test(e.sig) ||
    !Number.isInteger(e.created_at) || typeof e.content !== "string" || !Array.isArray(e.tags) ||
    !e.tags.every((t) => Array.isArray(t) && t.every((v) => typeof v === "string"))
  ) return bad("the AUTH event is malformed");
  if (e.kind !== AUTH_KIND) return bad(`an AUTH event is of kind ${AUTH_KIND}`);
  const tag = (name: string) => e.tags!.find((t) => t[0] === name)?.[1];
  if (tag("challenge") !== want.challenge) {
    return bad("the challenge is not the one this connection was sent");
  }
  if (relayHost(tag("relay")) !== want.host) {
    return bad(`the relay tag does not name this relay (${want.host})`);
  }
  if (Math.abs(e.created_at! - want.now / 1000) > AUTH_MAX_AGE_S) {
    return bad(`created_at is more than ${AUTH_MAX_AGE_S / 60} minutes from now`);
  }
  if (verifyEventJs(e as NostrEvent) !== "ok") return bad("bad id or signature");
  return { pubkey: e.pubkey };
}

/**
 * The `host[:port]` of a relay URL as {@linkcode hostOf} compares it, or undefined when it is not a ws(s)/http(s) URL.
 */
export function relayHost(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const u = new URL(url);
    if (!["ws:", "wss:", "http:", "https:"].includes(u.protocol)) return undefined;
    return hostOf(u.host);
  } catch {
    return undefined;
  }
}

/**
 * A `Host` header as {@linkcode relayHost} compares it: lowercase, a default port
 * (80, 443) left out, as a ws:// or wss:// URL leaves it out.
 */
export function hostOf(header: string | null): string {
  return (header ?? "").trim().toLowerCase().replace(/:(80|443)$/, "");
}
