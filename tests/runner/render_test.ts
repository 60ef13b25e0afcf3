import assert from "node:assert/strict";
import {
  budgetOf,
  renderRunsTable,
  renderTranscript,
  TranscriptRenderer,
} from "../../src/runner/render.ts";
import type { RunIndexEntry } from "../../src/contracts/runs.ts";
import { assistant, init, RESULT_SUCCESS, toolResult } from "./claude_samples.ts";
import { CODEX_RUN } from "./codex_samples.ts";

Deno.test("logs show assistant text, tool calls with arguments, truncated results, and summarise header and footer", () => {
  const long = "x".repeat(1000);
  const text = renderTranscript([
    JSON.stringify({
      type: "wats_run",
      id: "20261015T120000123Z-a1b2c3",
      trigger: "events",
      events: ["e1", "e2"],
      started_at: "2026-10-15T12:00:00.123Z",
      harness: "claude",
      max_turns: 10,
      max_budget_usd: 1.5,
    }),
    init([{ name: "wats", status: "connected" }], ["mcp__wats__answer"]),
    assistant("m1", { type: "text", text: "Reading the thread." }),
    assistant("m1", {
      type: "tool_use",
      id: "t1",
      name: "mcp__wats__answer",
      input: { parent: "e1", text: "Use X." },
    }),
    toolResult("t1", long),
    RESULT_SUCCESS,
    JSON.stringify({
      type: "wats_end",
      status: "ok",
      exit_code: 0,
      duration_ms: 12_345,
      turns: 2,
      cost_usd: 0.001227,
    }),
  ]);
  const lines = text.split("\n");
  assert.equal(
    lines[0],
    "── run 20261015T120000123Z-a1b2c3 · events · 2 event(s) · started 2026-10-15 12:00:00 · claude · max 10 turns · budget $1.50",
  );
  assert.equal(lines[1], "   events: e1, e2");
  assert.equal(lines[2], "   mcp: wats connected · 1 tool(s)");
  assert.equal(lines[3], "Reading the thread.");
  assert.equal(lines[4], '→ mcp__wats__answer {"parent":"e1","text":"Use X."}');
  assert.equal(lines[5], `← ${"x".repeat(300)}… (700 more chars)`);
  assert.equal(lines[6], "── end: ok · exit 0 · 12.3s · 2 turn(s) · $0.0012");
  assert.equal(lines.length, 7);
});

Deno.test("a failed run's footer shows its error", () => {
  const text = renderTranscript([
    JSON.stringify({
      type: "wats_end",
      status: "timeout",
      exit_code: null,
      duration_ms: 600_000,
      error: "timed out after agent.timeout = 10m",
    }),
  ]);
  assert.equal(
    text,
    "── end: timeout · exit - · 10m · ? turn(s) · no cost reported\n   error: timed out after agent.timeout = 10m",
  );
});

Deno.test("runs shows a table with the spend against the budget", () => {
  const now = Date.UTC(2026, 9, 15, 13);
  const entries: RunIndexEntry[] = [
    {
      id: "20261015T120000123Z-a1b2c3",
      trigger: "events",
      events: 2,
      started_at: "2026-10-15T12:00:00.123Z",
      ended_at: "2026-10-15T12:00:12.468Z",
      harness: "claude",
      status: "ok",
      exit_code: 0,
      duration_ms: 12_345,
      turns: 3,
      cost_usd: 0.25,
    },
    {
      id: "20261015T124500000Z-00ff00",
      trigger: "heartbeat",
      events: 0,
      started_at: "2026-10-15T12:45:00.000Z",
      ended_at: "2026-10-15T12:55:00.000Z",
      harness: "claude",
      status: "timeout",
      exit_code: null,
      duration_ms: 600_000,
    },
  ];
  const text = renderRunsTable(
    entries,
    budgetOf(entries.map((e) => ({ at: Date.parse(e.ended_at), costUsd: e.cost_usd })), {
      usdPerDay: 2,
      usdPerMonth: 20,
      runsPerDay: 48,
    }, now),
  );
  assert.equal(
    text,
    [
      "RUN                         STARTED (UTC)        TRIGGER    EVENTS  STATUS   DURATION  TURNS  COST",
      "20261015T120000123Z-a1b2c3  2026-10-15 12:00:00  events     2       ok       12.3s     3      $0.25",
      "20261015T124500000Z-00ff00  2026-10-15 12:45:00  heartbeat  0       timeout  10m       -      -",
      "",
      "spend today $0.25 of $2.00 · this month $0.25 of $20.00 · runs without a cost today 1 of 48",
    ].join("\n"),
  );
  assert.equal(renderRunsTable([]), "no runs yet");
});

Deno.test("for a runtime that reports no cost (Codex) the runs table counts runs and shows no $0", () => {
  const now = Date.parse("2026-10-15T13:00:00Z");
  const entries: RunIndexEntry[] = [{
    id: "20261015T120000123Z-a1b2c3",
    trigger: "events",
    events: 1,
    started_at: "2026-10-15T12:00:00.123Z",
    ended_at: "2026-10-15T12:00:02.000Z",
    harness: "codex",
    status: "ok",
    exit_code: 0,
    duration_ms: 1877,
    turns: 2,
  }];
  const budget = budgetOf([{ at: Date.parse(entries[0]!.ended_at) }], {
    usdPerDay: 2,
    usdPerMonth: 20,
    runsPerDay: 48,
  }, now);
  const text = renderRunsTable(entries, budget, "codex");
  assert.equal(
    text.split("\n").at(-1),
    "runs today 1 of 48 (codex reports no cost: runs count against agent.max_runs_per_day)",
  );
  assert.doesNotMatch(text, /\$/);
});

