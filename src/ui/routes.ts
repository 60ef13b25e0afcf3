/**
 * The dashboard's routes as one table (issue 28, item 3): a page or an
 * operation is one row, a method and a `URLPattern` over the path inside the
 * session's scope, with the handler that answers it. A page renders from the
 * source; an operation answers where to go back to and the line the next page
 * shows (post/redirect/get). The gate, the session and the assets stay in
 * ./server.ts, which runs before any row is looked at.
 *
 * @module
 */

import { WatsError } from "../errors.ts";
import { chartData } from "./charts.ts";
import { callsSpend, spendFigures } from "../runner/spend_figures.ts";
import {
  haltPage,
  messagePage,
  overviewPage,
  type PageContext,
  postsPage,
  runPage,
  runsPage,
  searchPage,
  threadPage,
} from "./pages.ts";
import type { UiSource } from "./source.ts";
import { commandOf, type RequestWork, reviewPage, rulePage } from "./review_page.ts";
import { proposedRule } from "../node/policy_rule.ts";
import { discardPage, workFilePage, workPage, worksPage } from "./works_pages.ts";
import { askFromForm, type ComposedPost, replyFromForm } from "./compose.ts";
import type { LiveFeed } from "./live.ts";

/** Posts per page of the feed. */
export const POSTS_PAGE = 50;
/** Runs per page of the runs list. */
export const RUNS_PAGE = 50;

/** What every handler may use. */
export interface RouteDeps {
  source: UiSource;
  /** `agent.access`, shown on the overview. */
  access?: () => Promise<string | undefined>;
  now: () => number;
  live?: LiveFeed;
}

/** One GET: the pattern's groups, the query, and the page's context (CSRF, flash). */
export interface PageRequest {
  deps: RouteDeps;
  groups: Record<string, string | undefined>;
  params: URLSearchParams;
  ctx: PageContext;
}

/** One POST: the pattern's groups and the form's fields (missing ones read as ""). */
export interface ActionRequest {
  deps: RouteDeps;
  groups: Record<string, string | undefined>;
  field: (name: string) => string;
  /** The raw field, null when the form did not carry it. */
  raw: (name: string) => string | null;
}

/** Where an operation sends the browser, and what the page then says. */
export interface ActionOutcome {
  back: string;
  message: string;
}

/** A row of the table. */
export type Route =
  | { method: "GET"; pattern: URLPattern; page: (r: PageRequest) => Promise<Response> }
  | { method: "POST"; pattern: URLPattern; action: (r: ActionRequest) => Promise<ActionOutcome> };

/** A work's id: `[A-Za-z0-9._~-]+` (src/contracts/works.ts). */
const WORK = ":id([A-Za-z0-9._~-]{1,200})";

const path = (pathname: string) => new URLPattern({ pathname });

