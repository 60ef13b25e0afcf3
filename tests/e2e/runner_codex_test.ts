/**
 * The Codex harness end to end: the real Codex CLI (pinned in
 * tests/support/clis.ts) run by the heartbeat runner with the real process
 * group spawn, against the scripted mock Responses API, its `wats mcp` talking
 * to a real `wats node`. The runner is built in the test process (the daemon's
 * `--agent codex` wiring is src/node/agent_runner.ts's), on the same data dir
 * as the node, which stores and signs what the agent posts.
 */

import assert from "node:assert/strict";
import { decode as decodeNip19 } from "nostr-tools/nip19";
import { denoDir } from "../support/cli.ts";
import { cliPath, requireCli } from "../support/clis.ts";
import {
  callOutputFor,
  functionCall,
  hasTool,
  MOCK_MODEL,
  type MockOpenAI,
  startMockOpenAI,
  text,
  toolNames,
} from "../support/mock_openai.ts";
import {
  answeringCodexMock,
  call,
  codexEventIds as eventIds,
  idIn,
  waitFor,
} from "../support/swarm.ts";
import { jsonLines, nodeRig, tempDir } from "../support/rig.ts";
import { defaultSettings } from "../../src/config/schema.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { Store } from "../../src/store/store.ts";
import { Runner } from "../../src/runner/scheduler.ts";
import { codexHarness, type CodexProvider } from "../../src/runner/runtimes/codex/harness.ts";
import { codexFeatureProbe, lockdownDisables } from "../../src/runner/runtimes/codex/features.ts";
import { ensureCodexCatalog } from "../../src/runner/runtimes/codex/catalog.ts";
import type { Harness, SelfCommand } from "../../src/runner/harness.ts";
import { listProcesses } from "../../src/runner/process_watch.ts";
import type { CommandRunner } from "../../src/runner/spawn.ts";
import { spawnProcessGroup } from "../../src/runner/spawn.ts";
import { Transcripts } from "../../src/runner/transcripts.ts";
import type { RunIndexEntry } from "../../src/contracts/runs.ts";
import { renderTranscript } from "../../src/runner/render.ts";
import { readHeartbeatTemplate } from "../../src/runner/prompt.ts";
import { systemClock, systemTimers } from "../../src/runner/ports.ts";
import { buildPost } from "../../src/posts/post.ts";
import { deriveProfileKey } from "../../src/identity/profile_key.ts";
import { watsCommand } from "../support/cli.ts";
import { assertOfferedExactly } from "../support/locked_tools.ts";
import { ALL_TOOLS } from "../../src/mcp/tools.ts";
import { MCP_SERVER_NAME } from "../../src/contracts/session.ts";
import { ALLOWED_CODEX_TOOLS } from "../../src/runner/runtimes/codex/lock.ts";

const codex = requireCli("codex");
const opts = { ignore: codex === null, sanitizeOps: false, sanitizeResources: false };

/**
 * What a locked run offers the model, exactly: the wats tools and Codex's own
 * MCP resource readers and user-input request (which has no user under
 * `exec`); no shell, no patch tool, no sub-agents, no browser, no web search.
 * The runner here mints no run token, so its `wats mcp` is a person's session
 * and keeps the review tools (codex_daemon_test.ts checks a runner session's).
 */
const LOCKED_TOOLS = [
  ...ALLOWED_CODEX_TOOLS,
  ...ALL_TOOLS.map((t) => `mcp__${MCP_SERVER_NAME}/${t.name}`),
].sort();

/** A mock model that answers the newest event with `Use journald (<n>).`, then says "Answered.". */
function answeringMock(): MockOpenAI {
  return answeringCodexMock((n) => `Use journald (${n}).`);
}

function provider(mock: MockOpenAI): CodexProvider {
  return {
    id: "wats_mock",
    name: "wats mock",
    baseUrl: `${mock.url}/v1`,
    requestMaxRetries: 0,
    streamMaxRetries: 0,
  };
}

/**
 * Codex's own state (CODEX_HOME) and HOME, per test; the shared Deno cache for `wats mcp`.
 * Codex gets a TMPDIR beside its home, not above it: under the temporary directory it
 * refuses to make its helper binaries, and its sandbox then cannot start a command at all
 * (docs/harness_facts.md), which a user's ~/.codex never meets.
 */
function codexEnv(root: string): Record<string, string> {
  for (const d of ["codex-home", "home", "tmp"]) {
    Deno.mkdirSync(`${root}/${d}`, { recursive: true });
  }
  return {
    CODEX_HOME: `${root}/codex-home`,
    HOME: `${root}/home`,
    TMPDIR: `${root}/tmp`,
    DENO_DIR: denoDir(),
  };
}

