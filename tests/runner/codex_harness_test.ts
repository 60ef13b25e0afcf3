/**
 * The Codex harness: the exact command of a run, the feature probe and its
 * intersection with the lock-down list, TOML quoting of `-c` values, and the
 * `--json` parser on output lines recorded from real Codex 0.171 runs against
 * the mock Responses API (tests/support/mock_openai.ts).
 */

import assert from "node:assert/strict";
import { parse as parseToml } from "smol-toml";
import {
  codexArgs,
  codexHarness,
  FORWARDED_ENV,
  mcpServerConfig,
  providerConfig,
  tomlString,
  tomlStringArray,
} from "../../src/runner/runtimes/codex/harness.ts";
import { CodexJsonParser } from "../../src/runner/runtimes/codex/parser.ts";
import {
  codexFeatureProbe,
  LOCKDOWN_FEATURES,
  lockdownDisables,
  parseFeatureList,
} from "../../src/runner/runtimes/codex/features.ts";
import type { RunContext, RunEvent } from "../../src/runner/harness.ts";
import { ConfigError, HarnessError } from "../../src/errors.ts";
import { runSystemPrompt } from "../../src/prompts.ts";

/** A locked catalog's path (codex_catalog.ts). */
const CATALOG = "/data/agent/codex/catalog-0123.json";

function ctx(over: Partial<RunContext> = {}): RunContext {
  return {
    runId: "r1",
    prompt: "Wake up.\n",
    maxTurns: 10,
    maxBudgetUsd: 1,
    token: "tok123",
    agentProfile: "helper",
    dataDir: "/data",
    cwd: "/data/agent/run",
    configDir: "/data/agent/run-config",
    selfCommand: { command: "/usr/bin/wats", args: [] },
    ...over,
  };
}

/** Parses one `-c key=value` the way Codex does: the value as TOML. */
function tomlValue(kv: string): unknown {
  const eq = kv.indexOf("=");
  return parseToml(`v = ${kv.slice(eq + 1)}`).v;
}

/** The `-c` values of an argument list, by key. */
function overrides(args: string[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== "-c") continue;
    const kv = args[i + 1];
    assert.ok(kv !== undefined, "-c without a value");
    out.set(kv.slice(0, kv.indexOf("=")), tomlValue(kv));
  }
  return out;
}

// ---- the command -------------------------------------------------------------

Deno.test("a run is codex exec --json --ephemeral, locked down, with the prompt on stdin", () => {
  const cmd = codexHarness({
    catalog: CATALOG,
    disable: ["shell_tool", "unbounded_connection_retries"],
  })
    .command(ctx());
  assert.equal(cmd.program, "codex");
  assert.equal(cmd.cwd, "/data/agent/run");
  assert.equal(
    cmd.stdin,
    `${runSystemPrompt()}\nWake up.\n`,
    "the run system prompt, then the wake prompt",
  );
  assert.deepEqual(cmd.files, [], "nothing is written: no file holds the token");
  assert.deepEqual(cmd.args, [
    "exec",
    "--json",
    "--ephemeral",
    "--strict-config",
    "--ignore-user-config",
    "--ignore-rules",
    "--skip-git-repo-check",
    "-C",
    "/data/agent/run",
    "-s",
    "read-only",
    "-c",
    'approval_policy="never"',
    "-c",
    'model_catalog_json="/data/agent/codex/catalog-0123.json"',
    "--disable",
    "shell_tool",
    "--disable",
    "unbounded_connection_retries",
    "-c",
    'web_search="disabled"',
    "-c",
    "project_doc_max_bytes=0",
    "-c",
    "analytics.enabled=false",
    "-c",
    "check_for_update_on_startup=false",
    "-c",
    'mcp_servers.wats.command="/usr/bin/wats"',
    "-c",
    'mcp_servers.wats.args=["mcp","--profile","helper","--data-dir","/data"]',
    "-c",
    `mcp_servers.wats.env_vars=${tomlStringArray(["WATS_RUN_TOKEN", ...FORWARDED_ENV])}`,
    "-c",
    "mcp_servers.wats.required=true",
    "-c",
    "mcp_servers.wats.startup_timeout_sec=60",
    "-c",
    'mcp_servers.wats.default_tools_approval_mode="approve"',
    "-",
  ]);
});

