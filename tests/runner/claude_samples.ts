/**
 * stream-json lines of Claude Code 2.1.197, recorded against the scripted mock
 * model (tests/support/mock_anthropic.ts) and trimmed of fields the runner does
 * not read (slash_commands, skills, usage details). See docs/harness_facts.md.
 *
 * @module
 */

const SESSION = "2eacfcb4-6e4b-4533-89a3-234370cacf6d";

/** `system/init`; `servers` replaces `mcp_servers`. */
export function init(servers: { name: string; status: string }[], tools: string[]): string {
  return JSON.stringify({
    type: "system",
    subtype: "init",
    cwd: "/tmp/wats/agent/run",
    session_id: SESSION,
    tools,
    mcp_servers: servers,
    model: "claude-sonnet-4-5-20250929",
    permissionMode: "default",
    apiKeySource: "ANTHROPIC_API_KEY",
    claude_code_version: "2.1.197",
    uuid: "abf898aa-972e-4b87-9fb2-cadfb098bfa3",
  });
}

function usage(input: number, output: number) {
  return {
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

/** One assistant event per content block, all with the message's id and usage. */
export function assistant(msgId: string, block: Record<string, unknown>): string {
  return JSON.stringify({
    type: "assistant",
    message: {
      id: msgId,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [block],
      stop_reason: null,
      stop_sequence: null,
      usage: usage(111, 40),
      context_management: null,
    },
    parent_tool_use_id: null,
    session_id: SESSION,
    uuid: crypto.randomUUID(),
  });
}

/** A tool result, as a `user` event. */
export function toolResult(toolUseId: string, text: string, isError = false): string {
  return JSON.stringify({
    type: "user",
    message: {
      role: "user",
      content: [{
        tool_use_id: toolUseId,
        type: "tool_result",
        content: [{ type: "text", text }],
        ...(isError ? { is_error: true } : {}),
      }],
    },
    parent_tool_use_id: null,
    session_id: SESSION,
    uuid: crypto.randomUUID(),
    timestamp: "2026-11-29T22:32:32.608Z",
    tool_use_result: [{ type: "text", text }],
  });
}

/** A successful result. */
export const RESULT_SUCCESS = JSON.stringify({
  type: "result",
  subtype: "success",
  is_error: false,
  api_error_status: null,
  duration_ms: 222,
  duration_api_ms: 115,
  num_turns: 2,
  result: "The echo worked.",
  stop_reason: "end_turn",
  session_id: SESSION,
  total_cost_usd: 0.001227,
  usage: {
    input_tokens: 289,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 24,
  },
  modelUsage: {
    "claude-sonnet-4-5-20250929": { inputTokens: 289, outputTokens: 24, costUSD: 0.001227 },
  },
  permission_denials: [],
  terminal_reason: "completed",
  uuid: "e43433c4-8bfb-4640-af8d-9c9ee98c7b1c",
});

/** An API error: subtype success, is_error true (the CLI exited 1 here; docs/harness_facts.md saw 0). */
export const API_ERROR = [
  JSON.stringify({
    type: "assistant",
    message: {
      id: "b256533b-1787-4c74-b50c-40361807332e",
      model: "<synthetic>",
      role: "assistant",
      stop_reason: "stop_sequence",
      type: "message",
      usage: usage(0, 0),
      content: [{ type: "text", text: "API Error: 400 bad thing" }],
    },
    parent_tool_use_id: null,
    session_id: SESSION,
    error: "unknown",
    request_id: "req_mock_error",
  }),
  JSON.stringify({
    type: "result",
    subtype: "success",
    is_error: true,
    api_error_status: 400,
    duration_ms: 105,
    duration_api_ms: 0,
    num_turns: 1,
    result: "API Error: 400 bad thing",
    stop_reason: "stop_sequence",
    session_id: SESSION,
    total_cost_usd: 0,
    modelUsage: {},
    permission_denials: [],
    terminal_reason: "completed",
  }),
];

/** `--max-turns 1` after one tool call: exit code 1. */
export const RESULT_MAX_TURNS = JSON.stringify({
  type: "result",
  subtype: "error_max_turns",
  duration_ms: 149,
  duration_api_ms: 67,
  is_error: true,
  num_turns: 2,
  stop_reason: "tool_use",
  session_id: SESSION,
  total_cost_usd: 0.000513,
  permission_denials: [],
  terminal_reason: "max_turns",
  errors: ["Reached maximum number of turns (1)"],
});
