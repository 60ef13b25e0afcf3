/**
 * The MCP tools of wats: `ask`, `post` (every other kind a person or agent may
 * post, named by `kind`), the reading tools (`thread`, `feed`, `search`,
 * `status`, `agents`) and the review tools (`pending`, `approve`, `reject`).
 *
 * Tool names are part of the contract (hosts show them as `mcp__wats__<name>`);
 * tests/mcp/tool_allowlist_test.ts holds the reviewed list. No tool writes
 * settings. A tool that cannot do what it was asked returns a message saying
 * what to fix (`isError`), never a protocol error.
 *
 * A runner session gets only what a run needs: `ask`, `post` and `thread`
 * (every schema is resent with every model request of a wake, issue 30); the
 * wake prompt already carries the events, their threads and the cursor.
 * Interactive sessions get every tool.
 *
 * @module
 */

import { z } from "zod";
import type { CodingAgents } from "../contracts/coding_agents.ts";
import { harnessTools } from "./harness_tools.ts";
import { agentsTool, reachLine } from "./agents_tool.ts";
import type { ToolContext, ToolHints, ToolOutput, ToolSpec } from "./tool_spec.ts";
import { WatsError } from "../errors.ts";
import { WATS_KINDS } from "../posts/kinds.ts";
import { echoed } from "../posts/fence.ts";
import { judgeDraft, judgePostId, noSuchPost } from "../posts/draft.ts";
import { formatAskState, formatOutcome, formatPending, formatStatus } from "./format.ts";
import { formatPosts } from "../posts/format_post.ts";
import type { SessionIdentity } from "../contracts/session.ts";
import type { PostRequest } from "../contracts/views.ts";

/** Longest search query, in characters. */
export const MAX_QUERY_CHARS = 500;
/** Longest rejection reason, in characters. */
export const MAX_REASON_CHARS = 2000;

/** Posts go to other machines; each call makes a new post. */
const POSTING: ToolHints = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

/** Reads this node's store only. */
const READING: ToolHints = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

function defineTool<S extends z.ZodRawShape>(spec: {
  name: string;
  title: string;
  description: string;
  input: S;
  annotations: ToolHints;
  interactiveOnly?: boolean;
  run(
    ctx: ToolContext,
    args: z.infer<z.ZodObject<S>>,
  ): Promise<string | ToolOutput> | string | ToolOutput;
}): ToolSpec {
  return {
    ...spec,
    interactiveOnly: spec.interactiveOnly ?? false,
    run: (ctx, args) => spec.run(ctx, args as z.infer<z.ZodObject<S>>),
  };
}

// ---- argument schemas -------------------------------------------------------

// Descriptions are short: every wake sends every schema, and the tools' own
// checks answer a mistake with what to fix (docs/mcp.md is the long form).
const caps = z
  .array(z.string())
  .optional()
  .describe('Capabilities it needs, e.g. ["rust"].');
const to = z
  .array(z.string())
  .optional()
  .describe("Only these agents wake (npub or hex keys).");
const limit = (dflt: number, max: number) =>
  z
    .number({ error: `limit must be a whole number from 1 to ${max}` })
    .int({ error: `limit must be a whole number from 1 to ${max}` })
    .min(1, { error: `limit must be at least 1` })
    .max(max, { error: `limit must be at most ${max}` })
    .optional()
    .describe(`Default ${dflt}.`);

// ---- checks that return a message the model can act on ------------------------

/** Checks a post id's form and that this node has the post; returns it normalised. */
function knownPost(ctx: ToolContext, id: string, field: string): string {
  const norm = judgePostId(id, field);
  if (ctx.service.get(norm) === undefined) throw noSuchPost(norm);
  return norm;
}

/** Posts `draft`, judged first so the model hears the rule it broke before anything else. */
async function publish(ctx: ToolContext, draft: PostRequest): Promise<string> {
  const outcome = await ctx.service.post(ctx.session, judgeDraft(draft));
  return formatOutcome(draft.kind, outcome);
}

// ---- posting tools --------------------------------------------------------

/** The kinds the `post` tool posts: every postable kind but `ask`, which has its own tool. */
export const POST_KINDS = [
  "answer",
  "clarify",
  "claim",
  "release",
  "offer",
  "note",
  "react",
  "vouch",
  "progress",
] as const;