Deno.test("the run token travels in Codex's environment, never on the command line", () => {
  const cmd = codexHarness({ catalog: CATALOG, disable: [] }).command(
    ctx({ token: "secret-token" }),
  );
  assert.equal(cmd.env.WATS_RUN_TOKEN, "secret-token");
  assert.equal(cmd.env.RUST_BACKTRACE, "0", "a failure's stderr tail shows the reason");
  assert.ok(!cmd.args.some((a) => a.includes("secret-token")));
  const vars = overrides(cmd.args).get("mcp_servers.wats.env_vars") as string[];
  assert.ok(vars.includes("WATS_RUN_TOKEN"));
});

Deno.test("without a token no token variable is set or forwarded", () => {
  const cmd = codexHarness({ catalog: CATALOG, disable: [] }).command(ctx({ token: undefined }));
  assert.equal(cmd.env.WATS_RUN_TOKEN, undefined);
  const vars = overrides(cmd.args).get("mcp_servers.wats.env_vars") as string[];
  assert.ok(!vars.includes("WATS_RUN_TOKEN"));
  assert.ok(vars.includes("DENO_DIR"));
});

Deno.test("the sandbox stays read-only and the access flags of Claude are not used", () => {
  const args = codexArgs(
    ctx({ access: { args: ["--tools", "Bash"], allowedTools: ["Bash"] }, settingsFile: "/s.json" }),
    { catalog: CATALOG, disable: [] },
  );
  assert.equal(args[args.indexOf("-s") + 1], "read-only");
  assert.ok(!args.includes("--tools") && !args.includes("Bash") && !args.includes("/s.json"));
});

Deno.test("the model and extra forwarded variables are passed when given", () => {
  const args = codexArgs(ctx(), {
    catalog: CATALOG,
    disable: [],
    model: "gpt-x",
    forwardEnv: ["MY_VAR", "DENO_DIR"],
  });
  assert.equal(args[args.indexOf("-m") + 1], "gpt-x");
  const vars = overrides(args).get("mcp_servers.wats.env_vars") as string[];
  assert.equal(vars.at(-1), "MY_VAR");
  assert.equal(vars.filter((v) => v === "DENO_DIR").length, 1, "no duplicates");
});

Deno.test("a feature that is not in the lock-down list is refused", () => {
  assert.throws(
    () => codexArgs(ctx(), { catalog: CATALOG, disable: ["shell_tool", "fast_mode"] }),
    (e) => e instanceof ConfigError && /fast_mode/.test(e.message),
  );
});

// ---- TOML quoting ------------------------------------------------------------

Deno.test("paths with spaces, quotes, backslashes and control characters survive TOML parsing", () => {
  const nasty = [
    "/home/a b/wats data",
    'say "hi"',
    "back\\slash",
    "tab\there",
    "new\nline",
    "unicode é ✓",
    "",
  ];
  for (const s of nasty) assert.equal(parseToml(`v = ${tomlString(s)}`).v, s, s);
  assert.deepEqual(parseToml(`v = ${tomlStringArray(nasty)}`).v, nasty);
  const c = ctx({
    dataDir: '/tmp/x "y" z',
    selfCommand: { command: "/opt/my wats/wats", args: ["run", "--config", 'C:\\a "b"'] },
    agentProfile: "hel per",
  });
  const o = new Map(mcpServerConfig(c).map((kv) => [kv.slice(0, kv.indexOf("=")), tomlValue(kv)]));
  assert.equal(o.get("mcp_servers.wats.command"), "/opt/my wats/wats");
  assert.deepEqual(o.get("mcp_servers.wats.args"), [
    "run",
    "--config",
    'C:\\a "b"',
    "mcp",
    "--profile",
    "hel per",
    "--data-dir",
    '/tmp/x "y" z',
  ]);
  assert.equal(o.get("mcp_servers.wats.required"), true);
});

Deno.test("every -c value of a run parses as TOML (Codex would take a bad one as a raw string)", () => {
  const args = codexArgs(ctx({ dataDir: "/a b" }), {
    catalog: "/a b/agent/codex/catalog.json",
    disable: [],
    provider: { id: "mine", baseUrl: "http://127.0.0.1:9/v1", envKey: "MY_KEY" },
  });
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "-c") assert.doesNotThrow(() => tomlValue(args[i + 1]!), args[i + 1]);
  }
});

// ---- the provider ------------------------------------------------------------

