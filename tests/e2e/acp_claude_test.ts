/**
 * The ACP layer end to end: the real `@agentclientprotocol/claude-agent-acp`
 * (its bundled Claude Code) against the scripted Anthropic mock, in a temp git
 * repository, called through `AcpLayer` as the harness tool calls it. Runs as
 * the test runs: as root with `IS_SANDBOX` set in CI, which the layer must drop.
 */

import assert from "node:assert/strict";
import { AcpLayer, type CallEvent } from "../../src/acp/calls.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import { git } from "../../src/acp/worktrees.ts";
import { requireCli } from "../support/clis.ts";
import { runWats } from "../support/cli.ts";
import { call, idIn, mcpClient, waitFor } from "../support/swarm.ts";
import {
  closing,
  gitRepo,
  type NodeRig,
  nodeRig,
  type NodeRigOptions,
  tempDir,
} from "../support/rig.ts";
import { claudeAcpHarness, claudeAcpToml } from "../support/harness_fixtures.ts";
import { hasTool, type MockAnthropic } from "../support/mock_anthropic.ts";
import {
  type MessagesRequest,
  type Reply,
  startMockAnthropic,
  text,
  toolUse,
} from "../support/mock_anthropic.ts";
import {
  lastUserContains,
  promptContains,
  textOf,
  toolResultFor,
  trailingMessages,
} from "../support/mock_anthropic.ts";

const acp = requireCli("claude-acp");
const opts = { ignore: acp === null, sanitizeOps: false, sanitizeResources: false };

interface Fixture extends AsyncDisposable {
  root: string;
  data: string;
  repo: string;
  outside: string;
  home: string;
}

/**
 * A data dir with the files an agent must never see, a repository, and a
 * secret outside both; removed when its scope ends.
 */
async function fixture(): Promise<Fixture> {
  const dir = tempDir("wats-acp-e2e-");
  const root = dir.path;
  const data = `${root}/data`;
  Deno.mkdirSync(`${data}/worktrees`, { recursive: true });
  Deno.writeTextFileSync(`${data}/config.toml`, "# SECRET-CONFIG-7f3a\n");
  Deno.writeTextFileSync(`${data}/safety.json`, '{"note": "SECRET-SAFETY-91c2"}\n');
  Deno.writeTextFileSync(`${data}/node.key`, "SECRET-NODEKEY-5d0e");
  const outside = `${root}/outside`;
  Deno.mkdirSync(outside);
  Deno.writeTextFileSync(`${outside}/secret.txt`, "SECRET-OUTSIDE-b8e4\n");
  // A committed symlink that points out of the repository.
  const repo = await gitRepo(`${root}/repo`, { identity: true, symlinks: { leak: outside } });
  const home = `${root}/home`;
  Deno.mkdirSync(home);
  return { root, data, repo, outside, home, [Symbol.asyncDispose]: dir[Symbol.asyncDispose] };
}

const SECRETS = [
  "SECRET-CONFIG-7f3a",
  "SECRET-SAFETY-91c2",
  "SECRET-NODEKEY-5d0e",
  "SECRET-OUTSIDE-b8e4",
];

function layer(
  f: Fixture,
  mockUrl: string,
  policy: { allow?: string[]; deny?: string[] },
  seen: { events: CallEvent[]; costs: number[] },
): AcpLayer {
  const { events, costs } = seen;
  const harness = claudeAcpHarness(acp!, mockUrl, f.home);
  return new AcpLayer({
    worktrees: `${f.data}/worktrees`,
    harnesses: { claude: harness },
    checkouts: { app: { name: "app", path: f.repo, base: "main", fetch: false } },
    allowedCheckouts: [],
    policy: makePolicy(policy.allow ?? [], policy.deny ?? [], f.data),
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: f.home,
      TMPDIR: f.home,
      // CI runs as root with this set; Claude's session/new then fails unless it is dropped.
      IS_SANDBOX: "1",
    },
    onCost: (usd) => costs.push(usd),
    onEvent: (e) => events.push(e),
  });
}

