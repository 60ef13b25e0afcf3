import assert from "node:assert/strict";
import type { NodeEvent } from "../../src/contracts/node_events.ts";
import { type Notice, noticeOf } from "../../src/node/notices.ts";
import {
  DELIVERY_HEADER,
  type LiveTarget,
  notifyRequest,
  signature,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
} from "../../src/node/notify_payloads.ts";

const CTX = { node: "node1", at: Date.UTC(2026, 0, 2, 3, 4, 5), id: "d-1" };
const AT = "2026-01-02T03:04:05.000Z";

function target(type: LiveTarget["type"]): LiveTarget {
  return {
    name: "t",
    type,
    url: "https://hooks.example.org/x",
    events: ["draft"],
    timeoutMs: 1000,
  };
}

const NOTICE: Notice = {
  event: "permission",
  id: "d-1",
  title: "wats: a coding agent waits for a decision",
  text: "claude/execute <!channel> & rm (work w1)",
  command: "wats agent approve p1",
  path: "/review",
  at: AT,
  node: "node1",
};

Deno.test("each waiting thing becomes a notice naming the command and page that answer it", () => {
  const cases: Array<[NodeEvent, Partial<Notice>]> = [
    [
      { event: "held", id: "p1", what: "draft", summary: "note p1: hello\nworld" },
      { event: "draft", text: "note p1: hello world", command: "wats agent approve p1" },
    ],
    [
      { event: "held", id: "p2", what: "permission", summary: "claude/edit src/a.ts (work w)" },
      { event: "permission", command: "wats agent approve p2", path: "/go/review" },
    ],
    [
      { event: "held", id: "p3", what: "in_doubt", summary: "claude/in_doubt (work w)" },
      { event: "in_doubt", title: "wats: a coding agent's call is in doubt" },
    ],
    [
      { event: "halted", id: "h", by: "b".repeat(64), reason: "stop it" },
      { event: "halted", text: "halted: stop it", command: "wats resume", path: "/go/halt" },
    ],
    [
      { event: "budget_paused", reason: "agent.max_usd_per_day spent", until: CTX.at + 3600_000 },
      {
        event: "budget_paused",
        text: "agent.max_usd_per_day spent; they resume at 2026-01-02T04:04:05.000Z",
        command: "wats status",
      },
    ],
  ];
  for (const [e, want] of cases) {
    const n = noticeOf(e, CTX);
    assert.ok(n, e.event);
    assert.equal(n.at, AT);
    assert.equal(n.node, "node1");
    assert.deepEqual({ ...n, ...want }, n, JSON.stringify(e));
  }
});

Deno.test("a coding agent's call that ended with commits is a work_ready notice naming its page and command; one without commits, or a commit mid-call, is none", () => {
  const changed = (what: string, commits?: number): NodeEvent => ({
    event: "work_changed",
    type: "work_changed",
    harness: "claude",
    agent: "helper",
    call: "acp_1",
    checkout: "app",
    branch: "wats/helper/_/fix-login",
    work: "app~helper~_~fix-login",
    what,
    ...(commits !== undefined ? { commits } : {}),
  });
  const n = noticeOf(changed("call ended: ok", 2), CTX);
  assert.ok(n);
  assert.equal(n.event, "work_ready");
  assert.equal(n.command, "wats work show app~helper~_~fix-login");
  assert.equal(n.path, "/go/works/app~helper~_~fix-login");
  assert.match(
    n.text,
    /^2 commit\(s\) on wats\/helper\/_\/fix-login in checkout app \(call ended: ok\)/,
  );
  assert.equal(noticeOf(changed("call ended: ok", 0), CTX), undefined);
  assert.equal(noticeOf(changed("call ended: error"), CTX), undefined);
  assert.equal(noticeOf(changed("committed", 1), CTX), undefined);
});

Deno.test("a run that failed or timed out is a notice; one stopped, halted or ok is not", () => {
  const run = (status: "ok" | "error" | "timeout" | "stopped" | "halted"): NodeEvent => ({
    event: "run_ended",
    run: "r1",
    id: "r1",
    trigger: "events",
    events: 1,
    started_at: AT,
    ended_at: AT,
    harness: "claude",
    status,
    exit_code: 1,
    duration_ms: 5,
    ...(status === "error" ? { error: "exit 1" } : {}),
  });
  const n = noticeOf(run("error"), CTX);
  assert.deepEqual(
    [n?.event, n?.text, n?.command, n?.path],
    ["run_failed", "run r1: exit 1", "wats agent logs --run r1", "/go/runs/r1"],
  );
  assert.equal(noticeOf(run("timeout"), CTX)?.event, "run_failed");
  for (const s of ["ok", "stopped", "halted"] as const) {
    assert.equal(noticeOf(run(s), CTX), undefined);
  }
  assert.equal(noticeOf({ event: "resumed" }, CTX), undefined);
  assert.equal(noticeOf({ event: "run_started", run: "r1" }, CTX), undefined);
});