Deno.test("a provider becomes model_provider and its model_providers table", () => {
  const o = new Map(
    providerConfig({
      id: "wats_mock",
      name: "mock",
      baseUrl: "http://127.0.0.1:4000/v1",
      envKey: "MOCK_KEY",
      requestMaxRetries: 0,
      streamMaxRetries: 0,
    }).map((kv) => [kv.slice(0, kv.indexOf("=")), tomlValue(kv)]),
  );
  assert.deepEqual(Object.fromEntries(o), {
    model_provider: "wats_mock",
    "model_providers.wats_mock.name": "mock",
    "model_providers.wats_mock.base_url": "http://127.0.0.1:4000/v1",
    "model_providers.wats_mock.wire_api": "responses",
    "model_providers.wats_mock.env_key": "MOCK_KEY",
    "model_providers.wats_mock.request_max_retries": 0,
    "model_providers.wats_mock.stream_max_retries": 0,
  });
});

Deno.test("a provider Codex would refuse or misread is a ConfigError", () => {
  const bad = [
    { id: "openai", baseUrl: "https://x/v1" },
    { id: "a.b", baseUrl: "https://x/v1" },
    { id: "ok", baseUrl: "not a url" },
    { id: "ok", baseUrl: "file:///etc/passwd" },
    { id: "ok", baseUrl: "https://x/v1", envKey: "MY-KEY" },
    { id: "ok", baseUrl: "https://x/v1", requestMaxRetries: -1 },
  ];
  for (const p of bad) {
    assert.throws(() => providerConfig(p), ConfigError, JSON.stringify(p));
  }
});

// ---- features ----------------------------------------------------------------

const FEATURES_LIST = `agent_message_board                      under development  false
apps                                     stable             true
code_mode                                under development  false
fast_mode                                stable             true
multi_agent                              deprecated         true
search_tool                              removed            false
shell_tool                               stable             true
unbounded_connection_retries             stable             true
`;

Deno.test("the feature list is read from `codex features list` output", () => {
  assert.deepEqual(parseFeatureList("WARNING: proceeding, even though…\n" + FEATURES_LIST), [
    "agent_message_board",
    "apps",
    "code_mode",
    "fast_mode",
    "multi_agent",
    "search_tool",
    "shell_tool",
    "unbounded_connection_retries",
  ]);
});

Deno.test("only lock-down features this Codex knows are disabled, in lock-down order", () => {
  assert.deepEqual(lockdownDisables(parseFeatureList(FEATURES_LIST)), [
    "shell_tool",
    "apps",
    "multi_agent",
    "code_mode",
    "agent_message_board",
    "unbounded_connection_retries",
  ]);
  assert.deepEqual(lockdownDisables(LOCKDOWN_FEATURES), [...LOCKDOWN_FEATURES]);
  assert.deepEqual(lockdownDisables([]), []);
});

Deno.test("the probe runs `features list` once per program and keeps the answer", async () => {
  const calls: string[] = [];
  const probe = codexFeatureProbe((program, args) => {
    calls.push(`${program} ${args.join(" ")}`);
    return Promise.resolve({ code: 0, stdout: FEATURES_LIST, stderr: "" });
  });
  const [a, b] = await Promise.all([probe("codex"), probe("codex")]);
  assert.deepEqual(a, b);
  assert.ok(a.includes("shell_tool"));
  await probe("/other/codex");
  assert.deepEqual(calls, ["codex features list", "/other/codex features list"]);
});

Deno.test("a failed probe says what to do and is tried again next time", async () => {
  let n = 0;
  const probe = codexFeatureProbe(() => {
    n++;
    return Promise.resolve(
      n === 1
        ? { code: 2, stdout: "", stderr: "error: unrecognized subcommand 'features'" }
        : { code: 0, stdout: FEATURES_LIST, stderr: "" },
    );
  });
  await assert.rejects(
    probe("codex"),
    (e) =>
      e instanceof HarnessError && e.code === "harness.codex_features" &&
      /unrecognized subcommand/.test(e.message) && /install Codex/.test(e.message),
  );
  assert.ok((await probe("codex")).includes("shell_tool"));
  assert.equal(n, 2);
});

Deno.test("a probe that lists nothing is an error, not an empty lock-down", async () => {
  const probe = codexFeatureProbe(() => Promise.resolve({ code: 0, stdout: "\n", stderr: "" }));
  await assert.rejects(probe("codex"), /listed no features/);
});

// ---- the parser, on recorded real output (Codex 0.171.0) ----------------------

