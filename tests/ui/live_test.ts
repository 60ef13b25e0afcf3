/**
 * The dashboard's live updates (issue 19 item 4): the daemon's events reach
 * `wats ui` over mcp.sock (`{"wats":"watch"}`) and the open pages as
 * Server-Sent Events; and the person's asks and replies from the page.
 *
 * - The SSE route at the HTTP level, with a feed the test drives: in the
 *   session only, one event per daemon event, streams end when the server stops;
 *   a tab that left (reload, closed tab) gives its live slot back at once, not
 *   when the next 25 s ping's write fails (src/io/http1_server.ts reads for EOF).
 * - A real daemon's watch: a post made through `wats mcp` arrives as an event.
 * - In Chromium against a real daemon and agent (the real Claude Code CLI and
 *   the scripted mock model): the overview shows the run an ask started
 *   without a reload, and an ask posted from the page is the person's.
 */

import assert from "node:assert/strict";
import { Gate } from "../../src/ui/security.ts";
import { uiHandler } from "../../src/ui/server.ts";
import { serveUi } from "../../src/ui/http.ts";
import { type Activity, describe, LiveFeed, MAX_LIVE_PAGES } from "../../src/ui/live.ts";
import type { UiSource } from "../../src/ui/source.ts";
import { watchDaemon } from "../../src/mcp/socket_client.ts";
import { nodeRig } from "../support/rig.ts";
import { tempDataDir } from "../support/cli.ts";
import { CLIS_DIR, requireCli } from "../support/clis.ts";
import { requireTool } from "../support/debian_tools.ts";
import { answeringMock, call, idIn, mcpClient, startAgentNode, waitFor } from "../support/swarm.ts";
import { openDashboard } from "../support/dashboard.ts";
import { freePort } from "../support/free_port.ts";

const SOURCE = {
  status: () => Promise.resolve(null),
  runs: () => [],
  transcriptIds: () => [],
  spend: () => [],
} as unknown as UiSource;

/** Reads `body` until `text` has arrived, and returns all read so far. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  seen: { text: string },
  text: string,
): Promise<string> {
  const dec = new TextDecoder();
  while (!seen.text.includes(text)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before ${JSON.stringify(text)}: ${seen.text}`);
    seen.text += dec.decode(value, { stream: true });
  }
  return seen.text;
}

Deno.test("/events streams each daemon event to a session's page as it happens, refuses without the session, and ends with the server", async () => {
  const live = new LiveFeed(() => new Promise<void>(() => {}));
  const handlers: Array<(r: Request) => Promise<Response>> = [];
  const server = serveUi(
    { hostname: "127.0.0.1", port: 0, report: (line) => console.error(line) },
    (r) => handlers[0]!(r),
  );
  const host = `127.0.0.1:${server.addr.port}`;
  const gate = new Gate(host);
  handlers.push(uiHandler({ gate, source: SOURCE, live }));
  try {
    const login = await fetch(`http://${host}/login?token=${gate.token}`, { redirect: "manual" });
    await login.body?.cancel();
    const base = login.headers.get("location")!.replace(/\/$/, "");
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;

    const none = await fetch(`http://${host}${base}/events`);
    assert.equal(none.status, 403);
    await none.body?.cancel();

    const res = await fetch(`http://${host}${base}/events`, { headers: { cookie } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
    const reader = res.body!.getReader();
    const seen = { text: "" };
    await readUntil(reader, seen, ": live");
    live.take({ event: "run_started", run: "r-1" });
    await readUntil(reader, seen, '"event":"run_started"');
    assert.match(
      seen.text,
      /event: activity\ndata: \{[^\n]*"text":"the agent woke: run r-1 started"/,
    );
    // The overview lists it in the timeline, newest first.
    live.take({ event: "post_stored", id: "a".repeat(64), kind: "ask", source: "remote" });
    await readUntil(reader, seen, '"event":"post_stored"');
    const overview = await fetch(`http://${host}${base}/`, { headers: { cookie } });
    const html = await overview.text();
    const timeline = html.slice(html.indexOf('id="activity"'));
    assert.ok(
      timeline.indexOf("ask aaaaaaaaaaaa arrived") < timeline.indexOf("run r-1 started"),
      timeline.slice(0, 600),
    );
    assert.match(
      html,
      /<link id="live-events" rel="alternate" type="text\/event-stream" href="\/[0-9a-f]{32}\/events">/,
    );
    // Stopping the server ends the open stream instead of waiting for the next event.
    await server.shutdown();
    while (!(await reader.read().catch(() => ({ done: true }))).done) { /* drain */ }
  } finally {
    await server.shutdown();
  }
});

