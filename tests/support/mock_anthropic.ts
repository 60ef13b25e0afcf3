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

import {
  chooseReply,
  estimateTokens,
  halves,
  type MockRequest,
  type MockRule,
  type MockScript,
  type MockServer,
  serveMock,
  sseResponse,
} from "./mock_core.ts";

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
export type Rule = MockRule<MessagesRequest, Reply>;

/** The mock's script: rules tried in order, then the default reply (`text("ok")` when unset). */
export type Script = MockScript<MessagesRequest, Reply>;

/** One request the mock received. */
export type RecordedRequest = MockRequest<MessagesRequest>;

/** A running mock server. */
export interface MockAnthropic extends MockServer<MessagesRequest> {
  /** The `POST /v1/messages` requests only. */
  messages(): RecordedRequest[];
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
  return msgs.slice(msgs.findLastIndex((m) => m.role === "assistant") + 1);
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

/** The text of every tool result in `req`, oldest first: how far a scripted agent has got. */
export function toolResults(req: MessagesRequest): string[] {
  return (req.messages ?? []).flatMap((m) =>
    m.role === "user" && typeof m.content !== "string"
      ? m.content.filter((b) => b.type === "tool_result").map((b) => textOf(b.content))
      : []
  );
}

/** Holds when the turn being answered carries a tool result for the tool `name`. */
export function toolResultFor(name: string): (req: MessagesRequest) => boolean {
  return (req) => trailingToolResults(req).some((r) => r.name === name);
}

/**
 * Starts the mock on a random port of 127.0.0.1; its `url` goes in
 * `ANTHROPIC_BASE_URL`. Close it, or let `await using` do so.
 */
export function startMockAnthropic(script: Script = {}): MockAnthropic {
  const server = serveMock<MessagesRequest>(async (request, { rec, nextId, delay }) => {
    const u = new URL(request.url);
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
      return Response.json({ input_tokens: estimateTokens(body.messages) });
    }
    if (u.pathname !== "/v1/messages") {
      return errorResponse(404, "not_found_error", `the mock does not serve ${u.pathname}`);
    }
    const { reply, matched } = chooseReply(script, text("ok"), body);
    rec.matched = matched;
    if ("error" in reply) {
      return errorResponse(reply.error.status, reply.error.type, reply.error.message);
    }
    if (reply.delayMs !== undefined) await delay(reply.delayMs);
    const message = buildMessage(
      reply,
      body,
      `msg_mock_${nextId()}`,
      () => `toolu_mock_${nextId()}`,
    );
    if (body.stream) return sseResponse(sseEvents(message));
    return Response.json(message, { headers: { "request-id": `req_mock_${nextId()}` } });
  });
  return {
    ...server,
    messages: () =>
      server.requests.filter((r) =>
        r.method === "POST" && r.path.startsWith("/v1/messages") &&
        !r.path.startsWith("/v1/messages/")
      ),
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
      input_tokens: reply.usage?.input_tokens ?? estimateTokens(body.messages),
      output_tokens: reply.usage?.output_tokens ?? 12,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

function sseEvents(m: BuiltMessage): [string, unknown][] {
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
  return events;
}

function errorResponse(status: number, type: string, message: string): Response {
  return Response.json({ type: "error", error: { type, message } }, {
    status,
    headers: { "request-id": "req_mock_error" },
  });
}
