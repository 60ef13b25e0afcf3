/**
 * `agent.runtime = "codex"` end to end through the daemon (issue 9): the real Codex CLI (pinned
 * in tests/support/clis.ts) woken by `wats node --agent codex`, against the scripted Responses
 * mock, locked by wats's own model catalog. Catalog models (`gpt-6.2-sol`, and Codex's default
 * with no `-m`) run in code mode unless the lock holds, so these tests assert the exact tool set
 * of the first request, and an adversarial model that asks for everything the lock takes away.
 */

import assert from "node:assert/strict";
import { runWats } from "../support/cli.ts";
import { CLIS_DIR, requireCli } from "../support/clis.ts";
import {
  callOutputFor,
  functionCall,
  hasTool,
  type MockOpenAI,
  type ReplyItem,
  type ResponseReply,
  type ResponsesRequest,
  startMockOpenAI,
  text,
  textOf,
  toolNames,
} from "../support/mock_openai.ts";
import {
  answeringCodexMock as answeringMock,
  call,
  codexEventIds as eventIds,
  idIn,
} from "../support/swarm.ts";
import { type NodeRig, nodeRig, type NodeRigOptions, tempDir } from "../support/rig.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { assertOfferedExactly, lockedToolNames } from "../support/locked_tools.ts";
import {
  ALLOWED_CODEX_TOOLS,
  codexStateDir,
  readSelfCheck,
} from "../../src/runner/runtimes/codex/lock.ts";

const codex = requireCli("codex");
const opts = { ignore: codex === null, sanitizeOps: false, sanitizeResources: false };

/** Exactly what a locked run offers: Codex's MCP readers, and the runner's wats tools. */
const LOCKED_TOOLS = [...ALLOWED_CODEX_TOOLS, ...lockedToolNames("/")].sort();

/** A HOME holding a secret, and Codex's own state dir; removed when its scope ends. */
function homeWithSecret(): { home: string; codexHome: string; secret: string } & AsyncDisposable {
  const dir = tempDir("wats-codex-home-");
  const home = dir.path;
  const secret = `secret-${crypto.randomUUID()}`;
  Deno.writeTextFileSync(`${home}/secret.txt`, `${secret}\n`);
  Deno.writeTextFileSync(`${home}/notes.txt`, "keep me\n");
  Deno.mkdirSync(`${home}/.codex`);
  return {
    home,
    codexHome: `${home}/.codex`,
    secret,
    [Symbol.asyncDispose]: dir[Symbol.asyncDispose],
  };
}

/** `wats node --agent codex --agent-profile helper` against `mock`, settings as variables. */
function codexNode(
  mock: MockOpenAI,
  h: { home: string; codexHome: string },
  settings: Record<string, string> = {},
): NodeRigOptions {
  return {
    home: h.home,
    args: ["--agent", "codex", "--agent-profile", "helper"],
    env: {
      PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
      CODEX_HOME: h.codexHome,
      WATS_AGENT_EVERY: "0",
      WATS_AGENT_HEARTBEAT: "0",
      WATS_AGENT_IGNORE_LOCAL: "false",
      WATS_AGENT_CODEX_BASE_URL: `${mock.url}/v1`,
      ...settings,
    },
    startTimeoutMs: 120_000,
  };
}

/** Alice asks; the run ends; returns the ask id and the run_ended event. */
async function askAndWait(rig: NodeRig) {
  const alice = await rig.mcp("alice");
  const askId = idIn(await call(alice, "ask", { title: "Logs", text: "logrotate or journald?" }));
  const ended = await rig.waitEvent("run_ended");
  const thread = await call(alice, "thread", { id: askId });
  await alice.close();
  return { askId, ended, thread };
}