/** Runs short commands (the feature probe) in the test's Codex environment. */
function commandRunner(env: Record<string, string>): CommandRunner {
  return async (program, args) => {
    const out = await new Deno.Command(program, { args, env, stdin: "null" }).output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  };
}

/** A runner on `dataDir` driving the real Codex as `profile`, runs on every event at once. */
async function codexRunner(o: {
  dataDir: string;
  root: string;
  store: Store;
  mock: MockOpenAI;
  agentKey: string;
  profile: string;
  selfCommand: SelfCommand;
  /** Leave the shell on: a run that breaks the lock. */
  shellOn?: boolean;
  /** Do not watch the run's processes: only its event stream can show the lock broken. */
  eventsOnly?: boolean;
  /** Drop these item types from what the parser reads (a Codex that does not report them). */
  unreported?: string[];
}): Promise<Runner> {
  const paths = dataPaths(o.dataDir);
  await Deno.mkdir(paths.agentDir, { recursive: true });
  const env = codexEnv(o.root);
  const program = cliPath("codex");
  const known = await codexFeatureProbe(commandRunner(env))(program);
  const catalog = await ensureCodexCatalog({
    run: commandRunner(env),
    program,
    dir: `${paths.agentDir}/codex`,
  });
  const disable = lockdownDisables(known).filter((f) => !(o.shellOn && f === "shell_tool"));
  return new Runner({
    world: {
      clock: systemClock,
      timers: systemTimers,
      log: { debug() {}, info() {}, warn() {}, error() {} },
    },
    records: {
      store: o.store,
      transcripts: new Transcripts({ runsDir: paths.runsDir, runsIndex: paths.runsIndex }),
    },
    settings: {
      ...defaultSettings(),
      "agent.every": 0,
      "agent.heartbeat": 0,
      "agent.profile": o.profile,
    },
    agent: {
      agentKey: o.agentKey,
      user: "alice",
      localAuthors: () => new Set([o.agentKey]),
      template: readHeartbeatTemplate(),
    },
    launch: {
      harness: withUnreported(
        codexHarness({
          program,
          catalog: catalog.path,
          disable,
          model: MOCK_MODEL,
          provider: provider(o.mock),
        }),
        o.unreported ?? [],
      ),
      spawn: (req) => spawnProcessGroup({ ...req, env: { ...req.env, ...env } }),
      listProcesses: o.eventsOnly ? undefined : listProcesses,
      paths: {
        dataDir: paths.dataDir,
        runDir: paths.runDir,
        configDir: `${paths.agentDir}/run-config`,
      },
      selfCommand: o.selfCommand,
    },
  });
}

/** `h`, with a parser blind to the event items of `types`. */
function withUnreported(h: Harness, types: string[]): Harness {
  if (types.length === 0) return h;
  return {
    ...h,
    parser: () => {
      const inner = h.parser();
      return {
        push: (line) => {
          let type: string | undefined;
          try {
            type = (JSON.parse(line) as { item?: { type?: string } }).item?.type;
          } catch { /* not an event: the parser judges it */ }
          return type !== undefined && types.includes(type) ? [] : inner.push(line);
        },
        finish: (code) => inner.finish(code),
      };
    },
  };
}

/**
 * Starts `runner` (fed with what `store` stores unless `feed` is false); the
 * scope's end stops it and closes the store.
 */
function running(runner: Runner, store: Store, feed = true): AsyncDisposable {
  const off = feed ? store.onInsert((posts) => runner.onPosts(posts)) : () => {};
  runner.start();
  return {
    async [Symbol.asyncDispose]() {
      off();
      await runner.stop();
      store.close();
    },
  };
}

