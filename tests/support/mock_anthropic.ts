/**
 * A scripted mock of the Anthropic Messages API on 127.0.0.1, for driving the
 * real Claude Code CLI in tests (`ANTHROPIC_BASE_URL=<url>`).
 *
 * The reply to each `POST /v1/messages` is chosen from the request's content by
 * the script's rules (first match wins), never from a request counter: the CLI
 * sends side requests and retries, and puts `role: "system"` entries between
 * turns. Streaming (`stream: true`, SSE) and plain JSON replies are both served.
 * Every request is recorded for assertions.
 *
 * ```ts
 * const mock = startMockAnthropic({
 *   rules: [
 *     { when: toolResultFor("mcp__echo__echo"), reply: text("done") },
 *     { when: hasTool("mcp__echo__echo"), reply: toolUse("mcp__echo__echo", { text: "hi" }) },
 *   ],
 * });
 * ```
 *
 * @module
 */

/** A model the CLI knows the price of, so `total_cost_usd` is non-zero against the mock. */
export const MOCK_MODEL = "claude-sonnet-4-5-20250929";

/** A content block of a request message (the fields tests look at). */
export interface RequestBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: string | RequestBlock[];
  is_error?: boolean;
}

/** One message of a Messages API request. */
export interface RequestMessage {
  role: string;
  content: string | RequestBlock[];
}

/** The body of a `POST /v1/messages` request (the fields tests look at). */
export interface MessagesRequest {
  model?: string;
  stream?: boolean;
  max_tokens?: number;
  system?: string | RequestBlock[];
  messages: RequestMessage[];
  tools?: { name: string; [key: string]: unknown }[];
  [key: string]: unknown;
}

/** A block the mock answers with. */
export type ReplyBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id?: string; name: string; input: Record<string, unknown> };

/** A scripted successful reply. */
export interface MessageReply {
  content: ReplyBlock[];
  /** Defaults to `tool_use` when a block is a tool use, else `end_turn`. */
  stopReason?: "end_turn" | "tool_use" | "max_tokens" | "stop_sequence";
  /** Token counts to report; defaults are small non-zero numbers. */
  usage?: { input_tokens?: number; output_tokens?: number };
  /** Wait this long before answering: a model that hangs (timeouts, cancellation). */
  delayMs?: number;
}

/** A scripted API error (HTTP status with an Anthropic error body). */
export interface ErrorReply {
  error: { status: number; type: string; message: string };
}

/** What the mock sends back for one request. */
export type Reply = MessageReply | ErrorReply;

/** One rule of a script: when `when` holds for a request, answer with `reply`. */
export interface Rule {
  when: (req: MessagesRequest) => boolean;
  reply: Reply | ((req: MessagesRequest) => Reply);
}

/** The mock's script: rules tried in order, then the default reply. */
export interface Script {
  rules?: Rule[];
  /** The reply when no rule matches; `text("ok")` when unset. */
  default?: Reply | ((req: MessagesRequest) => Reply);
}

/** One request the mock received. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages?beta=true`. */
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body, or undefined for requests without one. */
  body: MessagesRequest | undefined;
  /** Which reply was sent: the index of the matching rule, `"default"`, or `"none"`. */
  matched: number | "default" | "none";
}

/** A running mock server. */
export interface MockAnthropic {
  /** The base URL to put in `ANTHROPIC_BASE_URL`, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** Every request received so far, in arrival order (live array). */
  requests: RecordedRequest[];
  /** The `POST /v1/messages` requests only. */
  messages(): RecordedRequest[];
  /** Stops the server and waits for it to finish. */
  close(): Promise<void>;
}

/** A reply with one text block. */
export function text(t: string): MessageReply {
  return { content: [{ type: "text", text: t }] };
}

/** A reply with one tool use block (its id is generated). */
export function toolUse(name: string, input: Record<string, unknown>): MessageReply {
  return { content: [{ type: "tool_use", name, input }] };
}