/** Every page and operation of the dashboard, in the order they are tried. */
export const ROUTES: readonly Route[] = [
  { method: "GET", pattern: path("/"), page: overview },
  {
    method: "GET",
    pattern: path("/posts"),
    page: async ({ deps, params, ctx }) =>
      html(postsPage(ctx, await deps.source.posts(intParam(params, "before"), POSTS_PAGE))),
  },
  {
    method: "GET",
    pattern: path("/posts/search"),
    page: async ({ deps, params, ctx }) => {
      const q = (params.get("q") ?? "").trim();
      if (q === "") return redirect("/posts");
      return html(searchPage(ctx, q, await deps.source.search(q, 100)));
    },
  },
  {
    method: "GET",
    pattern: path("/posts/thread/:id"),
    page: async ({ deps, groups, ctx }) => {
      const t = await deps.source.thread(groups.id ?? "");
      // The works started for it: the newest page of works, by the thread's root.
      const works = (await deps.source.works(0).catch(() => ({ works: [] }))).works
        .filter((w) => w.thread === t.root);
      return html(threadPage(ctx, t, works));
    },
  },
  { method: "GET", pattern: path("/runs"), page: runs },
  {
    method: "GET",
    pattern: path("/runs/:id"),
    page: ({ deps, groups, ctx }) => {
      const id = groups.id ?? "";
      return Promise.resolve(html(runPage(ctx, id, deps.source.transcript(id))));
    },
  },
  {
    method: "GET",
    pattern: path("/works"),
    page: async ({ deps, params, ctx }) => {
      const n = intParam(params, "page") ?? 0;
      return html(worksPage(ctx, await deps.source.works(n), n));
    },
  },
  { method: "GET", pattern: path(`/works/${WORK}`), page: work },
  {
    method: "GET",
    pattern: path(`/works/${WORK}/discard`),
    page: async ({ deps, groups, ctx }) =>
      html(discardPage(ctx, await deps.source.work(groups.id!))),
  },
  {
    method: "GET",
    pattern: path(`/works/${WORK}/diff`),
    page: async ({ deps, groups, params, ctx }) =>
      html(
        workFilePage(
          ctx,
          await deps.source.work(groups.id!),
          params.get("file") ?? "",
          intParam(params, "hunk") ?? 0,
        ),
      ),
  },
  { method: "GET", pattern: path("/review"), page: review },
  {
    method: "GET",
    pattern: path("/review/:id/rule"),
    page: ({ deps, groups, ctx }) => {
      const d = heldRequest(deps.source, groups.id);
      if (d?.permission === undefined) return Promise.resolve(notFound("no such request waits"));
      const p = d.permission;
      const command = p.kind === "execute" ? commandOf(p.arguments) : undefined;
      const rule = proposedRule({ ...p, ...(command !== undefined ? { command } : {}) });
      return Promise.resolve(html(rulePage(ctx, d, rule)));
    },
  },
  {
    method: "GET",
    pattern: path("/halt"),
    page: async ({ deps, ctx }) => html(haltPage(ctx, await deps.source.status(), deps.now())),
  },
  {
    method: "POST",
    pattern: path("/review/:id/:verb(approve|reject)"),
    action: decide,
  },
  { method: "POST", pattern: path("/review/:id/rule"), action: allowAlways },
  { method: "POST", pattern: path("/ask"), action: post },
  { method: "POST", pattern: path("/posts/:parent([0-9a-f]{64})/reply"), action: post },
  {
    method: "POST",
    pattern: path("/halt"),
    action: async ({ deps, field }) => ({
      back: "/halt",
      message: await deps.source.halt(field("reason").trim()),
    }),
  },
  {
    method: "POST",
    pattern: path("/resume"),
    action: async ({ deps }) => ({ back: "/halt", message: await deps.source.resume() }),
  },
  { method: "POST", pattern: path("/works/new"), action: newWork },
  {
    method: "POST",
    pattern: path(`/works/${WORK}/:op(merge|push|send|discard)`),
    action: workOp,
  },
];

/** The row for `method` and `pathname`, with its pattern's groups; undefined for none. */
export function route(
  method: string,
  pathname: string,
): { route: Route; groups: Record<string, string | undefined> } | undefined {
  for (const r of ROUTES) {
    if (r.method !== method) continue;
    const m = r.pattern.exec({ pathname });
    if (m) return { route: r, groups: m.pathname.groups };
  }
  return undefined;
}

async function overview({ deps, ctx }: PageRequest): Promise<Response> {
  const status = await deps.source.status();
  if (status === null) {
    ctx.noDaemon = "no wats daemon runs on this data dir: start it with `wats`";
  }
  const access = status !== null ? await deps.access?.() : undefined;
  const figures = spendFigures(deps.source.spend(deps.now()), deps.now());
  return html(overviewPage(ctx, status, {
    ...(access ? { access } : {}),
    chart: chartData(figures.items, deps.now()),
    spend: figures,
    activity: deps.live?.activity() ?? [],
    ...(deps.live ? { watching: deps.live.connected } : {}),
  }));
}

function runs({ deps, params, ctx }: PageRequest): Promise<Response> {
  const entries = deps.source.runs();
  const done = new Set(entries.map((e) => e.id));
  const live = deps.source.transcriptIds().filter((id) => !done.has(id));
  return Promise.resolve(html(runsPage(ctx, entries, live, {
    offset: intParam(params, "offset") ?? 0,
    size: RUNS_PAGE,
    spend: spendFigures(deps.source.spend(deps.now()), deps.now()),
  })));
}

