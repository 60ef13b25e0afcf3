/**
 * `agent.runtime = "acp"` end to end (docs/acp.md "The heartbeat agent over
 * ACP"): a real daemon whose heartbeat agent is the real
 * `@agentclientprotocol/claude-agent-acp` against the scripted Anthropic mock.
 * One session per thread, loaded when that thread wakes it again; the wats MCP
 * server given in `session/new`; locked to the wats tools; costs counted per
 * run; its coding agents' works kept under the run's thread. Runs as the test
 * runs: as root with `IS_SANDBOX` set in CI.
 */

import assert from "node:assert/strict";
import { dataPaths } from "../../src/config/paths.ts";
import { git } from "../../src/acp/worktrees.ts";
import { requireCli } from "../support/clis.ts";
import { denoDir, runWats } from "../support/cli.ts";
import { call, idIn, waitFor } from "../support/swarm.ts";
import { gitRepo, jsonLines, nodeRig, type NodeRigOptions, tempDir } from "../support/rig.ts";
import { claudeAcpToml } from "../support/harness_fixtures.ts";
import { groupMembers } from "../support/processes.ts";
import { assertOfferedExactly, lockedToolNames } from "../support/locked_tools.ts";
import {
  hasTool,
  lastUserContains,
  type MessagesRequest,
  promptContains,
  startMockAnthropic,
  text,
  textOf,
  toolResultFor,
  toolUse,
  trailingMessages,
} from "../support/mock_anthropic.ts";

const acp = requireCli("claude-acp");
const opts = { ignore: acp === null, sanitizeOps: false, sanitizeResources: false };

/** The event ids the newest wake prompt of the conversation names. */
function wokenFor(req: MessagesRequest): string[] {
  for (const m of [...req.messages].reverse()) {
    const ids = [...textOf(m.content).matchAll(/^- ([0-9a-f]{64}): /gm)].map((x) => x[1]!);
    if (m.role === "user" && ids.length > 0) return ids;
  }
  return [];
}

/** Replies with the answer tool to the newest event named, with `say`. */
function answer(say: string) {
  return (req: MessagesRequest) =>
    toolUse("mcp__wats__post", { kind: "answer", parent: wokenFor(req).at(-1), text: say });
}

function config(home: string, mockUrl: string, repo?: string): string {
  return [
    // `wats mcp` runs from source here: it needs the tests' Deno cache.
    ...claudeAcpToml(acp!, mockUrl, home, { DENO_DIR: denoDir() }),
    ...(repo ? ["", "[checkouts.app]", `path = "${repo}"`, 'base = "main"'] : []),
    "",
    "[agent]",
    'runtime = "acp"',
    'harness = "claude"',
    'profile = "helper"',
    'every = "0"',
    'heartbeat = "0"',
    "ignore_local = false",
    "",
  ].join("\n");
}

/** The rig of these tests: a node on `config`, with the HOME the config names. */
function acpNode(home: string, toml: string): NodeRigOptions {
  // After the node is up (the rig waits for it): a `wats mcp` first would start a node of its own.
  return { home, config: toml, env: { IS_SANDBOX: "1" }, startTimeoutMs: 120_000 };
}