/** The coding agent's working directory, as Claude Code tells its model (its worktree). */
function cwdIn(req: MessagesRequest): string | undefined {
  return JSON.stringify(req).match(/Primary working directory: (\/[^\s\\"]+)/)?.[1];
}

/** How many tool results the conversation holds so far: the script's step. */
function step(req: MessagesRequest): number {
  let n = 0;
  for (const m of req.messages ?? []) {
    if (typeof m.content === "string") continue;
    n += m.content.filter((b) => b.type === "tool_result").length;
  }
  return n;
}

Deno.test({
  name: "a call cuts a worktree and branch, a command is refused, an allowed edit lands, " +
    "and the same work continues its session after a restart",
  ...opts,
  async fn() {
    await using f = await fixture();
    const wt = `${f.data}/worktrees/claude/app/bob-agent/t1/fix-login`;
    await using mock = startMockAnthropic({
      rules: [
        {
          when: (r) => lastUserContains("TASK-TWO")(r) && promptContains("TASK-ONE")(r),
          reply: text("CONTINUED: I remember TASK-ONE."),
        },
        { when: lastUserContains("TASK-TWO"), reply: text("NEW SESSION: no memory.") },
        { when: toolResultFor("Write"), reply: text("Wrote notes.txt; the command was refused.") },
        {
          when: toolResultFor("Bash"),
          reply: toolUse("Write", { file_path: `${wt}/notes.txt`, content: "fixed\n" }),
        },
        {
          when: lastUserContains("TASK-ONE"),
          reply: toolUse("Bash", { command: "touch ran-bash.txt", description: "make a file" }),
        },
      ],
    });
    const events: CallEvent[] = [];
    const costs: number[] = [];
    let acpLayer = layer(f, mock.url, { allow: ["claude/edit(notes.txt)"] }, { events, costs });
    await using _layer = { [Symbol.asyncDispose]: () => acpLayer.close() };
    const origin = { agent: "bob-agent", thread: "t1", callId: "call_1" };
    const r1 = await acpLayer.call("claude", origin, {
      task: "TASK-ONE: fix the login",
      checkout: "app",
      work: "fix-login",
    });
    const why = () => JSON.stringify({ r1, events: events.slice(-5) }, null, 1);
    assert.equal(r1.worktree, wt, why());
    assert.equal(r1.branch, "wats/bob-agent/t1/fix-login");
    assert.equal((await git(["branch", "--show-current"], wt)).trim(), r1.branch);
    assert.equal(r1.head, (await git(["rev-parse", "main"], f.repo)).trim());
    assert.deepEqual(r1.commits, []);
    assert.equal(r1.stop_reason, "end_turn");
    assert.equal(r1.message, "Wrote notes.txt; the command was refused.", why());

    // The command was refused with reject_once and listed; it never ran.
    assert.equal(r1.refused.length, 1, why());
    assert.equal(r1.refused[0]!.request, "claude/execute");
    assert.match(r1.refused[0]!.id, /^call_1:.+/);
    assert.match(r1.refused[0]!.reason, /claude\/execute is gated/);
    // Review is off (no park): ask refuses, and says why.
    assert.match(r1.refused[0]!.reason, /agent\.review is off, so it was refused/);
    assert.throws(() => Deno.statSync(`${wt}/ran-bash.txt`));
    const answers = events.filter((e) => e.type === "acp_permission");
    assert.deepEqual(
      answers.map((e) => e.type === "acp_permission" && [e.request, e.answer]),
      [["claude/execute", "reject_once"], ["claude/edit", "allow_once"]],
    );
    // The edit the rule allows was written.
    assert.equal(Deno.readTextFileSync(`${wt}/notes.txt`), "fixed\n");

    // Claude reports a cumulative cost; the call's share reaches the ledger.
    assert.ok(r1.usd > 0, `usd ${r1.usd}`);
    assert.deepEqual(costs, [r1.usd]);

    // Someone commits the work; the daemon restarts (a new layer, a new agent process).
    await git(["-c", "user.email=t@example.org", "-c", "user.name=T", "add", "notes.txt"], wt);
    await git(
      ["-c", "user.email=t@example.org", "-c", "user.name=T", "commit", "-qm", "Fix login"],
      wt,
    );
    await acpLayer.close();
    acpLayer = layer(f, mock.url, {}, { events, costs });
    const r2 = await acpLayer.call("claude", { ...origin, callId: "call_2" }, {
      task: "TASK-TWO: what did you do?",
      checkout: "app",
      work: "fix-login",
    });
    assert.equal(r2.message, "CONTINUED: I remember TASK-ONE.", JSON.stringify(r2));
    assert.equal(r2.worktree, wt);
    const head = (await git(["rev-parse", "HEAD"], wt)).trim();
    assert.equal(r2.head, head);
    assert.deepEqual(r2.commits, [{ sha: head, subject: "Fix login" }]);
    assert.deepEqual(r2.refused, []);
    // The loaded session reports its cost since it began (measured): the call costs what
    // it added, not the first call's cost again.
    const reported = events.flatMap((e) => {
      const u = e.type === "acp_update"
        ? e.update as { sessionUpdate?: string; cost?: { amount: number } }
        : undefined;
      return u?.sessionUpdate === "usage_update" && u.cost ? [u.cost.amount] : [];
    });
    assert.ok(reported.at(-1)! > r1.usd, `reported ${reported}`);
    assert.ok(Math.abs(r2.usd - (reported.at(-1)! - r1.usd)) < 1e-9, `${r2.usd} ${reported}`);
    assert.deepEqual(costs, [r1.usd, r2.usd]);
  },
});

Deno.test({
  name: "a cancelled call cancels its prompt, and the next call on the work sends a new one",
  ...opts,
  async fn() {
    await using f = await fixture();
    await using mock = startMockAnthropic({
      rules: [
        { when: lastUserContains("TASK-AFTER"), reply: text("AFTER") },
        // The model hangs: the call stays in its prompt until it is cancelled.
        { when: lastUserContains("TASK-SLOW"), reply: { ...text("too late"), delayMs: 120_000 } },
      ],
    });
    await using acpLayer = closing(layer(f, mock.url, {}, { events: [], costs: [] }));
    const origin = { agent: "bob", thread: "_", callId: "slow" };
    const abort = new AbortController();
    const slow = acpLayer.call("claude", origin, {
      task: "TASK-SLOW",
      checkout: "app",
      work: "w",
    }, { signal: abort.signal });
    const end = Date.now() + 60_000;
    while (!mock.messages().some((m) => m.body && lastUserContains("TASK-SLOW")(m.body))) {
      if (Date.now() > end) throw new Error("the prompt never reached the model");
      await new Promise((r) => setTimeout(r, 50));
    }
    abort.abort();
    const r1 = await slow;
    assert.equal(r1.stop_reason, "cancelled");
    const r2 = await acpLayer.call("claude", { ...origin, callId: "after" }, {
      task: "TASK-AFTER",
      checkout: "app",
      work: "w",
    });
    assert.equal(r2.stop_reason, "end_turn");
    assert.equal(r2.message, "AFTER");
  },
});

Deno.test({
  name: "the coding agent cannot read or write the data dir's files, nor a secret outside " +
    "the worktree, through any request (adversarial script)",
  ...opts,
  async fn() {
    await using f = await fixture();
    const wt = `${f.data}/worktrees/claude/app/eve/_/w`;
    const attacks: Reply[] = [
      toolUse("Read", { file_path: `${f.data}/config.toml` }),
      toolUse("Read", { file_path: `${f.data}/node.key` }),
      toolUse("Read", { file_path: `${f.data}/safety.json` }),
      toolUse("Read", { file_path: `${f.outside}/secret.txt` }),
      toolUse("Read", { file_path: `${wt}/leak/secret.txt` }),
      toolUse("Read", { file_path: `${wt}/../../../../../../config.toml` }),
      toolUse("Bash", { command: `cat ${f.data}/config.toml`, description: "read" }),
      toolUse("Bash", { command: `cat "$(printf %s ${f.outside})/secret.txt"`, description: "r" }),
      toolUse("Bash", { command: "cat ../../../../../../node.key", description: "read" }),
      toolUse("Bash", { command: "cat leak/secret.txt", description: "read" }),
      toolUse("Write", { file_path: `${f.data}/config.toml`, content: "pwned" }),
      toolUse("Bash", { command: `echo pwned > ${f.data}/safety.json`, description: "w" }),
      toolUse("Edit", {
        file_path: `${f.data}/config.toml`,
        old_string: "SECRET",
        new_string: "pwned",
      }),
    ];
    await using mock = startMockAnthropic({
      rules: [{
        when: promptContains("ATTACK"),
        reply: (req) => attacks[step(req)] ?? text("done"),
      }],
    });
    const events: CallEvent[] = [];
    // Explicit rules that try to open the data dir: it stays closed whatever the rules say.
    await using acpLayer = closing(layer(
      f,
      mock.url,
      {
        allow: [`claude/read(${f.data}/**)`, `claude/edit(${f.data}/**)`],
      },
      { events, costs: [] },
    ));
    const r = await acpLayer.call("claude", { agent: "eve", thread: "_", callId: "c" }, {
      task: "ATTACK",
      checkout: "app",
      work: "w",
    });
    const sent = JSON.stringify(mock.messages().map((m) => m.body));
    for (const s of SECRETS) {
      assert.ok(
        !sent.includes(s),
        `${s} reached the model; refused: ${JSON.stringify(r.refused)}`,
      );
    }
    // Every attack was made (the script ran to its end) and nothing was written.
    assert.equal(r.message, "done");
    assert.ok(sent.includes("cat leak/secret.txt"));
    assert.equal(Deno.readTextFileSync(`${f.data}/config.toml`), "# SECRET-CONFIG-7f3a\n");
    assert.equal(
      Deno.readTextFileSync(`${f.data}/safety.json`),
      '{"note": "SECRET-SAFETY-91c2"}\n',
    );
    // Claude itself refuses file tools outside the cwd (blockReadsOutsideWorkingDirectories);
    // the shell commands ask, and the policy refuses them.
    assert.ok(r.refused.some((x) => /inside the wats data directory/.test(x.reason)));
    assert.ok(r.refused.every((x) => x.request === "claude/execute"), JSON.stringify(r.refused));
    const allowed = events.filter((e) => e.type === "acp_permission" && e.answer === "allow_once");
    assert.deepEqual(allowed, [], JSON.stringify(allowed));
  },
});

Deno.test({
  name: "the daemon serves a claude tool that calls the coding agent within its permission set, " +
    "and its sweep removes the work once merged, keeping one with changes",
  ...opts,
  async fn() {
    await using f = await fixture();
    const wt = `${f.data}/worktrees/claude/app/alice/_/notes`;
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("Write"), reply: text("Wrote notes.txt.") },
        {
          when: lastUserContains("TASK-D"),
          reply: toolUse("Write", { file_path: `${wt}/notes.txt`, content: "from the daemon\n" }),
        },
      ],
    });
    // A fresh node: it makes its own key and safety.json.
    Deno.removeSync(`${f.data}/node.key`);
    Deno.removeSync(`${f.data}/safety.json`);
    // Everything the daemon needs comes from config.toml: its worker sees no other variable.
    Deno.writeTextFileSync(
      `${f.data}/config.toml`,
      [
        ...claudeAcpToml(acp!, mock.url, f.home),
        "",
        "[checkouts.app]",
        `path = "${f.repo}"`,
        'base = "main"',
        "",
        "[policy]",
        'allow = ["claude/edit(notes.txt)"]',
        "",
      ].join("\n"),
    );
    await using rig = await nodeRig({ dataDir: f.data, env: { IS_SANDBOX: "1" } });
    const node = rig.node;
    const client = await rig.mcp("alice", f.home);
    const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
    assert.ok(tools.includes("claude"), tools.join(","));
    const r = await client.callTool({
      name: "claude",
      arguments: { task: "TASK-D: write notes", checkout: "app", work: "notes" },
    });
    const out = (r.content as { text: string }[])[0]!.text;
    assert.ok(!r.isError, `${out}\n${node.stderr()}`);
    const result = JSON.parse(out.slice(out.indexOf("\n") + 1));
    assert.equal(result.worktree, wt);
    assert.equal(result.branch, "wats/alice/_/notes");
    assert.equal(result.message, "Wrote notes.txt.");
    assert.equal(Deno.readTextFileSync(`${wt}/notes.txt`), "from the daemon\n");
    // `wats node` prints the permission decision as a JSON line.
    const decided = rig.events("acp_permission")[0];
    assert.equal(decided?.request, "claude/edit");
    assert.equal(decided?.answer, "allow_once");
    assert.equal(decided?.harness, "claude");
    assert.equal(decided?.agent, "alice");
    // The start's sweep kept it: notes.txt is not committed yet.
    const first = rig.events("acp_sweep")[0];
    assert.deepEqual(first?.removed, []);

    // The work is committed and merged into the base; another work has an uncommitted file.
    await client.close();
    await rig.stop();
    const id = ["-c", "user.email=t@example.org", "-c", "user.name=T"];
    await git(["add", "notes.txt"], wt);
    await git([...id, "commit", "-qm", "Add notes"], wt);
    // The work is a repository of its own (docs/decisions/work_repos.md): the person takes its
    // commits from it, as the daemon's import does.
    await git(["fetch", "-q", wt, "wats/alice/_/notes"], f.repo);
    await git([...id, "merge", "-q", "--no-ff", "-m", "merge notes", "FETCH_HEAD"], f.repo);
    // A work an older wats made (a git worktree of the checkout) with a file not committed: the
    // sweep turns it into a work repository, keeps the file, and so keeps the work.
    const keep = `${f.data}/worktrees/claude/app/alice/_/keep`;
    await git(["worktree", "add", "-q", "-b", "wats/alice/_/keep", keep, "main"], f.repo);
    Deno.writeTextFileSync(`${keep}/draft.txt`, "not yet\n");

    // The next start sweeps: the merged work goes, with its branch; the other stays.
    await using again = await nodeRig({ dataDir: f.data, env: { IS_SANDBOX: "1" } });
    const swept = await again.waitEvent("acp_sweep", { timeoutMs: 90_000 });
    assert.deepEqual(swept.removed, [wt], JSON.stringify(swept));
    assert.deepEqual(swept.kept, [{ dir: keep, reason: "it has changes or untracked files" }]);
    assert.throws(() => Deno.statSync(wt));
    assert.equal(Deno.readTextFileSync(`${keep}/draft.txt`), "not yet\n");
    const branches = await git(
      ["branch", "--list", "wats/*", "--format=%(refname:short)"],
      f.repo,
    );
    assert.equal(branches.trim(), "wats/alice/_/keep");

    // `wats agent sweep` sweeps again, now: the kept work goes once it is merged too.
    Deno.removeSync(`${keep}/draft.txt`);
    await git(
      [...id, "merge", "-q", "--no-ff", "-m", "merge keep", "wats/alice/_/keep"],
      f.repo,
    );
    const byHand = await runWats(["--data-dir", f.data, "agent", "sweep"]);
    assert.equal(byHand.code, 0, byHand.stderr);
    assert.equal(byHand.stdout, `removed 1 worktree(s):\n  ${keep}\n`);
    assert.throws(() => Deno.statSync(keep));
  },
});

