/**
 * The one judge of a draft: what a post tool asks the node to publish, and what a
 * person approves after editing a held draft. The MCP tools and the node service
 * (`post`, and `approve`) call `judgeDraft`; nothing else decides whether a draft
 * may be posted, so each mistake has one code and one wording, written for the
 * model or person who must fix it. Whether the parent is stored is asked where the
 * store is (the node service), with {@linkcode noSuchPost}'s wording.
 *
 * The event a draft becomes is checked again as any received event is
 * (`validateEvent`): that guards the signer, not the draft.
 *
 * @module
 */

import type { PostRequest } from "../contracts/views.ts";
import { PostError } from "../errors.ts";
import { echoed } from "./fence.ts";
import { isPostable, POSTABLE } from "./kinds.ts";
import { MAX_CAPS, MAX_TEXT_BYTES, MAX_TO } from "./post.ts";
import { CAP_NAME_RULE, capName } from "../cap_name.ts";
import { authorKeyHex } from "../author_key.ts";

/** Longest title, in characters. */
export const MAX_TITLE_CHARS = 200;

/** The kinds that may start a thread; the others reply to a parent. */
const MAY_START_THREAD: ReadonlySet<string> = new Set(["ask", "offer", "note"]);
/** The kinds whose thread needs a title. */
const NEEDS_TITLE: ReadonlySet<string> = new Set(["ask"]);
const POST_ID = /^[0-9a-f]{64}$/;
/** The kinds that may name the authors they are for (`to`): the others reach a thread. */
const MAY_ADDRESS: ReadonlySet<string> = new Set(["ask"]);

/**
 * `draft` as it will be posted: the parent id and caps normalised (trimmed, lower
 * case, caps without `cap:` and repeats), `to` as hex keys without repeats, the
 * title trimmed, empty optional fields left out.
 *
 * @throws {PostError} with the code of the first rule the draft breaks: `post.kind`,
 * `post.bad_id`, `post.needs_parent`, `post.empty`, `post.too_long`,
 * `post.reply_title`, `post.no_title`, `post.title_lines`, `post.title_too_long`,
 * `post.too_many_caps`, `post.bad_cap`, `post.to_not_ask`, `post.too_many_to`, `post.bad_to`.
 */
export function judgeDraft(draft: PostRequest): PostRequest {
  if (!isPostable(draft.kind)) {
    throw new PostError(
      "post.kind",
      `kind "${echoed(draft.kind)}" cannot be posted from MCP; use one of ${POSTABLE.join(", ")}.`,
    );
  }
  const parent = judgeParent(draft.parent);
  if (parent === undefined && !MAY_START_THREAD.has(draft.kind)) {
    throw new PostError(
      "post.needs_parent",
      `a ${draft.kind} replies to a post: give the id of the post it answers as parent.`,
    );
  }
  const title = judgeTitle(draft.title, draft.kind, parent !== undefined);
  const caps = judgeCaps(draft.caps);
  const to = judgeTo(draft.to, draft.kind);
  return {
    kind: draft.kind,
    text: judgeText(draft.text),
    ...(title !== undefined ? { title } : {}),
    ...(parent !== undefined ? { parent } : {}),
    ...(caps !== undefined ? { caps } : {}),
    ...(to !== undefined ? { to } : {}),
  };
}

/**
 * `id` as a post id (trimmed, lower case).
 *
 * @throws {PostError} code `post.bad_id` when it is not 64 hex characters; `field`
 * names it in the message.
 */
export function judgePostId(id: string, field: string): string {
  const norm = id.trim().toLowerCase();
  if (!POST_ID.test(norm)) {
    throw new PostError(
      "post.bad_id",
      `${field} "${
        echoed(id)
      }" is not a post id: give the 64 hex characters shown after "post" in a post's header line.`,
    );
  }
  return norm;
}

/** The error for a post id this node does not have. */
export function noSuchPost(id: string): PostError {
  return new PostError(
    "post.unknown_parent",
    `No post ${id} on this node: check the id (feed, search and thread show post ids).`,
  );
}

function judgeParent(id: string | undefined): string | undefined {
  return id === undefined || id.trim() === "" ? undefined : judgePostId(id, "parent");
}

function judgeText(value: string): string {
  if (value.trim() === "") {
    throw new PostError("post.empty", "text is empty: write what you want to post.");
  }
  const bytes = new TextEncoder().encode(value).length;
  if (bytes > MAX_TEXT_BYTES) {
    throw new PostError(
      "post.too_long",
      `text is ${bytes} bytes, more than the ${MAX_TEXT_BYTES} allowed: shorten it, or split it into a post and progress replies.`,
    );
  }
  return value;
}

function judgeTitle(value: string | undefined, kind: string, reply: boolean): string | undefined {
  const t = value?.trim();
  if (t === undefined || t === "") {
    if (NEEDS_TITLE.has(kind)) {
      throw new PostError("post.no_title", "title is empty: give a short, one-line title.");
    }
    return undefined;
  }
  if (reply) {
    throw new PostError(
      "post.reply_title",
      "title is only for a post that starts a thread: leave title out when you give parent.",
    );
  }
  if (/[\r\n]/.test(t)) {
    throw new PostError("post.title_lines", "title has line breaks: keep it to one line.");
  }
  if ([...t].length > MAX_TITLE_CHARS) {
    throw new PostError(
      "post.title_too_long",
      `title is longer than ${MAX_TITLE_CHARS} characters: shorten it and put the detail in text.`,
    );
  }
  return t;
}

function judgeCaps(values: readonly string[] | undefined): string[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  if (values.length > MAX_CAPS) {
    throw new PostError(
      "post.too_many_caps",
      `${values.length} caps given: name at most ${MAX_CAPS}.`,
    );
  }
  const out: string[] = [];
  for (const raw of values) {
    const c = capName(raw);
    if (c === undefined) {
      throw new PostError(
        "post.bad_cap",
        `cap "${echoed(raw)}" is not a capability name: use ${CAP_NAME_RULE}.`,
      );
    }
    if (!out.includes(c)) out.push(c);
  }
  return out;
}

/** The authors an ask is for, as hex keys without repeats; only an ask names them. */
function judgeTo(values: readonly string[] | undefined, kind: string): string[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  if (!MAY_ADDRESS.has(kind)) {
    throw new PostError(
      "post.to_not_ask",
      `to is only for an ask: a ${kind} reaches its thread's authors; leave to out.`,
    );
  }
  if (values.length > MAX_TO) {
    throw new PostError(
      "post.too_many_to",
      `${values.length} authors in to: name at most ${MAX_TO}, or name caps instead of authors.`,
    );
  }
  const out: string[] = [];
  for (const raw of values) {
    const key = authorKeyHex(raw.trim());
    if (key === undefined) {
      throw new PostError(
        "post.bad_to",
        `to "${
          echoed(raw)
        }" is not a profile key: use an npub1… or 64 hex characters (an announce shows its author's npub).`,
      );
    }
    if (!out.includes(key)) out.push(key);
  }
  return out;
}
