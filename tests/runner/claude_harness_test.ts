import assert from "node:assert/strict";
import type { RunContext } from "../../src/runner/harness.ts";
import {
  claudeHarness,
  ClaudeStreamParser,
  formatBudget,
  mcpConfig,
  validateMaxTurns,
} from "../../src/runner/runtimes/claude/harness.ts";
import { OPENING, runSystemPrompt } from "../../src/prompts.ts";
import {
  API_ERROR,
  assistant,
  init,
  RESULT_MAX_TURNS,
  RESULT_SUCCESS,
  toolResult,
} from "./claude_samples.ts";

function ctx(over: Partial<RunContext> = {}): RunContext {
  return {
    runId: "20261015T120000123Z-a1b2c3",
    prompt: "You are part of WeAreTheSwarm…",
    maxTurns: 10,
    maxBudgetUsd: 1.998773,
    token: "tok-123",
    agentProfile: "alice-agent",
    dataDir: "/home/alice/.local/share/wats",
    cwd: "/home/alice/.local/share/wats/agent/run",
    configDir: "/home/alice/.local/share/wats/agent/run-config",
    selfCommand: { command: "/usr/local/bin/wats", args: [] },
    ...over,
  };
}

Deno.test("claude runs with exactly the locked-down flag list, the prompt on stdin, in the run directory", () => {
  const cmd = claudeHarness().command(ctx());
  assert.equal(cmd.program, "claude");
  assert.deepEqual(cmd.args, [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--mcp-config",
    "/home/alice/.local/share/wats/agent/run-config/20261015T120000123Z-a1b2c3.mcp.json",
    "--allowedTools",
    "mcp__wats__*",
    "--tools",
    "",
    "--setting-sources",
    "",
    "--strict-mcp-config",
    "--system-prompt-file",
    "/home/alice/.local/share/wats/agent/run-config/20261015T120000123Z-a1b2c3.system.md",
    "--max-turns",
    "10",
    "--max-budget-usd",
    "1.9987",
  ]);
  assert.equal(cmd.stdin, "You are part of WeAreTheSwarm…");
  assert.equal(cmd.cwd, "/home/alice/.local/share/wats/agent/run");
  assert.deepEqual(
    cmd.env,
    {
      ENABLE_TOOL_SEARCH: "false",
      MCP_CONNECTION_NONBLOCKING: "false",
      MCP_CONNECT_TIMEOUT_MS: "60000",
      MCP_TIMEOUT: "60000",
    },
    "the environment is inherited, never cleared (API key or login); tool search is off and " +
      "the wait for the wats server long",
  );
  assert.equal(cmd.files.length, 2);
  assert.equal(cmd.files[0]!.path, cmd.args[5]);
  assert.equal(cmd.files[0]!.mode, 0o600);
  assert.deepEqual(JSON.parse(cmd.files[0]!.text), mcpConfig(ctx()));
});

Deno.test("a locked run's system prompt is wats's own, written beside the MCP config", () => {
  const cmd = claudeHarness().command(ctx());
  const file = cmd.files[1]!;
  assert.equal(file.path, cmd.args[cmd.args.indexOf("--system-prompt-file") + 1]);
  assert.equal(file.path.slice(0, file.path.lastIndexOf("/")), ctx().configDir);
  assert.equal(file.mode, 0o600);
  assert.equal(file.text, runSystemPrompt());
  // The shared sentence opens the wake prompt and the MCP instructions: not said a third time.
  assert.ok(!file.text.includes(OPENING), "the shared sentence is not repeated");
  // A locked agent has no files, shell or git: the prompt says nothing of them.
  assert.doesNotMatch(file.text, /\b(git|Bash|shell|file_path|software engineering)\b/i);
  assert.ok(!cmd.args.includes("--append-system-prompt-file"));
});