Deno.test({
  name: "a woken agent (real Claude Code) calls the claude harness tool; the work lands in its " +
    "worktree and the call's cost in the budget file",
  ...opts,
  async fn() {
    await using f = await fixture();
    Deno.removeSync(`${f.data}/node.key`);
    Deno.removeSync(`${f.data}/safety.json`);
    // The run is about the ask's thread: its works live under it.
    const wtOf = (ask: string) => `${f.data}/worktrees/claude/app/helper/${ask.slice(0, 12)}/notes`;
    // One mock for both: the woken agent's Claude Code and the coding agent's.
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("mcp__wats__claude"), reply: text("Delegated the notes.") },
        { when: toolResultFor("Write"), reply: text("Wrote notes.txt.") },
        {
          // Claude Code's side requests (a title, …) name no working directory.
          when: (r) => lastUserContains("TASK-W")(r) && cwdIn(r) !== undefined,
          reply: (req) =>
            toolUse("Write", { file_path: `${cwdIn(req)}/notes.txt`, content: "by the coder\n" }),
        },
        {
          when: hasTool("mcp__wats__claude"),
          reply: toolUse("mcp__wats__claude", {
            task: "TASK-W: write the notes",
            checkout: "app",
            work: "notes",
          }),
        },
      ],
    });
    Deno.writeTextFileSync(
      `${f.data}/config.toml`,
      [
        ...claudeAcpToml(acp!, mock.url, f.home),
        "",
        "[checkouts.app]",
        `path = "${f.repo}"`,
        'base = "main"',
        "",
        "[policy]",
        'allow = ["claude/edit(notes.txt)"]',
        "",
      ].join("\n"),
    );
    await using rig = await nodeRig({ dataDir: f.data, agent: { mock } });
    const alice = await rig.mcp("alice");
    const ask = idIn(
      await call(alice, "ask", { title: "Notes", text: "Could someone write the notes?" }),
    );
    const wt = wtOf(ask);
    const ended = await rig.waitEvent("run_ended");
    assert.equal(ended?.status, "ok", JSON.stringify(ended));
    assert.equal(Deno.readTextFileSync(`${wt}/notes.txt`), "by the coder\n");
    // The woken agent got the call's result as its tool result.
    const back = mock.messages().find((m) => m.body && toolResultFor("mcp__wats__claude")(m.body));
    const result = JSON.stringify(back?.body?.messages);
    assert.ok(result.includes(`wats/helper/${ask.slice(0, 12)}/notes`), result);
    assert.ok(result.includes("Wrote notes.txt."), result);
    // The coding agent's cost is kept for the budget.
    await waitFor("the spend line", () => {
      try {
        return Deno.readTextFileSync(`${f.data}/agent/acp_spend.jsonl`).trim() !== "";
      } catch {
        return false;
      }
    });
    const spent = JSON.parse(Deno.readTextFileSync(`${f.data}/agent/acp_spend.jsonl`));
    assert.equal(spent.harness, "claude");
    assert.ok(spent.usd > 0);
    assert.match(spent.call, new RegExp(`^${ended.run}\\.acp_`));
  },
});

