/**
 * The wake prompt: the HEARTBEAT.md template with its variables filled
 * (ADR 0011, "Prompts"): {agent_profile}, {user}, {agent.about}, {reasons},
 * {cursor} and {events}. {events} lists the new events by id, kind, author and
 * thread, then the feedback on the agent's posts and any review rejections.
 * Content of posts never enters the prompt: the agent reads it through the
 * tools, which label it as unverified. The prompt never names the command that
 * acknowledges safety changes (ADR 0011, safety settings).
 *
 * @module
 */

import { npubEncode } from "nostr-tools/nip19";

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
}

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

/** The lists {events} is made of. */
export interface EventLists {
  events: readonly PromptEvent[];
  feedback: readonly PromptFeedback[];
  rejections: readonly PromptRejection[];
}

/** Renders {events}. */
export function formatEvents(l: EventLists): string {
  const parts: string[] = [];
  if (l.events.length === 0) {
    parts.push(
      "No new events woke you: this is a heartbeat run. Check the feed for anything you missed.",
    );
  } else {
    parts.push(
      `New events (${l.events.length}):\n` +
        l.events.map((e) =>
          `- ${e.id}: ${e.kind} by ${npub(e.author)} in thread ${e.thread}${
            e.thread === e.id ? " (starts it)" : ""
          }`
        ).join("\n"),
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
        l.rejections.map((r) => `- ${r.kind} "${excerpt(r.text)}": ${r.reason}`).join("\n"),
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

/** The filled prompt of one run. */
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

function npub(hex: string): string {
  try {
    return npubEncode(hex);
  } catch {
    return hex;
  }
}

function excerpt(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > 200 ? one.slice(0, 199) + "…" : one;
}
