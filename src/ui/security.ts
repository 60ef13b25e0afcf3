/**
 * The dashboard's gate (docs/ui.md, docs/decisions/ui.md). An agent with a
 * shell may run on the same machine, and any program may listen on another
 * loopback port (browsers send a host's cookies to every port of it), so every
 * request must show, before any page is rendered or any operation reaches the
 * daemon:
 *
 * - a session: a one-time login token (printed by `wats ui`, held only in its
 *   memory) is exchanged once for a session. The session lives under a random
 *   path (`/<scope>/`, never printed) and its HttpOnly SameSite=Strict cookie is
 *   scoped to that path under a name that holds the scope, so a browser sends it
 *   to no other port and no other port can set one the dashboard reads. Two
 *   cookies of that name are a refusal. A session ends when logged out or after
 *   {@linkcode SESSION_IDLE_MS} without a request;
 * - a Host header naming the address served (DNS rebinding: a page of another
 *   site resolved to 127.0.0.1 sends its own name);
 * - on a state-changing request, an Origin of that same address and the
 *   session's CSRF token.
 *
 * A request failing any of these gets 403 and changes nothing. Pure except for
 * the random source: the server and the tests share it.
 *
 * @module
 */

/** The form field that carries the CSRF token. */
export const CSRF_FIELD = "csrf";

/** A session with no request for this long ends (30 minutes). */
export const SESSION_IDLE_MS = 30 * 60_000;

/** What a refused request is told (never which secret was wrong). */
export interface Refusal {
  status: 403;
  reason: string;
}

/** One browser's session. */
export interface UiSession {
  id: string;
  csrf: string;
  /** The random first path segment every page of this session lives under. */
  scope: string;
  /** When its last request came (ms). */
  seen: number;
}

/** A request inside a session: the session and the page's path under its scope. */
export interface InSession {
  session: UiSession;
  /** The path without `/<scope>` (`/`, `/review`, ...). */
  path: string;
}

/** 32 random bytes as hex. */
export function randomToken(): string {
  return randomHex(32);
}

function randomHex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** Compares two secrets in time independent of where they differ. */
export function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Options of a {@linkcode Gate} beyond the address. */
export interface GateOptions {
  token?: string;
  /** Idle time after which a session ends; {@linkcode SESSION_IDLE_MS} unless set. */
  idleMs?: number;
  now?: () => number;
}

/**
 * The login token and the sessions it opened. The token works once: a second
 * use (a copied URL, a shoulder-surfed terminal) is refused.
 */
export class Gate {
  readonly #token: string;
  #used = false;
  readonly #sessions = new Map<string, UiSession>();
  readonly #hosts: ReadonlySet<string>;
  readonly #origins: ReadonlySet<string>;
  readonly #idleMs: number;
  readonly #now: () => number;

  /** `hostPort` is the address served, as `Host` must name it (`127.0.0.1:7448`). */
  constructor(hostPort: string, opts: GateOptions = {}) {
    this.#token = opts.token ?? randomToken();
    this.#idleMs = opts.idleMs ?? SESSION_IDLE_MS;
    this.#now = opts.now ?? Date.now;
    const hosts = new Set([hostPort]);
    const port = hostPort.slice(hostPort.lastIndexOf(":") + 1);
    // `localhost` names the same loopback address, and browsers send it as typed.
    if (isLoopbackHost(hostPort.slice(0, hostPort.lastIndexOf(":")))) {
      hosts.add(`localhost:${port}`);
    }
    this.#hosts = hosts;
    this.#origins = new Set([...hosts].map((h) => `http://${h}`));
  }

  /** The one-time login token (printed in the URL, never logged). */
  get token(): string {
    return this.#token;
  }

  /** Checks the Host header; every request goes through this first. */
  checkHost(req: Request): Refusal | null {
    const host = req.headers.get("host");
    if (host === null || !this.#hosts.has(host.toLowerCase())) {
      return {
        status: 403,
        reason: "this dashboard answers only on the address `wats ui` printed",
      };
    }
    return null;
  }

  /** Exchanges the login token for a new session; null when the token is wrong or used. */
  login(token: string | null): UiSession | null {
    if (token === null || this.#used || !sameSecret(token, this.#token)) return null;
    this.#used = true;
    const s = { id: randomToken(), csrf: randomToken(), scope: randomHex(16), seen: this.#now() };
    this.#sessions.set(s.scope, s);
    return s;
  }

  /**
   * The request's session: its path must start with a live session's scope and
   * it must carry exactly one cookie of that session's name, holding its id.
   * A request inside a session keeps it alive; an idle one has ended.
   */
  session(req: Request, pathname: string): InSession | null {
    const m = pathname.match(/^\/([0-9a-f]{32})(\/.*)$/);
    if (!m) return null;
    const [, asked = "", path = ""] = m;
    let found: UiSession | undefined;
    for (const [scope, s] of this.#sessions) if (sameSecret(scope, asked)) found = s;
    if (found === undefined) return null;
    if (this.#now() - found.seen > this.#idleMs) {
      this.#sessions.delete(found.scope);
      return null;
    }
    const ids = cookiesOf(req, cookieName(found));
    // A second cookie of this name was planted by someone who learnt the scope.
    const [id] = ids;
    if (ids.length !== 1 || id === undefined || !sameSecret(id, found.id)) return null;
    found.seen = this.#now();
    return { session: found, path };
  }

  /** Ends a session (logout). */
  end(s: UiSession): void {
    this.#sessions.delete(s.scope);
  }

  /**
   * Checks a state-changing request: its Origin must be the address served, and
   * `csrf` (the form's field) the session's token.
   */
  checkChange(req: Request, session: UiSession, csrf: string | null): Refusal | null {
    const origin = req.headers.get("origin");
    if (origin === null || !this.#origins.has(origin.toLowerCase())) {
      return { status: 403, reason: "a change must come from this dashboard's own pages" };
    }
    if (csrf === null || !sameSecret(csrf, session.csrf)) {
      return { status: 403, reason: "the form is stale or foreign: reload the page and try again" };
    }
    return null;
  }
}

function cookieName(s: UiSession): string {
  return `wats_${s.scope}`;
}

/**
 * The `Set-Cookie` value of a session: sent back only on the session's own
 * path, so no other port of this host ever receives it.
 */
export function sessionCookie(s: UiSession): string {
  return `${cookieName(s)}=${s.id}; Path=/${s.scope}/; HttpOnly; SameSite=Strict`;
}

/** The `Set-Cookie` value that removes a session's cookie (logout). */
export function clearedCookie(s: UiSession): string {
  return `${cookieName(s)}=; Path=/${s.scope}/; Max-Age=0; HttpOnly; SameSite=Strict`;
}

/**
 * The headers every answer carries: a strict CSP (scripts, styles and images
 * only from this server; no inline script; no framing), no caching of pages
 * that hold the node's data, a referrer only to this same origin (the login URL
 * holds the token; `no-referrer` would make Chromium send `Origin: null` on
 * the forms' POSTs, which the Origin check refuses). No
 * `Access-Control-*` header is ever sent: other origins may not read answers.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** Every value the request's cookies give `name`. */
function cookiesOf(req: Request, name: string): string[] {
  const header = req.headers.get("cookie");
  if (header === null) return [];
  const values: string[] = [];
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/** True for 127.0.0.0/8, ::1 and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}