Deno.test({
  name: "agent.runtime = acp: one session per thread, loaded when the thread wakes it again, " +
    "locked to the wats tools, each run costed",
  ...opts,
  async fn() {
    await using tmp = tempDir("wats-acp-rt-home-");
    const home = tmp.path;
    const escaped = `${home}/escaped.txt`;
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("mcp__wats__post"), reply: text("Answered.") },
        // A locked agent has no Bash: the call fails in Claude Code, nothing runs.
        {
          when: (r) => lastUserContains("ASK-THREE")(r) && !toolResultFor("Bash")(r),
          reply: toolUse("Bash", { command: `touch ${escaped}`, description: "escape" }),
        },
        {
          when: (r) => toolResultFor("Bash")(r) && promptContains("ASK-ONE")(r),
          reply: answer("LEAKED: I see thread one."),
        },
        { when: toolResultFor("Bash"), reply: answer("FRESH: a new thread.") },
        {
          when: (r) => lastUserContains("ASK-TWO")(r) && promptContains("ASK-ONE")(r),
          reply: answer("REMEMBERED: we spoke of ASK-ONE."),
        },
        { when: lastUserContains("ASK-TWO"), reply: answer("FORGOT: no history.") },
        { when: hasTool("mcp__wats__post"), reply: answer("First answer.") },
      ],
    });
    await using rig = await nodeRig(acpNode(home, config(home, mock.url)));
    const node = rig.node;
    const dir = rig.dataDir;
    const paths = dataPaths(dir);
    const runs = () => {
      try {
        return jsonLines(paths.runsIndex);
      } catch {
        return [];
      }
    };
    const alice = await rig.mcp("alice");
    assert.match(node.stderr(), /agent +acp on \[harnesses\.claude\] as helper · budget/);
    const one = idIn(await call(alice, "ask", { title: "One", text: "ASK-ONE: which init?" }));
    await waitFor("the first run", () => runs().length === 1, 120_000);
    assert.equal(runs()[0]!.status, "ok", JSON.stringify(runs()) + node.stderr());
    const first = await call(alice, "thread", { id: one });
    assert.match(first, /First answer\./);

    // Its `wats mcp` presented the run's token (given in session/new): a runner session.
    assert.match(
      node.stderr(),
      new RegExp(`mcp session opened \\(profile=helper runner=true run=${runs()[0]!.id}\\)`),
    );
    // Locked: every request that offers tools offers exactly the wats tools (no
    // built-in tool, no tool search placeholder).
    // The harness is enabled as a coding agent too: its tool is a wats tool.
    assertOfferedExactly(
      mock.messages().map((m) => (m.body?.tools ?? []).map((t) => t.name)),
      lockedToolNames("__", ["claude"]),
    );

    // The same thread wakes it again: its session is loaded, history and all.
    const stored = rig.events("post_stored").find((e) => e.kind === "answer");
    assert.ok(stored, node.stdoutLines.join("\n"));
    await call(alice, "post", { kind: "clarify", parent: stored.id, text: "ASK-TWO: and why?" });
    await waitFor("the second run", () => runs().length === 2, 120_000);
    assert.equal(runs()[1]!.status, "ok", JSON.stringify(runs()[1]));
    const second = await call(alice, "thread", { id: one });
    assert.match(second, /REMEMBERED: we spoke of ASK-ONE\./, second);

    // Another thread: a new session, which knows nothing of the first.
    const three = idIn(await call(alice, "ask", { title: "Three", text: "ASK-THREE: cron?" }));
    await waitFor("the third run", () => runs().length === 3, 120_000);
    const third = await call(alice, "thread", { id: three });
    assert.match(third, /FRESH: a new thread\./, third);
    assert.throws(() => Deno.statSync(escaped), "the Bash call of a locked agent never ran");

    // One session per thread, kept for the next wake.
    const sessions = JSON.parse(Deno.readTextFileSync(`${paths.agentDir}/acp_threads.json`));
    assert.deepEqual(Object.keys(sessions).sort(), [one, three].sort());
    const transcripts = runs().map((r) => jsonLines(`${paths.runsDir}/${r.id}.jsonl`));
    const opened = transcripts.map((t) => t.find((l) => l.type === "acp_session"));
    assert.deepEqual(opened.map((o) => o?.continued), [false, true, false]);
    assert.equal(opened[0]?.session, opened[1]?.session);
    assert.deepEqual(transcripts.map((t) => t[0]!.thread), [one, one, three]);
    // The agent's list of slash commands is not kept in each run's transcript.
    assert.ok(
      !transcripts.flat().some((l) =>
        (l.update as { sessionUpdate?: string } | undefined)?.sessionUpdate ===
          "available_commands_update"
      ),
    );

    // Each run is costed by what it added: a loaded session reports its total since it
    // began, so the second run's cost is not the first's plus its own.
    const costs = runs().map((r) => r.cost_usd as number);
    assert.ok(costs.every((c) => c > 0), JSON.stringify(costs));
    const reported = transcripts[1]!.flatMap((l) => {
      const u = l.update as { sessionUpdate?: string; cost?: { amount: number } } | undefined;
      return u?.sessionUpdate === "usage_update" && u.cost ? [u.cost.amount] : [];
    });
    assert.ok(reported.length > 0, "the agent reported a cost");
    console.log(
      `measured: run costs ${JSON.stringify(costs)}; run 2's agent reported ${reported.at(-1)}`,
    );
    assert.ok(
      Math.abs(costs[1]! - (reported.at(-1)! - costs[0]!)) < 1e-9,
      `run 2 cost ${costs[1]}, reported ${reported.at(-1)}, run 1 ${costs[0]}`,
    );

    // Nobody types at an unattended agent: no paid request predicts the next prompt.
    assert.ok(!mock.messages().some((m) => promptContains("SUGGESTION MODE")(m.body!)));

    // People read it like a CLI run.
    const logs = await rig.wats(["agent", "logs", "--run", String(runs()[1]!.id)]);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /session \S+ on \[harnesses\.claude\] \(continued\)/, logs.stdout);
    assert.match(logs.stdout, /mcp__wats__post .*REMEMBERED/, logs.stdout);
    assert.match(logs.stdout, /end: ok/);
  },
});