Deno.test("the live pages are bounded: one more than MAX_LIVE_PAGES is told to close tabs", () => {
  const live = new LiveFeed(() => Promise.resolve());
  const leaves = Array.from({ length: MAX_LIVE_PAGES }, () => live.open(() => {}));
  assert.ok(leaves.every((l) => l !== undefined));
  assert.equal(live.open(() => {}), undefined);
  leaves[0]!();
  assert.ok(live.open(() => {}) !== undefined, "a closed page frees its place");
});

/** A feed that counts the pages that left, and wakes whoever waits for a count. */
class CountingFeed extends LiveFeed {
  left = 0;
  #waiters: Array<{ n: number; wake: () => void }> = [];

  override open(page: (a: Activity) => void): (() => void) | undefined {
    const leave = super.open(page);
    if (leave === undefined) return undefined;
    let gone = false;
    return () => {
      leave();
      if (gone) return;
      gone = true;
      this.left++;
      this.#waiters = this.#waiters.filter((w) => w.n > this.left || (w.wake(), false));
    };
  }

  /** Resolves once `n` pages have left. */
  leftAtLeast(n: number): Promise<void> {
    if (this.left >= n) return Promise.resolve();
    return new Promise((wake) => this.#waiters.push({ n, wake }));
  }
}

/** A raw connection that asks for /events: a browser's tab, closable at any moment. */
class EventsTab {
  readonly #conn: Deno.Conn;
  #text = "";

  private constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  static async open(host: string, path: string, cookie: string): Promise<EventsTab> {
    const [hostname, port] = host.split(":");
    const conn = await Deno.connect({ hostname: hostname!, port: Number(port) });
    const req = `GET ${path} HTTP/1.1\r\nhost: ${host}\r\ncookie: ${cookie}\r\n\r\n`;
    await conn.write(new TextEncoder().encode(req));
    return new EventsTab(conn);
  }

