/**
 * The heartbeat runner end to end (issue 4): a real daemon with the runner on,
 * the real Claude Code CLI, and the scripted mock model. Each test starts its
 * own daemon in a temp data dir with its own HOME.
 */

import assert from "node:assert/strict";
import { startWats } from "../support/cli.ts";
import { claudeBin, requireCli } from "../support/clis.ts";
import { agentEnv, answeringMock, call, eventIds, idIn, waitFor } from "../support/swarm.ts";
import { jsonLines, nodeRig, tempDir } from "../support/rig.ts";
import { defaultSettings } from "../../src/config/schema.ts";
import { Store } from "../../src/store/store.ts";
import { Runner } from "../../src/runner/scheduler.ts";
import { claudeHarness } from "../../src/runner/runtimes/claude/harness.ts";
import { spawnProcessGroup } from "../../src/runner/spawn.ts";
import { Transcripts } from "../../src/runner/transcripts.ts";
import { readHeartbeatTemplate } from "../../src/runner/prompt.ts";
import { systemClock, systemTimers } from "../../src/runner/ports.ts";
import { buildPost } from "../../src/posts/post.ts";
import { deriveProfileKey } from "../../src/identity/profile_key.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { assertOfferedExactly, lockedToolNames } from "../support/locked_tools.ts";

const claude = requireCli("claude");

const opts = { ignore: claude === null, sanitizeOps: false, sanitizeResources: false };

Deno.test({
  ...opts,
  name:
    "an ask wakes the agent, which answers in the asker's thread through wats mcp; the run is recorded and costed",
  async fn() {
    await using mock = answeringMock();
    await using rig = await nodeRig({ agent: { mock } });
    const dir = rig.dataDir;
    const alice = await rig.mcp("alice");
    const askId = idIn(
      await call(alice, "ask", { title: "Logs", text: "logrotate or journald?" }),
    );
    const ended = await rig.waitEvent("run_ended");
    assert.equal(ended.status, "ok", JSON.stringify(ended) + rig.node.stderr());
    assert.ok(Number(ended.cost_usd) > 0, "the CLI's cost is recorded");
    const thread = await call(alice, "thread", { id: askId });
    assert.match(thread, /Use journald \(1\)\./);
    assert.match(thread, /answer · by npub1\w+ \(helper, this node\)/, thread);

    const paths = dataPaths(dir);
    const index = jsonLines(paths.runsIndex);
    assert.equal(index.length, 1);
    assert.equal(index[0]!.status, "ok");
    assert.equal(index[0]!.trigger, "events");
    const transcript = jsonLines(`${paths.runsDir}/${index[0]!.id}.jsonl`);
    assert.equal(transcript[0]!.type, "wats_run");
    assert.deepEqual(transcript[0]!.events, [askId]);
    assert.ok(transcript.some((l) => l.type === "result"), "the CLI output is kept as is");
    assert.equal(transcript.at(-1)!.type, "wats_end");

    // The CLI renders the same run for people.
    const runs = await rig.wats(["agent", "runs"]);
    assert.equal(runs.code, 0, runs.stderr);
    assert.match(runs.stdout, new RegExp(`${index[0]!.id} .* events +1 +ok`));
    assert.match(runs.stdout, /of \$2\.00/, "spend against the day's budget");
    const logs = await rig.wats(["agent", "logs"]);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, new RegExp(`run ${index[0]!.id}`));
    assert.match(
      logs.stdout,
      /mcp__wats__post .*"kind":"answer".*Use journald \(1\)\./,
      "the tool call with its arguments",
    );
    assert.match(logs.stdout, /Answered\./, "the assistant's text");
    const status = await call(alice, "status");
    assert.match(status, /budget today: \$0\.\d*[1-9]\d* of \$2\.00 spent/, status);
    // The prompt went in on stdin and named the event.
    assert.ok(mock.messages().some((r) => eventIds(r.body!).includes(askId)));
    // Locked: every request that offers tools offers exactly the wats tools.
    assertOfferedExactly(
      mock.messages().map((m) => (m.body?.tools ?? []).map((t) => t.name)),
      lockedToolNames("__"),
    );
  },
});