/** An API error reply, e.g. `apiError(400, "invalid_request_error", "bad")`. */
export function apiError(status: number, type: string, message: string): ErrorReply {
  return { error: { status, type, message } };
}

/** All text in a message content: strings, text blocks and tool results, joined by newlines. */
export function textOf(content: string | RequestBlock[] | undefined): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((b) => {
    if (typeof b.text === "string") return b.text;
    if (b.type === "tool_result") return textOf(b.content);
    return "";
  }).filter((s) => s !== "").join("\n");
}

/** The messages after the last assistant message: the turn the model is asked to answer. */
export function trailingMessages(req: MessagesRequest): RequestMessage[] {
  const msgs = req.messages ?? [];
  let i = msgs.length - 1;
  while (i >= 0 && msgs[i].role !== "assistant") i--;
  return msgs.slice(i + 1);
}

/** Holds when the request offers a tool of this name. */
export function hasTool(name: string): (req: MessagesRequest) => boolean {
  return (req) => (req.tools ?? []).some((t) => t.name === name);
}

/** Holds when any user message's text contains `s`. */
export function promptContains(s: string): (req: MessagesRequest) => boolean {
  return (req) =>
    (req.messages ?? []).some((m) => m.role === "user" && textOf(m.content).includes(s));
}

/** Holds when the messages after the last assistant message contain `s`. */
export function lastUserContains(s: string): (req: MessagesRequest) => boolean {
  return (req) => trailingMessages(req).some((m) => textOf(m.content).includes(s));
}

/** The tool results in the turn being answered, each with the name of the tool it answers. */
export function trailingToolResults(
  req: MessagesRequest,
): { name: string | undefined; block: RequestBlock }[] {
  const names = new Map<string, string>();
  for (const m of req.messages ?? []) {
    if (m.role !== "assistant" || typeof m.content === "string") continue;
    for (const b of m.content) {
      if (b.type === "tool_use" && b.id && b.name) names.set(b.id, b.name);
    }
  }
  const out: { name: string | undefined; block: RequestBlock }[] = [];
  for (const m of trailingMessages(req)) {
    if (typeof m.content === "string") continue;
    for (const b of m.content) {
      if (b.type === "tool_result") out.push({ name: names.get(b.tool_use_id ?? ""), block: b });
    }
  }
  return out;
}

/** Holds when the turn being answered carries a tool result for the tool `name`. */
export function toolResultFor(name: string): (req: MessagesRequest) => boolean {
  return (req) => trailingToolResults(req).some((r) => r.name === name);
}

