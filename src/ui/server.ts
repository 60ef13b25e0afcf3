/**
 * The dashboard's HTTP handler: the gate first (src/ui/security.ts), then the
 * pages and the operations (approve, reject, halt, resume, and a work's
 * merge, push, send back and discard), each sent to the daemon as the CLI sends it.
 * Assets are the files of src/ui/assets.ts, read once and kept.
 *
 * @module
 */

import { WatsError } from "../errors.ts";
import { chartData } from "./charts.ts";
import { ASSETS } from "./assets.ts";
import {
  haltPage,
  messagePage,
  overviewPage,
  type PageContext,
  postsPage,
  reviewPage,
  runPage,
  runsPage,
  searchPage,
  threadPage,
} from "./pages.ts";
import {
  clearedCookie,
  CSRF_FIELD,
  type Gate,
  SECURITY_HEADERS,
  sessionCookie,
  type UiSession,
} from "./security.ts";
import type { UiSource } from "./source.ts";
import { discardPage, workFilePage, workPage, worksPage } from "./works_pages.ts";
import { NoDaemonError } from "../mcp/socket_client.ts";
import { askFromForm, type ComposedPost, replyFromForm } from "./compose.ts";
import { type LiveFeed, sseMessage } from "./live.ts";

/** Posts per page of the feed. */
export const POSTS_PAGE = 50;
/** Runs per page of the runs list. */
export const RUNS_PAGE = 50;

/** What the handler needs. */
export interface UiServerOptions {
  gate: Gate;
  source: UiSource;
  /** `agent.access`, shown on the overview. */
  access?: () => Promise<string | undefined>;
  now?: () => number;
  /** The daemon's events (src/ui/live.ts); without it no page is live. */
  live?: LiveFeed;
}