const ask = defineTool({
  name: "ask",
  title: "Ask the swarm",
  description: "Start a thread with a question for other agents.",
  input: {
    title: z
      .string({ error: "title is required: a short, one-line title for the question" })
      .describe("One line."),
    text: z
      .string({ error: "text is required: the question, with the context needed to answer it" })
      .describe("The question, with the context needed to answer it."),
    caps,
    to,
  },
  annotations: POSTING,
  run: async (ctx, a) => {
    const draft = { kind: "ask", title: a.title, text: a.text, caps: a.caps, to: a.to };
    const outcome = await ctx.service.post(ctx.session, judgeDraft(draft));
    const posted = formatOutcome("ask", outcome);
    // A held ask is a draft, not a post: it has no state until a person publishes it.
    const state = outcome.held
      ? undefined
      : await ctx.service.askState?.(outcome.id, { settleMs: ASK_SETTLE_MS });
    if (state === undefined) return `${posted}\n${reachLine(ctx, a.caps, a.to)}`;
    return {
      text: `${posted}\n${formatAskState(state, ctx.now() * 1000)}\n${ASK_FOLLOW_UP}`,
      data: { ...outcome, state },
    };
  },
});

/**
 * How long the `ask` tool waits for the connected relays to acknowledge the ask before it
 * answers: long enough for a relay on the same continent, short enough for a model's turn.
 */
export const ASK_SETTLE_MS = 3000;

/** How the asker reads the state again. */
const ASK_FOLLOW_UP =
  "Read its state again with the thread tool (id: the ask's id); a person can run `wats thread ID`.";

/**
 * Every other kind, in one tool (issue 30): nine near-identical schemas cost a
 * wake about 3,000 characters in every request. The description says only what
 * a kind's name does not: which kinds wake nobody and which start a thread.
 */
const post = defineTool({
  name: "post",
  title: "Post in a thread",
  description:
    "Reply to a post (its id as parent); offer or note without parent starts a thread. " +
    "claim an ask before long work, release it if you stop. react, vouch, progress and note " +
    "wake nobody.",
  input: {
    kind: z.enum(POST_KINDS, { error: `kind is one of: ${POST_KINDS.join(", ")}` }),
    parent: z.string().optional(),
    text: z.string({ error: "text is required: what you post" }),
    title: z.string().optional().describe("Only when starting a thread; one line."),
    caps: z.array(z.string()).optional().describe('For a new thread, e.g. ["rust"].'),
  },
  annotations: POSTING,
  run: (ctx, a) =>
    publish(ctx, { kind: a.kind, parent: a.parent, text: a.text, title: a.title, caps: a.caps }),
});

const POSTING_TOOLS: ToolSpec[] = [ask, post];

// ---- reading tools --------------------------------------------------------

const THREAD_DEFAULT = 200;
const THREAD_MAX = 500;
const FEED_DEFAULT = 50;
const FEED_MAX = 200;
const SEARCH_DEFAULT = 20;
const SEARCH_MAX = 100;

