/**
 * The node service's own checks, through `LocalNodeService` with a real store
 * and review queue on disk: who may review, publish-then-remove, no double
 * publishing after a crash, expiry at approval, the runner's status.
 */
import assert from "node:assert/strict";
import { LocalNodeService, type NodeServiceDeps } from "../../src/node/node_service.ts";
import { Profiles } from "../../src/node/profiles.ts";
import { KnownAgents } from "../../src/node/presence.ts";
import { ReviewQueue } from "../../src/node/review_queue.ts";
import { Store } from "../../src/store/store.ts";
import type { SessionIdentity } from "../../src/contracts/session.ts";
import type { NostrEvent } from "../../src/posts/post.ts";
import { formatPending, formatStatus } from "../../src/mcp/format.ts";

const HOUR = 3_600_000;

interface Setup {
  service: LocalNodeService;
  store: Store;
  review: ReviewQueue;
  dir: string;
  person: SessionIdentity;
  agentInteractive: SessionIdentity;
  runner: SessionIdentity;
  advance(ms: number): void;
  stored: string[];
  cleanup(): void;
}

async function setup(
  opts: {
    ttlMs?: number;
    review?: ReviewQueue;
    notices?: string[];
    codingAgents?: NodeServiceDeps["codingAgents"];
  } = {},
): Promise<Setup> {
  const dir = await Deno.makeTempDir({ prefix: "wats-service-" });
  let now = 1_800_000_000_000;
  const relays = ["ws://127.0.0.1:1"];
  const store = Store.open(`${dir}/store.db`, { now: () => now, relays });
  const profiles = new Profiles(new Uint8Array(32).fill(9), store);
  const review = opts.review ?? new ReviewQueue({
    dir: `${dir}/pending`,
    rejectionsFile: `${dir}/rejections.jsonl`,
    ttlMs: opts.ttlMs ?? 24 * HOUR,
    now: () => now,
  });
  const stored: string[] = [];
  const deps: NodeServiceDeps = {
    codingAgents: opts.codingAgents,
    knownAgents: new KnownAgents({ store, now: () => now, everyMs: 900_000 }),
    store,
    profiles,
    nodeId: "node-test",
    dataDir: `${dir}/secret-data-dir`,
    defaultProfile: "alice",
    agentProfile: "alice-agent",
    relays,
    maxSkewMs: 600_000,
    events: (e) => {
      if (e.event === "post_stored") stored.push(String(e.id));
    },
    review,
    reviewOn: true,
    now: () => now,
    runOfToken: (t) => (t === "tok" ? "run-1" : undefined),
    runnerStatus: () => ({
      agent: { runtime: "claude", profile: "alice-agent" },
      budget: null,
      halted: null,
      skipped: [{
        at: 1_800_000_000_000,
        post: "e".repeat(64),
        kind: "ask",
        author: "npub1bob",
        setting: "agent.allow",
        reason: "did not wake the agent: ask eeeeeeeeeeee is by an author not in agent.allow",
      }],
    }),
    safetyNotices: () =>
      Promise.resolve(
        opts.notices ?? [
          "agent.review changed from true to false (not acknowledged: run `wats config ack`)",
          "agent.access changed from locked to inherit (not acknowledged: run `wats config ack`)",
        ],
      ),
  };
  const service = new LocalNodeService(deps);
  return {
    service,
    store,
    review,
    dir,
    person: service.authenticate({ wats: "hello" }),
    agentInteractive: service.authenticate({ wats: "hello", profile: "alice-agent" }),
    runner: service.authenticate({ wats: "hello", token: "tok" }),
    advance: (ms) => void (now += ms),
    stored,
    cleanup: () => {
      store.close();
      Deno.removeSync(dir, { recursive: true });
    },
  };
}