Deno.test({
  name: "agent.runtime = acp: a coding agent called from a thread's run works under that thread",
  ...opts,
  async fn() {
    await using tmp = tempDir("wats-acp-rt-home-");
    const home = tmp.path;
    const repo = await gitRepo(`${home}/repo`);
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("mcp__wats__post"), reply: text("Answered.") },
        {
          when: toolResultFor("mcp__wats__claude"),
          reply: (req) => answer(`CODED: ${trailingMessages(req).length}`)(req),
        },
        // The coding agent's own conversation (no wats tools).
        { when: (r) => !hasTool("mcp__wats__post")(r), reply: text("Looked at it.") },
        {
          when: hasTool("mcp__wats__claude"),
          reply: toolUse("mcp__wats__claude", {
            task: "look at the README",
            checkout: "app",
            work: "readme",
          }),
        },
      ],
    });
    await using rig = await nodeRig(acpNode(home, config(home, mock.url, repo)));
    const dir = rig.dataDir;
    const alice = await rig.mcp("alice");
    const ask = idIn(await call(alice, "ask", { title: "Code", text: "CODE-ASK: check it" }));
    await rig.waitEvent("run_ended", { timeoutMs: 180_000 });
    const thread = await call(alice, "thread", { id: ask });
    assert.match(thread, /CODED/, thread + rig.node.stderr());
    const branches = await git(["branch", "--list", "wats/*"], repo);
    assert.match(branches, new RegExp(`wats/helper/${ask.slice(0, 12)}/readme`), branches);
    Deno.statSync(`${dir}/worktrees/claude/app/helper/${ask.slice(0, 12)}/readme/README.md`);
  },
});

Deno.test({
  name: "agent.runtime = acp: a run past agent.timeout is killed with the agent's process group " +
    "and recorded as timed out; the thread's next wake loads its session again",
  ...opts,
  async fn() {
    await using tmp = tempDir("wats-acp-rt-home-");
    const home = tmp.path;
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("mcp__wats__post"), reply: text("Answered.") },
        {
          when: (r) => lastUserContains("AND-NOW")(r) && promptContains("FIRST")(r),
          reply: answer("Recovered, and I remember FIRST."),
        },
        { when: lastUserContains("SLOW"), reply: { ...text("too late"), delayMs: 60_000 } },
        { when: hasTool("mcp__wats__post"), reply: answer("In time.") },
      ],
    });
    // Only the slow run's daemon has a short agent.timeout: the runs that must end in time run
    // under the default, however loaded the machine (the data dir is kept across restarts).
    const toml = config(home, mock.url);
    await using rig = await nodeRig(acpNode(home, toml));
    const paths = dataPaths(rig.dataDir);
    const first = await rig.mcp("alice");
    const ask = idIn(await call(first, "ask", { title: "Q", text: "FIRST: which init?" }));
    const run1 = await rig.waitEvent("run_ended");
    assert.equal(run1.status, "ok", JSON.stringify(run1));
    const answer1 = rig.events("post_stored").find((e) => e.kind === "answer");
    assert.ok(answer1, rig.node.stderr());
    await first.close();
    await rig.stop();

    await using slow = await nodeRig({
      ...acpNode(home, toml.replace("[agent]\n", '[agent]\ntimeout = "5s"\n')),
      dataDir: rig.dataDir,
    });
    const second = await slow.mcp("alice");
    await call(second, "post", {
      kind: "clarify",
      parent: answer1.id,
      text: "SLOW: this one hangs",
    });
    // The run in progress is recorded with the agent's process group.
    let pgid = 0;
    await waitFor("the run's record", () => {
      try {
        pgid = JSON.parse(Deno.readTextFileSync(`${paths.agentDir}/runner.json`)).run?.pgid ?? 0;
      } catch {
        pgid = 0;
      }
      return pgid > 0;
    }, 120_000);
    const run2 = await slow.waitEvent("run_ended");
    assert.equal(run2.status, "timeout", JSON.stringify(run2));
    assert.match(String(run2.error), /timed out after agent.timeout = 5s/);
    // Nothing of the group survives the run (the agent, its Claude Code, its `wats mcp`): the
    // group was sent SIGKILL before the run ended; dying takes the kernel a moment.
    let left: string[] = [];
    for (let i = 0; i < 100; i++) {
      left = await groupMembers(pgid);
      if (left.length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(left, [], "the run's process group is gone");
    await second.close();
    await slow.stop();

    // The thread's session was kept: its next wake loads it and is answered.
    await using again = await nodeRig({ ...acpNode(home, toml), dataDir: rig.dataDir });
    const alice = await again.mcp("alice");
    await call(alice, "post", { kind: "clarify", parent: answer1.id, text: "AND-NOW: and now?" });
    const run3 = await again.waitEvent("run_ended");
    assert.equal(run3.status, "ok", JSON.stringify(run3));
    const thread = await call(alice, "thread", { id: ask });
    assert.match(thread, /Recovered, and I remember FIRST\./, thread);
  },
});