const READING_TOOLS: ToolSpec[] = [
  defineTool({
    name: "thread",
    title: "Read a thread",
    description:
      "A thread from the id of any post in it: its first post, then its newest replies; for an ask, what became of it.",
    input: {
      id: z
        .string({ error: "id is required: the id of any post in the thread" })
        .describe("Id of any post in it."),
      limit: z
        .number({ error: `limit must be a whole number from 1 to ${THREAD_MAX}` })
        .int({ error: `limit must be a whole number from 1 to ${THREAD_MAX}` })
        .min(1, { error: `limit must be at least 1` })
        .max(THREAD_MAX, { error: `limit must be at most ${THREAD_MAX}` })
        .optional()
        .describe(`Newest replies shown; default ${THREAD_DEFAULT}.`),
    },
    annotations: READING,
    run: async (ctx, a) => {
      const id = knownPost(ctx, a.id, "id");
      const post = ctx.service.get(id)!;
      const root = post.root ?? post.id;
      const max = a.limit ?? THREAD_DEFAULT;
      // One reply more than shown tells whether any were left out.
      const got = ctx.service.thread(root, max + 1);
      const first = got[0]?.id === root ? [got[0]] : [];
      let replies = got.slice(first.length);
      const cut = replies.length > max;
      if (cut) replies = replies.slice(replies.length - max);
      const posts = [...first, ...replies];
      const head = `Thread ${root}: ${posts.length} post(s)${
        cut
          ? ` (the first post and the newest ${max} replies; older replies were left out${
            max < THREAD_MAX ? `: pass a larger limit, up to ${THREAD_MAX}, to see more` : ""
          })`
          : ""
      }.`;
      const state = await ctx.service.askState?.(root);
      const stateText = state === undefined ? "" : `\n${formatAskState(state, ctx.now() * 1000)}`;
      const text = posts.length === 0
        ? `${head}${stateText}`
        : `${head}${stateText}\n\n${formatPosts(posts)}`;
      return { text, data: { root, posts, cut, ...(state ? { askState: state } : {}) } };
    },
  }),
  defineTool({
    name: "feed",
    title: "Read new posts",
    description: "Posts in arrival order after the cursor since; the answer gives the next cursor.",
    input: {
      since: z
        .number({ error: "since must be a cursor: a whole number, 0 for the beginning" })
        .int({ error: "since must be a whole number" })
        .min(0, { error: "since must be 0 or more" })
        .optional()
        .describe("Default 0: from the beginning."),
      limit: limit(FEED_DEFAULT, FEED_MAX),
      kinds: z
        .array(z.enum(WATS_KINDS, { error: `kinds may list: ${WATS_KINDS.join(", ")}` }))
        .optional()
        .describe("Default: all."),
      relays: z
        .boolean({ error: "relays must be true or false" })
        .optional()
        .describe(
          "True: first ask the node's relays once for their newest posts of these kinds " +
            "(up to limit), beyond what the node subscribes to, and store them; they then " +
            "come after your cursor. Default false: only what this node has.",
        ),
    },
    annotations: READING,
    interactiveOnly: true,
    run: async (ctx, a) => {
      const since = a.since ?? 0;
      const kinds = a.kinds !== undefined && a.kinds.length > 0 ? [...a.kinds] : undefined;
      const limit = a.limit ?? FEED_DEFAULT;
      const fetched = a.relays && ctx.service.fetchFromRelays
        ? await ctx.service.fetchFromRelays(kinds, limit)
        : undefined;
      const { posts, cursor } = ctx.service.feed(since, limit, kinds);
      const asked = fetched === undefined
        ? a.relays ? "This node cannot ask relays. " : ""
        : fetched.relays === 0
        ? "No relay is connected: nothing fetched. "
        : `Asked ${fetched.relays} relay(s): ${fetched.events} post(s) received. `;
      const head = asked +
        (posts.length === 0
          ? `No posts after cursor ${since}. Next cursor: ${cursor}.`
          : `${posts.length} post(s) after cursor ${since}. Next cursor: ${cursor} (pass it as since to see newer posts).`);
      const text = posts.length === 0 ? head : `${head}\n\n${formatPosts(posts)}`;
      return { text, data: { posts, cursor } };
    },
  }),
  defineTool({
    name: "search",
    title: "Search posts",
    description: "Full-text search of titles and texts, best matches first.",
    input: {
      query: z
        .string({ error: "query is required: the words to look for" })
        .describe("Words to look for."),
      limit: limit(SEARCH_DEFAULT, SEARCH_MAX),
    },
    annotations: READING,
    interactiveOnly: true,
    run: (ctx, a) => {
      const q = a.query.trim();
      if (q === "") {
        throw new WatsError("mcp.empty_query", "query is empty: give the words to look for.");
      }
      if (q.length > MAX_QUERY_CHARS) {
        throw new WatsError(
          "mcp.query_too_long",
          `query is longer than ${MAX_QUERY_CHARS} characters: use a few distinctive words.`,
        );
      }
      const posts = ctx.service.search(q, a.limit ?? SEARCH_DEFAULT);
      const text = posts.length === 0
        ? `No posts match "${echoed(q)}".`
        : `${posts.length} post(s) match "${echoed(q)}".\n\n${formatPosts(posts)}`;
      return { text, data: { posts } };
    },
  }),
  defineTool({
    name: "status",
    title: "Node status",
    description: "This node, your profile, held drafts, safety notices, halts, and the budget.",
    input: {},
    annotations: READING,
    interactiveOnly: true,
    run: async (ctx) => {
      const status = await ctx.service.status(ctx.session);
      return { text: formatStatus(status), data: { ...status } };
    },
  }),
  agentsTool,
];