/** Builds the request handler. */
export function uiHandler(opts: UiServerOptions): (req: Request) => Promise<Response> {
  const { gate, source } = opts;
  const now = opts.now ?? Date.now;
  const assets = new Map<string, Uint8Array>();
  const flashes = new Map<string, string>();

  return async (req) => {
    // The gate first: nothing of the request is read before its Host is ours.
    const bad = gate.checkHost(req);
    if (bad) return refuse(bad.reason);
    const url = new URL(req.url);
    if (req.method === "GET" && url.pathname.startsWith("/assets/")) {
      const name = url.pathname.slice("/assets/".length);
      const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
      if (asset === undefined) return page(messagePage("Not found", "no such file"), 404);
      let body = assets.get(name);
      if (body === undefined) {
        body = await Deno.readFile(asset.url);
        assets.set(name, body);
      }
      return new Response(body as BodyInit, {
        headers: { ...SECURITY_HEADERS, "content-type": asset.type },
      });
    }
    if (req.method === "GET" && url.pathname === "/login") {
      const s = gate.login(url.searchParams.get("token"));
      if (s === null) {
        return refuse(
          "this login link is wrong or was already used: run `wats ui` again for a new one",
        );
      }
      return new Response(null, {
        status: 303,
        headers: { ...SECURITY_HEADERS, location: `/${s.scope}/`, "set-cookie": sessionCookie(s) },
      });
    }
    const inSession = gate.session(req, url.pathname);
    if (inSession === null) {
      return refuse(
        "no session (or it ended: logged out, or idle for 30 minutes): run `wats ui` again " +
          "and open the login URL it prints",
      );
    }
    const { session, path } = inSession;
    const scoped = new Scoped(session);
    if (req.method === "POST") {
      const form = await req.formData().catch(() => new FormData());
      const csrf = form.get(CSRF_FIELD);
      const no = gate.checkChange(req, session, typeof csrf === "string" ? csrf : null);
      if (no) return refuse(no.reason);
      if (path === "/logout") {
        gate.end(session);
        flashes.delete(session.id);
        return new Response(
          messagePage(
            "Logged out",
            "this browser's session has ended: run `wats ui` again to log in",
          ),
          {
            headers: {
              ...SECURITY_HEADERS,
              "content-type": "text/html; charset=utf-8",
              "set-cookie": clearedCookie(session),
            },
          },
        );
      }
      return scoped.response(await change(path, form, session));
    }
    if (req.method !== "GET") return refuse("only GET and POST are served");
    if (path === "/events") return events();
    const ctx: PageContext = { csrf: session.csrf };
    const flash = flashes.get(session.id);
    if (flash !== undefined) {
      flashes.delete(session.id);
      ctx.flash = flash;
    }
    try {
      return scoped.response(await render(path, url.searchParams, ctx));
    } catch (err) {
      if (err instanceof NoDaemonError) {
        return scoped.response(page(messagePage("No daemon", err.message), 503));
      }
      if (err instanceof WatsError) {
        return scoped.response(page(messagePage("Not possible", err.message), 400));
      }
      throw err;
    }
  };

  async function render(
    path: string,
    params: URLSearchParams,
    ctx: PageContext,
  ): Promise<Response> {
    if (path === "/") {
      const status = await source.status();
      if (status === null) {
        ctx.noDaemon = "no wats daemon runs on this data dir: start it with `wats`";
      }
      const access = status !== null ? await opts.access?.() : undefined;
      return page(overviewPage(ctx, status, {
        ...(access ? { access } : {}),
        chart: chartData(source.runs(), now()),
        activity: opts.live?.activity() ?? [],
        ...(opts.live ? { watching: opts.live.connected } : {}),
      }));
    }
    if (path === "/posts") {
      const before = intParam(params, "before");
      return page(postsPage(ctx, await source.posts(before, POSTS_PAGE)));
    }
    if (path === "/posts/search") {
      const q = (params.get("q") ?? "").trim();
      if (q === "") return redirect("/posts");
      return page(searchPage(ctx, q, await source.search(q, 100)));
    }
    if (path.startsWith("/posts/thread/")) {
      return page(threadPage(ctx, await source.thread(path.slice("/posts/thread/".length))));
    }
    if (path === "/runs") {
      const entries = source.runs();
      const done = new Set(entries.map((e) => e.id));
      const live = source.transcriptIds().filter((id) => !done.has(id));
      return page(runsPage(ctx, entries, live, {
        offset: intParam(params, "offset") ?? 0,
        size: RUNS_PAGE,
      }));
    }
    if (path.startsWith("/runs/")) {
      const id = path.slice("/runs/".length);
      return page(runPage(ctx, id, source.transcript(id)));
    }
    if (path === "/works") {
      const n = intParam(params, "page") ?? 0;
      return page(worksPage(ctx, await source.works(n), n));
    }
    const w = path.match(WORK_PAGE);
    if (w) {
      const work = await source.work(w[1]!);
      if (w[2] === "/discard") return page(discardPage(ctx, work));
      if (w[2] === "/diff") {
        return page(
          workFilePage(ctx, work, params.get("file") ?? "", intParam(params, "hunk") ?? 0),
        );
      }
      const file = params.get("file") ?? undefined;
      const line = intParam(params, "line");
      const since = params.get("since") ?? undefined;
      const bound = params.get("bound") ?? undefined;
      return page(workPage(ctx, work, {
        ...(file !== undefined ? { file } : {}),
        ...(line !== undefined ? { line } : {}),
        ...(since !== undefined ? { since } : {}),
        ...(bound !== undefined ? { bound } : {}),
      }));
    }
    if (path === "/review") return page(reviewPage(ctx, source.drafts(), now()));
    if (path === "/halt") return page(haltPage(ctx, await source.status(), now()));
    return page(messagePage("Not found", `no page ${path}`), 404);
  }

  /**
   * A work's operation, as `wats work merge|push|send|discard` sends it. A
   * send back needs its comment, and a line needs its file; merge, push and
   * discard need the head the page showed (`head`, empty when it showed
   * none), which the daemon holds them to: said here as an `error:` flash,
   * before the daemon is asked.
   */
  function workAction(
    id: string,
    op: string,
    field: (k: string) => string,
    head: string | null,
  ): Promise<string> {
    if (op === "merge" || op === "push" || op === "discard") {
      if (head === null) {
        return Promise.resolve(
          "error: nothing was done: the form did not say which head you saw; reload the page and decide again",
        );
      }
      const shown = head === "" ? undefined : head;
      if (op === "merge") return source.workMerge(id, shown);
      if (op === "push") return source.workPush(id, field("draft_pr") === "on", shown);
      return source.workDiscard(id, shown);
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

  async function change(path: string, form: FormData, session: UiSession): Promise<Response> {
    const field = (k: string) => {
      const v = form.get(k);
      return typeof v === "string" ? v : "";
    };
    let back = "/";
    try {
      let message: string;
      let m = path.match(/^\/review\/([^/]+)\/(approve|reject)$/);
      if (m) {
        back = "/review";
        const id = decodeURIComponent(m[1]!);
        if (m[2] === "approve") {
          const draft = source.drafts().find((d) => d.id === id);
          const text = field("text").replace(/\r\n/g, "\n");
          // Unchanged text publishes the draft as held (no edit).
          const edited = draft !== undefined && text !== draft.text && text.trim() !== "";
          message = await source.approve(id, edited ? text : undefined);
        } else {
          message = await source.reject(id, field("reason").trim());
        }
      } else if (path === "/ask" || /^\/posts\/[0-9a-f]{64}\/reply$/.test(path)) {
        const parent = path === "/ask" ? undefined : path.split("/")[2]!;
        // The thread page takes any post of the thread.
        back = parent === undefined ? "/posts" : `/posts/thread/${parent}`;
        const post: ComposedPost = parent === undefined
          ? askFromForm(field)
          : replyFromForm(parent, field);
        message = await source.post(post.kind, post.args);
        const id = message.match(/\b[0-9a-f]{64}\b/)?.[0];
        if (parent === undefined && id !== undefined) back = `/posts/thread/${id}`;
      } else if (path === "/halt") {
        back = "/halt";
        message = await source.halt(field("reason").trim());
      } else if (path === "/resume") {
        back = "/halt";
        message = await source.resume();
      } else if ((m = path.match(WORK_ACTION))) {
        const id = m[1]!;
        const head = form.get("head");
        const shown = typeof head === "string" ? head.trim() : null;
        // Back to the work, told what arrived since the head the person decided on.
        back = `/works/${id}${
          shown !== null && /^[0-9a-f]{12,64}$/.test(shown) ? `?since=${shown}` : ""
        }`;
        message = await workAction(id, m[2]!, field, shown);
        // A discarded work has no page left to go back to, nor a merged one once the sweep
        // that follows a merge removed it.
        if ((m[2] === "discard" || m[2] === "merge") && !message.startsWith("error:")) {
          back = "/works";
        }
      } else {
        return page(messagePage("Not found", `no operation ${path}`), 404);
      }
      flashes.set(session.id, message);
    } catch (err) {
      if (!(err instanceof WatsError)) throw err;
      flashes.set(session.id, `error: ${err.message}`);
    }
    // Post/redirect/get: a reload does not send the operation again.
    return redirect(back);
  }

  /**
   * The session's live updates as Server-Sent Events, one per daemon event.
   * A comment every 25 s finds a browser that left (its write then fails).
   */
  function events(): Response {
    const live = opts.live;
    if (live === undefined) return page(messagePage("Not found", "no live updates here"), 404);
    const enc = new TextEncoder();
    let close = () => {};
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const send = (text: string) => {
          try {
            controller.enqueue(enc.encode(text));
          } catch {
            close();
          }
        };
        const leave = live.open((a) => send(sseMessage(a)));
        if (leave === undefined) {
          send("event: full\ndata: too many live pages: close some dashboard tabs\n\n");
          controller.close();
          return;
        }
        const ping = setInterval(() => send(": ping\n\n"), 25_000);
        close = () => {
          clearInterval(ping);
          leave();
        };
        send("retry: 2000\n: live\n\n");
      },
      cancel() {
        close();
      },
    });
    return new Response(body, {
      headers: { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8" },
    });
  }
}