async function lockedRun(model: string | undefined) {
  await using h = homeWithSecret();
  await using mock = answeringMock();
  await using rig = await nodeRig(
    codexNode(mock, h, model !== undefined ? { WATS_AGENT_CODEX_MODEL: model } : {}),
  );
  const { dataDir: dir, node, started } = rig;
  const { askId, ended, thread } = await askAndWait(rig);
  assert.equal(ended.status, "ok", JSON.stringify(ended));
  assert.equal(ended.cost_usd, undefined, "Codex reports no cost");

  const reqs = mock.responses();
  const first = reqs[0]!.body!;
  if (model !== undefined) assert.equal(first.model, model);
  assert.deepEqual(eventIds(first), [askId]);
  // Every request, not only the first, offers exactly the locked tools.
  assertOfferedExactly(reqs.map((r) => toolNames(r.body!)), LOCKED_TOOLS);
  for (const r of reqs) {
    assert.ok(!r.body!.input.some((i) => i.type === "additional_tools"), "no code mode input");
    assert.equal(r.headers["x-openai-internal-codex-responses-lite"], undefined);
  }

  // The answer is stored, signed by the agent profile.
  assert.match(thread, /Use journald\./);
  assert.match(
    thread,
    new RegExp(`answer · by ${started.profiles.helper} \\(helper, this node\\)`),
  );

  // The self-check ran at start, and `wats status` shows it.
  const check = readSelfCheck(codexStateDir(dataPaths(dir).agentDir));
  assert.equal(check?.ok, true, JSON.stringify(check));
  assert.deepEqual([...check!.tools].sort(), LOCKED_TOOLS);
  const status = await runWats(["--data-dir", dir, "status"], { home: h.home });
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /codex lock: self-check passed .*codex-cli 0\.171\.0/);
  // Codex reports no cost: the runs count, and no $0 is shown.
  assert.match(
    status.stdout,
    /^budget: codex reports no cost; runs count against agent\.max_runs_per_day$/m,
  );
  assert.match(status.stdout, /^runs today: 1 of 48$/m);
  assert.doesNotMatch(status.stdout, /\$/);
  assert.match(node.stderr(), /codex as helper · runs 0 of 48 today \(codex reports no cost/);
  const runs = await runWats(["--data-dir", dir, "agent", "runs"], { home: h.home });
  assert.equal(runs.code, 0, runs.stderr);
  assert.match(
    runs.stdout,
    /^runs today 1 of 48 \(codex reports no cost: runs count against agent\.max_runs_per_day\)$/m,
  );
  assert.doesNotMatch(runs.stdout, /\$/);
  return { first };
}

Deno.test({
  ...opts,
  name:
    "the daemon runs Codex with -m gpt-6.2-sol (code mode in Codex's catalog) locked to exactly the wats tools; the answer is stored signed by the agent",
  async fn() {
    await lockedRun("gpt-6.2-sol");
  },
});

Deno.test({
  ...opts,
  name: "the daemon runs Codex with no -m (Codex's default model) locked to exactly the wats tools",
  async fn() {
    const { first } = await lockedRun(undefined);
    assert.equal(first.model, "gpt-6.2-sol", "Codex's default model, a code-mode one");
  },
});

/** A function call item, flat (no namespace) unless given one. */
function callItem(name: string, args: Record<string, unknown>, namespace?: string): ReplyItem {
  return { type: "function_call", name, arguments: args, ...(namespace ? { namespace } : {}) };
}