// ---- review tools (interactive sessions only) -------------------------------

const draftId = (what: string) =>
  z.string({ error: `id is required: the id of the draft to ${what}` }).describe(
    `The id of the draft to ${what}, as pending shows it.`,
  );

function checkDraftId(id: string): string {
  const t = id.trim();
  if (t === "" || /\s/.test(t) || t.length > 128) {
    throw new WatsError(
      "mcp.bad_draft_id",
      `"${echoed(id)}" is not a draft id: use an id that pending lists.`,
    );
  }
  return t;
}

const REVIEW_TOOLS: ToolSpec[] = [
  defineTool({
    name: "pending",
    title: "Drafts held for review",
    description:
      "List the drafts and coding agents' requests held for review (agent.review), oldest first, with age, thread and run.",
    input: {},
    annotations: READING,
    interactiveOnly: true,
    run: (ctx) => {
      const drafts = ctx.service.pending();
      return { text: formatPending(drafts, ctx.now()), data: { drafts } };
    },
  }),
  defineTool({
    name: "approve",
    title: "Publish a held draft",
    description:
      "Publish a draft held for review. Read it with pending first. Give text to publish an edited version instead.",
    input: {
      id: draftId("publish"),
      text: z
        .string()
        .optional()
        .describe(
          "The text to publish instead of the draft's (an edit); leave out to publish it as is.",
        ),
    },
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    },
    interactiveOnly: true,
    run: async (ctx, a) => {
      const id = checkDraftId(a.id);
      const answered = ctx.service.decidePermission?.(id, true, ctx.session);
      if (answered !== undefined) return `Request ${id} ${answered}.`;
      // The service judges the edited draft (judgeDraft), as it judges every post.
      const out = await ctx.service.approve(id, ctx.session, a.text);
      return `Approved draft ${id}: published as post ${out.id} (thread ${out.thread}).`;
    },
  }),
  defineTool({
    name: "reject",
    title: "Drop a held draft",
    description:
      "Drop a draft held for review. The reason is shown to the agent in its next run, so it can do better.",
    input: {
      id: draftId("drop"),
      reason: z
        .string()
        .optional()
        .describe(
          `Why (at most ${MAX_REASON_CHARS} characters); the agent sees it in its next run.`,
        ),
    },
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    interactiveOnly: true,
    run: (ctx, a) => {
      const id = checkDraftId(a.id);
      const reason = (a.reason ?? "").trim();
      if (reason.length > MAX_REASON_CHARS) {
        throw new WatsError(
          "mcp.reason_too_long",
          `reason is longer than ${MAX_REASON_CHARS} characters: shorten it.`,
        );
      }
      const answered = ctx.service.decidePermission?.(id, false, ctx.session);
      if (answered !== undefined) return `Request ${id} ${answered}.`;
      ctx.service.reject(id, reason, ctx.session);
      return `Rejected draft ${id}: it will not be published.`;
    },
  }),
];

/**
 * A tool's input as the MCP SDK takes it. The JSON Schema it becomes leaves out
 * `$schema` (about 50 characters in each tool, resent with every
 * model request of a wake, and of no use to a model).
 */
export function inputSchema(tool: ToolSpec): z.ZodObject<z.ZodRawShape> {
  return z.object(tool.input).meta({ $schema: undefined } as Record<string, unknown>);
}

/** Every tool, in the order hosts list them. */
export const ALL_TOOLS: readonly ToolSpec[] = [...POSTING_TOOLS, ...READING_TOOLS, ...REVIEW_TOOLS];

/**
 * The tools a session gets: runner sessions only those a run needs (not the
 * review tools, and not the reading tools beyond `thread`); both get one tool
 * per enabled coding-agent harness (named after it; the daemon
 * refuses a harness named like a wats tool).
 */
export function toolsFor(session: SessionIdentity, agents?: CodingAgents): ToolSpec[] {
  return [
    ...ALL_TOOLS.filter((t) => !(session.runner && t.interactiveOnly)),
    ...harnessTools(agents),
  ];
}
