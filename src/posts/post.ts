/**
 * Posts: wats messages as signed Nostr events (NIP-01), and back.
 *
 * Thread links are NIP-10 marked `e` tags (`root`, `reply`) plus a `p` tag for the
 * parent's author; the title is a NIP-14 `subject` tag; capabilities are `t` tags
 * `cap:<name>`; the authors an ask is for (`to`) are its `p` tags. A direct reply
 * to a thread's root carries only the root tag. The full mapping is in
 * `docs/protocol.md`.
 *
 * @module
 */

import type { NostrEvent } from "nostr-tools/core";
import { wasmSigner } from "./verify.ts";
import { finalizeEvent } from "nostr-tools/pure";
import { PostError } from "../errors.ts";
import { isWatsKind, nostrKindOf, type WatsKind, watsKindOf } from "./kinds.ts";

export type { NostrEvent };

/** The most UTF-8 bytes a post's text (the event `content`) may hold: 32 KiB. */
export const MAX_TEXT_BYTES = 32 * 1024;
/** The most tags an event may carry. */
export const MAX_TAGS = 64;
/** The most UTF-8 bytes of an event's canonical serialisation: 64 KiB. */
export const MAX_EVENT_BYTES = 64 * 1024;
/** The prefix of a capability in a `t` tag. */
export const CAP_PREFIX = "cap:";
/** Most capabilities on one post (each becomes a `cap:` tag; a post has ≤ 64 tags). */
export const MAX_CAPS = 16;
/**
 * Most authors one ask may be for (`to`, its `p` tags): an ask for more is
 * better sent to a capability (docs/decisions/runner.md, "Routing").
 */
export const MAX_TO = 16;

/**
 * What a profile wants to post, as the signer needs it: the thread as root, parent
 * and parent author. Not `PostRequest` (src/contracts/views.ts), what a post tool
 * asks for, which `judgeDraft` checks.
 */
export interface PostDraft {
  kind: WatsKind;
  text: string;
  /** NIP-14 subject. Omitted when empty. */
  title?: string;
  /** The id of the thread's root post; required for every reply. */
  root?: string;
  /** The id of the post this one answers, when it is not the root itself. */
  parent?: string;
  /** The author (hex pubkey) of the post this one answers: a `p` tag. */
  parentAuthor?: string;
  /** Capability names, published as `t` tags `cap:<name>`. */
  caps?: string[];
  /** Authors (hex pubkeys) the post addresses, as `p` tags: a halt's targets, an ask's `to`. */
  mentions?: string[];
  /** Further tags, as they are, after all others: a presence's state. */
  extraTags?: string[][];
  /** Seconds since the epoch. */
  createdAt: number;
}

/** A post as wats reads it from an event. */
export interface Post {
  id: string;
  /** The author's hex x-only pubkey. */
  author: string;
  kind: WatsKind;
  text: string;
  title?: string;
  /** The thread's root id; absent for a root post. */
  root?: string;
  /** The post this one answers: the `reply` tag, else the root. Absent for a root post. */
  parent?: string;
  /** Capability names from `t` tags `cap:<name>`, in tag order. */
  caps: string[];
  /**
   * The authors (hex keys) an ask that starts a thread is for: its `p` tags, in
   * tag order, repeats dropped. Empty for every other post (a reply's `p` tag
   * names its parent's author, a halt's its targets).
   */
  to: string[];
  /** Seconds since the epoch, as the author's clock said. */
  createdAt: number;
  /** All the event's tags, as they are. */
  tags: string[][];
}

const HEX64 = /^[0-9a-f]{64}$/;

/** True for 64 lowercase hex characters: an event id or a pubkey. */
export function isHex64(s: unknown): s is string {
  return typeof s === "string" && HEX64.test(s);
}

/**
 * Signs a draft as a Nostr event with `secret` (a profile key).
 *
 * @throws {PostError} code `post.invalid` when the draft could not pass validation
 * (unknown kind, text over 32 KiB, a reply without its root, bad ids, too many tags).
 */
export function buildPost(draft: PostDraft, secret: Uint8Array): NostrEvent {
  return plainEvent(finalizeEvent(postTemplate(draft), secret));
}

/**
 * `buildPost`, signed with nostr-wasm when it loads (about 4× faster than the
 * pure-JS signer, measured in bench/mcp_roundtrip.ts), else as `buildPost`.
 */
export async function signPost(draft: PostDraft, secret: Uint8Array): Promise<NostrEvent> {
  const template = postTemplate(draft);
  const nw = await wasmSigner();
  if (!nw) return plainEvent(finalizeEvent(template, secret));
  const event = { ...template } as NostrEvent;
  nw.finalizeEvent(event, secret);
  return plainEvent(event);
}

