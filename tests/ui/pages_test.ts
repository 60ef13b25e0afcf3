/** What the pages render from data: escaping of others' content, and the chart's buckets. */

import assert from "node:assert/strict";
import { CODEX_RUN } from "../runner/codex_samples.ts";
import {
  haltPage,
  layout,
  messagePage,
  overviewPage,
  POST_COLLAPSE_CHARS,
  postsPage,
  runPage,
  runsPage,
  searchPage,
  threadPage,
} from "../../src/ui/pages.ts";
import { chartData } from "../../src/ui/charts.ts";
import { REQUEST_TEXT_MAX, reviewPage, rulePage } from "../../src/ui/review_page.ts";
import { proposedRule } from "../../src/node/policy_rule.ts";
import type { SpendItem } from "../../src/runner/spend_figures.ts";
import { markup } from "../../src/ui/markup.ts";
import type { NodeStatus, PostView } from "../../src/contracts/views.ts";
import type { HeldDraft } from "../../src/node/review_queue.ts";
import type { PermissionAsk } from "../../src/contracts/coding_agents.ts";
import type { RunIndexEntry } from "../../src/contracts/runs.ts";
import { nodeStatus } from "../support/node_status.ts";

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

Deno.test("an ask says whom it is for and the caps it names; a hostile cap is text", () => {
  const post: PostView = {
    id: "a".repeat(64),
    seq: 1,
    author: "b".repeat(64),
    authorNpub: "npub1asker",
    kind: "ask",
    title: "Which sqlite?",
    text: "3.45 or 3.46?",
    grafted: false,
    caps: ["sqlite", "<b>x</b>"],
    to: ["c".repeat(64)],
    createdAt: 1_790_000_000,
  };
  const html = postsPage({ csrf: "t" }, { posts: [post], newest: 1 });
  assert.match(html, /<div class="routing">for <code title="npub1[0-9a-z]+">npub1/);
  assert.match(html, /<div class="routing">caps sqlite, &#60;b&#62;x&#60;\/b&#62;<\/div>/);
  const open = postsPage({ csrf: "t" }, {
    posts: [{ ...post, to: undefined, caps: [] }],
    newest: 1,
  });
  assert.doesNotMatch(open, /class="routing"/);
});

Deno.test("spend and runs are bucketed per UTC day for 30 days and per hour for the last 24; a coding agent's call adds spend, not a run", () => {
  const now = Date.parse("2026-11-30T12:30:00Z");
  const run = (ended: string, cost?: number): SpendItem => ({
    at: Date.parse(ended),
    kind: "run",
    ...(cost !== undefined ? { usd: cost } : {}),
  });
  const c = chartData([
    { at: Date.parse("2026-11-30T12:25:00Z"), kind: "call", usd: 0.5, id: "acp_1" },
    run("2026-11-30T12:10:00Z", 0.01),
    run("2026-11-30T12:20:00Z", 0.02),
    run("2026-11-30T01:00:00Z"),
    run("2026-11-01T00:00:00Z", 1),
    run("2026-10-31T23:59:59Z", 5), // 31 days ago: outside
  ], now);
  assert.equal(c.days.t.length, 30);
  assert.equal(c.days.t[29], Date.parse("2026-11-30T00:00:00Z") / 1000);
  assert.equal(c.days.runs[29], 3);
  assert.equal(c.days.usd[29], 0.53);
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

Deno.test("a run over ACP shows its session, text, tool calls and decisions, and its coding agents, also after it ended; all escaped", () => {
  const l = (o: unknown) => JSON.stringify(o);
  const page = runPage({ csrf: "t" }, "r", [
    l({
      type: "wats_run",
      id: "r",
      trigger: "events",
      events: [],
      started_at: "x",
      harness: "acp",
    }),
    l({ type: "acp_session", harness: "claude", session: "s1", continued: true }),
    l({
      type: "acp_update",
      update: {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: "<b>hi</b>" },
      },
    }),
    l({
      type: "acp_update",
      update: {
        sessionUpdate: "tool_call",
        toolCallId: "t",
        title: "mcp__wats__answer",
        rawInput: { text: "ok" },
      },
    }),
    l({
      type: "acp_permission",
      request: "claude/execute",
      locations: [],
      verdict: "deny",
      answer: "reject_once",
      reason: "locked",
    }),
    l({ type: "acp_result", stop_reason: "end_turn", cost_usd: 0.01 }),
    l({ type: "wats_end", status: "ok", exit_code: 0, duration_ms: 5 }),
    l({
      type: "wats_acp",
      event: "acp_permission",
      harness: "coder",
      call: "r.acp_1",
      request: "coder/edit",
      locations: ["/w/<x>.txt"],
      verdict: "allow",
      answer: "allow_once",
      reason: "approved",
    }),
  ]);
  assert.match(page, /session s1 on \[harnesses\.claude\] \(continued\)/);
  assert.match(page, /&#60;b&#62;hi&#60;\/b&#62;/);
  assert.doesNotMatch(page, /<b>hi/);
  assert.match(page, /→ mcp__wats__answer/);
  assert.match(page, /\? claude\/execute → reject_once \(deny: locked\)/);
  assert.match(
    page,
    /after the run ended, its coding agent went on:\n {3}coder│ \? coder\/edit \/w\/&#60;x&#62;\.txt → allow_once/,
  );
  assert.match(page, /id="run-end"[^>]*>end: ok/);
});

/** A coding agent's request as the review queue holds it (docs/acp.md). */
function held(id: string, over: Partial<PermissionAsk>): HeldDraft {
  return {
    id,
    kind: "permission",
    text: "claude/edit: Write notes.txt",
    profile: "helper",
    createdAt: 1_790_000_000,
    permission: {
      request_id: "run-1.acp_1a2b:toolu_01",
      harness: "claude",
      kind: "edit",
      title: "Write notes.txt",
      arguments: { file_path: "/w/notes.txt", content: "reviewed\n" },
      locations: ["/w/notes.txt"],
      worktree: "/w",
      checkout: "billing",
      work: "fix-login",
      agent: "helper",
      thread: "_",
      task: "Fix the login redirect",
      reason: "claude/edit is gated: a person decides",
      ...over,
    },
  };
}

/** The card of the held item `id` in a review page. */
function card(html: string, id: string): string {
  const start = html.indexOf(`<article class="draft request" data-id="${id}">`);
  assert.ok(start >= 0, html);
  return html.slice(start, html.indexOf("</article>", start));
}

Deno.test("a held request shows what a person decides on: request, locations, arguments, worktree, checkout, work, why, task", () => {
  const html = reviewPage({ csrf: "tok" }, [held("0123456789ab", {})], 1_790_000_060_000);
  const c = card(html, "0123456789ab");
  assert.match(c, /<code class="request">claude\/edit<\/code> Write notes\.txt/);
  assert.match(c, /<th>locations<\/th><td><ul class="locations"><li><code>\/w\/notes\.txt<\/code>/);
  assert.match(c, /<th>worktree<\/th><td><code>\/w<\/code>/);
  assert.match(c, /<th>checkout<\/th><td><code>billing<\/code>/);
  assert.match(c, /<th>work<\/th><td><code>fix-login<\/code>/);
  assert.match(c, /<th>why it asks<\/th><td>claude\/edit is gated: a person decides/);
  assert.match(c, /<th>request id<\/th><td><code>run-1\.acp_1a2b:toolu_01<\/code>/);
  assert.match(c, /<pre class="arguments">\{\n {2}&#34;file_path&#34;: &#34;\/w\/notes\.txt&#34;,/);
  assert.match(c, /<pre class="task">Fix the login redirect<\/pre>/);
  assert.match(c, /by the coding agent of helper · 1m old/);
  // Approve allows once and reject refuses, through the same forms as drafts, with no text.
  assert.match(c, /<form method="post" action="\/review\/0123456789ab\/approve" class="approve">/);
  assert.match(c, /<form method="post" action="\/review\/0123456789ab\/reject" class="reject">/);
  assert.match(c, /name="csrf" value="tok"/);
  assert.match(c, /Approve \(allow once\)/);
  assert.doesNotMatch(c, /<textarea|name="reason"/);
  assert.match(html, /0 draft\(s\) and 1 coding agent request\(s\) wait for review/);
});

Deno.test("a held request's rawInput, title, locations and task are shown as text, never as markup, and bounded", () => {
  const evil = "</pre><script>alert(1)</script><img src=x onerror=alert(2)>";
  const html = reviewPage({ csrf: "t" }, [
    held("0123456789ab", {
      title: evil,
      arguments: { command: evil, [`k${evil}`]: "\u202egnp.exe", long: "x".repeat(10_000) },
      locations: [`/w/${evil}`, "/w/line\nbreak\u202e.txt"],
      worktree: `/w/${evil}`,
      work: evil,
      reason: evil,
      task: `${evil}\nsecond line`,
    }),
  ], 1_790_000_060_000);
  assert.ok(!html.includes("<script>"), html);
  assert.ok(!html.includes("</pre><script"), html);
  assert.ok(!html.includes("<img"), html);
  assert.ok(!html.includes("\u202e"), "no bidi override reaches the page");
  const c = card(html, "0123456789ab");
  assert.match(c, /&#60;\/pre&#62;&#60;script&#62;alert\(1\)&#60;\/script&#62;/);
  assert.match(c, /<li><code>\/w\/line break\.txt<\/code><\/li>/, "a location is one line");
  assert.match(c, /<pre class="task">&#60;\/pre&#62;.*\nsecond line<\/pre>/);
  // The 10,000 characters are cut, and the page says where to see them whole.
  const args = c.match(/<pre class="arguments">([^<]*)<\/pre>/)![1]!;
  assert.ok(args.length < REQUEST_TEXT_MAX * 2, `${args.length}`);
  assert.ok(!args.includes("x".repeat(REQUEST_TEXT_MAX)));
  assert.match(c, /characters in all: <code>wats agent pending show 0123456789ab<\/code>/);
});

Deno.test("an execute request's card names its command and no empty locations; it links to its work with the uncommitted changes a commit -a would take, and offers allow always", () => {
  const d = held("0123456789ab", {
    kind: "execute",
    title: "git commit",
    arguments: { command: "git commit -am 'Fix\nlogin'", description: "commit" },
    locations: [],
  });
  const html = reviewPage(
    { csrf: "t" },
    [d],
    1_790_000_060_000,
    new Map([["0123456789ab", {
      id: "billing~helper~_~fix-login",
      uncommitted: {
        cut: false,
        diff: [{
          path: "src/login.ts",
          status: "modified",
          binary: false,
          additions: 3,
          deletions: 1,
          hunks: [],
          cut: false,
        }],
      },
    }]]),
  );
  const c = card(html, "0123456789ab");
  assert.match(
    c,
    /<th>command<\/th><td><code id="request-command">git commit -am &#39;Fix login&#39;<\/code>/,
  );
  assert.doesNotMatch(c, /locations|\(none\)/);
  assert.match(
    c,
    /<th>work<\/th><td><a class="work-link" href="\/works\/billing~helper~_~fix-login">fix-login<\/a>/,
  );
  assert.match(
    c,
    /1 file\(s\) changed and not committed: what a <code>git commit -a<\/code> would take/,
  );
  assert.match(c, /<li><code>src\/login\.ts<\/code> modified \+3 −1<\/li>/);
  assert.match(c, /<a class="allow-always" href="\/review\/0123456789ab\/rule">Allow always/);
  // The rule it proposes: the command; the confirmation page writes nothing without its box.
  const rule = proposedRule({
    harness: "claude",
    kind: "execute",
    locations: [],
    command: "git commit -am 'Fix\nlogin'",
  });
  assert.equal(rule, "claude/execute(git commit -am 'Fix login')");
  assert.equal(
    proposedRule({ harness: "claude", kind: "edit", locations: ["/w/a.ts"] }),
    "claude/edit(/w/a.ts)",
  );
  assert.equal(proposedRule({ harness: "claude", kind: "fetch", locations: [] }), "claude/fetch");
  const page = rulePage({ csrf: "t" }, d, rule);
  assert.match(page, /<form method="post" action="\/review\/0123456789ab\/rule">/);
  assert.match(page, /name="confirm" value="on"/);
  assert.match(
    page,
    /a safety change, which <code>wats status<\/code> and the overview flag until you run <code>wats config ack<\/code>/,
  );
});

Deno.test("a call in doubt says what approve and reject do, and shows its task", () => {
  const html = reviewPage({ csrf: "t" }, [
    held("ba9876543210", {
      request_id: "run-1.acp_1a2b",
      kind: "in_doubt",
      title: "call run-1.acp_1a2b was running when the node stopped",
      arguments: undefined,
      locations: [],
      reason: "the node stopped during this call: its state is in doubt",
      task: "TASK-K: write the notes",
    }),
  ], 1_790_000_060_000);
  const c = card(html, "ba9876543210");
  assert.match(c, /<span class="kind">call in doubt<\/span>/);
  assert.match(c, /<code class="request">claude\/in_doubt<\/code>/);
  assert.doesNotMatch(c, /locations|\(none\)/, "no locations: no row saying so");
  assert.doesNotMatch(c, /Allow always/, "a call in doubt has no rule to add");
  assert.match(c, /Approve sends a new call telling the coding agent to check the worktree/);
  assert.match(c, /<pre class="task">TASK-K: write the notes<\/pre>/);
  assert.doesNotMatch(c, /Arguments/);
  assert.match(c, /Approve \(finish the task\)/);
  assert.match(c, /Reject \(leave the work as it is\)/);
});

Deno.test("a Codex run's page shows its tool call with arguments, the result and the agent's message", () => {
  const page = runPage({ csrf: "t" }, "r", CODEX_RUN);
  assert.match(
    page,
    /<span class="tool">→ mcp__wats__answer<\/span><pre>\{\n {2}&#34;parent&#34;: &#34;c958b341/,
  );
  assert.match(page, /&#34;text&#34;: &#34;Use journald \(1\)\.&#34;/);
  assert.match(page, /<span class="tool">← result<\/span><pre>Posted answer 6d53538e/);
  assert.match(page, /<div class="msg"><pre>Answered\.<\/pre><\/div>/);
  assert.match(page, /id="run-end"[^>]*>end: ok · 2 turn\(s\) · no cost reported/);
});

Deno.test("the overview lists the asks held for other agents' claims, with claimer and lapse", () => {
  const status = nodeStatus({
    agent: { runtime: "claude", profile: "me-agent" },
    pauses: {
      threads: [],
      claimed: {
        count: 2,
        asks: [
          { ask: "a".repeat(64), by: "b".repeat(64), lapsesAt: Date.parse("2026-12-02T06:00:00Z") },
          { ask: "c".repeat(64), by: "d".repeat(64) },
        ],
      },
    },
  });
  const html = overviewPage({ csrf: "t" }, status, { chart: chartData([], 0) });
  assert.match(
    html,
    /<section id="claimed" data-live><h2>Asks claimed by other agents<\/h2><p>2 ask\(s\)/,
  );
  assert.match(
    html,
    /claimed by <code>npub1[0-9a-z]+…[0-9a-z]+<\/code> · lapses 2026-12-02 06:00<\/li>/,
  );
  const none = overviewPage({ csrf: "t" }, { ...status, pauses: { threads: [] } }, {
    chart: chartData([], 0),
  });
  assert.doesNotMatch(none, /id="claimed"/);
});

Deno.test("the overview says which asks are retrying in how long, and which were given up", () => {
  const status = nodeStatus({
    agent: { runtime: "claude", profile: "me-agent" },
    pauses: {
      threads: [],
      retrying: [{
        what: "new ask 1a2b3c4d5e6f",
        tries: 2,
        of: 4,
        at: 0,
        inMs: 120_000,
        error: "MCP server wats did not connect",
      }],
      gaveUp: [{ what: "new ask 9f8e7d6c5b4a", tries: 4, of: 4, at: 0, error: "API Error: 529" }],
    },
  });
  const html = overviewPage({ csrf: "t" }, status, { chart: chartData([], 0) });
  assert.match(html, /new ask 1a2b3c4d5e6f: retrying in 2m \(try 3 of 4\)/);
  assert.match(html, /new ask 9f8e7d6c5b4a: gave up after 4 tries/);
});

Deno.test("the overview shows, per runtime and harness, whether it runs sandboxed", () => {
  const status = nodeStatus({
    agent: { runtime: "claude", profile: "me-agent" },
    sandbox: [
      { who: "agent runs (claude)", state: "sandboxed" },
      {
        who: "harness <codex>",
        state: "warning: unsandboxed (sandbox.mode = auto): bwrap is not on PATH",
      },
    ],
  });
  const html = overviewPage({ csrf: "t" }, status, { chart: chartData([], 0) });
  assert.match(
    html,
    /sandbox: agent runs \(claude\)<\/th><td><span class="ok">sandboxed<\/span>/,
    html,
  );
  assert.match(html, /sandbox: harness &#60;codex&#62;/);
  assert.match(html, /<span class="bad">warning: unsandboxed \(sandbox.mode = auto\)/);
});

Deno.test("every page shows hostile text in every field it prints as text, never as markup", () => {
  const evil = `"'<script>alert(1)</script><img src=x onerror="alert(2)">`;
  const ctx = { csrf: evil, flash: evil, noDaemon: evil };
  const post: PostView = {
    id: evil,
    seq: 1,
    author: evil,
    authorNpub: evil,
    kind: evil,
    title: evil,
    text: evil,
    grafted: true,
    caps: [],
    createdAt: 1_790_000_000,
    root: evil,
  };
  const status: NodeStatus = {
    node: evil,
    profile: { name: evil, npub: evil },
    relays: [evil],
    agent: { runtime: evil, profile: evil },
    pendingDrafts: 1,
    safetyNotices: [evil],
    halted: { by: evil, byProfile: evil, at: 1_790_000_000, reason: evil },
    budget: null,
    pauses: { budget: { reason: evil, until: 0 }, threads: [{ thread: evil, reason: evil }] },
    storedPosts: 1,
    sandbox: [{ who: evil, state: evil }],
    network: { relays: [{ url: evil, connected: false, lastError: evil }], outbox: 0 },
  };
  // The index is a file on disk: what it says is not trusted either.
  const run: RunIndexEntry = {
    id: evil,
    trigger: evil as RunIndexEntry["trigger"],
    events: 1,
    started_at: evil,
    ended_at: evil,
    harness: "claude",
    status: evil as RunIndexEntry["status"],
    exit_code: 0,
    duration_ms: 1,
  };
  const l = (o: unknown) => JSON.stringify(o);
  const lines = [
    evil,
    l({
      type: "wats_run",
      id: "r",
      trigger: evil,
      events: [],
      started_at: evil,
      harness: "claude",
    }),
    l({ type: "assistant", message: { content: [{ type: "text", text: evil }] } }),
    l({ type: "wats_end", status: evil, exit_code: 1, duration_ms: 5, error: evil }),
  ];
  const draft: HeldDraft = {
    id: evil,
    kind: evil,
    text: evil,
    profile: evil,
    createdAt: 1_790_000_000,
    title: evil,
    parent: evil,
    runId: evil,
    parentSummary: { author: evil, kind: evil, text: evil },
  };
  const pages: Record<string, string> = {
    overview: overviewPage(ctx, status, { access: evil, chart: chartData([], 0) }),
    overviewOffline: overviewPage(ctx, { ...status, network: undefined }, {
      chart: chartData([], 0),
    }),
    posts: postsPage(ctx, { posts: [post], newest: 1 }),
    search: searchPage(ctx, evil, [post]),
    thread: threadPage(ctx, { root: evil, posts: [post], cut: false }),
    runs: runsPage(ctx, [run], [evil], { offset: 0, size: 10 }),
    run: runPage(ctx, evil, lines),
    review: reviewPage(ctx, [draft, held("0123456789ab", { title: evil, agent: evil })], 0),
    halt: haltPage(ctx, status, 1_790_000_060_000),
    message: messagePage(evil, evil),
  };
  for (const [name, html] of Object.entries(pages)) {
    assert.ok(!html.includes("<script>alert"), `${name}: ${html}`);
    assert.ok(!html.includes("<img"), `${name}: ${html}`);
    assert.ok(!html.includes('onerror="'), `${name}: ${html}`);
    assert.match(html, /&#60;script&#62;alert\(1\)/, name);
  }
});

Deno.test("the halt page says who halted and when, and offers only the action that applies", () => {
  const ctx = { csrf: "t" };
  const base: NodeStatus = {
    node: "n",
    profile: { name: "alice", npub: "npub1" + "q".repeat(58) },
    relays: [],
    agent: null,
    pendingDrafts: 0,
    safetyNotices: [],
    halted: null,
    budget: null,
    storedPosts: 0,
  };
  const idle = haltPage(ctx, base, 1_790_000_000_000);
  assert.match(idle, /No agent runs on this node\./);
  assert.ok(!idle.includes("The agent runs"), idle);
  assert.match(idle, /action="\/halt"/);
  assert.ok(!idle.includes('action="/resume"'), idle);

  const byMe = haltPage(ctx, {
    ...base,
    agent: { runtime: "claude", profile: "alice-agent" },
    halted: { by: base.profile.npub, byProfile: "alice", at: 1_790_000_000 },
  }, 1_790_000_000_000);
  assert.match(byMe, /Halted by alice 0s ago\./);
  assert.match(byMe, /action="\/resume"/);
  assert.ok(!byMe.includes('action="/halt"'), byMe);

  const other = "npub1" + "z".repeat(58);
  const byOther = haltPage(
    ctx,
    { ...base, halted: { by: other, at: 1_790_000_000 } },
    1_790_000_090_000,
  );
  assert.match(byOther, /Halted by npub1zzzzzzz…zzzzzz 1m30s ago\./);
  assert.ok(!byOther.includes(other), byOther);
});

function aPost(over: Partial<PostView>): PostView {
  return {
    id: "a".repeat(64),
    seq: 1,
    author: "b".repeat(64),
    authorNpub: "npub1" + "b".repeat(58),
    kind: "note",
    text: "hi",
    grafted: false,
    caps: [],
    createdAt: 1_790_000_000,
    ...over,
  };
}

Deno.test("a flash line shows ids shortened as the pages show them", () => {
  const id = "0123456789abcdef".repeat(4);
  const html = layout({ csrf: "t", flash: `approved draft ${id}: published` }, "x", markup``);
  assert.match(html, /approved draft 0123456789ab…abcdef: published/);
  assert.ok(!html.includes(id), html);
});

Deno.test("a thread is headed by its ask's title, or its short id when it has none", () => {
  const ask = aPost({ id: "c".repeat(64), kind: "ask", title: "<b>How to rotate logs?</b>" });
  const reply = aPost({ id: "d".repeat(64), seq: 2, parent: ask.id, root: ask.id });
  const titled = threadPage({ csrf: "t" }, { root: ask.id, posts: [ask, reply], cut: false });
  assert.match(titled, /<h1>Thread: &#60;b&#62;How to rotate logs\?&#60;\/b&#62;<\/h1>/);
  const bare = threadPage({ csrf: "t" }, {
    root: ask.id,
    posts: [{ ...ask, title: undefined }],
    cut: false,
  });
  assert.match(bare, /<h1>Thread: <code>cccccccccccc…cccccc<\/code><\/h1>/);
});

Deno.test("a reply in the feed says what it answers: the title when shown, else a short id", () => {
  const ask = aPost({ id: "c".repeat(64), kind: "ask", title: "Rotate <logs>" });
  const reply = aPost({ id: "d".repeat(64), seq: 2, parent: ask.id, root: ask.id });
  const orphan = aPost({
    id: "e".repeat(64),
    seq: 3,
    parent: "f".repeat(64),
    root: "f".repeat(64),
  });
  const html = postsPage({ csrf: "t" }, { posts: [orphan, reply, ask], newest: 3 });
  assert.match(html, /reply to <a href="\/posts\/thread\/c{64}">Rotate &#60;logs&#62;<\/a>/);
  assert.match(
    html,
    /reply to <a href="\/posts\/thread\/f{64}"><code>ffffffffffff…ffffff<\/code><\/a>/,
  );
  assert.equal(html.match(/reply to/g)?.length, 2, "the ask itself answers nothing");
});

Deno.test("a long post is collapsed under its start; a short one is not", () => {
  const long = "line <one>\n" + "x".repeat(POST_COLLAPSE_CHARS);
  const html = postsPage({ csrf: "t" }, {
    posts: [aPost({ text: long }), aPost({ id: "9".repeat(64), text: "short <one>" })],
    newest: 2,
  });
  assert.equal(html.match(/<details class="long">/g)?.length, 1, html);
  assert.match(html, /<summary><span class="preview">line &#60;one&#62;/);
  assert.ok(
    html.includes(
      `<pre class="text">line &#60;one&#62;\n${"x".repeat(POST_COLLAPSE_CHARS)}</pre></details>`,
    ),
  );
  assert.match(html, /<pre class="text">short &#60;one&#62;<\/pre>/);
});

Deno.test("an empty chart says there are no runs yet; one with runs does not", () => {
  const status = nodeStatus();
  const none = overviewPage({ csrf: "t" }, status, { chart: chartData([], 0) });
  assert.match(none, /<p class="empty" id="chart-days-empty">No runs yet\.<\/p>/);
  assert.match(none, /<p class="empty" id="chart-hours-empty">No runs yet\.<\/p>/);
  const now = Date.parse("2026-11-30T12:30:00Z");
  const old: SpendItem = { at: Date.parse("2026-11-20T10:00:00Z"), kind: "run" };
  const some = overviewPage({ csrf: "t" }, status, { chart: chartData([old], now) });
  assert.ok(!some.includes("chart-days-empty"), some);
  assert.match(some, /id="chart-hours-empty"/, "none in the last 24 hours");
});

Deno.test("a thread whose first post is an ask shows what became of it, and the page is live", () => {
  const ask = aPost({ id: "c".repeat(64), kind: "ask", title: "Logs" });
  const by = "npub1" + "q".repeat(58);
  const html = threadPage({ csrf: "t" }, {
    root: ask.id,
    posts: [ask],
    cut: false,
    askState: {
      ask: ask.id,
      by,
      local: true,
      phase: "claimed",
      sent: { acked: 1, of: 1 },
      routing: { caps: ["<rust>"], to: [], matching: 1, reachable: 1 },
      claim: { by, at: Date.UTC(2027, 0, 1), until: Date.UTC(2027, 0, 1, 0, 30) },
      answers: [],
      heldDrafts: [],
    },
  });
  assert.match(
    html,
    /<section id="ask-state" class="ask-state claimed" data-live data-phase="claimed">/,
  );
  assert.match(
    html,
    new RegExp(`claimed by ${by} until 2027-01-01T00:30:00Z unless they post again`),
  );
  assert.match(html, /<li>sent: acknowledged by 1 of 1 relay\(s\)<\/li>/);
  // A cap is another author's text: escaped.
  assert.match(html, /match(es)? caps \[&#60;rust&#62;\]/);
  assert.match(html, /<link id="live-events"/);
  assert.match(html, /<section id="thread-posts" data-live data-edits>/);
  const none = threadPage({ csrf: "t" }, { root: ask.id, posts: [ask], cut: false });
  assert.doesNotMatch(none, /id="ask-state"/);
});

Deno.test("a run's page links to the works its coding agents changed; a thread's page to the works started for it; a run a decision woke says so", () => {
  const header = JSON.stringify({
    type: "wats_run",
    id: "r",
    trigger: "events",
    events: [],
    started_at: "2026-11-30T12:00:00Z",
    harness: "claude",
  });
  const changed = JSON.stringify({
    type: "wats_acp",
    event: "work_changed",
    harness: "claude",
    call: "r.acp_1",
    work: "app~helper~aaaaaaaaaaaa~fix",
    what: "call ended: ok",
  });
  const forged = JSON.stringify({ type: "wats_acp", event: "work_changed", work: '"><b>x' });
  const run = runPage({ csrf: "t" }, "r", [header, changed, forged]);
  assert.match(
    run,
    /<p id="run-works">Works of this run's coding agents: <a href="\/works\/app~helper~aaaaaaaaaaaa~fix">app~helper~aaaaaaaaaaaa~fix<\/a><\/p>/,
  );
  assert.ok(!run.includes("<b>x"));
  const root = "a".repeat(64);
  const thread = threadPage({ csrf: "t" }, { root, posts: [], cut: false }, [
    { id: "app~helper~aaaaaaaaaaaa~fix", work: "fix", state: "idle" },
  ]);
  assert.match(
    thread,
    /<p id="thread-works">Coding agents' works for this thread: <a href="\/works\/app~helper~aaaaaaaaaaaa~fix">fix<\/a> \(idle\)<\/p>/,
  );
  const woken: RunIndexEntry = {
    id: "r2",
    trigger: "events",
    events: 0,
    decided: ["permission decided: claude/execute on work fix was approved"],
    started_at: "2026-11-30T12:00:00Z",
    ended_at: "2026-11-30T12:01:00Z",
    harness: "claude",
    status: "ok",
    exit_code: 0,
    duration_ms: 1,
  };
  const runs = runsPage({ csrf: "t" }, [woken], [], { offset: 0, size: 10 });
  assert.match(
    runs,
    /<td>woken by a decision: permission decided: claude\/execute on work fix was approved<\/td>/,
  );
  assert.doesNotMatch(runs, /0 event\(s\)/);
});
