/**
 * The HTTP/1.1 server of MCP over HTTP: src/io/http1_server.ts (the dashboard's reader,
 * docs/decisions/ui.md) with the node's limits and keep-alive (docs/decisions/mcp_http.md: an MCP
 * host sends many requests, and a new TCP connection each was most of the cost). Answers are JSON
 * with a length, except the event stream of a request that asked for progress, written as it
 * comes (its connection closes after it).
 *
 * Requires `--allow-net` for the address served.
 *
 * @module
 */

import { type Http1Limits, serveHttp1 } from "../io/http1_server.ts";

/** The limits of {@linkcode serveMcpWire}. */
export interface McpWireLimits extends Http1Limits {
  /** Time for a connection to send its whole request head (10 s). */
  headerMs: number;
  /** Time for the body once the head is in, and for the answer to be taken (30 s). */
  ioMs: number;
  /** The largest request body (1 MiB: a post is at most 32 KiB of text). */
  maxBody: number;
  /** Open connections at most (256). */
  maxConnections: number;
  /**
   * How long a kept connection may wait for the first byte of its next request (120 s: longer
   * than clients keep an idle connection, so a client never sends into one being closed; they
   * are told half of it).
   */
  idleMs: number;
}

/** The limits the daemon serves with. */
export const MCP_WIRE_LIMITS: Readonly<McpWireLimits> = {
  headerMs: 10_000,
  ioMs: 30_000,
  maxBody: 1024 * 1024,
  maxConnections: 256,
  idleMs: 120_000,
};

/** Where and how {@linkcode serveMcpWire} listens. */
export interface McpWireOptions {
  hostname: string;
  port: number;
  limits?: Partial<McpWireLimits>;
  /** Told about a handler that threw (its answer is a 500). */
  onError: (err: unknown) => void;
}

/** A running server. */
export interface McpWire {
  /** The address actually bound. */
  addr: Deno.NetAddr;
  /** Stops listening, closes every connection, waits for the handlers. */
  shutdown(): Promise<void>;
}

/** Serves `handler` on one address until `shutdown`. */
export function serveMcpWire(
  opts: McpWireOptions,
  handler: (req: Request) => Promise<Response>,
): McpWire {
  const { idleMs, ...limits } = { ...MCP_WIRE_LIMITS, ...opts.limits };
  return serveHttp1({
    hostname: opts.hostname,
    port: opts.port,
    limits,
    keepAlive: { idleMs },
    eventStreams: true,
    onError: opts.onError,
    failure: "the node could not answer this request; try again",
  }, handler);
}
