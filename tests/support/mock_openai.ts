/**
 * A scripted mock of the OpenAI Responses API on 127.0.0.1, for driving the
 * real Codex CLI in tests (a custom model provider whose `base_url` is
 * `<url>/v1` and `wire_api = "responses"`; see {@linkcode codexProviderArgs}).
 *
 * Codex only calls `POST /v1/responses`, streaming (SSE). The reply to each is
 * chosen from the request's content by the script's rules (first match wins),
 * never from a request counter: retries and side requests shift counters.
 * Every request is recorded for assertions.
 *
 * What the real CLI (0.171) sends and accepts, as logged from real requests:
 * MCP tools arrive in `tools` as a namespace, `{type: "namespace", name:
 * "mcp__wats", tools: [{type: "function", name: "answer", …}]}`, and the model
 * calls one with `{type: "function_call", namespace: "mcp__wats", name:
 * "answer", arguments: "<json>", call_id}`. The next request carries that call
 * back in `input` followed by `{type: "function_call_output", call_id,
 * output}`. Model slugs Codex knows may move tools elsewhere (behind
 * `tool_search`, or inside a JavaScript `exec` tool listed in an
 * `additional_tools` input item, with the header
 * `x-openai-internal-codex-responses-lite`); an unknown slug (e.g.
 * {@linkcode MOCK_MODEL}), and every slug under wats's locked model catalog
 * (docs/codex.md), gets the plain namespaced functions, which is what these
 * helpers read. Request headers are recorded too, for the code-mode header.
 *
 * ```ts
 * const mock = startMockOpenAI({
 *   rules: [
 *     { when: callOutputFor("mcp__wats", "post"), reply: text("done") },
 *     { when: hasTool("mcp__wats", "post"), reply: functionCall("mcp__wats", "post", { kind: "answer",…}) },
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

/**
 * A model slug Codex does not know: it then offers MCP tools as plain
 * namespaced functions (known slugs may defer them behind `tool_search` or a
 * JavaScript `exec` tool), and says so once in a warning item.
 */
export const MOCK_MODEL = "wats-mock-model";

/** A content part of a request item (the fields tests look at). */
export interface ContentPart {
  type: string;
  text?: string;
}

/** One item of a request's `input` (the fields tests look at). */
export interface InputItem {
  type?: string;
  role?: string;
  content?: string | ContentPart[];
  /** `function_call`: the tool name, its namespace, its JSON arguments and call id. */
  name?: string;
  namespace?: string;
  arguments?: string;
  call_id?: string;
  /** `function_call_output`: what the tool returned. */
  output?: string | ContentPart[];
  /** `additional_tools`: more tools, offered inside the input. */
  tools?: ToolSpec[];
  [key: string]: unknown;
}

/** A tool the request offers: a function, or a namespace of functions. */
export interface ToolSpec {
  type: string;
  name?: string;
  tools?: ToolSpec[];
  [key: string]: unknown;
}

/** The body of a `POST /v1/responses` request (the fields tests look at). */
export interface ResponsesRequest {
  model?: string;
  stream?: boolean;
  instructions?: string;
  input: InputItem[];
  tools?: ToolSpec[];
  [key: string]: unknown;
}

/** An item the mock answers with. */
export type ReplyItem =
  | { type: "message"; text: string }
  | {
    type: "function_call";
    /** The tool's namespace (`mcp__<server>` for an MCP tool); unset: a top-level function. */
    namespace?: string;
    name: string;
    arguments: Record<string, unknown>;
    /** Generated when unset. */
    callId?: string;
  };

/** A scripted successful response. */
export interface ResponseReply {
  output: ReplyItem[];
  /** Token counts to report; defaults are small non-zero numbers. */
  usage?: { input_tokens?: number; output_tokens?: number };
  /** Wait this long before answering: a model that hangs (timeouts, cancellation). */
  delayMs?: number;
}

/** A scripted API error: an HTTP status with an OpenAI error body. */
export interface ErrorReply {
  error: { status: number; type: string; message: string };
}

/** A stream that starts, then ends with `response.failed` (an error after HTTP 200). */
export interface FailedReply {
  failed: { code: string; message: string };
}

/** What the mock sends back for one request. */
export type Reply = ResponseReply | ErrorReply | FailedReply;

/** One rule of a script: when `when` holds for a request, answer with `reply`. */
export type Rule = MockRule<ResponsesRequest, Reply>;

/** The mock's script: rules tried in order, then the default reply (`text("ok")` when unset). */
export type Script = MockScript<ResponsesRequest, Reply>;

/** One request the mock received. */
export type RecordedRequest = MockRequest<ResponsesRequest>;