/** The unsigned event of a draft; throws `PostError` for anything validation would reject. */
function postTemplate(
  draft: PostDraft,
): { kind: number; created_at: number; tags: string[][]; content: string } {
  if (!isWatsKind(draft.kind)) invalid(`unknown kind "${draft.kind}"`);
  if (!Number.isSafeInteger(draft.createdAt) || draft.createdAt < 0) {
    invalid(`createdAt must be whole seconds since the epoch, got ${draft.createdAt}`);
  }
  const textBytes = new TextEncoder().encode(draft.text).length;
  if (textBytes > MAX_TEXT_BYTES) {
    invalid(`the text is ${textBytes} bytes; the limit is ${MAX_TEXT_BYTES} (32 KiB): shorten it`);
  }
  const tags: string[][] = [];
  const { root, parent, parentAuthor } = draft;
  if (parent !== undefined && root === undefined) {
    invalid("a reply needs its thread's root: pass root (the parent itself when it is a root)");
  }
  if (root !== undefined) {
    if (!isHex64(root)) invalid(`root must be a 64-hex event id, got "${root}"`);
    tags.push(["e", root, "", "root"]);
    if (parent !== undefined && parent !== root) {
      if (!isHex64(parent)) invalid(`parent must be a 64-hex event id, got "${parent}"`);
      tags.push(["e", parent, "", "reply"]);
    }
  }
  if (parentAuthor !== undefined) {
    if (root === undefined) invalid("parentAuthor is only for replies: pass root (and parent)");
    if (!isHex64(parentAuthor)) {
      invalid(`parentAuthor must be a 64-hex pubkey, got "${parentAuthor}"`);
    }
    tags.push(["p", parentAuthor]);
  }
  for (const m of new Set(draft.mentions ?? [])) {
    if (!isHex64(m)) invalid(`a mention must be a 64-hex pubkey, got "${m}"`);
    if (m !== parentAuthor) tags.push(["p", m]);
  }
  if (draft.title) tags.push(["subject", draft.title]);
  for (const cap of new Set(draft.caps ?? [])) {
    if (cap === "" || /\s/.test(cap)) invalid(`a capability name is empty or has spaces: "${cap}"`);
    tags.push(["t", CAP_PREFIX + cap]);
  }
  for (const t of draft.extraTags ?? []) tags.push([...t]);
  if (tags.length > MAX_TAGS) invalid(`${tags.length} tags; the limit is ${MAX_TAGS}`);
  return { kind: nostrKindOf(draft.kind), created_at: draft.createdAt, tags, content: draft.text };
}

/**
 * A plain copy with the NIP-01 fields only: nostr-tools marks what it signs or
 * verifies as verified, and nothing downstream should ever rely on that mark
 * (nor store extra properties a peer sent).
 */
export function plainEvent(e: NostrEvent): NostrEvent {
  return {
    id: e.id,
    pubkey: e.pubkey,
    created_at: e.created_at,
    kind: e.kind,
    tags: e.tags,
    content: e.content,
    sig: e.sig,
  };
}

/** The thread links of an event's tags, or why they are malformed. */
export type ThreadLinks = { root?: string; reply?: string } | { error: string };

/**
 * Reads the NIP-10 marked `e` tags. Unmarked (positional) `e` tags and other markers
 * are ignored; more than one `root` or `reply` marker, a marked id that is not 64 hex,
 * or a `reply` without a `root` is an error.
 */
export function threadLinks(tags: readonly (readonly string[])[]): ThreadLinks {
  let root: string | undefined;
  let reply: string | undefined;
  for (const t of tags) {
    if (t[0] !== "e" || (t[3] !== "root" && t[3] !== "reply")) continue;
    if (!isHex64(t[1])) {
      return { error: `an e tag marked "${t[3]}" holds "${t[1]}", not a 64-hex id` };
    }
    if (t[3] === "root") {
      if (root !== undefined) return { error: "more than one e tag marked root" };
      root = t[1];
    } else {
      if (reply !== undefined) return { error: "more than one e tag marked reply" };
      reply = t[1];
    }
  }
  if (reply !== undefined && root === undefined) {
    return { error: "an e tag marked reply without one marked root" };
  }
  return { root, reply };
}

/**
 * Reads a post from a (validated) event.
 *
 * @throws {PostError} code `post.invalid` for an event that is not a wats post.
 */
export function readPost(event: NostrEvent): Post {
  const kind = watsKindOf(event.kind);
  if (kind === undefined) unreadable(`event kind ${event.kind} is not a wats kind`);
  const links = threadLinks(event.tags);
  if ("error" in links) unreadable(links.error);
  const post: Post = {
    id: event.id,
    author: event.pubkey,
    kind,
    text: event.content,
    caps: [],
    to: [],
    createdAt: event.created_at,
    tags: event.tags,
  };
  const title = event.tags.find((t) => t[0] === "subject")?.[1];
  if (title !== undefined && title !== "") post.title = title;
  if (links.root !== undefined) {
    post.root = links.root;
    post.parent = links.reply ?? links.root;
  }
  for (const t of event.tags) {
    if (t[0] === "t" && t[1]?.startsWith(CAP_PREFIX)) post.caps.push(t[1].slice(CAP_PREFIX.length));
  }
  if (kind === "ask" && post.root === undefined) post.to = askedOf(event.tags);
  return post;
}

/** The `p` tags' keys that are 64 hex, repeats dropped (validation refuses an ask with others). */
function askedOf(tags: readonly (readonly string[])[]): string[] {
  const to = new Set<string>();
  for (const t of tags) if (t[0] === "p" && isHex64(t[1])) to.add(t[1]);
  return [...to];
}

function invalid(reason: string): never {
  throw new PostError("post.invalid", `Cannot build the post: ${reason}`);
}

function unreadable(reason: string): never {
  throw new PostError("post.invalid", `Cannot read the event as a wats post: ${reason}`);
}