/** An ask by the person and a runner's answer to it, held for review. */
async function heldAnswer(s: Setup, text = "held answer"): Promise<{ ask: string; draft: string }> {
  const ask = await s.service.post(s.person, { kind: "ask", title: "q", text: "question?" });
  const held = await s.service.post(s.runner, { kind: "answer", parent: ask.id, text });
  assert.equal(held.held, true);
  return { ask: ask.id, draft: held.id };
}

function postsBy(s: Setup, kind: string): string[] {
  return s.store.feed({ sinceSeq: 0, limit: 100 }).posts.filter((p) => p.kind === kind).map((p) =>
    p.text
  );
}

Deno.test("the service judges a draft as the MCP tools do, and judges an edited draft again at approval", async () => {
  const s = await setup();
  try {
    const ask = await s.service.post(s.person, { kind: "ask", title: "q", text: "question?" });
    const rejects = (p: Promise<unknown>, code: string, message: RegExp) =>
      assert.rejects(p, (err: Error & { code?: string }) => {
        assert.equal(err.code, code);
        assert.match(err.message, message);
        return true;
      });
    await rejects(
      s.service.post(s.person, { kind: "note", text: "  " }),
      "post.empty",
      /^text is empty: write what you want to post\.$/,
    );
    await rejects(
      s.service.post(s.person, { kind: "answer", parent: "f".repeat(64), text: "hi" }),
      "post.unknown_parent",
      /^No post f{64} on this node: check the id/,
    );
    // A title on a reply, or one over two lines, is refused here too, not only by the tools.
    await rejects(
      s.service.post(s.person, { kind: "note", parent: ask.id, text: "x", title: "t" }),
      "post.reply_title",
      /title is only for a post that starts a thread/,
    );
    await rejects(
      s.service.post(s.person, { kind: "ask", text: "x", title: "a\nb" }),
      "post.title_lines",
      /line breaks/,
    );
    assert.deepEqual(postsBy(s, "note"), []);

    const held = await s.service.post(s.runner, { kind: "answer", parent: ask.id, text: "ok" });
    await rejects(
      s.service.approve(held.id, s.person, "x".repeat(40_000)),
      "post.too_long",
      /^text is 40000 bytes, more than the 32768 allowed/,
    );
    assert.equal(s.service.pending().length, 1, "the draft still waits");
    await s.service.approve(held.id, s.person, "an edited answer");
    assert.deepEqual(postsBy(s, "answer"), ["an edited answer"]);
  } finally {
    s.cleanup();
  }
});

Deno.test("a runner session and any session of the agent profile cannot approve or reject", async () => {
  const s = await setup();
  try {
    const { draft } = await heldAnswer(s);
    for (const who of [s.runner, s.agentInteractive]) {
      await assert.rejects(
        () => s.service.approve(draft, who),
        /the agent cannot approve drafts held for review: a person reviews them/,
      );
      assert.throws(
        () => s.service.reject(draft, "no", who),
        /the agent cannot reject drafts held for review/,
      );
    }
    assert.deepEqual(postsBy(s, "answer"), [], "nothing was published");
    assert.equal(s.service.pending().length, 1, "the draft still waits");
    const out = await s.service.approve(draft, s.person);
    assert.equal(out.held, false);
    assert.deepEqual(postsBy(s, "answer"), ["held answer"]);
  } finally {
    s.cleanup();
  }
});

Deno.test("approve keeps the draft when publishing fails, and a retry publishes it once", async () => {
  const s = await setup();
  try {
    const { draft } = await heldAnswer(s);
    const insert = s.store.insert.bind(s.store);
    s.store.insert = () => {
      throw new Error("disk full");
    };
    await assert.rejects(() => s.service.approve(draft, s.person), /disk full/);
    s.store.insert = insert;
    assert.equal(s.service.pending().length, 1, "the draft survived the failed publish");
    assert.deepEqual(postsBy(s, "answer"), []);
    const out = await s.service.approve(draft, s.person);
    assert.deepEqual(postsBy(s, "answer"), ["held answer"]);
    assert.equal(s.store.get(out.id)?.text, "held answer");
    assert.deepEqual(s.service.pending(), []);
  } finally {
    s.cleanup();
  }
});