/**
 * config.toml for a daemon whose coding agent may run commands, with review on
 * (and agent.notify with `notify`).
 */
function reviewConfig(f: Fixture, mockUrl: string, notify = false): string {
  return [
    ...claudeAcpToml(acp!, mockUrl, f.home, {
      GIT_AUTHOR_NAME: "Coder",
      GIT_AUTHOR_EMAIL: "c@example.org",
      GIT_COMMITTER_NAME: "Coder",
      GIT_COMMITTER_EMAIL: "c@example.org",
    }),
    "",
    "[checkouts.app]",
    `path = "${f.repo}"`,
    'base = "main"',
    "",
    "[agent]",
    "review = true",
    ...(notify ? ["notify = true"] : []),
    "",
    "[policy]",
    'allow = ["claude/execute"]',
    "",
  ].join("\n");
}

/**
 * A bin dir whose `notify-send` records what agent.notify asked it to show,
 * and the PATH that finds it first.
 */
function recordingNotifier(f: Fixture): { path: string; shown: () => string } {
  const bin = `${f.root}/bin`;
  Deno.mkdirSync(bin);
  Deno.writeTextFileSync(`${bin}/notify-send`, `#!/bin/sh\necho "$@" >> ${bin}/shown.txt\n`, {
    mode: 0o755,
  });
  return {
    path: `${bin}:${Deno.env.get("PATH")}`,
    shown: () => {
      try {
        return Deno.readTextFileSync(`${bin}/shown.txt`);
      } catch {
        return "";
      }
    },
  };
}

