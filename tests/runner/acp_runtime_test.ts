/**
 * The ACP runtime's pure parts (src/runner/runtimes/acp/harness.ts, acp_parser.ts): the transcript
 * parser's verdict, the heartbeat session's `_meta` and MCP server, and how the heartbeat
 * agent's own permission requests are decided. End to end: tests/e2e/acp_runtime_test.ts.
 */

import assert from "node:assert/strict";
import { AcpRunParser } from "../../src/runner/runtimes/acp/parser.ts";
import {
  decideHeartbeat,
  heartbeatHarness,
  heartbeatMeta,
  MAX_THREAD_SESSIONS,
  readThreadSessions,
  saveThreadSession,
  watsServer,
} from "../../src/runner/runtimes/acp/harness.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import type { HarnessConfig } from "../../src/config/acp_tables.ts";
import type { RunContext } from "../../src/runner/harness.ts";
import { renderTranscript } from "../../src/runner/render.ts";
import { RUN_TOKEN_ENV } from "../../src/contracts/session.ts";

const harness: HarnessConfig = {
  name: "claude",
  command: "claude-agent-acp",
  args: [],
  env: {},
  meta: { claudeCode: { options: { allowedTools: ["Bash"], tools: ["Bash"], model: "m" } } },
  context: [],
  idle: 1000,
  enabled: false,
};

const ctx: RunContext = {
  runId: "r1",
  prompt: "wake up",
  maxTurns: 7,
  maxBudgetUsd: 1.5,
  token: "tok",
  agentProfile: "helper",
  dataDir: "/data",
  cwd: "/data/agent/run",
  configDir: "/data/agent/run-config",
  selfCommand: { command: "wats", args: [] },
};

const lines = (...objs: unknown[]) => objs.map((o) => JSON.stringify(o));

Deno.test("the parser: text, a tool call shown once its arguments came, its result, the run's cost", () => {
  const p = new AcpRunParser();
  const events = lines(
    { type: "acp_session", harness: "claude", session: "s1", continued: false },
    {
      type: "acp_update",
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hel" } },
    },
    {
      type: "acp_update",
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "lo" } },
    },
    {
      type: "acp_update",
      update: {
        sessionUpdate: "tool_call",
        toolCallId: "t1",
        title: "mcp__wats__answer",
        rawInput: {},
        _meta: { claudeCode: { toolName: "mcp__wats__answer" } },
      },
    },
    {
      type: "acp_update",
      update: { sessionUpdate: "tool_call_update", toolCallId: "t1", rawInput: { text: "hi" } },
    },
    {
      type: "acp_update",
      update: {
        sessionUpdate: "tool_call_update",
        toolCallId: "t1",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "Posted." } }],
      },
    },
    { type: "acp_result", stop_reason: "end_turn", cost_usd: 0.25 },
  ).flatMap((l) => p.push(l));
  assert.deepEqual(events, [
    { type: "text", text: "Hello" },
    { type: "tool_call", id: "t1", name: "mcp__wats__answer", args: { text: "hi" } },
    { type: "tool_result", id: "t1", text: "Posted.", isError: false },
    { type: "cost", usd: 0.25 },
  ]);
  assert.deepEqual(p.finish(0), { ok: true, costUsd: 0.25, turns: 2 });
});

Deno.test("the parser shows a call with its complete arguments, not the fields streamed so far", () => {
  const p = new AcpRunParser();
  const call = (update: Record<string, unknown>) => ({
    type: "acp_update",
    update: { toolCallId: "t1", _meta: { claudeCode: { toolName: "mcp__wats__post" } }, ...update },
  });
  const events = lines(
    call({ sessionUpdate: "tool_call", rawInput: {}, content: [] }),
    // claude-agent-acp's refinement while the input streams: no content.
    call({ sessionUpdate: "tool_call_update", rawInput: { kind: "answer" } }),
    call({
      sessionUpdate: "tool_call_update",
      rawInput: { kind: "answer", parent: "e1", text: "Use X." },
      content: [],
    }),
    call({ sessionUpdate: "tool_call_update", status: "completed", content: [] }),
  ).flatMap((l) => p.push(l));
  assert.deepEqual(events.filter((e) => e.type === "tool_call"), [
    {
      type: "tool_call",
      id: "t1",
      name: "mcp__wats__post",
      args: { kind: "answer", parent: "e1", text: "Use X." },
    },
  ]);
});