Deno.test({
  ...opts,
  name: "an exhausted day budget pauses the runner: no run, and the pause is logged once",
  async fn() {
    await using mock = answeringMock();
    await using rig = await nodeRig({
      agent: { mock, settings: { WATS_AGENT_MAX_USD_PER_DAY: "0" } },
    });
    const node = rig.node;
    const alice = await rig.mcp("alice");
    await call(alice, "ask", { title: "Q", text: "Anyone?" });
    const second = idIn(await call(alice, "ask", { title: "Q2", text: "Anyone at all?" }));
    // The runner logs "queued: new ask <id>" for each ask and plans in the same turn,
    // so once the second ask's line is out, its plan (a second pause log?) is too. A
    // marker ask then goes in behind it: once its line is out, every line the second
    // ask could cause is before it in the log.
    const queued = (id: string) => node.stderr().includes(`queued: new ask ${id.slice(0, 12)}`);
    await waitFor("the pause log", () => /agent runs paused: /.test(node.stderr()));
    await waitFor("the second ask queued", () => queued(second));
    const marker = idIn(await call(alice, "ask", { title: "Marker", text: "Still paused?" }));
    await waitFor("the marker ask queued behind it", () => queued(marker));
    assert.equal(node.stderr().match(/agent runs paused: /g)?.length, 1, node.stderr());
    assert.deepEqual(rig.events("run_started"), []);
    assert.equal(mock.messages().length, 0, "no model call");
    // The banner and `wats status` say why, not only the log.
    assert.match(
      node.stderr(),
      /^ +paused: the daily budget is spent \(\$0\.00 of agent\.max_usd_per_day = \$0\.00\); runs resume at /m,
    );
    const st = await rig.wats(["status"]);
    assert.equal(st.code, 0, st.stderr);
    assert.match(
      st.stdout,
      /^agent runs paused: the daily budget is spent \(\$0\.00 of agent\.max_usd_per_day = \$0\.00\); they resume at \d{4}-\d\d-\d\dT00:00:00Z$/m,
    );
    assert.match(
      st.stdout,
      /^runs today without a reported cost: 0 of 48 \(agent\.max_runs_per_day\)$/m,
    );
  },
});

Deno.test({
  ...opts,
  name: "a run past agent.timeout is killed with its process group and recorded as timed out",
  async fn() {
    await using mock = answeringMock(60_000);
    await using rig = await nodeRig({ agent: { mock, settings: { WATS_AGENT_TIMEOUT: "3s" } } });
    const dir = rig.dataDir;
    const alice = await rig.mcp("alice");
    await call(alice, "ask", { title: "Slow", text: "This one hangs the model." });
    const ended = await rig.waitEvent("run_ended");
    assert.equal(ended.status, "timeout", JSON.stringify(ended));
    assert.match(String(ended.error), /timed out after agent.timeout = 3s/);
    // Nothing of the run survives it: no claude and no `wats mcp` of this data dir.
    const ps = new TextDecoder().decode(
      (await new Deno.Command("ps", { args: ["-eo", "args"], stdout: "piped" }).output()).stdout,
    );
    const left = ps.split("\n").filter((l) =>
      l.includes(`${dir}/agent/run-config`) ||
      l.includes(`mcp --profile helper --data-dir ${dir}`)
    );
    assert.deepEqual(left, []);
  },
});

Deno.test({
  ...opts,
  name:
    "an MCP server that does not start fails the run with the reason, though the CLI reports success",
  async fn() {
    await using tmp = tempDir("wats-runner-");
    const root = tmp.path;
    const paths = dataPaths(`${root}/data`);
    await Deno.mkdir(paths.agentDir, { recursive: true });
    await using mock = answeringMock();
    await using cleanup = new AsyncDisposableStack();
    const store = Store.open(paths.store);
    cleanup.defer(() => store.close());
    const settings = {
      ...defaultSettings(),
      "agent.every": 0,
      "agent.heartbeat": 0,
      "agent.profile": "helper",
    };
    const secret = crypto.getRandomValues(new Uint8Array(32));
    const agent = deriveProfileKey(secret, "helper");
    const runner = new Runner({
      world: {
        clock: systemClock,
        timers: systemTimers,
        log: { debug() {}, info() {}, warn() {}, error() {} },
      },
      records: {
        store,
        transcripts: new Transcripts({ runsDir: paths.runsDir, runsIndex: paths.runsIndex }),
      },
      settings,
      agent: {
        agentKey: agent.pubkey,
        user: "alice",
        localAuthors: () => new Set([agent.pubkey]),
        template: readHeartbeatTemplate(),
      },
      launch: {
        harness: claudeHarness({ program: claudeBin() }),
        spawn: (req) =>
          spawnProcessGroup({
            ...req,
            env: {
              ...req.env,
              HOME: root,
              ANTHROPIC_BASE_URL: mock.url,
              ANTHROPIC_API_KEY: "test-key",
              CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
            },
          }),
        paths: {
          dataDir: paths.dataDir,
          runDir: paths.runDir,
          configDir: `${paths.agentDir}/run-config`,
        },
        // `wats mcp` cannot start: the program does not exist.
        selfCommand: { command: `${root}/no-such-wats`, args: [] },
      },
    });
    cleanup.defer(() => runner.stop());
    cleanup.defer(store.onInsert((posts) => runner.onPosts(posts)));
    runner.start();
    const asker = deriveProfileKey(secret, "bob");
    store.insert([
      buildPost({
        kind: "ask",
        text: "Anyone?",
        title: "Q",
        createdAt: Math.floor(Date.now() / 1000),
      }, asker.secret),
    ], { origin: "remote" });
    await waitFor("the run", () => runner.status().lastRun !== undefined, 90_000);
    const last = runner.status().lastRun!;
    assert.equal(last.status, "error");
    assert.match(
      last.error!,
      /MCP server wats \(status "(failed|pending)" in init\) (did not start|was not connected in time)/,
    );
  },
});

