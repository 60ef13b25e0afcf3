/**
 * Tests of the mock Anthropic Messages API: it chooses replies from request
 * content, streams well-formed SSE, answers plain JSON and HEAD probes, and
 * records every request.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  apiError,
  hasTool,
  lastUserContains,
  type MessagesRequest,
  MOCK_MODEL,
  promptContains,
  startMockAnthropic,
  text,
  toolResultFor,
  toolUse,
} from "./mock_anthropic.ts";

async function post(url: string, body: MessagesRequest): Promise<Response> {
  return await fetch(`${url}/v1/messages?beta=true`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "test-key" },
    body: JSON.stringify(body),
  });
}

/** Parses an SSE body into `[event, data]` pairs. */
function parseSse(body: string): [string, Record<string, unknown>][] {
  return body.trim().split("\n\n").map((chunk) => {
    const event = chunk.match(/^event: (.*)$/m)?.[1] ?? "";
    const data = JSON.parse(chunk.match(/^data: (.*)$/m)?.[1] ?? "null");
    return [event, data];
  });
}

const conversation: MessagesRequest = {
  model: MOCK_MODEL,
  max_tokens: 100,
  tools: [{ name: "mcp__echo__echo", input_schema: {} }],
  messages: [
    { role: "user", content: "please echo" },
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_1", name: "mcp__echo__echo", input: { text: "x" } }],
    },
    { role: "system", content: "a reminder between turns" },
    {
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: [{ type: "text", text: "x" }],
      }],
    },
  ],
};

Deno.test("mock answers HEAD probes and records them", async () => {
  const mock = startMockAnthropic();
  try {
    for (const path of ["/", "/api/hello"]) {
      const r = await fetch(`${mock.url}${path}`, { method: "HEAD" });
      await r.body?.cancel();
      assert.equal(r.status, 200);
    }
    assert.deepEqual(mock.requests.map((r) => [r.method, r.path]), [["HEAD", "/"], [
      "HEAD",
      "/api/hello",
    ]]);
    assert.deepEqual(mock.messages(), []);
  } finally {
    await mock.close();
  }
});

Deno.test("mock picks the rule for a tool result even with a system entry between turns", async () => {
  const mock = startMockAnthropic({
    rules: [
      { when: toolResultFor("mcp__echo__echo"), reply: text("done") },
      { when: hasTool("mcp__echo__echo"), reply: toolUse("mcp__echo__echo", { text: "x" }) },
    ],
  });
  try {
    const first =
      await (await post(mock.url, { ...conversation, messages: conversation.messages.slice(0, 1) }))
        .json();
    assert.equal(first.stop_reason, "tool_use");
    assert.equal(first.content[0].type, "tool_use");
    assert.equal(first.content[0].name, "mcp__echo__echo");
    assert.deepEqual(first.content[0].input, { text: "x" });
    assert.match(first.content[0].id, /^toolu_/);

    const second = await (await post(mock.url, conversation)).json();
    assert.equal(second.stop_reason, "end_turn");
    assert.deepEqual(second.content, [{ type: "text", text: "done" }]);
    assert.equal(second.model, MOCK_MODEL);
    assert.ok(second.usage.input_tokens > 0 && second.usage.output_tokens > 0);

    assert.deepEqual(mock.messages().map((r) => r.matched), [1, 0]);
    assert.equal(mock.messages()[1]!.body?.messages.length, 4);
  } finally {
    await mock.close();
  }
});

Deno.test("mock streams text and tool use blocks as Messages API SSE events", async () => {
  const mock = startMockAnthropic({
    default: {
      content: [{ type: "text", text: "Hello there" }, {
        type: "tool_use",
        name: "t",
        input: { a: [1, 2] },
      }],
    },
  });
  try {
    const r = await post(mock.url, { ...conversation, stream: true });
    assert.equal(r.headers.get("content-type"), "text/event-stream");
    const events = parseSse(await r.text());
    for (const [name, data] of events) assert.equal(data.type, name);
    assert.deepEqual(events.map(([n]) => n), [
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const textDeltas = events.filter(([n, d]) => n === "content_block_delta" && d.index === 0)
      .map(([, d]) => (d.delta as { text: string }).text).join("");
    assert.equal(textDeltas, "Hello there");
    const json = events.filter(([n, d]) => n === "content_block_delta" && d.index === 1)
      .map(([, d]) => (d.delta as { type: string; partial_json: string }))
      .map((d) => {
        assert.equal(d.type, "input_json_delta");
        return d.partial_json;
      }).join("");
    assert.deepEqual(JSON.parse(json), { a: [1, 2] });
    const delta = events.find(([n]) => n === "message_delta")![1];
    assert.deepEqual(delta.delta, { stop_reason: "tool_use", stop_sequence: null });
    assert.ok((delta.usage as { output_tokens: number }).output_tokens > 0);
  } finally {
    await mock.close();
  }
});

Deno.test("mock matches prompt text and returns scripted API errors", async () => {
  const mock = startMockAnthropic({
    rules: [
      {
        when: promptContains("overloaded please"),
        reply: apiError(529, "overloaded_error", "busy"),
      },
      { when: lastUserContains("reminder between"), reply: text("saw the system entry") },
    ],
  });
  try {
    const r = await post(mock.url, { messages: [{ role: "user", content: "overloaded please" }] });
    assert.equal(r.status, 529);
    assert.deepEqual(await r.json(), {
      type: "error",
      error: { type: "overloaded_error", message: "busy" },
    });
    const ok = await (await post(mock.url, conversation)).json();
    assert.deepEqual(ok.content, [{ type: "text", text: "saw the system entry" }]);
  } finally {
    await mock.close();
  }
});

Deno.test("mock replies with its default when no rule matches", async () => {
  const mock = startMockAnthropic({ rules: [{ when: hasTool("nope"), reply: text("no") }] });
  try {
    const r = await (await post(mock.url, { messages: [{ role: "user", content: "hi" }] })).json();
    assert.deepEqual(r.content, [{ type: "text", text: "ok" }]);
    assert.equal(mock.messages()[0]!.matched, "default");
  } finally {
    await mock.close();
  }
});
