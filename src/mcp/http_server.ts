/**
 * MCP over HTTP (docs/mcp.md, "MCP over HTTP"; docs/decisions/mcp_http.md): the Streamable HTTP
 * transport on `mcp.listen`, at `/mcp`, with the MCP SDK's own server transport
 * (`WebStandardStreamableHTTPServerTransport`) behind a gate of this node's:
 *
 * 1. Host and Origin (src/mcp/http_gate.ts), before anything of the request is read;
 * 2. a bearer token of `wats mcp token create` (src/mcp/http_tokens.ts), at every request, so a
 *    revoked token stops at once and a session belongs to the token that opened it;
 * 3. the token's rate (`mcp.rate_limit`).
 *
 * A session is what `mcp.sock` gives a hello naming the token's profile with no run token: the
 * same tools, instructions and fences, never a runner session's. Answers are JSON, except to a
 * request that carries a `_meta.progressToken` (a coding agent's call, which can run for minutes):
 * that one gets an event stream, its progress notifications and then its answer. The node sends
 * no request or notification of its own, so GET, the server-to-client stream, is 405. A
 * session with no request for {@linkcode SESSION_IDLE_MS} ends; a token holds at most
 * {@linkcode SESSIONS_PER_TOKEN}, and opening one more ends its least recently used. Sessions and
 * served requests are reported to the node's idle watch, so a node `wats mcp` started stays up
 * while an HTTP client uses it (src/node/idle.ts).
 *
 * Requires `net` on the listen address and read on the token file.
 *
 * @module
 */

import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { errorMessage } from "../error_message.ts";
import { WatsError } from "../errors.ts";
import {
  allowedAuthorities,
  bearerToken,
  checkAuthority,
  type HttpRefusal,
  type McpListen,
  parseMcpListen,
  RateLimiter,
  UNAUTHORIZED,
} from "./http_gate.ts";
import { TokenBook, type TokenGrant } from "./http_tokens.ts";
import { type McpWireLimits, serveMcpWire } from "./http_wire.ts";
import { createMcpServer, type McpLog } from "./server.ts";
import type { NodeService } from "./service.ts";
import { MCP_HTTP_PATH } from "../contracts/session.ts";

/** A session with no request for this long ends (30 minutes, as a dashboard session). */
export const SESSION_IDLE_MS = 30 * 60_000;

/** Open sessions one token may hold; one more ends its least recently used. */
export const SESSIONS_PER_TOKEN = 64;

/** Options of {@linkcode serveMcpHttp}. */
export interface ServeMcpHttpOptions {
  listen: McpListen;
  service: NodeService;
  tokens: TokenBook;
  /** Requests a minute per token (`mcp.rate_limit`). */
  ratePerMinute: number;
  log?: McpLog;
  /** Milliseconds now (default: the system clock). */
  now?: () => number;
  sessionIdleMs?: number;
  sessionsPerToken?: number;
  limits?: Partial<McpWireLimits>;
  /** Told how many sessions are open after each opens or ends (the node's idle watch). */
  onSessions?: (open: number) => void;
  /** Told of each request of a live token that is served (the node's idle watch). */
  onActivity?: () => void;
}

/** A running endpoint. */
export interface McpHttpServer {
  /** `http://host:port/mcp`, as clients name it. */
  url: string;
  /** How many sessions are open. */
  sessions(): number;
  /** Stops listening and ends every session. */
  close(): Promise<void>;
}

interface Session {
  id: string;
  tokenId: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  seen: number;
}

/**
 * Listens on `opts.listen` and serves MCP sessions over HTTP.
 *
 * @throws {WatsError} `mcp.http_port_busy` when the address is taken.
 */
