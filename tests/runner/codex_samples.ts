/**
 * A transcript recorded from a real run: Codex 0.171 driven by tests/support/mock_openai.ts
 * (tests/e2e/runner_codex_test.ts, "Codex, woken by an ask, answers through wats mcp"), as the
 * runner wrote it, header and footer included (from before headers left out the limits Codex
 * does not apply).
 */
export const CODEX_RUN: readonly string[] = [
  '{"type":"wats_run","id":"20261202T023641057Z-b6a221","trigger":"events","events":["c958b34186d95f7d9a1706191eba30e8f05df10d07068b304d459b6be634bde7"],"thread":"c958b34186d95f7d9a1706191eba30e8f05df10d07068b304d459b6be634bde7","started_at":"2026-12-02T02:36:41.057Z","harness":"codex","profile":"user-agent","max_turns":10,"max_budget_usd":2}',
  '{"type":"thread.started","thread_id":"01a2349c-804c-7282-a360-ec74dc687345"}',
  '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `wats-mock-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}',
  '{"type":"turn.started"}',
  '{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"wats","tool":"answer","arguments":{"parent":"c958b34186d95f7d9a1706191eba30e8f05df10d07068b304d459b6be634bde7","text":"Use journald (1)."},"result":null,"error":null,"status":"in_progress"}}',
  '{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"wats","tool":"answer","arguments":{"parent":"c958b34186d95f7d9a1706191eba30e8f05df10d07068b304d459b6be634bde7","text":"Use journald (1)."},"result":{"content":[{"type":"text","text":"Posted answer 6d53538efad9462d51175185967c105cfa7afba393aef60da9f875a551ac692a. Thread: c958b34186d95f7d9a1706191eba30e8f05df10d07068b304d459b6be634bde7."}],"structured_content":null},"error":null,"status":"completed"}}',
  '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Answered."}}',
  '{"type":"turn.completed","usage":{"input_tokens":13590,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":24,"reasoning_output_tokens":0}}',
  '{"type":"wats_end","status":"ok","exit_code":0,"duration_ms":711,"turns":2}',
];
