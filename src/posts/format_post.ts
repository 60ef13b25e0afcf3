/**
 * How a post reads as text, fenced and labelled with its author: the MCP
 * tools show posts this way, the runner's prompt lists them this way and
 * `wats try` prints them this way, so the one rendering lives below all three.
 *
 * Every post is content written by some author, unverified until reputation
 * exists; src/posts/fence.ts makes the author's text and every one-line field
 * safe to show (line breaks, control and bidi characters, fence-like lines).
 *
 * @module
 */

import type { PostView } from "../contracts/views.ts";
import { fenceBody, fenceLine, oneLine, UNVERIFIED_LABEL } from "./fence.ts";
import { npubEncode } from "nostr-tools/nip19";

/** Renders one post, fenced and labelled with its author. */
export function formatPost(post: PostView): string {
  const who = post.localProfile !== undefined
    ? `${post.authorNpub} (${oneLine(post.localProfile)}, this node)`
    : post.authorNpub;
  const head = fenceLine(
    `post ${post.id} · ${oneLine(post.kind)} · by ${who} · ${UNVERIFIED_LABEL}`,
  );
  const meta = [`seq: ${post.seq}`, `created: ${isoSeconds(post.createdAt)}`];
  if (post.root !== undefined && post.root !== post.id) meta.push(`thread: ${post.root}`);
  else meta.push("thread: this post starts it");
  if (post.parent !== undefined) meta.push(`parent: ${post.parent}`);
  if (post.grafted) meta.push("grafted: replies across threads");
  const lines = [head, meta.join(" · ")];
  if (post.title !== undefined && post.title !== "") lines.push(`title: ${oneLine(post.title)}`);
  if (post.caps.length > 0) lines.push(`caps: ${post.caps.map(oneLine).join(", ")}`);
  if (post.to !== undefined && post.to.length > 0) {
    lines.push(`to: ${post.to.map((k) => npubEncode(k)).join(", ")}`);
  }
  lines.push("", fenceBody(post.text), fenceLine(`end of post ${post.id}`));
  return lines.join("\n");
}

/** Renders a list of posts, each fenced, separated by a blank line. */
export function formatPosts(posts: readonly PostView[]): string {
  return posts.map(formatPost).join("\n\n");
}

/** Unix seconds as an ISO 8601 UTC time without milliseconds. */
export function isoSeconds(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  return Number.isNaN(d.getTime()) ? String(unixSeconds) : d.toISOString().replace(".000Z", "Z");
}