export function serveMcpHttp(opts: ServeMcpHttpOptions): McpHttpServer {
  const log: McpLog = opts.log ?? (() => {});
  const now = opts.now ?? Date.now;
  const idleMs = opts.sessionIdleMs ?? SESSION_IDLE_MS;
  const perToken = opts.sessionsPerToken ?? SESSIONS_PER_TOKEN;
  const hosts = allowedAuthorities(opts.listen);
  const rate = new RateLimiter(opts.ratePerMinute, now);
  const sessions = new Map<string, Session>();
  let sweepTimer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const drop = (id: string) => {
    const s = sessions.get(id);
    if (s === undefined) return;
    sessions.delete(id);
    opts.onSessions?.(sessions.size);
    log("debug", "mcp http session closed", { token: s.tokenId });
    void s.server.close().catch(() => {});
  };

  // One timer while sessions are open: it ends idle ones and those of revoked tokens.
  const sweep = async () => {
    sweepTimer = undefined;
    const t = now();
    for (const s of [...sessions.values()]) {
      // A token file that cannot be read counts as revoking every token (fail closed).
      const live = await opts.tokens.live(s.tokenId).catch(() => false);
      if (t - s.seen >= idleMs || !live) {
        await s.transport.close().catch(() => {});
        drop(s.id);
      }
    }
    arm();
  };
  const arm = () => {
    if (closed || sweepTimer !== undefined || sessions.size === 0) return;
    sweepTimer = setTimeout(
      () =>
        void sweep().catch((err) => log("warn", "mcp http sweep failed", { error: String(err) })),
      Math.min(idleMs, 60_000),
    );
  };

  const open = async (grant: TokenGrant, body: unknown, req: Request): Promise<Response> => {
    let identity;
    try {
      identity = opts.service.authenticate({ wats: "hello", profile: grant.profile });
    } catch (err) {
      return refusal({
        status: 403,
        message: err instanceof WatsError ? err.message : "this token's profile cannot be used",
      });
    }
    // No token went into the hello: this can only be an interactive session.
    if (identity.runner) throw new Error("an HTTP session must never be a runner session");
    const mine = [...sessions.values()].filter((s) => s.tokenId === grant.id);
    if (mine.length >= perToken) {
      const oldest = mine.reduce((a, b) => (a.seen <= b.seen ? a : b));
      await oldest.transport.close().catch(() => {});
      drop(oldest.id);
    }
    const server = createMcpServer(opts.service, identity, { log });
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomId(),
        // Event streams from the SDK; `answerOf` reads each whole into JSON unless the request
        // asked for progress (the SDK's JSON mode drops a request's notifications).
        enableJsonResponse: false,
        onsessioninitialized: (id: string) => {
          sessions.set(id, { id, tokenId: grant.id, transport, server, seen: now() });
          opts.onSessions?.(sessions.size);
          log("info", "mcp http session opened", { profile: identity.profile, token: grant.id });
          arm();
        },
        onsessionclosed: (id: string) => drop(id),
      });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) drop(transport.sessionId);
    };
    server.server.onerror = (err: Error) =>
      log("debug", "mcp http session error", { error: err.message });
    await server.connect(transport);
    const res = await answerOf(body, await transport.handleRequest(req, { parsedBody: body }));
    // An initialize the transport refused opened nothing: its server goes too.
    if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) {
      await server.close().catch(() => {});
    }
    return res;
  };

  const handle = async (req: Request): Promise<Response> => {
    const wrongPlace = checkAuthority(req.headers, hosts);
    if (wrongPlace) return refusal(wrongPlace);
    const path = new URL(req.url).pathname;
    if (path !== MCP_HTTP_PATH) {
      return refusal({ status: 404, message: `MCP is served at ${MCP_HTTP_PATH}` });
    }
    const token = bearerToken(req.headers);
    const grant = token === undefined ? undefined : await opts.tokens.lookup(token);
    if (grant === undefined) {
      log("debug", "mcp http request refused", { status: 401 });
      return refusal(UNAUTHORIZED);
    }
    const limited = rate.take(grant.id);
    if (limited) return refusal(limited);
    // Only a live token's requests within its rate: a stranger cannot keep the node up.
    opts.onActivity?.();
    if (req.method !== "POST" && req.method !== "DELETE") {
      // No stream from the node: it sends no request or notification of its own.
      return refusal({
        status: 405,
        message: "this endpoint takes POST (and DELETE to end a session)",
        headers: { allow: "POST, DELETE" },
      });
    }
    const sid = req.headers.get("mcp-session-id");
    let body: unknown;
    if (req.method === "POST") {
      try {
        body = await req.json();
      } catch {
        return rpcError(400, -32700, "Parse error: the body is not JSON");
      }
    }
    if (sid === null) {
      if (!isInitialize(body)) {
        return rpcError(400, -32000, "Bad Request: no Mcp-Session-Id: send initialize first");
      }
      return await open(grant, body, req);
    }
    const session = sessions.get(sid);
    // Another token's session is as unknown as one that never was.
    if (session === undefined || session.tokenId !== grant.id) {
      return rpcError(404, -32001, "Session not found: initialize a new session");
    }
    session.seen = now();
    return await answerOf(
      body,
      await session.transport.handleRequest(
        req,
        req.method === "POST" ? { parsedBody: body } : {},
      ),
    );
  };

  let wire;
  try {
    wire = serveMcpWire(
      {
        hostname: opts.listen.hostname,
        port: opts.listen.port,
        ...(opts.limits ? { limits: opts.limits } : {}),
        onError: (err) => log("error", "mcp http request failed", { error: errorMessage(err) }),
      },
      handle,
    );
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) {
      throw new WatsError(
        "mcp.http_port_busy",
        `mcp.listen ${opts.listen.hostPort} is in use (another node?): stop it, or set ` +
          "mcp.listen to another port",
        { cause: err },
      );
    }
    throw err;
  }
  const bound = wire.addr;
  const hostPort = `${
    bound.hostname.includes(":") ? `[${bound.hostname}]` : bound.hostname
  }:${bound.port}`;
  // Port 0 (tests) binds another port: the gate must name the one bound.
  if (opts.listen.port === 0) {
    for (const h of allowedAuthorities({ ...opts.listen, port: bound.port, hostPort })) {
      hosts.add(h);
    }
  }

  return {
    url: `http://${hostPort}${MCP_HTTP_PATH}`,
    sessions: () => sessions.size,
    async close() {
      closed = true;
      if (sweepTimer !== undefined) clearTimeout(sweepTimer);
      await wire.shutdown();
      for (const s of [...sessions.values()]) {
        await s.transport.close().catch(() => {});
        drop(s.id);
      }
    },
  };
}