Deno.test({
  ...opts,
  name:
    "Codex, woken by an ask, answers through wats mcp: the answer is stored signed by the agent profile, the run is ok with no cost",
  async fn() {
    await using tmp = tempDir("wats-codex-");
    const root = tmp.path;
    await using mock = answeringMock();
    await using rig = await nodeRig();
    const dir = rig.dataDir;
    const profile = "user-agent";
    const npub = rig.started.profiles[profile]!;
    const agentKey = decodeNip19(npub).data as string;
    const alice = await rig.mcp("alice");
    const store = Store.open(dataPaths(dir).store);
    const [self, ...selfArgs] = watsCommand();
    const runner = await codexRunner({
      dataDir: dir,
      root,
      store,
      mock,
      agentKey,
      profile,
      selfCommand: { command: self, args: selfArgs },
    });
    await using _running = running(runner, store, false);
    const askId = idIn(
      await call(alice, "ask", { title: "Logs", text: "logrotate or journald?" }),
    );
    const ask = store.get(askId);
    assert.ok(ask, "the node stored the ask");
    runner.onPosts([ask]);
    await waitFor("the run", () => runner.status().lastRun !== undefined, 120_000);
    const last = runner.status().lastRun!;
    console.log(`scripted Codex run: ${last.duration_ms} ms`);
    assert.equal(last.status, "ok", JSON.stringify(last));
    assert.equal(last.cost_usd, undefined, "Codex reports no cost");
    assert.equal(last.turns, 2, "one tool call, one completed turn");

    // The model was asked with the event in the prompt and only the locked tools.
    const reqs = mock.responses();
    assert.ok(reqs.length >= 2, `two model calls, got ${reqs.length}`);
    const first = reqs[0]!.body!;
    assert.deepEqual(eventIds(first), [askId]);
    assertOfferedExactly(reqs.map((r) => toolNames(r.body!)), LOCKED_TOOLS);
    // The answer's result went back to the model.
    assert.ok(reqs.some((r) => callOutputFor("mcp__wats", "post")(r.body!)));

    // The tool call went through wats mcp into the node's store, signed by the agent.
    const thread = await call(alice, "thread", { id: askId });
    assert.match(thread, /Use journald \(1\)\./);
    assert.match(thread, new RegExp(`answer · by ${npub} \\(${profile}, this node\\)`), thread);

    // The transcript keeps Codex's output as is, with the completed MCP call.
    const paths = dataPaths(dir);
    const transcript = jsonLines(`${paths.runsDir}/${last.id}.jsonl`);
    assert.equal(transcript[0]!.type, "wats_run");
    assert.equal(transcript[0]!.harness, "codex");
    // Codex has no turn limit and reports no cost: the header claims neither (docs/codex.md).
    assert.equal(transcript[0]!.max_turns, undefined);
    assert.equal(transcript[0]!.max_budget_usd, undefined);
    const item = transcript.find((l) =>
      l.type === "item.completed" && (l.item as Record<string, unknown>).type === "mcp_tool_call"
    )?.item as Record<string, unknown> | undefined;
    assert.equal(item?.tool, "post");
    assert.equal(item?.status, "completed");
    assert.equal(transcript.at(-1)!.type, "wats_end");
    // `wats agent logs` shows the call, its result and the message, and no limit Codex lacks.
    const shown = renderTranscript(
      Deno.readTextFileSync(`${paths.runsDir}/${last.id}.jsonl`).split("\n"),
    );
    assert.match(
      shown,
      new RegExp(
        `^→ mcp__wats__post \\{"kind":"answer","parent":"${askId}","text":"Use journald \\(1\\)\\."\\}$`,
        "m",
      ),
    );
    assert.match(shown, /^← Posted answer [0-9a-f]{64}\. Thread: /m);
    assert.match(shown, /^Answered\.$/m);
    assert.doesNotMatch(shown, /turns ·|budget/);
  },
});

Deno.test({
  ...opts,
  name:
    "a wats MCP server that cannot start fails the Codex run with the reason, and no model call",
  async fn() {
    await using tmp = tempDir("wats-codex-");
    const root = tmp.path;
    const paths = dataPaths(`${root}/data`);
    await Deno.mkdir(paths.agentDir, { recursive: true });
    await using mock = answeringMock();
    const store = Store.open(paths.store);
    const secret = crypto.getRandomValues(new Uint8Array(32));
    const agent = deriveProfileKey(secret, "helper");
    const runner = await codexRunner({
      dataDir: paths.dataDir,
      root,
      store,
      mock,
      agentKey: agent.pubkey,
      profile: "helper",
      // `wats mcp` cannot start: the program does not exist.
      selfCommand: { command: `${root}/no-such-wats`, args: [] },
    });
    await using _running = running(runner, store);
    const asker = deriveProfileKey(secret, "bob");
    store.insert([
      buildPost({
        kind: "ask",
        text: "Anyone?",
        title: "Q",
        createdAt: Math.floor(Date.now() / 1000),
      }, asker.secret),
    ], { origin: "remote" });
    await waitFor("the run", () => runner.status().lastRun !== undefined, 120_000);
    const last = runner.status().lastRun!;
    assert.equal(last.status, "error");
    assert.equal(last.exit_code, 1);
    assert.match(last.error!, /exited with code 1 before the session started/);
    assert.match(last.error!, /required MCP servers failed to initialize: wats/, last.error);
    assert.doesNotMatch(last.error!, /Stack backtrace|<unknown>/, "the reason, not frames");
    assert.equal(mock.responses().length, 0, "no model call without the wats tools");
  },
});