const THREAD = '{"type":"thread.started","thread_id":"01a229a6-355d-7e33-8866-50acaec15f03"}';
const MODEL_WARNING =
  '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `wats-mock-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}';
const TURN_STARTED = '{"type":"turn.started"}';

/** A run whose model called wats `status`, then said "Done.". */
const STATUS_RUN = [
  THREAD,
  MODEL_WARNING,
  TURN_STARTED,
  '{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"wats","tool":"status","arguments":{},"result":null,"error":null,"status":"in_progress"}}',
  '{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"wats","tool":"status","arguments":{},"result":{"content":[{"type":"text","text":"node: b5a08d6fadccd2d5\\nprofile: user-agent (npub1rxrw032vuaeglh9kgt5v85rm46jdccxw94z30xn2ck2ta9c7ew3sg97qgf)\\ndata dir: /tmp/cx/data\\nrelays: none (local-only node)\\nagent: not running\\nstored posts: 0\\ndrafts held for review: 0\\nhalted: no\\nsafety notices: none"}],"structured_content":null},"error":null,"status":"completed"}}',
  '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done."}}',
  '{"type":"turn.completed","usage":{"input_tokens":10479,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":24,"reasoning_output_tokens":0}}',
];

/** A run whose `answer` call the wats server refused (isError), exit code 0. */
const FAILED_TOOL_RUN = [
  THREAD,
  MODEL_WARNING,
  TURN_STARTED,
  '{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"wats","tool":"answer","arguments":{"parent":"zz","text":"x"},"result":null,"error":null,"status":"in_progress"}}',
  '{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"wats","tool":"answer","arguments":{"parent":"zz","text":"x"},"result":{"content":[{"type":"text","text":"parent \\"zz\\" is not a post id: give the 64 hex characters shown after \\"post\\" in a post\'s header line."}],"structured_content":null},"error":null,"status":"failed"}}',
  '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done."}}',
  '{"type":"turn.completed","usage":{"input_tokens":10447,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":24,"reasoning_output_tokens":0}}',
];

/** The model server answered HTTP 400; exit code 1. */
const API_ERROR_RUN = [
  THREAD,
  MODEL_WARNING,
  TURN_STARTED,
  '{"type":"error","message":"{\\"error\\":{\\"message\\":\\"mock says bad request\\",\\"type\\":\\"invalid_request_error\\",\\"param\\":null,\\"code\\":\\"invalid_request_error\\"}}"}',
  '{"type":"turn.failed","error":{"message":"{\\"error\\":{\\"message\\":\\"mock says bad request\\",\\"type\\":\\"invalid_request_error\\",\\"param\\":null,\\"code\\":\\"invalid_request_error\\"}}"}}',
];

/** The model server was unreachable (retries off); exit code 1. */
const UNREACHABLE_RUN = [
  THREAD,
  MODEL_WARNING,
  TURN_STARTED,
  '{"type":"error","message":"Connection failed: error sending request"}',
  '{"type":"turn.failed","error":{"message":"Connection failed: error sending request"}}',
];

/** A retry warning: a top-level `error` event that is not fatal. */
const RECONNECTING =
  '{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion: failed to lookup address information: Name does not resolve)"}';

function parseAll(lines: string[]): { events: RunEvent[]; parser: CodexJsonParser } {
  const parser = new CodexJsonParser();
  return { events: lines.flatMap((l) => parser.push(l)), parser };
}

Deno.test("a good run: the tool call, its result, the text, and ok with turns and no cost", () => {
  const { events, parser } = parseAll(STATUS_RUN);
  assert.deepEqual(events.map((e) => e.type), ["tool_call", "tool_result", "text", "turns"]);
  assert.deepEqual(events[0], {
    type: "tool_call",
    id: "item_1",
    name: "mcp__wats__status",
    args: {},
  });
  const result = events[1] as Extract<RunEvent, { type: "tool_result" }>;
  assert.equal(result.isError, false);
  assert.match(result.text, /^node: b5a08d6fadccd2d5\nprofile: user-agent/);
  assert.deepEqual(events[2], { type: "text", text: "Done." });
  assert.deepEqual(events[3], { type: "turns", turns: 2 });
  const r = parser.finish(0);
  assert.deepEqual(r, { ok: true, turns: 2 });
  assert.equal("costUsd" in r, false, "Codex reports no cost");
});

