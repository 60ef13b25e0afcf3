/**
 * What every MCP over HTTP request must show before it reaches a session (docs/mcp.md, "MCP over
 * HTTP"; docs/decisions/mcp_http.md). Pure but for the clock, so the server and the tests share it.
 *
 * - The address: `mcp.listen` is an IP address and a port. A name could resolve elsewhere, and
 *   `localhost` names two addresses, one of which another program may hold; an address that is
 *   not loopback needs `mcp.remote = true`; the wildcard addresses are refused, since no Host
 *   header names them.
 * - Host: exactly the address served (`localhost:PORT` too when it is loopback). A page of another
 *   site that resolves its name to 127.0.0.1 (DNS rebinding) sends its own name and gets 403.
 * - Origin: absent (a program), or the address served. A page of another local port sends its own
 *   origin and gets 403; no answer carries `Access-Control-*`, so no other origin reads one.
 * - A bearer token (src/mcp/http_tokens.ts), and at most `mcp.rate_limit` requests a minute for
 *   it: a token bucket of that size, refilled evenly.
 *
 * @module
 */

import { WatsError } from "../errors.ts";

/** Where the endpoint listens. */
export interface McpListen {
  hostname: string;
  port: number;
  /** `host:port` as Deno's net permission and the Host header name it (`[::1]:7449`). */
  hostPort: string;
  loopback: boolean;
}

/** True for 127.0.0.0/8 and ::1 (and `localhost`, which names them). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * Reads `mcp.listen`.
 *
 * @throws {WatsError} `mcp.http_listen` for a name, a wildcard, a bad port, or an address that is
 * not loopback while `remote` is false; the message says what to set instead.
 */
export function parseMcpListen(text: string, remote: boolean): McpListen {
  const m = text.match(/^(\[[0-9a-fA-F:.]+\]|[^:\[\]]+):(\d{1,5})$/);
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port >= 1 && port <= 65535)) {
    throw new WatsError(
      "mcp.http_listen",
      `mcp.listen is "${text}", which is not an address to listen on: use IP:PORT such as ` +
        "127.0.0.1:7449",
    );
  }
  const host = m[1]!;
  const hostname = host.replace(/^\[|\]$/g, "").toLowerCase();
  const ip = IPV4.test(hostname) ? hostname.split(".").every((x) => Number(x) <= 255) : (
    host.startsWith("[") && hostname.includes(":")
  );
  if (!ip) {
    throw new WatsError(
      "mcp.http_listen",
      `mcp.listen is "${text}": name an IP address, not a host name ` +
        `(a name may resolve to another address; use 127.0.0.1:${port})`,
    );
  }
  if (
    hostname === "0.0.0.0" || hostname === "::" || /^0+(:0+)*$/.test(hostname.replace(/:+/g, ":"))
  ) {
    throw new WatsError(
      "mcp.http_listen",
      `mcp.listen is "${text}", every address at once: name the one address clients reach ` +
        "(no Host header names a wildcard)",
    );
  }
  const loopback = isLoopbackHost(hostname);
  if (!loopback && !remote) {
    throw new WatsError(
      "mcp.http_listen",
      `mcp.listen is "${text}", which is not a loopback address: anyone who reaches it may try a ` +
        "token. Serve 127.0.0.1 (and put a TLS proxy in front: docs/mcp.md), or say so with " +
        "`wats config set mcp.remote true`",
    );
  }
  return { hostname, port, hostPort: `${host.toLowerCase()}:${port}`, loopback };
}

/** Why a request is refused before it reaches a session. */
export interface HttpRefusal {
  status: 401 | 403 | 404 | 405 | 429;
  message: string;
  headers?: Record<string, string>;
}

/** The Host and Origin values a request may carry for `listen`. */
export function allowedAuthorities(listen: McpListen): Set<string> {
  const hosts = new Set([listen.hostPort]);
  if (listen.loopback) hosts.add(`localhost:${listen.port}`);
  return hosts;
}

/**
 * Checks Host and Origin (DNS rebinding, other pages of this machine). Null when both are fine.
 */
export function checkAuthority(
  headers: Headers,
  hosts: ReadonlySet<string>,
): HttpRefusal | null {
  const host = headers.get("host")?.toLowerCase();
  if (host === undefined || !hosts.has(host)) {
    return {
      status: 403,
      message: "this endpoint answers only requests that name its own address in Host",
    };
  }
  const origin = headers.get("origin");
  if (origin !== null && ![...hosts].some((h) => origin.toLowerCase() === `http://${h}`)) {
    return { status: 403, message: "requests from web pages of other origins are refused" };
  }
  return null;
}

/** The token of `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(headers: Headers): string | undefined {
  const m = headers.get("authorization")?.match(/^Bearer ([\x21-\x7e]+)$/i);
  return m?.[1];
}

/** The refusal of a request without a live token (the same whatever was wrong with it). */
export const UNAUTHORIZED: HttpRefusal = {
  status: 401,
  message: "a valid token is needed: send Authorization: Bearer <token> with a token of " +
    "`wats mcp token create` (docs/mcp.md)",
  headers: { "www-authenticate": 'Bearer realm="wats"' },
};

/**
 * Per-token request budget: a bucket of `perMinute` requests, refilled evenly. A token used
 * within its rate never waits; a burst beyond the bucket gets 429 with the seconds until one
 * request is free again.
 */
export class RateLimiter {
  readonly #perMinute: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, { level: number; at: number }>();

  constructor(perMinute: number, now: () => number = Date.now) {
    this.#perMinute = perMinute;
    this.#now = now;
  }

  /** Takes one request from `key`'s bucket; a refusal when it is empty. */
  take(key: string): HttpRefusal | null {
    const now = this.#now();
    const b = this.#buckets.get(key) ?? { level: this.#perMinute, at: now };
    const level = Math.min(this.#perMinute, b.level + ((now - b.at) * this.#perMinute) / 60_000);
    if (level < 1) {
      this.#buckets.set(key, { level, at: now });
      const wait = Math.ceil(((1 - level) * 60_000) / this.#perMinute / 1000);
      return {
        status: 429,
        message:
          `more than ${this.#perMinute} requests a minute with this token (mcp.rate_limit): ` +
          `wait ${wait} s`,
        headers: { "retry-after": String(wait) },
      };
    }
    this.#buckets.set(key, { level: level - 1, at: now });
    return null;
  }

  /** Forgets a token's bucket (revoked). */
  forget(key: string): void {
    this.#buckets.delete(key);
  }
}