/** True when a request of the body asks for progress notifications (`_meta.progressToken`). */
function wantsProgress(body: unknown): boolean {
  return (Array.isArray(body) ? body : [body]).some((m) =>
    (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta
      ?.progressToken !== undefined
  );
}

/**
 * The answer to send: the SDK's event stream as it is when the request asked for progress,
 * else read whole (the SDK ends it after the last answer) into the JSON it carries, with a
 * length, so the connection stays open for the next request.
 */
async function answerOf(body: unknown, res: Response): Promise<Response> {
  const type = res.headers.get("content-type") ?? "";
  if (!type.startsWith("text/event-stream") || wantsProgress(body)) return res;
  // Each event's data is one JSON message as the SDK wrote it: passed on as text, not parsed
  // and written again (a feed's answer is large).
  const messages = (await res.text()).split(/\r?\n\r?\n/).map((event) =>
    event.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart())
      .join("\n")
  ).filter((data) => data !== "");
  if (messages.length === 0) {
    return rpcError(503, -32603, "the session ended before its answer: send the request again");
  }
  const headers = new Headers({ "content-type": "application/json" });
  const sid = res.headers.get("mcp-session-id");
  if (sid !== null) headers.set("mcp-session-id", sid);
  return new Response(messages.length === 1 ? messages[0] : `[${messages.join(",")}]`, {
    status: res.status,
    headers,
  });
}

function isInitialize(body: unknown): boolean {
  return typeof body === "object" && body !== null && !Array.isArray(body) &&
    (body as { method?: unknown }).method === "initialize";
}

/** 32 random bytes, hex: a session id nobody guesses. */
function randomId(): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(32)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

function rpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}

function refusal(r: HttpRefusal): Response {
  return Response.json(
    { jsonrpc: "2.0", error: { code: -32000, message: r.message }, id: null },
    { status: r.status, ...(r.headers ? { headers: r.headers } : {}) },
  );
}

/** The settings {@linkcode startMcpHttp} reads. */
export interface McpHttpSettings {
  "mcp.listen": string;
  "mcp.remote": boolean;
  "mcp.rate_limit": number;
}

/**
 * The daemon's start-up hook: serves MCP over HTTP when `mcp.listen` names an address; undefined
 * when it is empty (the default).
 *
 * @throws {WatsError} `mcp.http_listen` for an address it may not serve, `mcp.http_port_busy`.
 */
export function startMcpHttp(o: {
  settings: McpHttpSettings;
  tokensFile: string;
  service: NodeService;
  log: McpLog;
  /** The node's idle watch, when `wats mcp` started it: HTTP sessions keep it up too. */
  idle?: { sessions(open: number, way: "http"): void; activity(): void };
}): McpHttpServer | undefined {
  const text = o.settings["mcp.listen"];
  if (text === "") return undefined;
  const listen = parseMcpListen(text, o.settings["mcp.remote"]);
  const server = serveMcpHttp({
    listen,
    service: o.service,
    tokens: new TokenBook(o.tokensFile, (m) => o.log("warn", m)),
    ratePerMinute: o.settings["mcp.rate_limit"],
    log: o.log,
    ...(o.idle
      ? {
        onSessions: (open: number) => o.idle?.sessions(open, "http"),
        onActivity: () => o.idle?.activity(),
      }
      : {}),
  });
  o.log("info", `MCP over HTTP at ${server.url}`);
  if (!listen.loopback) {
    o.log(
      "warn",
      `MCP over HTTP listens on ${listen.hostPort}, which is not loopback ` +
        "(mcp.remote): put TLS in front of it (docs/mcp.md)",
    );
  }
  return server;
}
