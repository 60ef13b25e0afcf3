/**
 * The dashboard's HTTP/1.1 server: src/io/http1_server.ts with the dashboard's limits, one
 * request per connection (docs/decisions/ui.md: pages are local and light, so keep-alive would buy
 * nothing worth an idle timer) and its live pages' event streams. A handler that throws gets a 500
 * and one `error:` line, through the writer the caller gives, naming the kind of error only (a URL
 * may hold the login token).
 *
 * Requires `--allow-net` for the address served.
 *
 * @module
 */

import { type Http1Limits, type Http1Server, serveHttp1 } from "../io/http1_server.ts";

/** The limits of {@linkcode serveUi}; each has a default. */
export interface UiHttpLimits extends Http1Limits {
  /** Time for a connection to send its whole request head (10 s). */
  headerMs: number;
  /** Time for the body once the head is in, and for the answer to be taken (30 s). */
  ioMs: number;
  /** The largest request body (1 MiB: a form with an edited draft). */
  maxBody: number;
  /** Open connections at most (64). */
  maxConnections: number;
}

/** The limits `wats ui` serves with. */
export const UI_HTTP_LIMITS: Readonly<UiHttpLimits> = {
  headerMs: 10_000,
  ioMs: 30_000,
  maxBody: 1024 * 1024,
  maxConnections: 64,
};

/** Where and how {@linkcode serveUi} listens. */
export interface UiHttpOptions {
  hostname: string;
  port: number;
  signal?: AbortSignal;
  limits?: Partial<UiHttpLimits>;
  /** Where the one `error:` line about a handler that threw goes (`wats ui`: its stderr). */
  report: (line: string) => void;
}

/** A running {@linkcode serveUi}. */
export type UiHttpServer = Http1Server;

/** Serves `handler` on one address until `signal` aborts or `shutdown` is called. */
export function serveUi(
  opts: UiHttpOptions,
  handler: (req: Request) => Promise<Response>,
): UiHttpServer {
  return serveHttp1({
    hostname: opts.hostname,
    port: opts.port,
    ...(opts.signal ? { signal: opts.signal } : {}),
    limits: { ...UI_HTTP_LIMITS, ...opts.limits },
    eventStreams: true,
    onError: (err) =>
      opts.report(
        `error: the dashboard could not answer a request (${errorName(err)}): reload the page; ` +
          "if it keeps failing, restart `wats ui`",
      ),
    failure: "the dashboard could not answer this request",
  }, handler);
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}
