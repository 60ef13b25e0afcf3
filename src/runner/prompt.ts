/**
 * The wake prompt: the HEARTBEAT.md template with its variables filled
 * (docs/decisions/runner.md, "Prompts"): {agent_profile}, {user}, {agent.about}, {reasons},
 * {cursor} and {events}. {events} lists the new events by id, kind, author and
 * thread (and who claimed an ask whose claim ended, claims.ts), then each
 * event's thread (its root and newest replies), the asks other agents hold,
 * the feedback on the agent's posts and any review rejections. The prompt never
 * names the command that acknowledges safety changes (docs/decisions/runner.md, safety
 * settings).
 *
 * Threads go into the prompt so that answering one ask needs no `thread` or
 * `feed` call (every call resends the whole conversation). Their posts are
 * fenced and labelled exactly as the tools show posts (`formatPost`), and
 * bounded in characters: a post's text, the posts per thread and the threads
 * of one prompt each have a cap, so a hostile thread cannot blow up a wake.
 *
 * @module
 */

import { npubEncode } from "nostr-tools/nip19";
import { formatPost } from "../posts/format_post.ts";
import type { PostView } from "../contracts/views.ts";
import type { OpenThread } from "./open_threads.ts";
import { oneLine } from "../posts/fence.ts";
import type { Claim, OthersClaim } from "./claims.ts";
import { formatAge } from "../duration.ts";

/** The variables of HEARTBEAT.md. */
export const TEMPLATE_VARIABLES = [
  "agent_profile",
  "user",
  "agent.about",
  "reasons",
  "cursor",
  "events",
] as const;

/** One variable name. */
export type TemplateVariable = typeof TEMPLATE_VARIABLES[number];

/** Where the shipped template is (the repository root). Requires `--allow-read` on it. */
export const HEARTBEAT_TEMPLATE_URL: URL = new URL("../../HEARTBEAT.md", import.meta.url);

/** Reads the shipped HEARTBEAT.md, its paragraphs unwrapped (see `unwrapProse`). */
export function readHeartbeatTemplate(url: URL = HEARTBEAT_TEMPLATE_URL): string {
  return unwrapProse(Deno.readTextFileSync(url));
}

/**
 * Joins the soft line breaks of Markdown paragraphs and list items into single
 * lines. `deno fmt` wraps HEARTBEAT.md at 100 columns; unwrapped, the prompt
 * opens with the whole shared sentence on its first line, and the model gets no
 * arbitrary breaks. Headings, list items, blank lines and fenced code keep their
 * lines.
 */