Deno.test("a crash between storing and removing the draft: approving again does not publish twice", async () => {
  const s = await setup();
  try {
    const { draft } = await heldAnswer(s);
    const remove = s.review.remove.bind(s.review);
    s.review.remove = () => {
      throw new Error("killed");
    };
    await assert.rejects(() => s.service.approve(draft, s.person), /killed/);
    s.review.remove = remove;
    const first = postsBy(s, "answer");
    assert.deepEqual(first, ["held answer"], "the post was stored before the crash");
    assert.equal(s.service.pending().length, 1, "the draft is still on disk");
    assert.match(
      formatPending(s.service.pending(), 1_800_000_000),
      /approved as post [0-9a-f]{64}; publishing did not finish: approve it again/,
    );
    // Time passes before the person retries (a new created_at would make a new post).
    s.advance(5 * 60_000);
    const again = await s.service.approve(draft, s.person, "an edit given on the retry");
    assert.deepEqual(postsBy(s, "answer"), ["held answer"], "one post, not two");
    assert.equal(s.stored.filter((id) => id === again.id).length, 1, "post_stored told once");
    assert.deepEqual(s.service.pending(), []);
    assert.equal(
      s.store.outbox.pending("ws://127.0.0.1:1", 10).length,
      2,
      "ask and answer queued once",
    );
  } finally {
    s.cleanup();
  }
});

Deno.test("a crash after signing and before storing: the retry stores the recorded post", async () => {
  const s = await setup();
  try {
    const { draft } = await heldAnswer(s);
    const insert = s.store.insert.bind(s.store);
    let signedId: string | undefined;
    s.store.insert = (events: readonly NostrEvent[]) => {
      signedId = events[0]!.id;
      throw new Error("killed");
    };
    await assert.rejects(() => s.service.approve(draft, s.person), /killed/);
    s.store.insert = insert;
    s.advance(60_000);
    const out = await s.service.approve(draft, s.person);
    assert.equal(out.id, signedId, "the post signed at the first approval, not a new one");
    assert.deepEqual(postsBy(s, "answer"), ["held answer"]);
    assert.throws(
      () => s.review.get(draft),
      /no draft .* is waiting/,
    );
  } finally {
    s.cleanup();
  }
});

Deno.test("two approvals of one draft at once publish it once", async () => {
  const s = await setup();
  try {
    const { draft } = await heldAnswer(s);
    const results = await Promise.allSettled([
      s.service.approve(draft, s.person),
      s.service.approve(draft, s.person),
    ]);
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
    assert.deepEqual(postsBy(s, "answer"), ["held answer"]);
  } finally {
    s.cleanup();
  }
});

Deno.test("an expired draft cannot be approved; the next run hears that it expired", async () => {
  const s = await setup({ ttlMs: HOUR });
  try {
    const { draft } = await heldAnswer(s);
    s.advance(HOUR + 1000);
    await assert.rejects(
      () => s.service.approve(draft, s.person),
      /draft [0-9a-f]{12} expired after agent\.review_ttl without review and was dropped/,
    );
    assert.deepEqual(postsBy(s, "answer"), []);
    assert.match(s.review.drainRejections()[0]!.reason, /expired after agent\.review_ttl/);
  } finally {
    s.cleanup();
  }
});

Deno.test("a runner session's status names the changed safety settings, not the data dir or how to accept them", async () => {
  const s = await setup();
  try {
    const text = formatStatus(await s.service.status(s.runner));
    assert.doesNotMatch(text, /secret-data-dir|data dir/);
    assert.doesNotMatch(text, /config ack|wats config|acknowledg/i);
    assert.match(
      text,
      /safety settings changed since the person last accepted them: agent\.access, agent\.review; the person has been told/,
    );
    const mine = formatStatus(await s.service.status(s.person));
    assert.match(mine, /^data dir: .*secret-data-dir$/m, "interactive sessions keep the path");
    assert.match(
      mine,
      /agent\.review changed from true to false \(not acknowledged: run `wats config ack`\)/,
    );
  } finally {
    s.cleanup();
  }
});