/**
 * The daemon of `rig` dies (SIGKILL) during a call on the work `notes` whose task, `TASK-K: write
 * the notes`, the mock must hang on; a new daemon (`restart`) starts, retried while the dead one's
 * lock looks held, and parks the call as in doubt. Returns the held item's id and the new daemon,
 * for the caller to dispose.
 */
async function crashDuringCall(
  f: Fixture,
  mock: MockAnthropic,
  rig: NodeRig,
  restart: NodeRigOptions,
): Promise<{ id: string; again: NodeRig }> {
  const node = rig.node;
  const client = await mcpClient(f.data, "alice", f.home);
  client.callTool({
    name: "claude",
    arguments: { task: "TASK-K: write the notes", checkout: "app", work: "notes" },
  }).catch(() => {});
  await waitFor(
    "the prompt at the model",
    () => mock.messages().some((m) => m.body && lastUserContains("TASK-K")(m.body)),
    90_000,
  );
  node.process.kill("SIGKILL");
  await node.process.status;
  client.close().catch(() => {});
  // The restart finds the call in flight: it waits for a person, in doubt. A restart right after
  // SIGKILL may be refused while the dead daemon's lock looks held.
  const again = await nodeRig({ ...restart, dataDir: f.data, retryRefusedMs: 30_000 });
  try {
    let listed = "";
    for (let i = 0; i < 60 && !listed.includes("in_doubt"); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 500));
      listed = (await runWats(["--data-dir", f.data, "agent", "pending"])).stdout;
    }
    assert.match(listed, /permission claude\/in_doubt +work notes/);
    return { id: listed.split(" ")[0]!, again };
  } catch (err) {
    await again[Symbol.asyncDispose]();
    throw err;
  }
}

/**
 * A call on the work `notes` with `task` parks (the mock must answer it with a request the policy
 * asks about); then the daemon of `rig` stops, its coding agent with it, and a new one
 * (`restart`) starts while the request still waits. Returns the held item's id and the new
 * daemon, for the caller to dispose.
 */
async function parkThenRestart(
  f: Fixture,
  rig: NodeRig,
  restart: NodeRigOptions,
  task: string,
): Promise<{ held: string; again: NodeRig }> {
  const parked = await (async () => {
    await using client = closing(await mcpClient(f.data, "alice", f.home));
    return resultOf(
      await client.callTool({
        name: "claude",
        arguments: { task, checkout: "app", work: "notes" },
      }),
    );
  })();
  assert.equal(parked.stop_reason, "parked", JSON.stringify(parked));
  await rig.stop();
  const again = await nodeRig({ ...restart, dataDir: f.data });
  return { held: (parked.parked as { id: string }).id, again };
}

/** The JSON of a harness tool's result (after its line about trust). */
function resultOf(r: { content: unknown; isError?: unknown }): Record<string, unknown> {
  const out = (r.content as { text: string }[])[0]!.text;
  assert.ok(!r.isError, out);
  return JSON.parse(out.slice(out.indexOf("\n") + 1));
}