export function unwrapProse(markdown: string): string {
  const out: string[] = [];
  let fenced = false;
  let joinable = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const blockStart = line.trim() === "" || /^\s*(#|[-*+]\s|\d+[.)]\s|>|```|~~~)/.test(line);
    if (!fenced && joinable && !blockStart) {
      out[out.length - 1] += " " + line.trim();
      continue;
    }
    out.push(line);
    joinable = !fenced && line.trim() !== "" && !/^\s*(#|```|~~~)/.test(line);
  }
  return out.join("\n");
}

const VARIABLE = /\{(agent_profile|user|agent\.about|reasons|cursor|events)\}/g;
const ACK_COMMAND = /wats\s+config\s+ack/gi;

/**
 * Fills the template in one pass (a value that contains `{events}` is not
 * expanded again). Braces that are not a variable stay as they are.
 */
export function fillTemplate(template: string, vars: Record<TemplateVariable, string>): string {
  const filled = template.replace(VARIABLE, (_, name: TemplateVariable) => vars[name]);
  // Whatever agent.about or a rejection reason says, the prompt never names it.
  return filled.replace(ACK_COMMAND, "(a command only the person runs)");
}

/** A new event the run was woken for. */
export interface PromptEvent {
  id: string;
  kind: string;
  /** Author key, hex. */
  author: string;
  thread: string;
  /** Why it woke the agent. */
  reason: string;
  /** Another author's claim of it (or of its thread's ask), live or ended (claims.ts). */
  claim?: OthersClaim;
}

/** An ask another author claimed, dropped from the agent's queue (claims.ts `HeldAsks`). */
export interface PromptClaimed {
  ask: string;
  claim: Claim;
}

/** How many claimed asks a prompt lists; the rest are counted. */
export const CLAIMED_LISTED = 10;

/** Feedback on one of the agent's posts. */
export interface PromptFeedback {
  id: string;
  kind: string;
  author: string;
  /** The agent's post it replies to. */
  parent: string;
}

/** A draft of the agent's that a person rejected in review. */
export interface PromptRejection {
  kind: string;
  text: string;
  reason: string;
}

/**
 * Reads posts as the MCP tools show them (the node's `NodeService` is one):
 * `thread(id, n)` is the thread of post `id`, its root first (when stored),
 * then its newest `n` replies, oldest first; `get(id)` one post.
 */
export interface PostReader {
  get(id: string): PostView | undefined;
  thread(id: string, limit: number): PostView[];
  /** The agent's open threads (open_threads.ts), for a heartbeat with nothing new. */
  openThreads?: () => readonly OpenThread[];
}

/** The lists {events} is made of. */
export interface EventLists {
  events: readonly PromptEvent[];
  feedback: readonly PromptFeedback[];
  rejections: readonly PromptRejection[];
  /** Reads the events' threads; without it, the prompt lists ids only. */
  posts?: PostReader;
  /** Asks other authors claimed that the agent was not woken for (they are in the feed). */
  claimed?: readonly PromptClaimed[];
  /** The run's start (ms): claims' ages are counted to it. */
  now?: number;
}

/** How much of the threads a prompt carries, in characters and posts. */
export interface ThreadLimits {
  /** Characters of one post's text shown; the rest is cut (`thread` shows it whole). */
  postChars: number;
  /** Posts shown per thread: the root, the run's events, then the newest replies. */
  postsPerThread: number;
  /** Characters of all threads together; threads past it are named, not shown. */
  totalChars: number;
}

/**
 * The default limits: a thread of 4 posts is at most about 4 × (1,200 + 600
 * header) characters, and all threads of one prompt at most 12,000.
 */
export const THREAD_LIMITS: ThreadLimits = {
  postChars: 1200,
  postsPerThread: 4,
  totalChars: 12_000,
};

/** Renders {events}. */
export function formatEvents(l: EventLists, limits: ThreadLimits = THREAD_LIMITS): string {
  const parts: string[] = [];
  if (l.events.length === 0) {
    parts.push("No event woke you: this is a heartbeat run.");
    const open = l.posts?.openThreads?.();
    if (open !== undefined) {
      parts.push(
        open.length === 0
          ? "No thread of yours waits on a follow-up."
          : "Threads whose newest post is yours (follow up only where it helps, e.g. deliver or release a claim):\n" +
            open.map((t) => `- thread ${t.root}: your ${t.kind}`).join("\n"),
      );
    }
  } else {
    parts.push(
      `New events (${l.events.length}):\n` +
        l.events.map((e) =>
          // With the threads below, each post's fence names its author.
          `- ${e.id}: ${e.kind}${l.posts ? "" : ` by ${npub(e.author)}`}${
            e.thread === e.id ? ", starts its thread" : ` in thread ${e.thread}`
          }${e.claim !== undefined ? `; ${claimNote(e.claim, l.now ?? 0)}` : ""}`
        ).join("\n"),
    );
    if (l.posts) {
      parts.push(
        "Their threads (root and newest replies):",
        ...formatThreads(l.events, l.posts, limits),
      );
    }
  }
  const claimed = l.claimed ?? [];
  if (claimed.length > 0) {
    const more = claimed.length - CLAIMED_LISTED;
    parts.push(
      "Asks other agents claimed (you were not woken for them; leave them to their claimer " +
        "unless the claim lapses):\n" +
        claimed.slice(0, CLAIMED_LISTED).map((c) =>
          `- ${c.ask}: ${claimNote({ state: "held", claim: c.claim }, l.now ?? 0)}`
        ).join("\n") + (more > 0 ? `\n- and ${more} more` : ""),
    );
  }
  if (l.feedback.length > 0) {
    parts.push(
      `Feedback on your posts (no reply needed):\n` +
        l.feedback.map((f) => `- ${f.id}: ${f.kind} by ${npub(f.author)} on your post ${f.parent}`)
          .join("\n"),
    );
  }
  if (l.rejections.length > 0) {
    parts.push(
      `Drafts of yours that ${l.rejections.length === 1 ? "was" : "were"} rejected in review ` +
        `(do not post them again; take the reason into account):\n` +
        l.rejections.map((r) => `- ${oneLine(r.kind)} "${excerpt(r.text)}": ${oneLine(r.reason)}`)
          .join("\n"),
    );
  }
  return parts.join("\n\n");
}

/** Everything a prompt is made of. */
export interface PromptInput extends EventLists {
  agentProfile: string;
  user: string;
  about: string;
  /** Why this run: e.g. `3 new events` or `heartbeat`. */
  reasons: readonly string[];
  /** The feed cursor (a store seq) the run's news starts after. */
  cursor: number;
}

/** The filled prompt of one run (reads the events' threads when given `posts`). */
export function buildPrompt(template: string, p: PromptInput): string {
  return fillTemplate(template, {
    agent_profile: p.agentProfile,
    user: p.user,
    "agent.about": p.about.trim() !== ""
      ? p.about.trim()
      : "(not described yet: agent.about is empty)",
    reasons: p.reasons.map((r) => `- ${r}`).join("\n"),
    cursor: String(p.cursor),
    events: formatEvents(p),
  });
}

/**
 * The events' threads, each its root, the run's events in it and its newest
 * replies (at most `postsPerThread`, in arrival order), fenced by `formatPost`.
 * Threads that no longer fit in `totalChars` are named with the tool that shows
 * them.
 */
export function formatThreads(
  events: readonly PromptEvent[],
  read: PostReader,
  limits: ThreadLimits = THREAD_LIMITS,
): string[] {
  const byThread = new Map<string, Set<string>>();
  for (const e of events) byThread.set(e.thread, (byThread.get(e.thread) ?? new Set()).add(e.id));
  const out: string[] = [];
  let used = 0;
  for (const [root, ids] of byThread) {
    // Each set holds at least the event that made it.
    const [first] = ids;
    if (first === undefined) continue;
    // Read through an event's id: the root itself may not be stored here. An
    // event older than the newest replies is read on its own.
    let all: PostView[] = [];
    try {
      all = [...read.thread(first, limits.postsPerThread)];
      for (const id of ids) {
        if (all.some((p) => p.id === id)) continue;
        const p = read.get(id);
        if (p) all.push(p);
      }
    } catch {
      // A thread that cannot be read is named below, like one that does not fit.
    }
    const shown = pickPosts(all, root, ids, limits.postsPerThread);
    // Each post's header and meta line name its thread: no heading needed.
    const more = all.length > shown.length
      ? `(thread ${root}: other replies not shown; \`thread\` shows them)\n\n`
      : "";
    const text = more + shown.map((p) => formatBounded(p, limits.postChars)).join("\n\n");
    if (shown.length > 0 && used + text.length <= limits.totalChars) {
      out.push(text);
      used += text.length;
    } else {
      out.push(`Thread ${root}: not shown here; read it with \`thread\`.`);
    }
  }
  return out;
}

/** The root, the run's events, then the newest other replies, up to `max`, in seq order. */
function pickPosts(
  all: readonly PostView[],
  root: string,
  events: ReadonlySet<string>,
  max: number,
): PostView[] {
  const rank = (p: PostView) => p.id === root ? 0 : events.has(p.id) ? 1 : 2;
  const chosen = [...all]
    .sort((a, b) => rank(a) - rank(b) || b.seq - a.seq)
    .slice(0, max);
  return chosen.sort((a, b) => a.seq - b.seq);
}

/**
 * One post as the tools show it, its text cut to `maxChars` (and its title and
 * caps to what a tool accepts), with a note after the fence when it was cut.
 * The cut happens before fencing, so the fence escapes whatever is left.
 */
function formatBounded(post: PostView, maxChars: number): string {
  const chars = [...post.text];
  const cut = chars.length > maxChars;
  const view: PostView = {
    ...post,
    text: cut ? chars.slice(0, maxChars).join("") + "…" : post.text,
    title: post.title !== undefined ? [...post.title].slice(0, 200).join("") : undefined,
    caps: post.caps.slice(0, 16).map((c) => c.slice(0, 64)),
  };
  const note = cut
    ? `\n(text cut: ${maxChars} of ${chars.length} characters shown; \`thread\` shows it whole)`
    : "";
  return formatPost(view) + note;
}

/**
 * Who claimed an ask, when, and until when, as the prompt and the skip log say it:
 * `claimed by npub1… 3m ago; lapses at 2026-…Z unless they post in the thread again` (a
 * trusted claimer; an untrusted one's posts do not extend its claim, src/runner/claims.ts).
 */
export function claimNote(s: OthersClaim, now: number): string {
  const c = s.claim;
  const by = `claimed by ${npub(c.by)} ${formatAge((now - c.at) / 1000)} ago`;
  switch (s.state) {
    case "held":
      return c.lapsesAt !== undefined
        ? `${by}; lapses at ${new Date(c.lapsesAt).toISOString()}${
          c.trusted
            ? " unless they post in the thread again"
            : " (an untrusted claimer: its later posts do not extend the claim)"
        }`
        : `${by}, and answered by them; held until they release it`;
    case "lapsed":
      return `${by}; the claim lapsed at ${
        new Date(s.claim.lapsesAt).toISOString()
      } with no post from them: open again`;
    case "released":
      return `${by}; released ${formatAge((now - s.releasedAt) / 1000)} ago: open again`;
  }
}

function npub(hex: string): string {
  try {
    return npubEncode(hex);
  } catch {
    return hex;
  }
}

function excerpt(text: string): string {
  const one = oneLine(text).replace(/\s+/g, " ");
  return one.length > 200 ? one.slice(0, 199) + "…" : one;
}