/** A running mock server. */
export interface MockOpenAI extends MockServer<ResponsesRequest> {
  /** The `POST /v1/responses` requests only. */
  responses(): RecordedRequest[];
}

/** A reply with one assistant message. */
export function text(t: string): ResponseReply {
  return { output: [{ type: "message", text: t }] };
}

/** A reply with one function call; `namespace` is `mcp__<server>` for an MCP tool. */
export function functionCall(
  namespace: string | undefined,
  name: string,
  args: Record<string, unknown>,
): ResponseReply {
  return {
    output: [{
      type: "function_call",
      ...(namespace !== undefined ? { namespace } : {}),
      name,
      arguments: args,
    }],
  };
}

/** An API error reply, e.g. `apiError(400, "invalid_request_error", "bad")`. */
export function apiError(status: number, type: string, message: string): ErrorReply {
  return { error: { status, type, message } };
}

/** A reply whose stream ends with `response.failed` carrying `code` and `message`. */
export function failedResponse(code: string, message: string): FailedReply {
  return { failed: { code, message } };
}

/** All text of a content value: strings and text parts, joined by newlines. */
export function textOf(content: string | ContentPart[] | undefined): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((p) => typeof p.text === "string" ? p.text : "").filter((s) => s !== "")
    .join("\n");
}

/**
 * Every tool the request offers, as `namespace/name` (`mcp__wats/answer`) or a
 * bare name, from `tools` and from `additional_tools` input items.
 */
export function toolNames(req: ResponsesRequest): string[] {
  const walk = (tools: ToolSpec[] | undefined, prefix: string): string[] =>
    (tools ?? []).flatMap((t) =>
      t.type === "namespace"
        ? walk(t.tools, `${t.name ?? ""}/`)
        : [`${prefix}${String(t.name ?? t.type)}`]
    );
  const extra = (req.input ?? []).filter((i) => i.type === "additional_tools")
    .flatMap((i) => walk(i.tools, ""));
  return [...walk(req.tools, ""), ...extra];
}

/** Holds when the request offers `namespace/name` (or a bare `name` when `namespace` is undefined). */
export function hasTool(
  namespace: string | undefined,
  name: string,
): (req: ResponsesRequest) => boolean {
  const want = namespace === undefined ? name : `${namespace}/${name}`;
  return (req) => toolNames(req).includes(want);
}

/** The text of the user messages of the request (the prompt, environment context included). */
export function userText(req: ResponsesRequest): string {
  return (req.input ?? []).filter((i) => i.type === "message" && i.role === "user")
    .map((i) => textOf(i.content)).join("\n");
}

/** Holds when any user message's text contains `s`. */
export function promptContains(s: string): (req: ResponsesRequest) => boolean {
  return (req) => userText(req).includes(s);
}

/** The function calls of the request's history, by call id. */
export function functionCalls(req: ResponsesRequest): Map<string, InputItem> {
  const calls = new Map<string, InputItem>();
  for (const i of req.input ?? []) {
    if (i.type === "function_call" && typeof i.call_id === "string") calls.set(i.call_id, i);
  }
  return calls;
}

/**
 * The tool outputs after the last assistant message: the results the model is
 * asked to go on from, each with the call it answers.
 */
export function trailingCallOutputs(
  req: ResponsesRequest,
): { call: InputItem | undefined; output: InputItem }[] {
  const input = req.input ?? [];
  const i = input.findLastIndex((x) => x.type === "message" && x.role === "assistant");
  const calls = functionCalls(req);
  return input.slice(i + 1).filter((x) => x.type === "function_call_output").map((output) => ({
    call: calls.get(String(output.call_id)),
    output,
  }));
}

/** Holds when the turn being answered carries the output of a call to `namespace/name`. */
export function callOutputFor(
  namespace: string | undefined,
  name: string,
): (req: ResponsesRequest) => boolean {
  return (req) =>
    trailingCallOutputs(req).some((o) => o.call?.name === name && o.call.namespace === namespace);
}

/**
 * Starts the mock on a random port of 127.0.0.1; the provider's `base_url` is
 * `<url>/v1`. Close it, or let `await using` do so.
 */