Deno.test("an agent with built-in tools keeps Claude Code's prompt and gets wats's appended", () => {
  for (
    const args of [
      ["--tools", "Read,Edit,Skill", "--setting-sources", "project,local"],
      [], // inherit: the user's own environment
    ]
  ) {
    const cmd = claudeHarness().command(ctx({ access: { args, allowedTools: [] } }));
    assert.ok(!cmd.args.includes("--system-prompt-file"), args.join(" "));
    const at = cmd.args.indexOf("--append-system-prompt-file");
    assert.ok(at > 0, args.join(" "));
    assert.equal(cmd.args[at + 1], cmd.files[1]!.path);
    assert.equal(cmd.files[1]!.text, runSystemPrompt());
  }
});

Deno.test("workspace access replaces the locked flags and opens its scoped tools", () => {
  const cmd = claudeHarness().command(ctx({
    access: {
      args: ["--tools", "Read,Edit,Skill", "--setting-sources", "project,local"],
      allowedTools: ["Read(//work/**)", "Edit(//work/**)"],
    },
  }));
  const at = cmd.args.indexOf("--allowedTools");
  assert.deepEqual(cmd.args.slice(at, at + 8), [
    "--allowedTools",
    "mcp__wats__*",
    "Read(//work/**)",
    "Edit(//work/**)",
    "--tools",
    "Read,Edit,Skill",
    "--setting-sources",
    "project,local",
  ]);
  assert.ok(!cmd.args.includes("--strict-mcp-config"), "the workspace's own MCP servers may load");
});

Deno.test("the generated MCP config starts wats mcp as the agent profile with the run token", () => {
  const c = mcpConfig(
    ctx({ selfCommand: { command: "deno", args: ["run", "-A", "/src/main.ts"] } }),
  );
  assert.deepEqual(c, {
    mcpServers: {
      wats: {
        command: "deno",
        args: [
          "run",
          "-A",
          "/src/main.ts",
          "mcp",
          "--profile",
          "alice-agent",
          "--data-dir",
          "/home/alice/.local/share/wats",
        ],
        env: { WATS_RUN_TOKEN: "tok-123" },
      },
    },
  });
});

Deno.test("a settings file of deny rules is passed with --settings", () => {
  const args = claudeHarness().command(ctx({ settingsFile: "/x/settings.json" })).args;
  assert.deepEqual(args.slice(-2), ["--settings", "/x/settings.json"]);
});

Deno.test("agent.max_turns must be a positive whole number (the CLI does not check it)", () => {
  assert.equal(validateMaxTurns(1), 1);
  for (const bad of [0, -1, 1.5, NaN]) {
    assert.throws(
      () => claudeHarness().command(ctx({ maxTurns: bad })),
      /agent\.max_turns is .*whole number ≥ 1/,
    );
  }
});

Deno.test("--max-budget-usd is rounded down, never up", () => {
  assert.equal(formatBudget(2), "2.0000");
  assert.equal(formatBudget(0.29), "0.2900");
  assert.equal(formatBudget(0.123456), "0.1234");
  assert.equal(formatBudget(-1), "0");
});

function parseAll(lines: string[], exitCode: number | null) {
  const p = new ClaudeStreamParser();
  const events = lines.flatMap((l) => p.push(l));
  return { events, result: p.finish(exitCode) };
}

Deno.test("a successful run: text, tool call with arguments, tool result, cost and turns", () => {
  const { events, result } = parseAll([
    init([{ name: "wats", status: "connected" }], ["mcp__wats__answer"]),
    assistant("msg_1", { type: "text", text: "Looking at the ask." }),
    assistant("msg_1", {
      type: "tool_use",
      id: "toolu_1",
      name: "mcp__wats__answer",
      input: { parent: "abc", text: "Use X." },
    }),
    toolResult("toolu_1", "posted answer def"),
    "some stray non-JSON line",
    assistant("msg_2", { type: "text", text: "Done." }),
    RESULT_SUCCESS,
  ], 0);
  assert.deepEqual(result, { ok: true, costUsd: 0.001227, turns: 2 });
  assert.deepEqual(events, [
    {
      type: "init",
      mcpServers: [{ name: "wats", status: "connected" }],
      tools: ["mcp__wats__answer"],
    },
    { type: "text", text: "Looking at the ask." },
    {
      type: "tool_call",
      id: "toolu_1",
      name: "mcp__wats__answer",
      args: { parent: "abc", text: "Use X." },
    },
    { type: "tool_result", id: "toolu_1", text: "posted answer def", isError: false },
    { type: "text", text: "Done." },
    { type: "turns", turns: 2 },
    { type: "cost", usd: 0.001227 },
  ]);
});