Deno.test("the parser: a prompt that did not end its turn, an error, or no result at all is a failed run", () => {
  const cancelled = new AcpRunParser();
  lines({ type: "acp_result", stop_reason: "cancelled" }).forEach((l) => cancelled.push(l));
  assert.equal(cancelled.finish(0).ok, false);
  assert.match(cancelled.finish(0).error!, /stop reason cancelled/);

  const failed = new AcpRunParser();
  assert.deepEqual(failed.push(lines({ type: "acp_error", message: "harness claude: boom" })[0]!), [
    { type: "error", message: "harness claude: boom" },
  ]);
  assert.deepEqual(failed.finish(1), { ok: false, error: "harness claude: boom" });

  const silent = new AcpRunParser();
  assert.match(silent.finish(null).error!, /ended without a result \(exit by a signal\)/);
});

Deno.test("the heartbeat session's _meta: wats's prompt and limits, no built-in tool when locked, whatever the harness's meta says", () => {
  const locked = heartbeatMeta(
    { harness, tools: "locked", env: {}, agentDir: "/x", policy: makePolicy([], [], "/data") },
    ctx,
  ) as { systemPrompt: unknown; claudeCode: { options: Record<string, unknown> } };
  assert.equal(typeof locked.systemPrompt, "string");
  assert.deepEqual(locked.claudeCode.options.tools, []);
  assert.deepEqual(locked.claudeCode.options.allowedTools, ["mcp__wats__*"]);
  assert.equal(locked.claudeCode.options.maxTurns, 7);
  assert.equal(locked.claudeCode.options.maxBudgetUsd, 1.5);
  assert.equal(locked.claudeCode.options.model, "m", "the harness's other options stay");

  const workspace = heartbeatMeta(
    {
      harness,
      tools: ["Read", "Edit"],
      env: {},
      agentDir: "/x",
      policy: makePolicy([], [], "/data"),
    },
    ctx,
  ) as { systemPrompt: { append: string }; claudeCode: { options: Record<string, unknown> } };
  assert.equal(typeof workspace.systemPrompt.append, "string");
  assert.deepEqual(workspace.claudeCode.options.tools, ["Read", "Edit"]);
});

Deno.test("the wats MCP server of a heartbeat session speaks as the agent profile with the run's token", () => {
  assert.deepEqual(watsServer(ctx), {
    name: "wats",
    command: "wats",
    args: ["mcp", "--profile", "helper", "--data-dir", "/data"],
    env: [{ name: RUN_TOKEN_ENV, value: "tok" }],
  });
});

Deno.test("the heartbeat agent's own requests: wats tools allowed, anything else refused when locked, the policy in a workspace", () => {
  const policy = makePolicy(["claude/edit(notes/*)"], [], "/data");
  const wats = decideHeartbeat({ harness, tools: "locked", policy }, "/data/agent/run", {
    toolCallId: "t",
    kind: "other",
    _meta: { claudeCode: { toolName: "mcp__wats__answer" } },
  });
  assert.equal(wats.allow, true);
  const bash = decideHeartbeat({ harness, tools: "locked", policy }, "/data/agent/run", {
    toolCallId: "t",
    kind: "execute",
    _meta: { claudeCode: { toolName: "Bash" } },
  });
  assert.equal(bash.allow, false);
  assert.match(bash.reason, /locked \(agent.access = locked\)/);
  // A tool named like a wats tool by the model is not one: only the agent's own name counts.
  const fake = decideHeartbeat({ harness, tools: "locked", policy }, "/data/agent/run", {
    toolCallId: "t",
    kind: "execute",
    title: "mcp__wats__answer",
  });
  assert.equal(fake.allow, false);

  const ws = "/home/me/ws";
  const edit = decideHeartbeat({ harness, tools: ["Edit"], policy }, ws, {
    toolCallId: "t",
    kind: "edit",
    locations: [{ path: `${ws}/notes/a.md` }],
  });
  assert.equal(edit.allow, true, edit.reason);
  const other = decideHeartbeat({ harness, tools: ["Edit"], policy }, ws, {
    toolCallId: "t",
    kind: "edit",
    locations: [{ path: `${ws}/src/a.ts` }],
  });
  assert.equal(other.allow, false);
  assert.match(other.reason, /a heartbeat run is not held for a person/);
  const key = decideHeartbeat({ harness, tools: ["Read"], policy }, ws, {
    toolCallId: "t",
    kind: "read",
    locations: [{ path: "/data/node.key" }],
  });
  assert.equal(key.allow, false);
  assert.match(key.reason, /inside the wats data directory/);
});