export function startMockOpenAI(script: Script = {}): MockOpenAI {
  const server = serveMock<ResponsesRequest>(async (request, { rec, nextId, delay }) => {
    const u = new URL(request.url);
    if (request.method === "GET" && u.pathname === "/v1/models") {
      return Response.json({ object: "list", data: [] });
    }
    if (request.method !== "POST") {
      return errorResponse(405, "invalid_request_error", "method not allowed");
    }
    if (u.pathname !== "/v1/responses") {
      return errorResponse(404, "not_found_error", `the mock does not serve ${u.pathname}`);
    }
    let body: ResponsesRequest;
    try {
      body = JSON.parse(await request.text());
    } catch {
      return errorResponse(400, "invalid_request_error", "body is not JSON");
    }
    rec.body = body;
    const { reply, matched } = chooseReply(script, text("ok"), body);
    rec.matched = matched;
    if ("error" in reply) {
      return errorResponse(reply.error.status, reply.error.type, reply.error.message);
    }
    const responseId = `resp_mock_${nextId()}`;
    if ("failed" in reply) return sse(failedEvents(responseId, body, reply));
    if (reply.delayMs !== undefined) await delay(reply.delayMs);
    const built = buildOutput(reply, nextId);
    const usage = usageOf(reply, body);
    if (body.stream === false) {
      return Response.json({
        id: responseId,
        object: "response",
        status: "completed",
        model: body.model ?? MOCK_MODEL,
        output: built,
        usage,
      });
    }
    return sse(streamEvents(responseId, body, built, usage));
  });
  return {
    ...server,
    responses: () =>
      server.requests.filter((r) => r.method === "POST" && r.path === "/v1/responses"),
  };
}

/**
 * The `-c` arguments that point Codex at `mock` as its model provider (id
 * `wats_mock`), with retries off so a failure shows at once, and
 * {@linkcode MOCK_MODEL} as the model.
 */
export function codexProviderArgs(mock: Pick<MockOpenAI, "url">): string[] {
  return [
    "-m",
    MOCK_MODEL,
    "-c",
    'model_provider="wats_mock"',
    "-c",
    'model_providers.wats_mock.name="wats mock"',
    "-c",
    `model_providers.wats_mock.base_url="${mock.url}/v1"`,
    "-c",
    'model_providers.wats_mock.wire_api="responses"',
    "-c",
    "model_providers.wats_mock.request_max_retries=0",
    "-c",
    "model_providers.wats_mock.stream_max_retries=0",
  ];
}

type Json = Record<string, unknown>;

function buildOutput(reply: ResponseReply, ids: () => string): Json[] {
  return reply.output.map((item) => {
    if (item.type === "message") {
      return {
        type: "message",
        id: `msg_mock_${ids()}`,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: item.text, annotations: [] }],
      };
    }
    return {
      type: "function_call",
      id: `fc_mock_${ids()}`,
      call_id: item.callId ?? `call_mock_${ids()}`,
      ...(item.namespace !== undefined ? { namespace: item.namespace } : {}),
      name: item.name,
      arguments: JSON.stringify(item.arguments),
      status: "completed",
    };
  });
}

function usageOf(reply: ResponseReply, body: ResponsesRequest): Json {
  const input = reply.usage?.input_tokens ?? estimateTokens(body.input);
  const output = reply.usage?.output_tokens ?? 12;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

function responseShell(id: string, body: ResponsesRequest, status: string): Json {
  return {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    model: body.model ?? MOCK_MODEL,
    output: [],
  };
}

function streamEvents(id: string, body: ResponsesRequest, output: Json[], usage: Json): Json[] {
  const events: Json[] = [
    { type: "response.created", response: responseShell(id, body, "in_progress") },
  ];
  output.forEach((item, index) => {
    if (item.type === "message") {
      const full = (item.content as { text: string }[])[0]!.text;
      events.push({
        type: "response.output_item.added",
        output_index: index,
        item: { ...item, status: "in_progress", content: [] },
      });
      for (const part of halves(full)) {
        events.push({
          type: "response.output_text.delta",
          item_id: item.id,
          output_index: index,
          content_index: 0,
          delta: part,
        });
      }
    } else {
      events.push({
        type: "response.output_item.added",
        output_index: index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
    }
    events.push({ type: "response.output_item.done", output_index: index, item });
  });
  events.push({
    type: "response.completed",
    response: { ...responseShell(id, body, "completed"), output, usage },
  });
  return events;
}

function failedEvents(id: string, body: ResponsesRequest, reply: FailedReply): Json[] {
  return [
    { type: "response.created", response: responseShell(id, body, "in_progress") },
    {
      type: "response.failed",
      response: { ...responseShell(id, body, "failed"), error: reply.failed },
    },
  ];
}

function sse(events: Json[]): Response {
  return sseResponse(events.map((e) => [String(e.type), e]));
}

function errorResponse(status: number, type: string, message: string): Response {
  return Response.json({ error: { message, type, param: null, code: type } }, {
    status,
    headers: { "x-request-id": "req_mock_error" },
  });
}