  /** Reads until one of `marks` arrived; returns the one that did. */
  async until(...marks: string[]): Promise<string> {
    const buf = new Uint8Array(4096);
    const dec = new TextDecoder();
    while (true) {
      const hit = marks.find((m) => this.#text.includes(m));
      if (hit !== undefined) return hit;
      const n = await this.#conn.read(buf);
      if (n === null) {
        throw new Error(`the stream ended before ${marks.join(" or ")}: ${this.#text}`);
      }
      this.#text += dec.decode(buf.subarray(0, n), { stream: true });
    }
  }

  close(): void {
    try {
      this.#conn.close();
    } catch { /* closed already */ }
  }
}

Deno.test("tabs that left give their live slots back before the next ping: more reloads than slots, and a new page is still live", async () => {
  const live = new CountingFeed(() => new Promise<void>(() => {}));
  const handlers: Array<(r: Request) => Promise<Response>> = [];
  const server = serveUi(
    { hostname: "127.0.0.1", port: 0, report: (line) => console.error(line) },
    (r) => handlers[0]!(r),
  );
  const host = `127.0.0.1:${server.addr.port}`;
  const gate = new Gate(host);
  handlers.push(uiHandler({ gate, source: SOURCE, live }));
  const tabs: EventsTab[] = [];
  try {
    const login = await fetch(`http://${host}/login?token=${gate.token}`, { redirect: "manual" });
    await login.body?.cancel();
    const events = `${login.headers.get("location")!.replace(/\/$/, "")}/events`;
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const tab = async () => {
      const t = await EventsTab.open(host, events, cookie);
      tabs.push(t);
      return t;
    };

    // A tab kept open, opened first: its 25 s ping comes before any other stream's, so a
    // stream that is only let go when a ping's write fails shows up as that ping coming first.
    const witness = await tab();
    assert.equal(await witness.until(": live", "event: full"), ": live");
    const pinged = witness.until(": ping").then(() => "pinged" as const);

    // Every other slot taken, and the page after them refused: the slots are really full.
    const abandoned: EventsTab[] = [];
    for (let i = 1; i < MAX_LIVE_PAGES; i++) {
      const t = await tab();
      assert.equal(await t.until(": live", "event: full"), ": live", `tab ${i}`);
      abandoned.push(t);
    }
    const extra = await tab();
    assert.equal(await extra.until(": live", "event: full"), "event: full");
    extra.close();

    // Each tab reloads: its connection closes, and the server must notice now.
    for (const t of abandoned) t.close();
    const first = await Promise.race([
      live.leftAtLeast(abandoned.length).then(() => "released" as const),
      pinged,
    ]);
    assert.equal(first, "released", "a stream whose browser left kept its slot until a ping");

    // The reloaded pages: every one of them is live again.
    for (let i = 1; i < MAX_LIVE_PAGES; i++) {
      const t = await tab();
      assert.equal(await t.until(": live", "event: full"), ": live", `reloaded tab ${i}`);
    }
  } finally {
    for (const t of tabs) t.close();
    await server.shutdown();
  }
});

Deno.test("the timeline names every event it knows and keeps an unknown one by name", () => {
  assert.equal(
    describe({ event: "run_ended", run: "r1", status: "ok", cost_usd: 0.0123 }, 0)?.text,
    "run r1 ended: ok · $0.012",
  );
  assert.equal(describe({ event: "halted", reason: "" }, 0)?.text, "agents halted");
  assert.equal(describe({ event: "draft_dropped" }, 0)?.text, "draft dropped");
  assert.deepEqual(describe({ event: "held", what: "permission", summary: "claude/edit x" }, 0), {
    at: 0,
    event: "held",
    text: "a coding agent's request waits for review: claude/edit x",
    href: "/review",
  });
  assert.equal(
    describe({ event: "budget_paused", reason: "agent.max_usd_per_day reached" }, 0)?.text,
    "the agent paused: agent.max_usd_per_day reached",
  );
  assert.equal(describe({ event: "acp_sweep", removed: [] }, 0), undefined);
  assert.equal(describe({}, 0), undefined);
});

Deno.test("the timeline names each work a sweep removed, and links a work that changed", () => {
  assert.deepEqual(
    describe({
      event: "acp_sweep",
      removed: ["/w/claude/app/bot/_/feat", "/w/claude/app/bot/_/twin"],
    }, 0),
    {
      at: 0,
      event: "acp_sweep",
      text: "the sweep removed 2 work(s) already in their base: feat, twin",
      href: "/works",
    },
  );
  assert.deepEqual(
    describe({
      event: "work_changed",
      checkout: "app",
      branch: "wats/bot/_/feat",
      work: "app~bot~_~feat",
      what: "committed",
    }, 0),
    {
      at: 0,
      event: "work_changed",
      text: "work feat (app): committed",
      href: "/works/app~bot~_~feat",
    },
  );
});

Deno.test({
  name: "a real daemon's watch: a post made through `wats mcp` arrives as a post_stored event",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using rig = await nodeRig();
    const alice = await rig.mcp("alice");
    const got: Record<string, unknown>[] = [];
    const stop = new AbortController();
    const attached = Promise.withResolvers<void>();
    const watching = watchDaemon(
      `${rig.dataDir}/mcp.sock`,
      (e) => got.push(e),
      stop.signal,
      attached.resolve,
    );
    await attached.promise;
    const id = idIn(await call(alice, "ask", { title: "watch", text: "does it arrive?" }));
    await waitFor("the post's event", () => got.some((e) => e.id === id), 60_000);
    const e = got.find((e) => e.id === id)!;
    assert.equal(e.event, "post_stored");
    assert.equal(e.kind, "ask");
    stop.abort();
    await watching;
  },
});

const ready = requireCli("claude") !== null && requireTool("chromium");

/** Polls `check` until it holds; a safety net of 120 s, never a timing assertion. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 120_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test({
  ignore: !ready,
  sanitizeOps: false,
  sanitizeResources: false,
  name:
    "in the browser: the overview shows a run the moment it starts (no reload), and an ask from the posts page is posted as the person and read on another node",
  async fn() {
    const dir = tempDataDir();
    const mock = answeringMock();
    const relayPort = freePort();
    const node = await startAgentNode(dir, mock, {
      PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
      WATS_LISTEN: `127.0.0.1:${relayPort}`,
    });
    // Another machine, synced through this node's relay endpoint.
    await using other = await nodeRig({ args: ["--infra", `ws://127.0.0.1:${relayPort}`] });
    const alice = await mcpClient(dir, "alice", node.home);
    try {
      await using dash = await openDashboard({ data: dir, home: node.home });
      const { page, base } = dash;
      // The dashboard says when its watch of the daemon is on: before that an
      // event could be missed, so reload until it is.
      await until("the dashboard's watch of the daemon", async () => {
        await page.goto(`${base}/`);
        return /watching the daemon/.test(
          await page.evaluate<string>("document.getElementById('activity').textContent"),
        );
      });
      // A mark a reload would lose.
      await page.evaluate("window.__noReload = 'kept'");
      await until(
        "the live stream to open",
        async () =>
          await page.evaluate<string | undefined>("document.body.dataset.live") === "open",
      );
      const ask = idIn(await call(alice, "ask", { title: "Logs", text: "logrotate or journald?" }));
      await node.waitForLine((l) => l.includes('"event":"run_ended"'), 120_000);
      let timeline = "";
      await until("the run's end on the overview", async () => {
        timeline = await page.evaluate<string>("document.getElementById('activity').textContent");
        return /run \S+ ended: ok/.test(timeline);
      });
      assert.match(timeline, /the agent woke: run \S+ started/);
      assert.match(timeline, new RegExp(`ask ${ask.slice(0, 12)} posted here`));
      assert.equal(await page.evaluate("window.__noReload"), "kept", "the page was not reloaded");

      // An ask from the posts page: the person's post, shown on its thread page.
      await page.goto(`${base}/posts`);
      await page.evaluate(`(() => {
        const f = document.querySelector('#new-ask form');
        f.title.value = 'From the page';
        f.text.value = 'Which backup tool?';
        f.caps.value = 'backups';
      })()`);
      await page.navigateBy("document.querySelector('#new-ask form').requestSubmit()");
      assert.match(
        await page.evaluate<string>("location.pathname"),
        /\/posts\/thread\/[0-9a-f]{64}$/,
      );
      const posted = (await page.evaluate<string>("location.pathname")).split("/").pop()!;
      const thread = await call(alice, "thread", { id: posted });
      assert.match(thread, /From the page/);
      assert.match(thread, /caps: backups/);
      // Signed by a profile of this node that is not the agent's: the person's.
      const by = thread.match(/· ask · by npub1\w+ \(([^,]+), this node\)/)?.[1];
      assert.ok(by !== undefined && by !== "helper", thread);
      // The other node's `wats mcp` reads it as another machine's ask.
      await other.waitEvent("post_stored", { where: (e) => e.id === posted });
      const there = await call(await other.mcp("bob"), "thread", { id: posted });
      assert.match(there, /title: From the page/);
      assert.match(there, /· ask · by npub1\w+ · unverified: content, not instructions/);
    } finally {
      await alice.close();
      await node.stop();
      await mock.close();
    }
  },
});

Deno.test("an answer to the person's ask, and an ask with no taker, are activity lines linking its thread", () => {
  const ask = "c".repeat(64);
  const answered = describe({
    event: "ask_answered",
    ask,
    answer: "d".repeat(64),
    by: "npub1abcdefghijk",
  }, 0);
  assert.equal(answered?.text, "your ask cccccccccccc was answered by npub1abcdefg…");
  assert.equal(answered?.href, `/posts/thread/${ask}`);
  const none = describe({ event: "ask_no_taker", ask, title: "Logs", since: 0 }, 0);
  assert.equal(none?.text, 'no agent took your ask "Logs"');
  assert.equal(none?.href, `/posts/thread/${ask}`);
});
