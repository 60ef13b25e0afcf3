/** What the pages render from data: escaping of others' content, and the chart's buckets. */

import assert from "node:assert/strict";
import { postsPage, runPage } from "../../src/ui/pages.ts";
import { chartData } from "../../src/ui/charts.ts";
import type { PostView } from "../../src/mcp/service.ts";
import type { RunIndexEntry } from "../../src/runner/transcripts.ts";

Deno.test("a post's text, title and kind are shown as text, never as markup", () => {
  const evil = '<script>alert(1)</script><img src=x onerror="alert(2)">';
  const post: PostView = {
    id: "a".repeat(64),
    seq: 1,
    author: "b".repeat(64),
    authorNpub: "npub1evil",
    kind: "note",
    title: evil,
    text: `</pre>${evil}`,
    grafted: false,
    caps: [],
    createdAt: 1_790_000_000,
  };
  const html = postsPage({ csrf: "t" }, { posts: [post], newest: 1 });
  assert.ok(!html.includes("<script>alert"), html);
  assert.ok(!html.includes("<img src=x"));
  assert.match(html, /&#60;script&#62;alert\(1\)&#60;\/script&#62;/);
  assert.match(html, /unverified: content, not instructions/);
});

Deno.test("spend and runs are bucketed per UTC day for 30 days and per hour for the last 24", () => {
  const now = Date.parse("2026-11-30T12:30:00Z");
  const run = (ended: string, cost?: number): RunIndexEntry => ({
    id: "x",
    trigger: "events",
    events: 1,
    started_at: ended,
    ended_at: ended,
    harness: "claude",
    status: "ok",
    exit_code: 0,
    duration_ms: 1,
    ...(cost !== undefined ? { cost_usd: cost } : {}),
  });
  const c = chartData([
    run("2026-11-30T12:10:00Z", 0.01),
    run("2026-11-30T12:20:00Z", 0.02),
    run("2026-11-30T01:00:00Z"),
    run("2026-11-01T00:00:00Z", 1),
    run("2026-10-31T23:59:59Z", 5), // 31 days ago: outside
  ], now);
  assert.equal(c.days.t.length, 30);
  assert.equal(c.days.t[29], Date.parse("2026-11-30T00:00:00Z") / 1000);
  assert.equal(c.days.runs[29], 3);
  assert.equal(c.days.usd[29], 0.03);
  assert.equal(c.days.usd[0], 1);
  assert.equal(c.days.runs.reduce((a, b) => a + b), 4);
  assert.equal(c.hours.t.length, 24);
  assert.equal(c.hours.runs[23], 2);
  assert.equal(c.hours.runs[12], 1, "01:00 is 11 hours before 12:00");
});

Deno.test("a run still going reloads itself until its end line arrives (live follow)", () => {
  const header = JSON.stringify({
    type: "wats_run",
    id: "r",
    trigger: "events",
    events: [],
    started_at: "2026-11-30T00:00:00Z",
    harness: "claude",
  });
  const call = JSON.stringify({
    type: "assistant",
    message: {
      content: [{ type: "tool_use", id: "t1", name: "mcp__wats__feed", input: { limit: 5 } }],
    },
  });
  const going = runPage({ csrf: "t" }, "r", [header, call]);
  assert.match(going, /<meta http-equiv="refresh" content="2">/);
  assert.match(going, /id="run-live"/);
  assert.match(going, /mcp__wats__feed/);
  const end = JSON.stringify({ type: "wats_end", status: "ok", exit_code: 0, duration_ms: 5 });
  const done = runPage({ csrf: "t" }, "r", [header, call, end]);
  assert.doesNotMatch(done, /http-equiv="refresh"/);
  assert.match(done, /id="run-end"[^>]*>end: ok/);
});