Deno.test("logs show the coding agents a run called: their tool calls, messages and each permission decision", () => {
  const acp = (event: string, more: Record<string, unknown>) =>
    JSON.stringify({ type: "wats_acp", event, harness: "claude", call: "r.acp_1", ...more });
  const chunk = (text: string) =>
    acp("acp_update", {
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
    });
  const text = renderTranscript([
    JSON.stringify({
      type: "wats_run",
      id: "20261015T120000123Z-a1b2c3",
      trigger: "events",
      events: [],
      started_at: "2026-10-15T12:00:00.123Z",
      harness: "claude",
    }),
    chunk("Writing "),
    chunk("the notes."),
    acp("acp_update", {
      update: { sessionUpdate: "tool_call", title: "Write notes.txt", kind: "edit" },
    }),
    acp("acp_permission", {
      request: "claude/edit",
      locations: ["/w/notes.txt"],
      verdict: "ask",
      answer: "parked",
      reason: "claude/edit is gated; parked for review as 0123456789ab",
    }),
    acp("acp_update", { update: { sessionUpdate: "usage_update", used: 1 } }),
    chunk("Done."),
  ]);
  assert.deepEqual(text.split("\n").slice(1), [
    "   claude│ Writing the notes.",
    "   claude│ → Write notes.txt [edit]",
    "   claude│ ? claude/edit /w/notes.txt → parked (ask: claude/edit is gated; parked for review as 0123456789ab)",
    "   claude│ Done.",
  ]);
});

Deno.test("logs show what a run's coding agent did after the run ended, under one line that says so", () => {
  const acp = (event: string, more: Record<string, unknown>) =>
    JSON.stringify({ type: "wats_acp", event, harness: "claude", call: "r.acp_1", ...more });
  const text = renderTranscript([
    JSON.stringify({
      type: "wats_run",
      id: "20261015T120000123Z-a1b2c3",
      trigger: "events",
      events: [],
      started_at: "2026-10-15T12:00:00.123Z",
      harness: "claude",
    }),
    JSON.stringify({ type: "wats_end", status: "ok", exit_code: 0, duration_ms: 1000 }),
    acp("acp_permission", {
      request: "claude/edit",
      locations: ["/w/notes.txt"],
      verdict: "allow",
      answer: "allow_once",
      reason: "a person approved it",
    }),
    acp("acp_update", {
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } },
    }),
  ]);
  assert.deepEqual(text.split("\n").slice(2), [
    "── after the run ended, its coding agent went on:",
    "   claude│ ? claude/edit /w/notes.txt → allow_once (allow: a person approved it)",
    "   claude│ Done.",
  ]);
});

Deno.test("a Codex run's logs show its tool call with arguments, the truncated result and its message, and no turn limit or budget", () => {
  const lines = renderTranscript(CODEX_RUN, { resultChars: 40 }).split("\n");
  const ask = "c958b34186d95f7d9a1706191eba30e8f05df10d07068b304d459b6be634bde7";
  assert.deepEqual(lines, [
    `── run 20261202T023641057Z-b6a221 · events · 1 event(s) · started 2026-12-02 02:36:41 · codex`,
    `   events: ${ask}`,
    `→ mcp__wats__answer {"parent":"${ask}","text":"Use journald (1)."}`,
    "← Posted answer 6d53538efad9462d5117518596… (113 more chars)",
    "Answered.",
    "── end: ok · exit 0 · 711ms · 2 turn(s) · no cost reported",
  ]);
});

Deno.test("a Claude run's header still shows its turn limit and budget; a Codex header written with them shows neither", () => {
  const header = (harness: string) =>
    JSON.stringify({
      type: "wats_run",
      id: "r",
      trigger: "heartbeat",
      events: [],
      started_at: "2026-12-02T00:00:00Z",
      harness,
      max_turns: 10,
      max_budget_usd: 2,
    });
  assert.equal(
    renderTranscript([header("claude")]),
    "── run r · heartbeat · 0 event(s) · started 2026-12-02 00:00:00 · claude · max 10 turns · budget $2.00",
  );
  assert.equal(
    renderTranscript([header("codex")]),
    "── run r · heartbeat · 0 event(s) · started 2026-12-02 00:00:00 · codex",
  );
});

Deno.test("an execute decision in a transcript names its command; a run a decision woke reads decision in wats agent runs", () => {
  const r = new TranscriptRenderer();
  const line = JSON.stringify({
    type: "wats_acp",
    event: "acp_permission",
    harness: "claude",
    call: "c1",
    request: "claude/execute",
    command: "git commit -am 'x\ny'",
    locations: [],
    verdict: "ask",
    answer: "parked",
    reason: "gated",
  });
  assert.deepEqual(r.line(line), [
    "   claude│ ? claude/execute `git commit -am 'x y'` → parked (ask: gated)",
  ]);
  const table = renderRunsTable([{
    id: "r1",
    trigger: "events",
    events: 0,
    decided: ["permission decided: claude/execute on work fix was approved"],
    started_at: "2026-11-30T12:00:00Z",
    ended_at: "2026-11-30T12:01:00Z",
    harness: "claude",
    status: "ok",
    exit_code: 0,
    duration_ms: 1000,
  }]);
  assert.match(table, /^r1 +2026-11-30 12:00:00 +decision +0 +ok/m);
});