/** Starts the mock on a random port of 127.0.0.1. */
export function startMockAnthropic(script: Script = {}): MockAnthropic {
  const requests: RecordedRequest[] = [];
  let nextId = 1;
  const ids = () => (nextId++).toString().padStart(6, "0");

  const choose = (body: MessagesRequest): { reply: Reply; matched: number | "default" } => {
    const rules = script.rules ?? [];
    for (let i = 0; i < rules.length; i++) {
      if (rules[i].when(body)) {
        const r = rules[i].reply;
        return { reply: typeof r === "function" ? r(body) : r, matched: i };
      }
    }
    const d = script.default ?? text("ok");
    return { reply: typeof d === "function" ? d(body) : d, matched: "default" };
  };

  const closing = new AbortController();
  const handler = async (request: Request): Promise<Response> => {
    const u = new URL(request.url);
    const rec: RecordedRequest = {
      method: request.method,
      path: u.pathname + u.search,
      headers: Object.fromEntries(request.headers),
      body: undefined,
      matched: "none",
    };
    requests.push(rec);
    if (request.method === "HEAD" || (request.method === "GET" && u.pathname !== "/v1/messages")) {
      return new Response(request.method === "HEAD" ? null : "ok", { status: 200 });
    }
    if (request.method !== "POST") {
      return errorResponse(405, "invalid_request_error", "method not allowed");
    }
    let body: MessagesRequest;
    try {
      body = JSON.parse(await request.text());
    } catch {
      return errorResponse(400, "invalid_request_error", "body is not JSON");
    }
    rec.body = body;
    if (u.pathname === "/v1/messages/count_tokens") {
      return Response.json({ input_tokens: estimateTokens(body) });
    }
    if (u.pathname !== "/v1/messages") {
      return errorResponse(404, "not_found_error", `the mock does not serve ${u.pathname}`);
    }
    const { reply, matched } = choose(body);
    rec.matched = matched;
    if ("error" in reply) {
      return errorResponse(reply.error.status, reply.error.type, reply.error.message);
    }
    if (reply.delayMs !== undefined) {
      // A delayed reply ends early when the mock closes, so close() never waits it out.
      await new Promise<void>((r) => {
        const t = setTimeout(r, reply.delayMs);
        closing.signal.addEventListener("abort", () => {
          clearTimeout(t);
          r();
        }, { once: true });
      });
    }
    const message = buildMessage(reply, body, `msg_mock_${ids()}`, () => `toolu_mock_${ids()}`);
    if (body.stream) {
      return new Response(sseBody(message), {
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    }
    return Response.json(message, { headers: { "request-id": `req_mock_${ids()}` } });
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    requests,
    messages: () =>
      requests.filter((r) =>
        r.method === "POST" && r.path.startsWith("/v1/messages") &&
        !r.path.startsWith("/v1/messages/")
      ),
    close: async () => {
      closing.abort();
      await server.shutdown();
    },
  };
}

interface BuiltMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: ReplyBlock[];
  stop_reason: string;
  stop_sequence: null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
  };
}

function buildMessage(
  reply: MessageReply,
  body: MessagesRequest,
  id: string,
  toolId: () => string,
): BuiltMessage {
  const content: ReplyBlock[] = reply.content.map((b) =>
    b.type === "tool_use" ? { ...b, id: b.id ?? toolId() } : b
  );
  const stop = reply.stopReason ??
    (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
  return {
    id,
    type: "message",
    role: "assistant",
    model: body.model ?? MOCK_MODEL,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: {
      input_tokens: reply.usage?.input_tokens ?? estimateTokens(body),
      output_tokens: reply.usage?.output_tokens ?? 12,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

/** A rough token count (4 characters a token) so usage grows with the conversation. */
function estimateTokens(body: MessagesRequest): number {
  return Math.max(1, Math.ceil(JSON.stringify(body.messages ?? []).length / 4));
}

/** Splits a string in two halves (so clients must join deltas). */
function halves(s: string): string[] {
  if (s.length < 2) return [s];
  const mid = Math.floor(s.length / 2);
  return [s.slice(0, mid), s.slice(mid)];
}

function sseBody(m: BuiltMessage): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  const events: [string, unknown][] = [];
  events.push(["message_start", {
    type: "message_start",
    message: {
      ...m,
      content: [],
      stop_reason: null,
      usage: { ...m.usage, output_tokens: 1 },
    },
  }]);
  m.content.forEach((b, index) => {
    if (b.type === "text") {
      events.push(["content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "text", text: "" },
      }]);
      for (const part of halves(b.text)) {
        events.push(["content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "text_delta", text: part },
        }]);
      }
    } else {
      events.push(["content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: b.id, name: b.name, input: {} },
      }]);
      for (const part of halves(JSON.stringify(b.input))) {
        events.push(["content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: part },
        }]);
      }
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push(["message_delta", {
    type: "message_delta",
    delta: { stop_reason: m.stop_reason, stop_sequence: null },
    usage: { output_tokens: m.usage.output_tokens },
  }]);
  events.push(["message_stop", { type: "message_stop" }]);
  const chunks = events.map(([name, data]) =>
    enc.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
  );
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
}

function errorResponse(status: number, type: string, message: string): Response {
  return Response.json({ type: "error", error: { type, message } }, {
    status,
    headers: { "request-id": "req_mock_error" },
  });
}
