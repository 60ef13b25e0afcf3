/**
 * The dashboard's HTTP handler: the gate first (src/ui/security.ts), then the
 * pages and the four operations, each sent to the daemon as the CLI sends it.
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
  CSRF_FIELD,
  type Gate,
  SECURITY_HEADERS,
  sessionCookie,
  type UiSession,
} from "./security.ts";
import type { UiSource } from "./source.ts";
import { NoDaemonError } from "../cli/socket_client.ts";

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
}

/** Builds the request handler. */
export function uiHandler(opts: UiServerOptions): (req: Request) => Promise<Response> {
  const { gate, source } = opts;
  const now = opts.now ?? Date.now;
  const assets = new Map<string, Uint8Array>();
  const flashes = new Map<string, string>();

  return async (req) => {
    const url = new URL(req.url);
    const bad = gate.checkHost(req);
    if (bad) return refuse(bad.reason);
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
        headers: { ...SECURITY_HEADERS, location: "/", "set-cookie": sessionCookie(s) },
      });
    }
    const session = gate.session(req);
    if (session === null) {
      return refuse("no session: open the login URL that `wats ui` printed in its terminal");
    }
    if (req.method === "POST") {
      const form = await req.formData().catch(() => new FormData());
      const csrf = form.get(CSRF_FIELD);
      const no = gate.checkChange(req, session, typeof csrf === "string" ? csrf : null);
      if (no) return refuse(no.reason);
      return await change(url.pathname, form, session);
    }
    if (req.method !== "GET") return refuse("only GET and POST are served");
    const ctx: PageContext = { csrf: session.csrf };
    const flash = flashes.get(session.id);
    if (flash !== undefined) {
      flashes.delete(session.id);
      ctx.flash = flash;
    }
    try {
      return await render(url, ctx);
    } catch (err) {
      if (err instanceof NoDaemonError) {
        return page(messagePage("No daemon", err.message), 503);
      }
      if (err instanceof WatsError) return page(messagePage("Not possible", err.message), 400);
      throw err;
    }
  };

  async function render(url: URL, ctx: PageContext): Promise<Response> {
    const path = url.pathname;
    if (path === "/") {
      const status = await source.status();
      if (status === null) {
        ctx.noDaemon = "no wats daemon runs on this data dir: start it with `wats`";
      }
      const access = status !== null ? await opts.access?.() : undefined;
      return page(overviewPage(ctx, status, {
        ...(access ? { access } : {}),
        chart: chartData(source.runs(), now()),
      }));
    }
    if (path === "/posts") {
      const before = intParam(url, "before");
      return page(postsPage(ctx, await source.posts(before, POSTS_PAGE)));
    }
    if (path === "/posts/search") {
      const q = (url.searchParams.get("q") ?? "").trim();
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
        offset: intParam(url, "offset") ?? 0,
        size: RUNS_PAGE,
      }));
    }
    if (path.startsWith("/runs/")) {
      const id = path.slice("/runs/".length);
      return page(runPage(ctx, id, source.transcript(id)));
    }
    if (path === "/review") return page(reviewPage(ctx, source.drafts(), now()));
    if (path === "/halt") return page(haltPage(ctx, await source.status(), now()));
    return page(messagePage("Not found", `no page ${path}`), 404);
  }

  async function change(path: string, form: FormData, session: UiSession): Promise<Response> {
    const field = (k: string) => {
      const v = form.get(k);
      return typeof v === "string" ? v : "";
    };
    let back = "/";
    try {
      let message: string;
      const m = path.match(/^\/review\/([^/]+)\/(approve|reject)$/);
      if (m) {
        back = "/review";
        const id = decodeURIComponent(m[1]);
        if (m[2] === "approve") {
          const draft = source.drafts().find((d) => d.id === id);
          const text = field("text").replace(/\r\n/g, "\n");
          // Unchanged text publishes the draft as held (no edit).
          const edited = draft !== undefined && text !== draft.text && text.trim() !== "";
          message = await source.approve(id, edited ? text : undefined);
        } else {
          message = await source.reject(id, field("reason").trim());
        }
      } else if (path === "/halt") {
        back = "/halt";
        message = await source.halt(field("reason").trim());
      } else if (path === "/resume") {
        back = "/halt";
        message = await source.resume();
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
}

function intParam(url: URL, name: string): number | undefined {
  const v = url.searchParams.get(name);
  if (v === null || !/^\d{1,15}$/.test(v)) return undefined;
  return Number(v);
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