Deno.test("an MCP server that failed in init fails the run, although the CLI reports success", () => {
  const { result } = parseAll([
    init([{ name: "wats", status: "failed" }], []),
    assistant("msg_1", { type: "text", text: "I have no tools." }),
    RESULT_SUCCESS,
  ], 0);
  assert.equal(result.ok, false);
  assert.equal(
    result.error,
    'MCP server wats (status "failed" in init) did not start: the agent had no wats tools, so ' +
      'the run could not act and its events are tried again later (docs/runner.md, "A run that ' +
      'could not act"); if it keeps failing, check that `wats mcp` runs',
  );
  assert.equal(result.costUsd, 0.001227, "its cost still counts");
});

Deno.test("an MCP server still pending in init fails the run: it had no tools (measured with 2.1.197)", () => {
  const { result } = parseAll([
    init([{ name: "wats", status: "pending" }], []),
    assistant("msg_1", { type: "text", text: "I have no tools." }),
    RESULT_SUCCESS,
  ], 0);
  assert.equal(result.ok, false);
  assert.equal(
    result.error,
    'MCP server wats (status "pending" in init) was not connected in time: the agent had no ' +
      "wats tools, so the run could not act and its events are tried again later " +
      '(docs/runner.md, "A run that could not act")',
    "a slow start is not a broken bridge: no advice to check that wats mcp runs",
  );
});

Deno.test("an API error is a failure: is_error decides, not subtype success", () => {
  const { result, events } = parseAll([
    init([{ name: "wats", status: "connected" }], []),
    ...API_ERROR,
  ], 0);
  assert.equal(result.ok, false);
  assert.equal(result.error, "API Error: 400 bad thing");
  assert.equal(result.costUsd, 0);
  assert.ok(events.some((e) => e.type === "error"));
});

Deno.test("error_max_turns with exit code 1 is a failure that reports its cost and turns", () => {
  const { result } = parseAll([
    init([{ name: "wats", status: "connected" }], ["mcp__wats__answer"]),
    assistant("msg_1", { type: "tool_use", id: "toolu_1", name: "mcp__wats__answer", input: {} }),
    toolResult("toolu_1", "ok"),
    RESULT_MAX_TURNS,
  ], 1);
  assert.deepEqual(result, {
    ok: false,
    error: "Reached maximum number of turns (1)",
    costUsd: 0.000513,
    turns: 2,
  });
});

Deno.test("cost comes from total_cost_usd only: content blocks of one message are not added up", () => {
  const { result } = parseAll([
    assistant("msg_1", { type: "text", text: "a" }),
    assistant("msg_1", { type: "text", text: "b" }),
    assistant("msg_1", { type: "tool_use", id: "t", name: "mcp__wats__feed", input: {} }),
    RESULT_SUCCESS,
  ], 0);
  assert.equal(result.costUsd, 0.001227);
});

Deno.test("a run killed before its result fails without a cost", () => {
  const { result } = parseAll([init([{ name: "wats", status: "connected" }], [])], null);
  assert.deepEqual(result, { ok: false, error: "the CLI was killed before it reported a result" });
  assert.match(parseAll([], 2).result.error!, /exited with code 2 without reporting a result/);
});

Deno.test("a tool result marked as an error is reported as one", () => {
  const { events } = parseAll([toolResult("t1", "unknown parent", true)], 0);
  assert.deepEqual(events, [{
    type: "tool_result",
    id: "t1",
    text: "unknown parent",
    isError: true,
  }]);
});