Deno.test("an ask of this node with no taker is a no_taker notice naming wats thread and the thread's page; an answer is none", () => {
  const ask = "c".repeat(64);
  const n = noticeOf(
    { event: "ask_no_taker", ask, title: "Logs\nrotation", since: Date.UTC(2027, 0, 1) },
    CTX,
  );
  assert.deepEqual(
    [n?.event, n?.title, n?.text, n?.command, n?.path],
    [
      "no_taker",
      "wats: no agent took your ask",
      '"Logs rotation": nobody answered or claimed it by 2027-01-01T00:00:00.000Z',
      `wats thread ${ask}`,
      `/go/posts/thread/${ask}`,
    ],
  );
  assert.equal(noticeOf({ event: "ask_answered", ask, answer: "d", by: "npub1x" }, CTX), undefined);
});

Deno.test("a notice's text is one line of at most 200 characters", () => {
  const n = noticeOf(
    { event: "halted", id: "h", by: "b", reason: `x\u202e${"y".repeat(500)}` },
    CTX,
  );
  assert.ok(n);
  assert.ok(n.text.length <= 200, String(n.text.length));
  assert.doesNotMatch(n.text, /[\n\u202e]/);
});

Deno.test("a webhook is JSON signed over timestamp and body with the secret", async () => {
  const req = notifyRequest(target("webhook"), NOTICE, { secret: "s3cret" }, 1_767_323_045.9);
  assert.equal(req.url, "https://hooks.example.org/x");
  assert.deepEqual(JSON.parse(req.body), {
    event: "permission",
    id: "d-1",
    title: NOTICE.title,
    text: NOTICE.text,
    command: "wats agent approve p1",
    path: "/review",
    at: AT,
    node: "node1",
  });
  assert.equal(req.headers[TIMESTAMP_HEADER], "1767323045");
  assert.equal(req.headers[DELIVERY_HEADER], "d-1");
  assert.equal(req.headers["Content-Type"], "application/json");
  // Recomputed independently with WebCrypto: what a receiver does.
  const key = new TextEncoder().encode("s3cret");
  assert.equal(
    req.headers[SIGNATURE_HEADER],
    `sha256=${signature("s3cret", "1767323045", req.body)}`,
  );
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = await crypto.subtle.sign(
    "HMAC",
    k,
    new TextEncoder().encode(`1767323045.${req.body}`),
  );
  const hex = [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
  assert.equal(req.headers[SIGNATURE_HEADER], `sha256=${hex}`);
  // Another secret or another time: another signature.
  assert.notEqual(signature("other", "1767323045", req.body), hex);
  assert.notEqual(signature("s3cret", "1767323046", req.body), hex);
});

Deno.test("ntfy gets the text as body, title and tags as headers, the token as bearer", () => {
  const req = notifyRequest(target("ntfy"), NOTICE, { token: "tk" }, 0);
  assert.equal(req.body, `${NOTICE.text}\n\nAnswer: wats agent approve p1 (dashboard /review)`);
  assert.equal(req.headers.Title, NOTICE.title);
  assert.equal(req.headers.Tags, "wats,permission");
  assert.equal(req.headers.Priority, "4");
  assert.equal(req.headers.Authorization, "Bearer tk");
  assert.equal(notifyRequest(target("ntfy"), NOTICE, {}, 0).headers.Authorization, undefined);
  // Header values must be bytes: every header is ASCII.
  for (const v of Object.values(req.headers)) assert.match(v, /^[\x20-\x7e]*$/);
});

Deno.test("Slack gets {text} in mrkdwn with the agent's markup escaped", () => {
  const req = notifyRequest(target("slack"), NOTICE, {}, 0);
  assert.deepEqual(JSON.parse(req.body), {
    text: "*wats: a coding agent waits for a decision*\n" +
      "claude/execute &lt;!channel&gt; &amp; rm (work w1)\n" +
      "Answer: `wats agent approve p1` (dashboard /review)",
  });
});