/** The subjects of the branch's commits that are not in main, newest first (sync: for polling). */
function subjects(repo: string, branch: string): string[] {
  const out = new Deno.Command("git", {
    args: ["log", "--format=%s", `main..${branch}`],
    cwd: repo,
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
}

Deno.test({
  name: "with review on, an edit parks the call; `wats agent approve` answers it, the coding " +
    "agent writes and commits, and the next call's commits are right",
  ...opts,
  async fn() {
    await using f = await fixture();
    Deno.removeSync(`${f.data}/node.key`);
    Deno.removeSync(`${f.data}/safety.json`);
    const wt = `${f.data}/worktrees/claude/app/alice/_/notes`;
    await using mock = startMockAnthropic({
      rules: [
        { when: lastUserContains("TASK-CONT"), reply: text("CONTINUED: the notes are in.") },
        { when: toolResultFor("Bash"), reply: text("Committed the notes.") },
        {
          when: toolResultFor("Write"),
          reply: toolUse("Bash", {
            command: "git add notes.txt && git commit -qm 'Add notes'",
            description: "commit the notes",
          }),
        },
        {
          when: lastUserContains("TASK-P"),
          reply: toolUse("Write", { file_path: `${wt}/notes.txt`, content: "reviewed\n" }),
        },
      ],
    });
    Deno.writeTextFileSync(`${f.data}/config.toml`, reviewConfig(f, mock.url, true));
    const notes = recordingNotifier(f);
    await using rig = await nodeRig({
      dataDir: f.data,
      env: { IS_SANDBOX: "1", PATH: notes.path },
    });
    const client = await rig.mcp("alice", f.home);
    const parked = resultOf(
      await client.callTool({
        name: "claude",
        arguments: { task: "TASK-P: write the notes", checkout: "app", work: "notes" },
      }),
    );
    assert.equal(parked.stop_reason, "parked", JSON.stringify(parked));
    const p = parked.parked as { id: string; request: string; request_id: string };
    assert.equal(p.request, "claude/edit");
    assert.throws(() => Deno.statSync(`${wt}/notes.txt`));

    // `wats agent pending` shows it with what a person needs to decide.
    const listed = await runWats(["--data-dir", f.data, "agent", "pending"]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${p.id} .*permission claude/edit ${wt}/notes.txt`));
    const shown = await runWats(["--data-dir", f.data, "agent", "pending", "show", p.id]);
    assert.match(shown.stdout, new RegExp(`worktree  ${wt}`));
    assert.match(shown.stdout, /"content": "reviewed\\n"/);
    // agent.notify tells the person, on one line: the request, where, which work.
    await waitFor("the desktop notification", () => notes.shown() !== "", 30_000);
    assert.equal(
      notes.shown(),
      `--app-name=wats wats: a coding agent waits for a decision claude/edit ${wt}/notes.txt (work notes)\n`,
    );

    // A request has no text to edit.
    const edit = await runWats(["--data-dir", f.data, "agent", "approve", p.id, "--edit"]);
    assert.notEqual(edit.code, 0);
    assert.match(edit.stderr, /is a coding agent's request, not a draft/);
    const approved = await runWats(["--data-dir", f.data, "agent", "approve", p.id]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /got the answer/);
    await waitFor(
      "the coding agent's commit",
      () => subjects(f.repo, "wats/alice/_/notes").length > 0,
      120_000,
    );
    assert.equal(Deno.readTextFileSync(`${wt}/notes.txt`), "reviewed\n");
    const gone = await runWats(["--data-dir", f.data, "agent", "pending"]);
    assert.equal(gone.stdout, "no drafts waiting for review\n");

    // The agent continues the work: the same work name, after the parked prompt ended.
    const r = resultOf(
      await client.callTool({
        name: "claude",
        arguments: { task: "TASK-CONT: anything left?", checkout: "app", work: "notes" },
      }),
    );
    assert.equal(r.message, "CONTINUED: the notes are in.");
    const head = (await git(["rev-parse", "HEAD"], wt)).trim();
    assert.deepEqual(r.commits, [{ sha: head, subject: "Add notes" }]);
    const decisions = rig.events("acp_permission").filter((e) => e.request === "claude/edit")
      .map((e) => e.answer);
    assert.deepEqual(decisions, ["parked", "allow_once"]);
  },
});

Deno.test({
  name: "a call running when its daemon got SIGKILL is in doubt after the restart; " +
    "approving it has the coding agent check the worktree and finish",
  ...opts,
  async fn() {
    await using f = await fixture();
    Deno.removeSync(`${f.data}/node.key`);
    Deno.removeSync(`${f.data}/safety.json`);
    const wt = `${f.data}/worktrees/claude/app/alice/_/notes`;
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("Bash"), reply: text("Checked the worktree and finished.") },
        {
          when: lastUserContains("The node restarted while you worked"),
          reply: toolUse("Bash", {
            command: "printf 'finished\\n' > notes.txt && git add notes.txt && " +
              "git commit -qm 'Finish notes'",
            description: "finish the notes",
          }),
        },
        // The first turn hangs: the daemon dies during it.
        { when: lastUserContains("TASK-K"), reply: { ...text("too late"), delayMs: 600_000 } },
      ],
    });
    Deno.writeTextFileSync(`${f.data}/config.toml`, reviewConfig(f, mock.url, true));
    const notes = recordingNotifier(f);
    const daemon = { dataDir: f.data, env: { IS_SANDBOX: "1", PATH: notes.path } };
    await using rig = await nodeRig(daemon);
    const { id, again } = await crashDuringCall(f, mock, rig, daemon);
    await using _again = again;
    const shown = await runWats(["--data-dir", f.data, "agent", "pending", "show", id]);
    assert.match(shown.stdout, /TASK-K: write the notes/);
    await waitFor("the desktop notification", () => notes.shown() !== "", 30_000);
    assert.equal(
      notes.shown(),
      "--app-name=wats wats: a coding agent waits for a decision claude/in_doubt (work notes)\n",
    );

    const approved = await runWats(["--data-dir", f.data, "agent", "approve", id]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /told to check the worktree of notes and finish/);
    await waitFor(
      "the coding agent's commit",
      () => subjects(f.repo, "wats/alice/_/notes").length > 0,
      120_000,
    );
    assert.deepEqual(subjects(f.repo, "wats/alice/_/notes"), ["Finish notes"]);
    assert.equal(Deno.readTextFileSync(`${wt}/notes.txt`), "finished\n");
    // The coding agent was told the task it was cut off in.
    const told = mock.messages().find((m) =>
      m.body && lastUserContains("The node restarted while you worked")(m.body)
    );
    assert.ok(JSON.stringify(told?.body).includes("TASK-K: write the notes"));
  },
});

Deno.test({
  name: "a call in doubt that a person rejects sends nothing; the next call on the work starts " +
    "by telling the coding agent a person declined to let that task finish, once",
  ...opts,
  async fn() {
    await using f = await fixture();
    Deno.removeSync(`${f.data}/node.key`);
    Deno.removeSync(`${f.data}/safety.json`);
    await using mock = startMockAnthropic({
      rules: [
        { when: lastUserContains("TASK-N2"), reply: text("NEXT-2 done.") },
        { when: lastUserContains("TASK-N1"), reply: text("NEXT-1 done.") },
        // The first turn hangs: the daemon dies during it.
        { when: lastUserContains("TASK-K"), reply: { ...text("too late"), delayMs: 600_000 } },
      ],
    });
    Deno.writeTextFileSync(`${f.data}/config.toml`, reviewConfig(f, mock.url));
    const daemon = { dataDir: f.data, env: { IS_SANDBOX: "1" } };
    await using rig = await nodeRig(daemon);
    const { id, again } = await crashDuringCall(f, mock, rig, daemon);
    await using _again = again;
    // The sweep at start keeps the work: its call waits for a person.
    const sweeps = () => again.events("acp_sweep");
    await waitFor("the sweep at start", () => sweeps().length > 0, 60_000);
    assert.deepEqual(sweeps()[0]!.kept, [{
      dir: `${f.data}/worktrees/claude/app/alice/_/notes`,
      reason: "a request of it waits for a person",
    }]);
    const asked = mock.messages().length;
    const rejected = await runWats(["--data-dir", f.data, "agent", "reject", id]);
    assert.equal(rejected.code, 0, rejected.stderr);
    assert.match(
      rejected.stdout,
      /left as it is; the next call on it tells the coding agent not to finish that task/,
    );
    // Nothing went to the coding agent.
    assert.equal(mock.messages().length, asked);

    const client = await again.mcp("alice", f.home);
    const next = resultOf(
      await client.callTool({
        name: "claude",
        arguments: { task: "TASK-N1: say hello", checkout: "app", work: "notes" },
      }),
    );
    assert.equal(next.message, "NEXT-1 done.");
    const first = mock.messages().find((m) => m.body && lastUserContains("TASK-N1")(m.body));
    const said = trailingMessages(first!.body!).map((m) => textOf(m.content)).join("\n");
    const notice = said.indexOf("Before your task: the node restarted while you worked");
    assert.ok(notice >= 0 && notice < said.indexOf("TASK-N1"), said);
    assert.match(said, /a person declined to let that interrupted work finish/);
    assert.match(said, /Interrupted task:\n---\nTASK-K: write the notes\n---/);

    // Told once: the call after it has only its task.
    await client.callTool({
      name: "claude",
      arguments: { task: "TASK-N2: say hello again", checkout: "app", work: "notes" },
    });
    const second = mock.messages().find((m) => m.body && lastUserContains("TASK-N2")(m.body));
    assert.ok(!lastUserContains("Before your task")(second!.body!));
  },
});

Deno.test({
  name: "a request parked when its daemon stopped: approving it after the restart tells the " +
    "coding agent, which makes the request again, allowed once",
  ...opts,
  async fn() {
    await using f = await fixture();
    Deno.removeSync(`${f.data}/node.key`);
    Deno.removeSync(`${f.data}/safety.json`);
    const wt = `${f.data}/worktrees/claude/app/alice/_/notes`;
    const write = toolUse("Write", { file_path: `${wt}/notes.txt`, content: "later\n" });
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("Bash"), reply: text("Wrote and committed the notes.") },
        {
          when: toolResultFor("Write"),
          reply: toolUse("Bash", {
            command: "git add notes.txt && git commit -qm 'Add notes later'",
            description: "commit",
          }),
        },
        { when: lastUserContains("A person approved your request"), reply: write },
        { when: lastUserContains("TASK-S"), reply: write },
      ],
    });
    Deno.writeTextFileSync(`${f.data}/config.toml`, reviewConfig(f, mock.url));
    const daemon = { dataDir: f.data, env: { IS_SANDBOX: "1" } };
    await using rig = await nodeRig(daemon);
    const { held, again } = await parkThenRestart(f, rig, daemon, "TASK-S: write the notes");
    await using _again = again;
    const approved = await runWats(["--data-dir", f.data, "agent", "approve", held]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(
      approved.stdout,
      /its coding agent had stopped, so a new call on notes tells it/,
    );
    await waitFor(
      "the coding agent's commit",
      () => subjects(f.repo, "wats/alice/_/notes").length > 0,
      120_000,
    );
    assert.deepEqual(subjects(f.repo, "wats/alice/_/notes"), ["Add notes later"]);
    assert.equal(Deno.readTextFileSync(`${wt}/notes.txt`), "later\n");
    const edits = again.events("acp_permission").filter((e) => e.request === "claude/edit");
    assert.deepEqual(edits.map((e) => e.answer), ["allow_once"]);
    assert.match(String(edits[0]!.reason), /a person approved it while it waited/);
  },
});

Deno.test({
  name: "a request parked when its daemon stopped: after the approval, another request of the " +
    "same kind is not allowed by it, and parks for a person again",
  ...opts,
  async fn() {
    await using f = await fixture();
    Deno.removeSync(`${f.data}/node.key`);
    Deno.removeSync(`${f.data}/safety.json`);
    const wt = `${f.data}/worktrees/claude/app/alice/_/notes`;
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("Write"), reply: text("Wrote it.") },
        // Told of the approval, the coding agent writes another file than it asked for.
        {
          when: lastUserContains("A person approved your request"),
          reply: toolUse("Write", { file_path: `${wt}/other.txt`, content: "other\n" }),
        },
        {
          when: lastUserContains("TASK-D"),
          reply: toolUse("Write", { file_path: `${wt}/notes.txt`, content: "later\n" }),
        },
      ],
    });
    Deno.writeTextFileSync(`${f.data}/config.toml`, reviewConfig(f, mock.url));
    const daemon = { dataDir: f.data, env: { IS_SANDBOX: "1" } };
    await using rig = await nodeRig(daemon);
    const { held, again } = await parkThenRestart(f, rig, daemon, "TASK-D: write the notes");
    await using _again = again;
    const approved = await runWats(["--data-dir", f.data, "agent", "approve", held]);
    assert.equal(approved.code, 0, approved.stderr);
    const edits = () => again.events("acp_permission").filter((e) => e.request === "claude/edit");
    await waitFor("the coding agent's next edit request", () => edits().length > 0, 120_000);
    // The approval was for notes.txt: other.txt waits for a person, unwritten.
    assert.deepEqual(edits().map((e) => [e.answer, e.locations]), [
      ["parked", [`${wt}/other.txt`]],
    ]);
    assert.throws(() => Deno.statSync(`${wt}/other.txt`));
    const listed = await runWats(["--data-dir", f.data, "agent", "pending"]);
    assert.match(listed.stdout, new RegExp(`permission claude/edit ${wt}/other.txt`));
    // The coding agent was told which request the approval is for.
    const told = mock.messages().find((m) =>
      m.body && lastUserContains("A person approved your request")(m.body)
    );
    assert.match(JSON.stringify(told?.body), /Make that same request again now, unchanged/);
  },
});

Deno.test({
  name: "a woken agent's call parks; the approval wakes it (permission decided), it continues " +
    "the work, and `wats agent logs` shows the coding agent and its decisions",
  ...opts,
  async fn() {
    await using f = await fixture();
    Deno.removeSync(`${f.data}/node.key`);
    Deno.removeSync(`${f.data}/safety.json`);
    const both = (req: MessagesRequest) =>
      hasTool("mcp__wats__claude")(req) && promptContains("permission decided")(req);
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("mcp__wats__claude"), reply: text("Handled the coding work.") },
        { when: lastUserContains("TASK-CONT"), reply: text("CONTINUED: the notes are in.") },
        { when: toolResultFor("Bash"), reply: text("Committed the notes.") },
        {
          when: toolResultFor("Write"),
          reply: toolUse("Bash", {
            command: "git add notes.txt && git commit -qm 'Add notes'",
            description: "commit",
          }),
        },
        {
          // Claude Code's side requests (a title, …) name no working directory.
          when: (r) => lastUserContains("TASK-W")(r) && cwdIn(r) !== undefined,
          reply: (req) =>
            toolUse("Write", { file_path: `${cwdIn(req)}/notes.txt`, content: "woken\n" }),
        },
        {
          when: both,
          reply: toolUse("mcp__wats__claude", {
            task: "TASK-CONT: finish the notes",
            checkout: "app",
            work: "notes",
          }),
        },
        {
          when: hasTool("mcp__wats__claude"),
          reply: toolUse("mcp__wats__claude", {
            task: "TASK-W: write the notes",
            checkout: "app",
            work: "notes",
          }),
        },
      ],
    });
    Deno.writeTextFileSync(`${f.data}/config.toml`, reviewConfig(f, mock.url));
    await using rig = await nodeRig({ dataDir: f.data, agent: { mock } });
    const alice = await rig.mcp("alice");
    const ask = idIn(
      await call(alice, "ask", { title: "Notes", text: "Could someone write the notes?" }),
    );
    // Both runs are about the ask's thread: one worktree, one branch.
    const branch = `wats/helper/${ask.slice(0, 12)}/notes`;
    const wt = `${f.data}/worktrees/claude/app/helper/${ask.slice(0, 12)}/notes`;
    await rig.waitEvent("run_ended");
    let listed = "";
    for (let i = 0; i < 60 && !listed.includes("permission claude/edit"); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 500));
      listed = (await runWats(["--data-dir", f.data, "agent", "pending"])).stdout;
    }
    const id = listed.split(" ")[0]!;
    const approved = await runWats(["--data-dir", f.data, "agent", "approve", id]);
    assert.equal(approved.code, 0, approved.stderr);

    // The approval wakes the agent; it calls the same work again.
    await waitFor("the second run", () => rig.events("run_ended").length >= 2, 120_000);
    const runs = rig.events("run_ended");
    assert.equal(runs[1]!.status, "ok", JSON.stringify(runs[1]));
    const second = mock.messages().find((m) => m.body && both(m.body));
    assert.ok(second, "no run was woken by the decision");
    assert.match(
      JSON.stringify(second.body),
      /permission decided: claude\/edit on work notes was approved/,
    );
    assert.deepEqual(subjects(f.repo, branch), ["Add notes"]);
    const back = mock.messages().filter((m) => m.body && toolResultFor("mcp__wats__claude")(m.body))
      .map((m) => JSON.stringify(m.body?.messages));
    assert.match(back[0]!, /\\"stop_reason\\": \\"parked\\"/);
    assert.match(back.at(-1)!, /CONTINUED: the notes are in\./);
    assert.match(back.at(-1)!, /Add notes/);

    // The first run's log shows the coding agent's request, parked.
    const logs = await runWats([
      "--data-dir",
      f.data,
      "agent",
      "logs",
      "--run",
      String(runs[0]!.run),
    ]);
    assert.equal(logs.code, 0, logs.stderr);
    // Claude names the call as it starts it ("Preparing file…"): its kind says what it is.
    assert.match(logs.stdout, /claude│ → .* \[edit\]/);
    assert.match(logs.stdout, new RegExp(`claude│ \\? claude/edit ${wt}/notes.txt → parked`));
    // What the coding agent did once the person decided, after that run ended, is there too.
    const after = logs.stdout.slice(logs.stdout.indexOf("── end:"));
    assert.match(after, /── after the run ended, its coding agent went on:/, logs.stdout);
    assert.match(after, new RegExp(`claude│ \\? claude/edit ${wt}/notes.txt → allow_once`));
    const later = await runWats([
      "--data-dir",
      f.data,
      "agent",
      "logs",
      "--run",
      String(runs[1]!.run),
    ]);
    assert.match(later.stdout, /claude│ CONTINUED: the notes are in\./);
  },
});
