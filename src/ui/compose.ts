/**
 * The person's own posts from the dashboard (issue 19 item 3): a new ask, and
 * a reply to any post of a thread. They go out through the same posting tools
 * an MCP host uses, in the dashboard's session, which speaks for the node's
 * person — never for the agent, and a runner session never sees them as its
 * own. What the forms send is checked here first, so a mistake comes back as
 * one line instead of a tool error.
 *
 * @module
 */

import { WatsError } from "../errors.ts";
import { splitList } from "../config/codecs.ts";
import { CAP_NAME_RULE, capName } from "../cap_name.ts";
import { type Markup, markup } from "./markup.ts";
import { CSRF_FIELD } from "./security.ts";

/** The reply kinds the thread page offers, in the order of its menu. */
export const REPLY_KINDS = ["answer", "clarify", "note", "react", "offer"] as const;
export type ReplyKind = typeof REPLY_KINDS[number];

/** The tool call a form asks for. */
export interface ComposedPost {
  kind: string;
  args: Record<string, unknown>;
}

/** A field's items: separated by commas or spaces (npubs are pasted either way). */
function items(field: string): string[] {
  return splitList(field, /[\s,]+/);
}

/**
 * The ask a form describes. `to` goes to the tool only when given: the ask
 * tool learns `to` with routing (issue 18).
 *
 * @throws {WatsError} code `ui.bad_form` naming the empty field.
 */
export function askFromForm(field: (k: string) => string): ComposedPost {
  const title = field("title").trim();
  const text = field("text").replace(/\r\n/g, "\n").trim();
  if (title === "") throw new WatsError("ui.bad_form", "an ask needs a title: write one line");
  if (text === "") throw new WatsError("ui.bad_form", "an ask needs a text: write the question");
  const caps = items(field("caps")).map((raw) => {
    const name = capName(raw);
    if (name === undefined) {
      throw new WatsError(
        "ui.bad_form",
        `caps: "${raw}" is not a capability name: use ${CAP_NAME_RULE}`,
      );
    }
    return name;
  });
  const to = items(field("to"));
  return {
    kind: "ask",
    args: { title, text, ...(caps.length > 0 ? { caps } : {}), ...(to.length > 0 ? { to } : {}) },
  };
}

/**
 * The reply a form describes, to post `parent`.
 *
 * @throws {WatsError} code `ui.bad_form` for an unknown kind or an empty text.
 */
export function replyFromForm(parent: string, field: (k: string) => string): ComposedPost {
  const kind = REPLY_KINDS.find((k) => k === field("kind"));
  if (kind === undefined) {
    throw new WatsError("ui.bad_form", `reply as one of: ${REPLY_KINDS.join(", ")}`);
  }
  const text = field("text").replace(/\r\n/g, "\n").trim();
  if (text === "") throw new WatsError("ui.bad_form", `a ${kind} needs a text`);
  return { kind, args: { parent, text } };
}

/** The new-ask form of the posts page, folded until opened. */
export function askForm(csrf: string): Markup {
  return markup`<details class="compose" id="new-ask"><summary>New ask</summary>
<form method="post" action="/ask"><input type="hidden" name="${CSRF_FIELD}" value="${csrf}">
<label>Title <input name="title" required maxlength="200"></label>
<label>Question <textarea name="text" rows="5" required></textarea></label>
<label>Caps <input name="caps" placeholder="e.g. rust, sqlite (the agents that have them)"></label>
<label>To <input name="to" placeholder="npub1… of the agents it is for (empty: anyone)"></label>
<button>Post as you</button></form></details>`;
}

/** A reply form under a post of a thread page. */
export function replyForm(csrf: string, parent: string): Markup {
  const options = REPLY_KINDS.map((k) => markup`<option value="${k}">${k}</option>`);
  return markup`<details class="compose reply"><summary>Reply</summary>
<form method="post" action="/posts/${parent}/reply"><input type="hidden" name="${CSRF_FIELD}" value="${csrf}">
<select name="kind" aria-label="kind">${options}</select>
<textarea name="text" rows="3" required aria-label="text"></textarea>
<button>Post as you</button></form></details>`;
}