Deno.test({
  name:
    "agent.runtime = acp: after SIGKILL during a run and a restart, the agent's group is gone " +
    "and the interrupted ask is answered exactly once, in the thread's session",
  ...opts,
  async fn() {
    await using tmp = tempDir("wats-acp-rt-home-");
    const home = tmp.path;
    let answers = 0;
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("mcp__wats__post"), reply: text("Answered.") },
        {
          when: hasTool("mcp__wats__post"),
          // The first answer is held (ten minutes: the daemon dies long before).
          reply: (req) => ({
            ...answer("Use journald.")(req),
            ...(++answers === 1 ? { delayMs: 600_000 } : {}),
          }),
        },
      ],
    });
    await using rig = await nodeRig(acpNode(home, config(home, mock.url)));
    const { node, dataDir: dir } = rig;
    const paths = dataPaths(dir);
    const alice = await rig.mcp("alice");
    const ask = idIn(await call(alice, "ask", { title: "Logs", text: "logrotate or journald?" }));
    await alice.close();
    await waitFor("the held answer", () => answers === 1, 120_000);
    const run = JSON.parse(Deno.readTextFileSync(`${paths.agentDir}/runner.json`)).run;
    assert.equal(run.program, "node", "the run is recorded as the harness's command");
    const members = await groupMembers(run.pgid);
    assert.ok(members.some((p) => p.includes(" mcp ")), `wats mcp is in the group: ${members}`);

    node.process.kill("SIGKILL");
    await node.process.status;
    // A restart right after SIGKILL may be refused while the dead daemon's lock looks held.
    await using again = await nodeRig({
      ...acpNode(home, config(home, mock.url)),
      dataDir: dir,
      retryRefusedMs: 30_000,
    });
    assert.deepEqual(
      await groupMembers(run.pgid),
      [],
      "the restarted daemon runs beside no orphan",
    );

    await again.waitEvent("run_ended");
    const index = Deno.readTextFileSync(paths.runsIndex).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.deepEqual(index.map((e) => e.status), ["interrupted", "ok"], again.node.stderr());
    const bob = await again.mcp("bob");
    const thread = await call(bob, "thread", { id: ask });
    assert.equal(thread.match(/Use journald\./g)?.length, 1, thread);
    // The new run is the thread's. (Whether it could load the cut-off session depends on
    // whether Claude Code had saved it before the SIGKILL: measured both ways; a new one
    // starts when it had not.)
    const second = jsonLines(`${paths.runsDir}/${index[1].id}.jsonl`);
    assert.equal(second.find((l) => l.type === "acp_session")?.thread, ask);
  },
});

const codexAcp = requireCli("codex-acp");

Deno.test({
  name:
    "agent.runtime = acp refuses to start without a harness it can name, with inherit access, " +
    "or on an agent it cannot lock (codex-acp)",
  ignore: acp === null || codexAcp === null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using data = tempDir("wats-data-");
    await using tmp = tempDir("wats-acp-rt-home-");
    const dir = data.path;
    const home = tmp.path;
    const start = async (toml: string) => {
      Deno.writeTextFileSync(`${dir}/config.toml`, toml);
      return await runWats(["--data-dir", dir, "node"], { home, timeoutMs: 120_000 });
    };
    const none = await start('[agent]\nruntime = "acp"\n');
    assert.equal(none.code, 1, none.stderr);
    assert.match(none.stderr, /agent\.runtime = "acp" needs agent\.harness.*harnesses: none/);

    const claude = `[harnesses.claude]\ncommand = "node"\nargs = [${JSON.stringify(acp![1])}]\n`;
    const typo = await start(`${claude}\n[agent]\nruntime = "acp"\nharness = "claud"\n`);
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /agent\.harness = "claud" names no \[harnesses\.claud\].*claude/);

    const inherit = await start(
      `${claude}\n[agent]\nruntime = "acp"\nharness = "claude"\naccess = "inherit"\n`,
    );
    assert.equal(inherit.code, 1);
    assert.match(
      inherit.stderr,
      /agent\.access = "inherit" is not available with agent\.runtime = "acp"/,
    );

    const codex = await start(
      `[harnesses.codex]\ncommand = ${JSON.stringify(codexAcp![0])}\nargs = ${
        JSON.stringify(codexAcp!.slice(1))
      }\n\n[agent]\nruntime = "acp"\nharness = "codex"\n`,
    );
    assert.equal(codex.code, 1, codex.stderr);
    assert.match(
      codex.stderr,
      /\[harnesses\.codex\] runs @agentclientprotocol\/codex-acp, which wats cannot hold to agent\.access/,
    );
  },
});