Deno.test("a tool call the server refused shows as a tool error although Codex exits 0", () => {
  const { events, parser } = parseAll(FAILED_TOOL_RUN);
  const results = events.filter((e) => e.type === "tool_result");
  assert.deepEqual(results, [{
    type: "tool_result",
    id: "item_1",
    text:
      'parent "zz" is not a post id: give the 64 hex characters shown after "post" in a post\'s header line.',
    isError: true,
  }]);
  assert.deepEqual(events[0], {
    type: "tool_call",
    id: "item_1",
    name: "mcp__wats__answer",
    args: { parent: "zz", text: "x" },
  });
  assert.equal(parser.finish(0).ok, true, "the model was told and finished its turn");
});

Deno.test("a model API error fails the run with the message of turn.failed", () => {
  const { events, parser } = parseAll(API_ERROR_RUN);
  assert.deepEqual(events.map((e) => e.type), ["error"]);
  const r = parser.finish(1);
  assert.equal(r.ok, false);
  assert.match(r.error!, /^the model turn failed: .*mock says bad request/);
  assert.equal(r.turns, 0);
});

Deno.test("an unreachable model server fails the run", () => {
  const { parser } = parseAll(UNREACHABLE_RUN);
  const r = parser.finish(1);
  assert.equal(r.ok, false);
  assert.equal(r.error, "the model turn failed: Connection failed: error sending request");
});

Deno.test("a retry warning alone does not fail a run that then completes", () => {
  const lines = [...STATUS_RUN];
  lines.splice(3, 0, RECONNECTING);
  const { events, parser } = parseAll(lines);
  assert.ok(!events.some((e) => e.type === "error"));
  assert.deepEqual(parser.finish(0), { ok: true, turns: 2 });
});

Deno.test("no output and exit 1 (a required MCP server that did not start) fails before the session", () => {
  const parser = new CodexJsonParser();
  const r = parser.finish(1);
  assert.equal(r.ok, false);
  assert.match(r.error!, /exited with code 1 before the session started/);
  assert.equal(r.turns, undefined);
});

Deno.test("a run cut off mid-turn fails with the last warning", () => {
  const { parser } = parseAll([THREAD, TURN_STARTED, RECONNECTING]);
  const r = parser.finish(0);
  assert.equal(r.ok, false);
  assert.match(r.error!, /before the turn completed: Reconnecting\.\.\. 2\/5/);
  assert.equal(
    parseAll([THREAD, TURN_STARTED]).parser.finish(null).error,
    "codex was killed before it finished",
  );
});

Deno.test("a completed turn with a non-zero exit code is not ok", () => {
  const { parser } = parseAll(STATUS_RUN);
  assert.deepEqual(parser.finish(1), {
    ok: false,
    error: "codex exited with code 1 after the turn",
    turns: 2,
  });
});

Deno.test("a shell command (if one ever runs) is shown as a tool call and stops the run: the lock is broken", () => {
  const { events } = parseAll([
    '{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc \'cat /etc/hostname\'","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
    '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc \'cat /etc/hostname\'","aggregated_output":"vm\\n","exit_code":0,"status":"completed"}}',
  ]);
  assert.deepEqual(events, [
    {
      type: "tool_call",
      id: "item_1",
      name: "shell",
      args: { command: "/bin/bash -lc 'cat /etc/hostname'" },
    },
    {
      type: "stop",
      reason:
        "lock broken: Codex started a shell command (\"/bin/bash -lc 'cat /etc/hostname'\") " +
        "(a command_execution item), which the locked run does not offer; the run was stopped. " +
        "Check `wats status` and docs/codex.md",
    },
    { type: "tool_result", id: "item_1", text: "vm\n", isError: false },
  ]);
});

Deno.test("a completed call without a started event still shows the call; junk lines are skipped", () => {
  const { events } = parseAll([
    "Reading prompt from stdin...",
    "{not json",
    "[1,2]",
    STATUS_RUN[4]!,
    '{"type":"item.completed","item":{"id":"item_9","type":"mcp_tool_call","server":"wats","tool":"feed","arguments":{},"result":null,"error":{"message":"connection closed"},"status":"failed"}}',
  ]);
  assert.deepEqual(events.map((e) => e.type), [
    "tool_call",
    "tool_result",
    "tool_call",
    "tool_result",
  ]);
  assert.deepEqual(events[3], {
    type: "tool_result",
    id: "item_9",
    text: "connection closed",
    isError: true,
  });
});