Deno.test("wats agent logs renders an ACP run: the session, text, tool calls, decisions, the end", () => {
  const out = renderTranscript(lines(
    {
      type: "wats_run",
      id: "r1",
      trigger: "events",
      events: ["e1"],
      started_at: "2026-11-30T10:00:00.000Z",
      harness: "acp",
    },
    {
      type: "acp_session",
      harness: "claude",
      session: "s1",
      continued: true,
      thread: "a".repeat(64),
    },
    {
      type: "acp_update",
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Looking." } },
    },
    {
      type: "acp_update",
      update: {
        sessionUpdate: "tool_call",
        toolCallId: "t1",
        title: "Terminal",
        kind: "execute",
        rawInput: { command: "ls" },
      },
    },
    {
      type: "acp_permission",
      request: "claude/execute",
      locations: [],
      verdict: "deny",
      answer: "reject_once",
      reason: "locked",
    },
    {
      type: "acp_update",
      update: {
        sessionUpdate: "tool_call_update",
        toolCallId: "t1",
        status: "failed",
        rawOutput: "refused",
      },
    },
    { type: "acp_result", stop_reason: "end_turn", cost_usd: 0.01 },
    { type: "wats_end", status: "ok", exit_code: 0, duration_ms: 1200, turns: 2, cost_usd: 0.01 },
  ));
  assert.match(out, /session s1 on \[harnesses\.claude\] \(continued\) for thread aaaaaaaaaaaa/);
  assert.match(out, /^Looking\.$/m);
  assert.match(out, /→ Terminal \{"command":"ls"\}/);
  assert.match(out, /\? claude\/execute → reject_once \(deny: locked\)/);
  assert.match(out, /← error: "refused"/);
  assert.match(out, /end: ok/);
});

Deno.test("the thread sessions file keeps the 500 most recently used threads", () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-acp-threads-" });
  try {
    for (let i = 0; i < MAX_THREAD_SESSIONS + 5; i++) {
      saveThreadSession(dir, `t${i}`, { session: `s${i}`, harness: "claude", used_at: 1000 + i });
    }
    // t0 is used again: it is now the newest.
    saveThreadSession(dir, "t0", { session: "s0", harness: "claude", used_at: 9999 });
    const kept = readThreadSessions(dir);
    assert.equal(Object.keys(kept).length, MAX_THREAD_SESSIONS);
    assert.ok(kept.t0, "a thread used again is kept");
    for (const gone of ["t1", "t2", "t3", "t4", "t5"]) assert.equal(kept[gone], undefined);
    assert.ok(kept.t6, "the oldest left");
    assert.equal(kept[`t${MAX_THREAD_SESSIONS + 4}`]!.session, `s${MAX_THREAD_SESSIONS + 4}`);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a heartbeat agent starts with Claude Code's tool search off, whatever the harness's env says", () => {
  const started = heartbeatHarness({
    ...harness,
    env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:1", ENABLE_TOOL_SEARCH: "true" },
  });
  assert.deepEqual(started.env, {
    ANTHROPIC_BASE_URL: "http://127.0.0.1:1",
    ENABLE_TOOL_SEARCH: "false",
  });
  assert.deepEqual(harness.env, {}, "the configured harness is left as it was");
});
