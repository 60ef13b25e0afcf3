/**
 * The mock Responses API on its own (plain fetch, no Codex): replies chosen by
 * content, the SSE stream's events, errors, and the request helpers the tests
 * use on request bodies shaped like the real CLI's.
 */

import assert from "node:assert/strict";
import {
  apiError,
  callOutputFor,
  codexProviderArgs,
  failedResponse,
  functionCall,
  hasTool,
  MOCK_MODEL,
  promptContains,
  type ResponsesRequest,
  startMockOpenAI,
  text,
  toolNames,
  trailingCallOutputs,
} from "./mock_openai.ts";

/** A request shaped like Codex 0.171's: developer messages, the prompt, namespaced MCP tools. */
function request(extraInput: ResponsesRequest["input"] = []): ResponsesRequest {
  return {
    model: MOCK_MODEL,
    stream: true,
    input: [
      { type: "message", role: "developer", content: [{ type: "input_text", text: "rules" }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Wake: ask 42\n" }] },
      ...extraInput,
    ],
    tools: [
      { type: "function", name: "request_user_input" },
      {
        type: "namespace",
        name: "mcp__wats",
        tools: [{ type: "function", name: "answer" }, { type: "function", name: "feed" }],
      },
    ],
  };
}

const AFTER_ANSWER: ResponsesRequest["input"] = [
  {
    type: "function_call",
    namespace: "mcp__wats",
    name: "answer",
    arguments: "{}",
    call_id: "call_1",
  },
  { type: "function_call_output", call_id: "call_1", output: [{ type: "input_text", text: "ok" }] },
];

/** The `data:` objects of an SSE body. */
function sseEvents(body: string): Record<string, unknown>[] {
  return body.split("\n\n").filter((b) => b.trim()).map((block) => {
    const data = block.split("\n").find((l) => l.startsWith("data: "))!;
    return JSON.parse(data.slice(6));
  });
}

async function post(url: string, body: unknown): Promise<Response> {
  return await fetch(`${url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

Deno.test("the request helpers read namespaced tools, the prompt and trailing call outputs", () => {
  const first = request();
  assert.deepEqual(toolNames(first), ["request_user_input", "mcp__wats/answer", "mcp__wats/feed"]);
  assert.ok(hasTool("mcp__wats", "answer")(first));
  assert.ok(!hasTool(undefined, "answer")(first), "a namespaced tool is not a bare one");
  assert.ok(hasTool(undefined, "request_user_input")(first));
  assert.ok(promptContains("ask 42")(first));
  assert.ok(!callOutputFor("mcp__wats", "answer")(first));
  const second = request(AFTER_ANSWER);
  assert.ok(callOutputFor("mcp__wats", "answer")(second));
  assert.ok(!callOutputFor("mcp__wats", "feed")(second));
  assert.equal(trailingCallOutputs(second)[0]!.call?.name, "answer");
  // Outputs before a later assistant message are not the turn being answered.
  const third = request([
    ...AFTER_ANSWER,
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "done" }] },
  ]);
  assert.ok(!callOutputFor("mcp__wats", "answer")(third));
});

Deno.test("tools offered inside an additional_tools input item are listed too", () => {
  const req: ResponsesRequest = {
    input: [{
      type: "additional_tools",
      role: "developer",
      tools: [{ type: "namespace", name: "functions", tools: [{ type: "custom", name: "exec" }] }],
    }],
  };
  assert.deepEqual(toolNames(req), ["functions/exec"]);
});

Deno.test("the reply is chosen by content, streamed as Responses API events, and recorded", async () => {
  const mock = startMockOpenAI({
    rules: [
      { when: callOutputFor("mcp__wats", "answer"), reply: text("Answered.") },
      {
        when: hasTool("mcp__wats", "answer"),
        reply: functionCall("mcp__wats", "answer", { parent: "p", text: "t" }),
      },
    ],
  });
  try {
    // The second request first: the choice does not depend on the order.
    const r2 = await post(mock.url, request(AFTER_ANSWER));
    assert.equal(r2.headers.get("content-type"), "text/event-stream");
    const e2 = sseEvents(await r2.text());
    assert.deepEqual(e2.map((e) => e.type), [
      "response.created",
      "response.output_item.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_item.done",
      "response.completed",
    ]);
    const deltas = e2.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta);
    assert.equal(deltas.join(""), "Answered.");
    const done = e2[4]!.item as Record<string, unknown>;
    assert.deepEqual(done.content, [{ type: "output_text", text: "Answered.", annotations: [] }]);
    const { usage } = e2[5]!.response as { usage: { input_tokens: number; output_tokens: number } };
    assert.ok(usage.input_tokens > 0 && usage.output_tokens > 0);

    const r1 = await post(mock.url, request());
    const e1 = sseEvents(await r1.text());
    const call = e1.find((e) => e.type === "response.output_item.done")!.item as Record<
      string,
      unknown
    >;
    assert.equal(call.type, "function_call");
    assert.equal(call.namespace, "mcp__wats");
    assert.equal(call.name, "answer");
    assert.deepEqual(JSON.parse(call.arguments as string), { parent: "p", text: "t" });
    assert.match(call.call_id as string, /^call_mock_/);

    assert.deepEqual(mock.responses().map((r) => r.matched), [0, 1]);
    assert.equal(mock.requests[0]!.body?.model, MOCK_MODEL);
  } finally {
    await mock.close();
  }
});

Deno.test("errors: an HTTP error body, a stream that fails, an unknown path", async () => {
  const mock = startMockOpenAI({
    rules: [{ when: promptContains("fail"), reply: failedResponse("server_error", "boom") }],
    default: apiError(400, "invalid_request_error", "bad request"),
  });
  try {
    const r = await post(mock.url, request());
    assert.equal(r.status, 400);
    assert.deepEqual((await r.json()).error.message, "bad request");
    const f = await post(mock.url, {
      input: [{ type: "message", role: "user", content: "please fail" }],
    });
    const events = sseEvents(await f.text());
    assert.deepEqual(events.map((e) => e.type), ["response.created", "response.failed"]);
    assert.deepEqual((events[1]!.response as Record<string, unknown>).error, {
      code: "server_error",
      message: "boom",
    });
    const other = await fetch(`${mock.url}/v1/chat/completions`, { method: "POST", body: "{}" });
    assert.equal(other.status, 404);
    await other.body?.cancel();
    assert.equal(mock.responses().length, 2);
    assert.equal(mock.requests.length, 3);
  } finally {
    await mock.close();
  }
});

Deno.test("the default reply is a text message; stream false gets a plain JSON response", async () => {
  const mock = startMockOpenAI();
  try {
    const r = await post(mock.url, { ...request(), stream: false });
    const body = await r.json();
    assert.equal(body.status, "completed");
    assert.equal(body.output[0].content[0].text, "ok");
    assert.equal(mock.responses()[0]!.matched, "default");
  } finally {
    await mock.close();
  }
});

Deno.test("codexProviderArgs points Codex at the mock with retries off", () => {
  const args = codexProviderArgs({ url: "http://127.0.0.1:9" });
  assert.deepEqual(args.slice(0, 2), ["-m", MOCK_MODEL]);
  assert.ok(args.includes('model_providers.wats_mock.base_url="http://127.0.0.1:9/v1"'));
  assert.ok(args.includes("model_providers.wats_mock.request_max_retries=0"));
  assert.ok(args.includes("model_providers.wats_mock.stream_max_retries=0"));
});
