/**
 * Validation of events that arrive from outside: relays, peers, MCP clients.
 *
 * Checks run cheapest first — shape and sizes (`malformed`, `too_large`,
 * `too_many_tags`), then `unknown_kind`, `future`, `bad_thread`, `bad_route`, and last the hash
 * (`bad_id`) and signature (`bad_sig`) — and the first failing rule names the
 * rejection. The checks run on a fresh plain copy
 * built from the input's fields, read once: getters, extra fields, or a "verified"
 * mark cached by nostr-tools on the input can change nothing. `validateEvent` never
 * throws, whatever the input.
 *
 * @module
 */

import { CAP_NAME } from "../cap_name.ts";
import type { NostrEvent } from "nostr-tools/core";
import { KIND_BASE, PRESENCE_KIND, WATS_KINDS, watsKindOf } from "./kinds.ts";
import {
  CAP_PREFIX,
  isHex64,
  MAX_CAPS,
  MAX_EVENT_BYTES,
  MAX_TAGS,
  MAX_TEXT_BYTES,
  MAX_TO,
  threadLinks,
} from "./post.ts";
import { serializeEvent, type VerifyBackend, verifyEvent, type VerifyResult } from "./verify.ts";
import type { RejectCode } from "../contracts/reject_codes.ts";

/** The outcome of `validateEvent`. */
export type Validation =
  | { ok: true; event: NostrEvent }
  | { ok: false; code: RejectCode; reason: string };

/** What validation depends on besides the event. */
export interface ValidateOptions {
  /** The current time in milliseconds (injected clock). */
  nowMs: number;
  /** How far in the future `created_at` may be (`net.max_skew`, default 10 min). */
  maxSkewMs: number;
  /** Signature backend; `"wasm"` (default) falls back to JS when wasm cannot load. */
  backend?: VerifyBackend;
  /**
   * Checks id and signature instead of `verifyEvent` on this thread (the ingest's
   * worker pool). It gets the fresh copy, never the input.
   */
  verify?: (event: NostrEvent) => Promise<VerifyResult>;
}

const HEX128 = /^[0-9a-f]{128}$/;
const KIND_RANGE = `${KIND_BASE}–${
  KIND_BASE + WATS_KINDS.indexOf("halt")
}, or ${PRESENCE_KIND} presence`;

/**
 * Checks an untrusted value as a wats event. On success, `event` is a fresh plain
 * object holding only the NIP-01 fields: store and forward that one, not the input.
 */
export async function validateEvent(input: unknown, opts: ValidateOptions): Promise<Validation> {
  let copy: NostrEvent;
  try {
    const shaped = snapshot(input);
    if ("code" in shaped) return { ok: false, ...shaped };
    copy = shaped;
    if (watsKindOf(copy.kind) === undefined) {
      return reject("unknown_kind", `kind ${copy.kind} is not a wats kind (${KIND_RANGE})`);
    }
    if (copy.created_at * 1000 > opts.nowMs + opts.maxSkewMs) {
      const ahead = Math.round((copy.created_at * 1000 - opts.nowMs) / 1000);
      return reject(
        "future",
        `created_at is ${ahead} s in the future; at most ${opts.maxSkewMs / 1000} s are accepted`,
      );
    }
    const links = threadLinks(copy.tags);
    if ("error" in links) return reject("bad_thread", links.error);
    if (watsKindOf(copy.kind) === "ask") {
      const route = routeError(copy.tags);
      if (route !== undefined) return reject("bad_route", route);
    }
    const size = new TextEncoder().encode(serializeEvent(copy)).length;
    if (size > MAX_EVENT_BYTES) {
      return reject("too_large", `the event is ${size} bytes; the limit is ${MAX_EVENT_BYTES}`);
    }
  } catch (err) {
    return reject("malformed", `cannot read the event: ${describe(err)}`);
  }
  try {
    const result = opts.verify ? await opts.verify(copy) : await verifyEvent(copy, opts.backend);
    if (result === "bad_id") return reject("bad_id", "id is not the sha256 of the event");
    if (result === "bad_sig") {
      return reject("bad_sig", "the signature does not match pubkey and id");
    }
    return { ok: true, event: copy };
  } catch (err) {
    return reject("bad_sig", `the signature could not be checked: ${describe(err)}`);
  }
}