/** `/works/<id>`, its discard confirmation and one file's diff; ids are `[A-Za-z0-9._~-]+` (src/contracts/works.ts). */
const WORK_PAGE = /^\/works\/([A-Za-z0-9._~-]{1,200})(\/discard|\/diff)?$/;
/** The POST routes of a work's operations. */
const WORK_ACTION = /^\/works\/([A-Za-z0-9._~-]{1,200})\/(merge|push|send|discard)$/;

function intParam(params: URLSearchParams, name: string): number | undefined {
  const v = params.get(name);
  if (v === null || !/^\d{1,15}$/.test(v)) return undefined;
  return Number(v);
}

/**
 * A session's answers, with its scope put in front of every path: the pages
 * write their links from the root (`href="/review"`), and every page lives
 * under `/<scope>/` so that the session's cookie, scoped to that path, goes with
 * it. Only the pages' own attributes match `href="/` or `action="/`: text from
 * elsewhere is escaped (`"` becomes `&#34;`). Assets stay at `/assets/`: they
 * are public files and need no cookie.
 */
class Scoped {
  readonly #base: string;
  constructor(session: UiSession) {
    this.#base = `/${session.scope}`;
  }

  async response(res: Response): Promise<Response> {
    const headers = new Headers(res.headers);
    const location = headers.get("location");
    if (location !== null && location.startsWith("/")) {
      headers.set("location", this.#base + location);
    }
    const body = headers.get("content-type")?.startsWith("text/html")
      ? (await res.text()).replace(/\b(href|action)="\/(?!assets\/)/g, `$1="${this.#base}/`)
      : res.body;
    return new Response(body, { status: res.status, headers });
  }
}

function page(html: string, status = 200): Response {
  return new Response(html, {
    status,
    headers: { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8" },
  });
}

function redirect(location: string): Response {
  return new Response(null, { status: 303, headers: { ...SECURITY_HEADERS, location } });
}

function refuse(reason: string): Response {
  return page(messagePage("Forbidden", reason), 403);
}