Deno.test("a runner session's status does not repeat a notice it cannot attribute to a setting", async () => {
  const s = await setup({
    notices: ["safety.json is missing: run `wats config ack` to record the safety settings"],
  });
  try {
    const text = formatStatus(await s.service.status(s.runner));
    assert.doesNotMatch(text, /config ack|safety\.json/);
    assert.match(text, /could not be checked .*; the person has been told/);
  } finally {
    s.cleanup();
  }
});

Deno.test("a coding agent's held request: only a person decides it, the answer goes to the layer once, and it never expires", async () => {
  const answered: Array<[string, boolean, string]> = [];
  const s = await setup({
    ttlMs: HOUR,
    codingAgents: {
      harnessNames: () => ["claude"],
      checkoutNames: () => ["app"],
      call: () => Promise.reject(new Error("not called")),
      answer: (id, approved, ask) => {
        answered.push([id, approved, ask.request_id]);
        return "got it";
      },
    },
  });
  try {
    const ask = {
      request_id: "c1:t1",
      harness: "claude",
      kind: "edit",
      locations: ["/w/notes.txt"],
      worktree: "/w",
      checkout: "app",
      work: "notes",
      agent: "alice-agent",
      thread: "_",
      task: "write",
      reason: "gated",
    };
    const held = s.review.hold({
      kind: "permission",
      text: "claude/edit: Write",
      profile: "alice-agent",
      createdAt: 1_800_000_000,
      permission: ask,
    });
    const other = s.review.hold({
      kind: "permission",
      text: "claude/execute: ls",
      profile: "alice-agent",
      createdAt: 1_800_000_000,
      permission: { ...ask, request_id: "c1:t2", kind: "execute" },
    });
    s.advance(2 * HOUR);
    assert.equal(s.service.pending().length, 2, "requests do not expire");
    for (const who of [s.runner, s.agentInteractive]) {
      assert.throws(
        () => s.service.decidePermission(held.id, true, who),
        /the agent cannot approve drafts held for review/,
      );
    }
    assert.deepEqual(answered, []);
    assert.equal(s.service.decidePermission(held.id, true, s.person), "got it");
    assert.equal(s.service.decidePermission(other.id, false, s.person), "got it");
    assert.deepEqual(answered, [[held.id, true, "c1:t1"], [other.id, false, "c1:t2"]]);
    assert.deepEqual(s.service.pending(), []);
    assert.throws(
      () => s.service.decidePermission(held.id, true, s.person),
      /no draft .* is waiting/,
    );
    // A draft is not a request: approve and reject handle it.
    const { draft } = await heldAnswer(s);
    assert.equal(s.service.decidePermission(draft, true, s.person), undefined);
    assert.match(formatPending(s.review.list(), 1_800_000_000), /draft /);
  } finally {
    s.cleanup();
  }
});

Deno.test("the posts a setting kept from waking the agent are shown to a person's session, never to a runner's", async () => {
  const s = await setup();
  try {
    const mine = formatStatus(await s.service.status(s.person));
    assert.match(
      mine,
      /^ {2}- 2027-01-15T08:00:00Z agent\.allow: did not wake the agent: ask eeeeeeeeeeee is by an author not in agent\.allow \(author npub1bob\)$/m,
    );
    const runner = await s.service.status(s.runner);
    assert.equal(runner.skipped, undefined);
    assert.doesNotMatch(formatStatus(runner), /agent\.allow|did not wake/);
  } finally {
    s.cleanup();
  }
});
