/**
 * The dashboard's HTTP handler: the gate first (src/ui/security.ts), then the
 * pages and the operations (approve, reject, halt, resume, and a work's
 * merge, push, send back and discard), each sent to the daemon as the CLI sends it.
 * Assets are the files of src/ui/assets.ts, read once and kept.
 *
 * @module
 */

import { WatsError } from "../errors.ts";
import { ASSETS } from "./assets.ts";
import { goPage, messagePage, type PageContext } from "./pages.ts";
import {
  clearedCookie,
  CSRF_FIELD,
  type Gate,
  SECURITY_HEADERS,
  sessionCookie,
  type UiSession,
} from "./security.ts";
import type { UiSource } from "./source.ts";
import { NoDaemonError } from "../mcp/socket_client.ts";
import { type LiveFeed, sseMessage } from "./live.ts";
import { type ActionRequest, html, notFound, redirect, route, type RouteDeps } from "./routes.ts";

export { POSTS_PAGE, RUNS_PAGE } from "./routes.ts";

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

/**
 * Builds the request handler: the gate, the assets, the login and the session
 * here; every page and operation is a row of src/ui/routes.ts.
 */
export function uiHandler(opts: UiServerOptions): (req: Request) => Promise<Response> {
  const { gate } = opts;
  const deps: RouteDeps = {
    source: opts.source,
    now: opts.now ?? Date.now,
    ...(opts.access ? { access: opts.access } : {}),
    ...(opts.live ? { live: opts.live } : {}),
  };
  const assets = new Map<string, Uint8Array>();
  const flashes = new Map<string, string>();

  return async (req) => {
    // The gate first: nothing of the request is read before its Host is ours.
    const bad = gate.checkHost(req);
    if (bad) return refuse(bad.reason);
    const url = new URL(req.url);
    if (req.method === "GET" && url.pathname.startsWith("/assets/")) {
      return await asset(url.pathname.slice("/assets/".length));
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
    if (req.method === "GET" && /^\/go(\/[A-Za-z0-9._~\/-]*)?$/.test(url.pathname)) {
      // A notification's link: no data, only a script that finds this browser's session.
      return page(goPage(url.pathname.slice(3) || "/"));
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
      if (path === "/logout") return logout(session);
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
    const found = route("GET", path);
    if (found === undefined || found.route.method !== "GET") {
      return scoped.response(notFound(`no page ${path}`));
    }
    try {
      return scoped.response(
        await found.route.page({ deps, groups: found.groups, params: url.searchParams, ctx }),
      );
    } catch (err) {
      if (err instanceof NoDaemonError) {
        return scoped.response(html(messagePage("No daemon", err.message), 503));
      }
      if (err instanceof WatsError) {
        return scoped.response(html(messagePage("Not possible", err.message), 400));
      }
      throw err;
    }
  };

  async function asset(name: string): Promise<Response> {
    const file = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (file === undefined) return page(messagePage("Not found", "no such file"), 404);
    let body = assets.get(name);
    if (body === undefined) {
      body = await Deno.readFile(file.url);
      assets.set(name, body);
    }
    return new Response(body as BodyInit, {
      headers: { ...SECURITY_HEADERS, "content-type": file.type },
    });
  }

  function logout(session: UiSession): Response {
    gate.end(session);
    flashes.delete(session.id);
    return new Response(
      messagePage("Logged out", "this browser's session has ended: run `wats ui` again to log in"),
      {
        headers: {
          ...SECURITY_HEADERS,
          "content-type": "text/html; charset=utf-8",
          "set-cookie": clearedCookie(session),
        },
      },
    );
  }

  /** An operation's row; its outcome becomes the next page's flash (post/redirect/get). */
  async function change(path: string, form: FormData, session: UiSession): Promise<Response> {
    const found = route("POST", path);
    if (found === undefined || found.route.method !== "POST") {
      return notFound(`no operation ${path}`);
    }
    const raw = (k: string) => {
      const v = form.get(k);
      return typeof v === "string" ? v : null;
    };
    const r: ActionRequest = { deps, groups: found.groups, field: (k) => raw(k) ?? "", raw };
    let back = "/";
    try {
      const outcome = await found.route.action(r);
      back = outcome.back;
      flashes.set(session.id, outcome.message);
    } catch (err) {
      if (!(err instanceof WatsError)) throw err;
      back = fallbackOf(path);
      flashes.set(session.id, `error: ${err.message}`);
    }
    // A reload does not send the operation again.
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

/**
 * Where an operation that threw goes back to: the page its form was on (a
 * work's operations to the work, a reply to its thread, a decision to the
 * review page).
 */
function fallbackOf(path: string): string {
  const work = path.match(/^\/works\/([A-Za-z0-9._~-]{1,200})\/[a-z]+$/);
  if (work && work[1] !== "new") return `/works/${work[1]}`;
  if (path === "/works/new") return "/works";
  const reply = path.match(/^\/posts\/([0-9a-f]{64})\/reply$/);
  if (reply) return `/posts/thread/${reply[1]}`;
  if (path.startsWith("/review/")) return "/review";
  if (path === "/ask") return "/posts";
  if (path === "/halt" || path === "/resume") return "/halt";
  return "/";
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
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) headers.set(k, v);
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

function refuse(reason: string): Response {
  return page(messagePage("Forbidden", reason), 403);
}