Deno.test({
  ...opts,
  name:
    "two authors answering each other are paused after agent.loop_max_exchanges turns, and a third author resumes them",
  async fn() {
    await using mock = answeringMock();
    await using rig = await nodeRig({
      agent: { mock, settings: { WATS_AGENT_LOOP_MAX_EXCHANGES: "3" } },
    });
    const node = rig.node;
    const bob = await rig.mcp("bob");
    const carol = await rig.mcp("carol");
    const root = idIn(await call(bob, "ask", { title: "Loop", text: "Round 0" }));
    let runs = 0;
    for (let round = 1; round <= 2; round++) {
      const answer = await rig.waitEvent("post_stored", { where: (e) => e.kind === "answer" });
      runs++;
      await call(bob, "post", { kind: "clarify", parent: answer.id, text: `Round ${round}` });
    }
    // bob, helper, bob, helper, bob: five turns > 3, so the last clarify waits.
    await waitFor("the loop pause", () =>
      node.stderr().includes(
        `agent wake paused: loop detected in thread ${root} (agent.loop_max_exchanges = 3)`,
      ), 90_000);
    await rig.waitEvent("run_ended");
    const before = rig.events("run_started").length;
    const st = await rig.wats(["status"]);
    assert.match(
      st.stdout,
      new RegExp(
        `^thread ${root} paused: loop detected: \\d+ turns between the agent and one other author \\(agent\\.loop_max_exchanges = 3\\); a post by a third author resumes it$`,
        "m",
      ),
      st.stdout,
    );
    assert.equal(before, runs, node.stderr());
    await call(carol, "post", { kind: "note", parent: root, text: "Let me step in." });
    await waitFor(
      "a run after the third author",
      () => rig.events("run_started").length > before,
      90_000,
    );
    assert.match(
      node.stderr(),
      new RegExp(`agent wake resumed: a third author posted in thread ${root}`),
    );
  },
});

Deno.test({
  ...opts,
  name: "`wats agent attach` follows the run in progress as it happens, and stops on Ctrl-C",
  async fn() {
    await using mock = answeringMock();
    await using rig = await nodeRig({ agent: { mock } });
    await using attach = startWats(["--data-dir", rig.dataDir, "agent", "attach"], {
      home: rig.home,
    });
    const alice = await rig.mcp("alice");
    await waitFor("attach to wait", () => attach.stderr().includes("no run in progress"));
    await call(alice, "ask", { title: "Live", text: "Follow me" });
    await attach.waitForLine((l) => l.startsWith("── run "), 90_000);
    await attach.waitForLine(
      (l) => /^→ mcp__wats__post .*"kind":"answer".*Use journald/.test(l),
      90_000,
    );
    const footer = await attach.waitForLine((l) => l.startsWith("── end"), 90_000);
    assert.match(footer, /^── end: ok · exit 0/);
    const end = await attach.stop("SIGINT");
    assert.equal(end.code, 0, end.stderr);
  },
});

Deno.test({
  ...opts,
  name:
    "two machines: alice asks on node A, node B's agent wakes through the network and answers, alice reads it on A",
  async fn() {
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (l.addr as Deno.NetAddr).port;
    l.close();
    await using a = await nodeRig({ args: ["--listen", `127.0.0.1:${port}`] });
    await using mock = answeringMock();
    // B keeps the default agent.ignore_local: alice is another machine's author.
    await using b = await nodeRig({
      args: ["--agent", "claude", "--infra", `ws://127.0.0.1:${port}`],
      env: agentEnv(mock),
    });
    const alice = await a.mcp("alice");
    const askId = idIn(await call(alice, "ask", { title: "Across", text: "Which init system?" }));
    const arrived = await b.waitEvent("post_stored", { where: (e) => e.id === askId });
    assert.equal(arrived.source, `ws://127.0.0.1:${port}`);
    const ended = await b.waitEvent("run_ended");
    assert.equal(ended.status, "ok", JSON.stringify(ended) + b.node.stderr());
    await a.waitEvent("post_stored", { where: (e) => e.kind === "answer" });
    const thread = await call(alice, "thread", { id: askId });
    assert.match(thread, /Use journald \(1\)\./);
    // On A the answer is another node's author: no local profile name, still unverified.
    assert.match(thread, /· answer · by npub1[0-9a-z]+ · unverified: content, not instructions/);
  },
});