async function work({ deps, groups, params, ctx }: PageRequest): Promise<Response> {
  const w = await deps.source.work(groups.id!);
  const file = params.get("file") ?? undefined;
  const line = intParam(params, "line");
  const since = params.get("since") ?? undefined;
  const bound = params.get("bound") ?? undefined;
  const spentUsd = callsSpend(deps.source.spend(deps.now()), w.calls.map((c) => c.id));
  return html(workPage(ctx, w, {
    spentUsd,
    ...(file !== undefined ? { file } : {}),
    ...(line !== undefined ? { line } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(bound !== undefined ? { bound } : {}),
  }));
}

/**
 * The review queue, each permission request with the work it is for: found
 * among the newest works by its worktree, with its uncommitted changes.
 */
async function review({ deps, ctx }: PageRequest): Promise<Response> {
  const drafts = deps.source.drafts();
  const asks = drafts.filter((d) => d.permission !== undefined);
  const works = new Map<string, RequestWork>();
  if (asks.length > 0) {
    const list = await deps.source.works(0).catch(() => ({ works: [] }));
    for (const d of asks) {
      const w = list.works.find((w) => w.worktree === d.permission!.worktree);
      if (w === undefined) continue;
      const detail = await deps.source.work(w.id).catch(() => undefined);
      works.set(d.id, {
        id: w.id,
        ...(detail?.uncommitted ? { uncommitted: detail.uncommitted } : {}),
      });
    }
  }
  return html(reviewPage(ctx, drafts, deps.now(), works));
}

function heldRequest(source: UiSource, id: string | undefined) {
  const want = decodeURIComponent(id ?? "");
  return source.drafts().find((d) => d.id === want);
}

/**
 * "Allow always", confirmed: the rule goes to config.toml only with the
 * page's box ticked, in this session's own form (the gate checked its CSRF
 * token and Origin); no agent has a way to this.
 */
async function allowAlways({ deps, groups, field }: ActionRequest): Promise<ActionOutcome> {
  const d = heldRequest(deps.source, groups.id);
  if (d?.permission === undefined) {
    return { back: "/review", message: "error: nothing was written: that request no longer waits" };
  }
  const back = `/review/${encodeURIComponent(d.id)}/rule`;
  if (field("confirm") !== "on") {
    return {
      back,
      message: "error: nothing was written: tick the box to confirm you add this rule yourself",
    };
  }
  try {
    return { back: "/review", message: await deps.source.allowRule(field("rule")) };
  } catch (err) {
    if (!(err instanceof WatsError)) throw err;
    return { back, message: `error: ${err.message}` };
  }
}

async function decide({ deps, groups, field }: ActionRequest): Promise<ActionOutcome> {
  const id = decodeURIComponent(groups.id ?? "");
  if (groups.verb === "approve") {
    const draft = deps.source.drafts().find((d) => d.id === id);
    const text = field("text").replace(/\r\n/g, "\n");
    // Unchanged text publishes the draft as held (no edit).
    const edited = draft !== undefined && text !== draft.text && text.trim() !== "";
    return { back: "/review", message: await deps.source.approve(id, edited ? text : undefined) };
  }
  return { back: "/review", message: await deps.source.reject(id, field("reason").trim()) };
}

async function post({ deps, groups, field }: ActionRequest): Promise<ActionOutcome> {
  const parent = groups.parent;
  const composed: ComposedPost = parent === undefined
    ? askFromForm(field)
    : replyFromForm(parent, field);
  const message = await deps.source.post(composed.kind, composed.args);
  const id = message.match(/\b[0-9a-f]{64}\b/)?.[0];
  // The thread page takes any post of the thread; a new ask goes to its own.
  if (parent !== undefined) return { back: `/posts/thread/${parent}`, message };
  return { back: id !== undefined ? `/posts/thread/${id}` : "/posts", message };
}

/**
 * The page's "New work": the task goes to the coding agent as the heartbeat
 * agent's harness tool sends it (src/acp/work_ops.ts `newWork`), under the same
 * policy, budget and halt. Back to the work's page once it has an id.
 */
async function newWork({ deps, field }: ActionRequest): Promise<ActionOutcome> {
  const task = field("task").replace(/\r\n/g, "\n").trim();
  const name = field("work").trim();
  const checkout = field("checkout").trim();
  if (task === "" || name === "" || checkout === "") {
    return {
      back: "/works",
      message: "error: nothing was started: name the checkout and the work, and write the task",
    };
  }
  const message = await deps.source.workNew({
    harness: field("harness").trim(),
    checkout,
    work: name,
    task,
  });
  // The list, live: the work appears there once its call made its worktree.
  return { back: "/works", message };
}

/**
 * A work's operation, as `wats work merge|push|send|discard` sends it. A send
 * back needs its comment, and a line needs its file; merge, push and discard
 * need the head the page showed (`head`, empty when it showed none), which the
 * daemon holds them to: said here as an `error:` flash, before the daemon is
 * asked.
 */
async function workOp({ deps, groups, field, raw }: ActionRequest): Promise<ActionOutcome> {
  const id = groups.id!;
  const op = groups.op!;
  const head = raw("head");
  const shown = head !== null ? head.trim() : null;
  // Back to the work, told what arrived since the head the person decided on.
  const back = `/works/${id}${
    shown !== null && /^[0-9a-f]{12,64}$/.test(shown) ? `?since=${shown}` : ""
  }`;
  let message: string;
  try {
    message = await workMessage(deps.source, { id, op, field, shown });
  } catch (err) {
    // Refused: back to the work, which says what moved.
    if (!(err instanceof WatsError)) throw err;
    message = `error: ${err.message}`;
  }
  // A discarded work has no page left to go back to, nor a merged one once the sweep
  // that follows a merge removed it.
  const gone = (op === "discard" || op === "merge") && !message.startsWith("error:");
  return { back: gone ? "/works" : back, message };
}

function workMessage(
  source: UiSource,
  a: { id: string; op: string; field: (k: string) => string; shown: string | null },
): Promise<string> {
  const { id, op, field, shown } = a;
  if (op === "merge" || op === "push" || op === "discard") {
    if (shown === null) {
      return Promise.resolve(
        "error: nothing was done: the form did not say which head you saw; reload the page and decide again",
      );
    }
    const head = shown === "" ? undefined : shown;
    if (op === "merge") return source.workMerge(id, head);
    if (op === "push") return source.workPush(id, field("draft_pr") === "on", head);
    return source.workDiscard(id, head);
  }
  const text = field("text").replace(/\r\n/g, "\n").trim();
  const file = field("file").trim();
  const line = field("line").trim();
  if (text === "") return Promise.resolve("error: nothing was sent back: write a comment first");
  if (line !== "" && !/^[1-9]\d{0,8}$/.test(line)) {
    return Promise.resolve("error: the line must be a line number (1 or more), or left empty");
  }
  if (line !== "" && file === "") {
    return Promise.resolve(
      "error: a line needs its file: name the file too, or leave the line empty",
    );
  }
  return source.workSend(id, text, file || undefined, line ? Number(line) : undefined);
}

/** A non-negative integer query parameter, or undefined. */
export function intParam(params: URLSearchParams, name: string): number | undefined {
  const v = params.get(name);
  if (v === null || !/^\d{1,15}$/.test(v)) return undefined;
  return Number(v);
}

/** A page's HTML answer. */
export function html(text: string, status = 200): Response {
  return new Response(text, {
    status,
    headers: { "content-type": "text/html; charset=utf-8" },
  });
}

/** A redirect inside the session's scope (./server.ts puts the scope in front). */
export function redirect(location: string): Response {
  return new Response(null, { status: 303, headers: { location } });
}

/** The 404 page of a path no row matches. */
export function notFound(what: string): Response {
  return html(messagePage("Not found", what), 404);
}