Deno.test({
  ...opts,
  name:
    "adversarial model: shell, apply_patch add/update/delete, exec, spawn_agent, view_image, web search and a flat mcp__wats__post are all refused; nothing is written, no HOME secret leaves, the answer arrives",
  async fn() {
    await using data = tempDir("wats-data-");
    const dir = data.path;
    await using h = homeWithSecret();
    const runDir = dataPaths(dir).runDir;
    const patch = (body: string) => ({ input: `*** Begin Patch\n${body}\n*** End Patch\n` });
    const attacks: Array<[string, ReplyItem]> = [
      ["shell", callItem("shell", { command: ["cat", `${h.home}/secret.txt`] })],
      ["exec_command", callItem("exec_command", { cmd: `cat ${h.home}/secret.txt` })],
      [
        "apply_patch add",
        callItem("apply_patch", patch(`*** Add File: ${runDir}/added.txt\n+pwned`)),
      ],
      [
        "apply_patch update",
        callItem(
          "apply_patch",
          patch(`*** Update File: ${h.home}/notes.txt\n@@\n-keep me\n+pwned`),
        ),
      ],
      [
        "apply_patch delete",
        callItem("apply_patch", patch(`*** Delete File: ${h.home}/notes.txt`)),
      ],
      ["exec", callItem("exec", { code: `text(await fs.readFile("${h.home}/secret.txt"))` })],
      ["spawn_agent", callItem("spawn_agent", { message: `cat ${h.home}/secret.txt` })],
      ["view_image", callItem("view_image", { path: `${h.home}/secret.txt` })],
      ["web_search", callItem("web_search", { query: "wats" })],
      [
        "flat mcp__wats__post",
        callItem("mcp__wats__post", { kind: "answer", parent: "x", text: "flat" }),
      ],
    ];
    let askId = "";
    const step = (req: ResponsesRequest): ResponseReply => {
      const done = req.input.filter((i) => i.type === "function_call_output").length;
      if (done < attacks.length) return { output: [attacks[done]![1]] };
      if (callOutputFor("mcp__wats", "post")(req)) return text("Answered.");
      return functionCall("mcp__wats", "post", {
        kind: "answer",
        parent: askId,
        text: "Use journald.",
      });
    };
    await using mock = startMockOpenAI({
      rules: [{
        when: (req) => {
          askId ||= eventIds(req).at(-1) ?? "";
          return hasTool("mcp__wats", "post")(req);
        },
        reply: step,
      }],
    });
    await using rig = await nodeRig({
      ...codexNode(mock, h, { WATS_AGENT_CODEX_MODEL: "gpt-6.2-sol" }),
      dataDir: dir,
    });
    const { ended, thread } = await askAndWait(rig);
    assert.equal(ended.status, "ok", JSON.stringify(ended));
    assert.match(thread, /Use journald\./, "the answer still arrives");
    assert.doesNotMatch(thread, /flat/);

    // Every attack came back refused as an unsupported call.
    const last = mock.responses().at(-1)!.body!;
    const outputs = new Map(
      last.input.filter((i) => i.type === "function_call_output").map((
        o,
      ) => [o.call_id, typeof o.output === "string" ? o.output : textOf(o.output)]),
    );
    const calls = last.input.filter((i) => i.type === "function_call");
    assert.equal(calls.length, attacks.length + 1, JSON.stringify(calls));
    calls.slice(0, attacks.length).forEach((c, i) => {
      const out = outputs.get(c.call_id) ?? "";
      assert.match(out, /unsupported call/i, `${attacks[i]![0]} refused: ${out}`);
    });
    const answer = calls.at(-1)!;
    assert.equal(`${answer.namespace}/${answer.name}`, "mcp__wats/post");
    assert.doesNotMatch(outputs.get(answer.call_id) ?? "", /unsupported call/i);

    // Nothing written, nothing read.
    assert.deepEqual([...Deno.readDirSync(runDir)], [], "the run directory stays empty");
    assert.equal(Deno.readTextFileSync(`${h.home}/notes.txt`), "keep me\n");
    for (const r of mock.requests) {
      assert.ok(!JSON.stringify(r.body ?? {}).includes(h.secret), "the secret never leaves");
    }
    const transcript = Deno.readTextFileSync(`${dataPaths(dir).runsDir}/${ended.run}.jsonl`);
    assert.doesNotMatch(transcript, /command_execution|file_change|collab_tool_call|web_search"/);
  },
});

Deno.test({
  ...opts,
  name:
    "a Codex whose catalog cannot be made is refused at start, with the reason on stderr and in `wats status`",
  async fn() {
    await using data = tempDir("wats-data-");
    const dir = data.path;
    await using h = homeWithSecret();
    await using binDir = tempDir("wats-fake-codex-");
    const bin = binDir.path;
    // Says its version and lists features, but fails `debug models --bundled`.
    await Deno.writeTextFile(
      `${bin}/codex`,
      `#!/bin/sh
case "$1" in
  --version) echo "codex-cli 0.99.0" ;;
  features) echo "shell_tool  stable  true" ;;
  debug) echo "error: unrecognized subcommand 'models'" >&2; exit 2 ;;
  *) exit 3 ;;
esac
`,
      { mode: 0o755 },
    );
    await using mock = answeringMock();
    const out = await runWats(
      ["--data-dir", dir, "node", "--agent", "codex"],
      {
        home: h.home,
        env: { PATH: `${bin}:${Deno.env.get("PATH")}`, CODEX_HOME: h.codexHome },
      },
    );
    assert.notEqual(out.code, 0, out.stdout);
    assert.match(out.stderr, /agent\.runtime = "codex" is refused/, out.stderr);
    assert.match(out.stderr, /codex debug models --bundled` exited with code 2/, out.stderr);
    assert.match(out.stderr, /unrecognized subcommand 'models'/);
    assert.equal(mock.requests.length, 0);

    const status = await runWats(["--data-dir", dir, "status"], { home: h.home });
    assert.equal(status.code, 1, "no daemon runs");
    assert.match(
      status.stdout,
      /codex lock: REFUSED .*codex debug models --bundled` exited with code 2/,
      status.stdout,
    );
  },
});

Deno.test({
  ...opts,
  name:
    "the self-check refuses a Codex whose first request is in code mode (the catalog left out), naming the tools, on stderr and in `wats status`",
  async fn() {
    await using data = tempDir("wats-data-");
    const dir = data.path;
    await using h = homeWithSecret();
    await using binDir = tempDir("wats-codex-unlocked-");
    const bin = binDir.path;
    // The real Codex, but every `-c model_catalog_json=…` is dropped: the lock's catalog is lost.
    await Deno.writeTextFile(
      `${bin}/codex`,
      `#!/bin/bash
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = "-c" ] && [[ "$2" == model_catalog_json=* ]]; then shift 2; continue; fi
  args+=("$1"); shift
done
exec ${codex!.join(" ")} "\${args[@]}"
`,
      { mode: 0o755 },
    );
    await using mock = answeringMock();
    const out = await runWats(
      ["--data-dir", dir, "node", "--agent", "codex", "--agent-profile", "helper"],
      {
        home: h.home,
        env: {
          PATH: `${bin}:${Deno.env.get("PATH")}`,
          CODEX_HOME: h.codexHome,
          WATS_AGENT_CODEX_BASE_URL: `${mock.url}/v1`,
          WATS_AGENT_CODEX_MODEL: "gpt-6.2-sol",
        },
      },
    );
    assert.notEqual(out.code, 0, out.stdout);
    assert.match(
      out.stderr,
      /agent\.runtime = "codex" is refused: the Codex self-check found more than the wats tools/,
      out.stderr,
    );
    assert.match(
      out.stderr,
      /additional_tools item \(.*functions\/exec.*spawn_agent.*\): code mode/,
    );
    assert.match(out.stderr, /x-openai-internal-codex-responses-lite/);
    assert.equal(mock.requests.length, 0, "the check never reaches the configured endpoint");
    assert.doesNotMatch(out.stdout, /"event":"started"/, "the node did not start");

    const status = await runWats(["--data-dir", dir, "status"], { home: h.home });
    assert.match(status.stdout, /codex lock: REFUSED .*model gpt-6\.2-sol.*functions\/exec/);
  },
});