/**
 * What is wrong with an ask's routing tags, which decide whose agents wake
 * (docs/decisions/runner.md, "Routing"): the same bounds a local draft is held to,
 * so a peer cannot make a node store, or match against, more than a local author could.
 */
function routeError(tags: readonly (readonly string[])[]): string | undefined {
  let to = 0;
  let caps = 0;
  for (const t of tags) {
    if (t[0] === "p") {
      if (!isHex64(t[1])) return `a p tag holds "${clip(t[1] ?? "")}", not a 64-hex key`;
      if (++to > MAX_TO) return `more than ${MAX_TO} p tags on an ask`;
    } else if (t[0] === "t" && t[1]?.startsWith(CAP_PREFIX)) {
      const name = t[1].slice(CAP_PREFIX.length);
      if (!CAP_NAME.test(name)) return `a t tag holds "${clip(t[1])}", not a capability name`;
      if (++caps > MAX_CAPS) return `more than ${MAX_CAPS} cap: tags on an ask`;
    }
  }
  return undefined;
}

/** A peer's value, short enough for a log line. */
function clip(s: string): string {
  return s.length > 70 ? `${s.slice(0, 70)}…` : s;
}

type Shaped = NostrEvent | { code: RejectCode; reason: string };

/** Reads each field once into a plain copy, checking shapes and sizes on the way. */
function snapshot(input: unknown): Shaped {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return bad("malformed", "not a JSON object");
  }
  const o = input as Record<string, unknown>;
  const { id, pubkey, sig, kind, created_at, content, tags } = o;
  if (!isHex64(id)) return bad("malformed", "id is not 64 lowercase hex characters");
  if (!isHex64(pubkey)) return bad("malformed", "pubkey is not 64 lowercase hex characters");
  if (typeof sig !== "string" || !HEX128.test(sig)) {
    return bad("malformed", "sig is not 128 lowercase hex characters");
  }
  if (typeof kind !== "number" || !Number.isInteger(kind) || kind < 0 || kind > 65535) {
    return bad("malformed", "kind is not an integer in 0–65535");
  }
  if (typeof created_at !== "number" || !Number.isSafeInteger(created_at) || created_at < 0) {
    return bad("malformed", "created_at is not a non-negative integer (seconds)");
  }
  if (typeof content !== "string") return bad("malformed", "content is not a string");
  // A string's UTF-8 size is at least its length and at most three times it.
  const textBytes = content.length > MAX_TEXT_BYTES
    ? content.length
    : content.length * 3 <= MAX_TEXT_BYTES
    ? 0
    : new TextEncoder().encode(content).length;
  if (textBytes > MAX_TEXT_BYTES) {
    return bad("too_large", `the text is over ${MAX_TEXT_BYTES} bytes (32 KiB)`);
  }
  if (!Array.isArray(tags)) return bad("malformed", "tags is not an array");
  if (tags.length > MAX_TAGS) {
    return bad("too_many_tags", `${tags.length} tags; the limit is ${MAX_TAGS}`);
  }
  let chars = content.length;
  const copiedTags: string[][] = [];
  for (let i = 0; i < tags.length; i++) {
    const tag: unknown = tags[i];
    if (!Array.isArray(tag) || tag.length === 0) {
      return bad("malformed", `tag ${i} is not a non-empty array`);
    }
    const copied: string[] = [];
    for (let j = 0; j < tag.length; j++) {
      const v: unknown = tag[j];
      if (typeof v !== "string") {
        return bad("malformed", `tag ${i} holds a value that is not a string`);
      }
      chars += v.length;
      // Stop early on huge input: the UTF-8 size is at least the length.
      if (chars > MAX_EVENT_BYTES) {
        return bad("too_large", `the event is over ${MAX_EVENT_BYTES} bytes`);
      }
      copied.push(v);
    }
    copiedTags.push(copied);
  }
  return { id, pubkey, sig, kind, created_at, content, tags: copiedTags };
}

function bad(code: RejectCode, reason: string): { code: RejectCode; reason: string } {
  return { code, reason };
}

function reject(code: RejectCode, reason: string): Validation {
  return { ok: false, code, reason };
}

function describe(err: unknown): string {
  try {
    return err instanceof Error ? err.message : String(err);
  } catch {
    return "unprintable error";
  }
}