/** What a locked run whose model asks for `sleep 60` ended with, and what it left. */
interface ShellRun {
  last: RunIndexEntry;
  /** The requests the mock model received. */
  requests: number;
  transcript: Record<string, unknown>[];
}

/**
 * A Codex run with the shell on whose model asks for a long shell command, seen by the event
 * stream (`eventsOnly`) or by the process watch only (`unreported`): how the run ended.
 */
async function shellCommandRun(
  watch: Pick<Parameters<typeof codexRunner>[0], "eventsOnly" | "unreported">,
): Promise<ShellRun> {
  await using tmp = tempDir("wats-codex-");
  const root = tmp.path;
  const paths = dataPaths(`${root}/data`);
  await Deno.mkdir(paths.agentDir, { recursive: true });
  // The model asks for a long shell command; its output must never come back. (With shell_tool
  // on, Codex 0.171 offers it as `exec_command`, and answers after its yield time, 10 s, with
  // the command still running.)
  await using mock = startMockOpenAI({
    rules: [
      {
        when: (req) => req.input.some((i) => i.type === "function_call_output"),
        reply: text("Done."),
      },
      {
        when: hasTool(undefined, "exec_command"),
        reply: functionCall(undefined, "exec_command", { cmd: "sleep 60" }),
      },
    ],
  });
  const store = Store.open(paths.store);
  const secret = crypto.getRandomValues(new Uint8Array(32));
  const agent = deriveProfileKey(secret, "helper");
  const [self, ...selfArgs] = watsCommand();
  const runner = await codexRunner({
    dataDir: paths.dataDir,
    root,
    store,
    mock,
    agentKey: agent.pubkey,
    profile: "helper",
    selfCommand: { command: self, args: selfArgs },
    shellOn: true,
    ...watch,
  });
  await using _running = running(runner, store);
  store.insert([
    buildPost({
      kind: "ask",
      text: "Anyone?",
      title: "Q",
      createdAt: Math.floor(Date.now() / 1000),
    }, deriveProfileKey(secret, "bob").secret),
  ], { origin: "remote" });
  await waitFor("the run", () => runner.status().lastRun !== undefined, 120_000);
  const last = runner.status().lastRun!;
  return {
    last,
    requests: mock.responses().length,
    transcript: jsonLines(`${paths.runsDir}/${last.id}.jsonl`),
  };
}

/** True when the transcript holds a `command_execution` item of `type`. */
function commandItem(transcript: Record<string, unknown>[], type: string): boolean {
  return transcript.some((l) =>
    l.type === type && (l.item as Record<string, unknown>).type === "command_execution"
  );
}

Deno.test({
  ...opts,
  name:
    'a run whose event stream shows a shell command is stopped at once and recorded as failed with "lock broken"',
  async fn() {
    const { last, requests, transcript } = await shellCommandRun({ eventsOnly: true });
    assert.equal(last.status, "error", JSON.stringify(last));
    assert.match(
      last.error!,
      /^lock broken: Codex started a shell command \(.*sleep.*60/,
      last.error,
    );
    // Stopped at the command's start: its result never reached the model.
    assert.equal(requests, 1, "no request after the shell command");
    assert.ok(commandItem(transcript, "item.started"));
    assert.ok(!commandItem(transcript, "item.completed"), "the command did not complete");
  },
});

Deno.test({
  ...opts,
  name: "a shell command Codex does not report in its event stream is still stopped, " +
    'by the process watch, and the run recorded as failed with "lock broken"',
  async fn() {
    const { last, requests, transcript } = await shellCommandRun({
      unreported: ["command_execution"],
    });
    assert.equal(last.status, "error", JSON.stringify(last));
    assert.match(
      last.error!,
      /^lock broken: codex started a process a locked run never has \(".+"\); the run was stopped$/,
      last.error,
    );
    console.error(`measured: the process watch saw ${last.error}`);
    assert.equal(requests, 1, "the command's output never reached the model");
    // What the watch caught is the command on its way to run (Codex's sandbox setup, bwrap, the
    // command): Codex did run a shell command, whether or not it wrote its item before the stop.
    assert.ok(
      commandItem(transcript, "item.started") ||
        /sleep 60|bwrap|codex-linux-sandbox|--codex-run-as-process-setup/.test(last.error!),
      `Codex did run a shell command (the parser was not shown it): ${last.error}`,
    );
  },
});
