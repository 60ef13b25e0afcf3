/**
 * The OS sandbox of coding agents end to end (issue 21): the real
 * `claude-agent-acp` against the scripted Anthropic mock, under bubblewrap, with
 * the least policy that lets it commit (`claude/execute` allowed). Every shell
 * route to the data dir, the user's secrets and the repository's config fails
 * inside the sandbox, none of the secret bytes reaches the mock, and the work's
 * commit still lands.
 *
 * The fixture lives under /var/tmp, not /tmp: the sandbox's private /tmp would
 * hide a fixture there whatever else it did.
 */

import assert from "node:assert/strict";
import { AcpLayer, type CallEvent } from "../../src/acp/calls.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import { git } from "../../src/acp/worktrees.ts";
import { Sandboxer } from "../../src/safety/sandboxer.ts";
import { requireCli } from "../support/clis.ts";
import {
  functionCall,
  type ResponsesRequest,
  startMockOpenAI,
  text as openaiText,
} from "../support/mock_openai.ts";
import { requireTool } from "../support/debian_tools.ts";
import {
  type MessagesRequest,
  promptContains,
  type Reply,
  startMockAnthropic,
  text,
  toolResults,
  toolUse,
} from "../support/mock_anthropic.ts";
import { closing, gitRepo, tempDir } from "../support/rig.ts";
import { claudeAcpHarness, codexAcpHarness } from "../support/harness_fixtures.ts";
import { AGENTS, harnessAgent } from "../../src/runner/runtimes/agents.ts";

const acp = requireCli("claude-acp");
const codexAcp = requireCli("codex-acp");
const bwrap = requireTool("bwrap");
const opts = { ignore: acp === null || !bwrap, sanitizeOps: false, sanitizeResources: false };
const codexOpts = { ...opts, ignore: codexAcp === null || !bwrap };

const NODE_KEY = "SECRET-NODEKEY-5d0e";
const CONFIG = "SECRET-CONFIG-7f3a";
const SSH = "SECRET-SSH-c41b";

/** The secrets as the attacks could carry them: plain, hex as `od` prints a line, base64. */
function encodings(s: string): string[] {
  const bytes = new TextEncoder().encode(s).slice(0, 16);
  return [
    s,
    [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(" "),
    btoa(s).slice(0, 16),
  ];
}

interface Fixture extends AsyncDisposable {
  root: string;
  data: string;
  repo: string;
  home: string;
}

/** A data dir, a HOME with an ssh key and a repository, under /var/tmp; removed when its scope ends. */
async function fixture(): Promise<Fixture> {
  const dir = tempDir("wats-sbx-", "/var/tmp");
  const root = dir.path;
  const data = `${root}/data`;
  Deno.mkdirSync(`${data}/worktrees`, { recursive: true });
  Deno.writeTextFileSync(`${data}/config.toml`, `# ${CONFIG}\n`);
  Deno.writeTextFileSync(`${data}/node.key`, NODE_KEY);
  const home = `${root}/home`;
  Deno.mkdirSync(`${home}/.ssh`, { recursive: true });
  Deno.mkdirSync(`${home}/.claude`);
  Deno.writeTextFileSync(`${home}/.ssh/id_ed25519`, `${SSH}\n`);
  const repo = await gitRepo(`${root}/repo`, { identity: true });
  return { root, data, repo, home, [Symbol.asyncDispose]: dir[Symbol.asyncDispose] };
}

function layer(f: Fixture, mockUrl: string, events: CallEvent[], sandbox?: Sandboxer): AcpLayer {
  return new AcpLayer({
    worktrees: `${f.data}/worktrees`,
    harnesses: { claude: claudeAcpHarness(acp!, mockUrl, f.home) },
    checkouts: { app: { name: "app", path: f.repo, base: "main", fetch: false } },
    allowedCheckouts: [],
    policy: makePolicy(["claude/edit(*)", "claude/execute"], [], f.data),
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: f.home, IS_SANDBOX: "1" },
    onEvent: (e) => events.push(e),
    sandbox,
    agentOf: harnessAgent,
  });
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

function bash(command: string): Reply {
  return toolUse("Bash", { command, description: "probe" });
}

Deno.test({
  name: "a sandboxed coding agent allowed to run commands cannot read the node key, the " +
    "config, the user's ssh key or the data dir, cannot write the repository's config, " +
    "and still commits its work",
  ...opts,
  async fn() {
    await using f = await fixture();
    const d = f.data;
    // Each names the data dir through `$(printf …)`, as the attack found from outside did:
    // the request then names no file, the policy allows it, and only the sandbox stands.
    const D = `"$(printf %s ${d})"`;
    const attacks: Reply[] = [
      bash(`od -An -tx1 -v ${D}/node.key`),
      bash(`cat ${D}/node.key`),
      bash(`base64 ${D}/config.toml`),
      bash(`python3 -c "print(open('$(printf %s ${d})/node.key').read())"`),
      bash("find / -name node.key 2>/dev/null; echo find-done"),
      bash(`ls -a ${D}; echo ls-done`),
      bash(`cat "$(printf %s ${f.home})/.ssh/id_ed25519"`),
      bash(`echo '[core]' >> "$(printf %s ${f.repo})/.git/config"; echo tried`),
      bash(`echo pwned > ${D}/config.toml; cat ${D}/config.toml`),
      bash(`cat /proc/1/root${D}/node.key`),
      bash(
        "echo done > work.txt && git add work.txt && " +
          "git -c user.email=a@example.org -c user.name=A commit -qm 'Sandboxed work' && " +
          "echo committed",
      ),
    ];
    await using mock = startMockAnthropic({
      rules: [{
        when: promptContains("PROBE"),
        reply: (req) => attacks[step(req)] ?? text("done"),
      }],
    });
    const events: CallEvent[] = [];
    const sandbox = new Sandboxer({
      agents: AGENTS,
      mode: "required",
      hide: [],
      dataDir: d,
      home: f.home,
    });
    await using acpLayer = closing(layer(f, mock.url, events, sandbox));
    const r = await acpLayer.call("claude", { agent: "eve", thread: "_", callId: "c" }, {
      task: "PROBE",
      checkout: "app",
      work: "w",
    });
    const bodies = mock.messages().map((m) => m.body!);
    // The request that carries the whole script (Claude may send others besides).
    const results = bodies.map(toolResults).reduce((a, b) => b.length > a.length ? b : a, []);
    const why = JSON.stringify({ results, refused: r.refused, message: r.message }, null, 1);
    // The script ran to its end, every command allowed by the policy.
    assert.equal(r.message, "done", why);
    assert.equal(results.length, attacks.length, why);
    assert.deepEqual(r.refused, [], why);

    const sent = JSON.stringify(bodies);
    for (const secret of [NODE_KEY, CONFIG, SSH]) {
      for (const form of encodings(secret)) {
        assert.ok(!sent.includes(form), `${form} (${secret}) reached the model\n${why}`);
      }
    }
    // Each attack failed inside the sandbox, and says so.
    const [od, cat, b64, py, find, ls, ssh, gitConfig, dataWrite, proc, commit] = results;
    assert.match(od!, /No such file/, why);
    assert.match(cat!, /No such file/, why);
    assert.match(b64!, /No such file/, why);
    assert.match(py!, /No such file|FileNotFoundError/, why);
    assert.ok(!find!.includes(`${d}/node.key`), why);
    assert.match(find!, /find-done/, why);
    // The data dir shows only the way to this work's worktree.
    assert.doesNotMatch(ls!, /node\.key|config\.toml/, why);
    assert.match(ssh!, /No such file/, why);
    assert.match(gitConfig!, /Read-only file system/, why);
    assert.doesNotMatch(dataWrite!, /SECRET/, why);
    assert.match(proc!, /No such file|Permission denied/, why);
    assert.match(commit!, /committed/, why);

    // Outside, nothing changed but the work's commit.
    assert.equal(Deno.readTextFileSync(`${d}/config.toml`), `# ${CONFIG}\n`);
    assert.doesNotMatch(Deno.readTextFileSync(`${f.repo}/.git/config`), /\[core\]\n$/);
    assert.deepEqual(r.commits.map((c) => c.subject), ["Sandboxed work"]);
    assert.equal(
      (await git(["log", "-1", "--format=%s", r.branch], f.repo)).trim(),
      "Sandboxed work",
    );
  },
});

Deno.test({
  name: 'sandbox.mode = "required" refuses to start a coding agent when bubblewrap is missing, ' +
    "in one line that says what to install",
  ...opts,
  async fn() {
    await using f = await fixture();
    await using mock = startMockAnthropic({ rules: [{ when: () => true, reply: text("ran") }] });
    const sandbox = new Sandboxer({
      agents: AGENTS,
      mode: "required",
      hide: [],
      dataDir: f.data,
      home: f.home,
      // As on a machine without bubblewrap: nothing of that name on PATH.
      program: "bwrap-missing-here",
    });
    await using acpLayer = closing(layer(f, mock.url, [], sandbox));
    await assert.rejects(
      acpLayer.call("claude", { agent: "eve", thread: "_", callId: "c" }, {
        task: "ANY",
        checkout: "app",
        work: "w",
      }),
      (err: Error) => {
        assert.equal(
          err.message,
          'harness claude is refused: sandbox.mode = "required" and the OS sandbox cannot ' +
            "run (bwrap-missing-here is not on PATH); install bubblewrap (Debian/Ubuntu: " +
            "apt-get install bubblewrap), or accept running unsandboxed with " +
            "`wats config set sandbox.mode auto`",
        );
        return true;
      },
    );
    assert.equal(mock.messages().length, 0);
    assert.equal(await acpLayer.isRunning("claude"), false);
  },
});

Deno.test({
  name: "a sandboxed codex-acp allowed to run commands outside its own sandbox still cannot " +
    "read the node key or the user's ssh key, nor write the repository's config, and commits",
  ...codexOpts,
  async fn() {
    await using f = await fixture();
    const d = f.data;
    const codexHome = `${f.home}/.codex`;
    const D = `"$(printf %s ${d})"`;
    // Codex asks only for commands that leave its own sandbox: each one does.
    const run = (cmd: string) =>
      functionCall(undefined, "exec_command", {
        cmd,
        sandbox_permissions: "require_escalated",
        justification: "probe",
      });
    const steps = [
      run(`od -An -tx1 -v ${D}/node.key`),
      run(`cat ${D}/config.toml`),
      run(`cat "$(printf %s ${f.home})/.ssh/id_ed25519"`),
      run(`echo '[core]' >> "$(printf %s ${f.repo})/.git/config"; echo tried`),
      run(
        "echo done > work.txt && git add work.txt && " +
          "git -c user.email=a@example.org -c user.name=A commit -qm 'Codex work' && echo committed",
      ),
    ];
    const outputs = (r: ResponsesRequest) =>
      (r.input ?? []).filter((x) => x.type === "function_call_output");
    await using mock = startMockOpenAI({
      rules: [{
        when: () => true,
        reply: (r) => steps[outputs(r).length] ?? openaiText("done"),
      }],
    });
    const sandbox = new Sandboxer({
      agents: AGENTS,
      mode: "required",
      hide: [],
      dataDir: d,
      home: f.home,
    });
    await using acpLayer = closing(
      new AcpLayer({
        worktrees: `${d}/worktrees`,
        harnesses: { codex: codexAcpHarness(codexAcp!, mock.url, codexHome) },
        checkouts: { app: { name: "app", path: f.repo, base: "main", fetch: false } },
        allowedCheckouts: [],
        policy: makePolicy(["codex/execute"], [], d),
        env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: f.home, IS_SANDBOX: "1" },
        sandbox,
        agentOf: harnessAgent,
      }),
    );
    const r = await acpLayer.call("codex", { agent: "eve", thread: "_", callId: "c" }, {
      task: "PROBE",
      checkout: "app",
      work: "w",
    });
    const bodies = mock.responses().map((m) => m.body!);
    const results = bodies.map((b) => outputs(b).map((o) => JSON.stringify(o.output)))
      .reduce((a, b) => b.length > a.length ? b : a, []);
    const why = JSON.stringify({ results, r }, null, 1);
    assert.equal(results.length, steps.length, why);
    const sent = JSON.stringify(bodies);
    for (const secret of [NODE_KEY, CONFIG, SSH]) {
      for (const form of encodings(secret)) {
        assert.ok(!sent.includes(form), `${form} (${secret}) reached the model\n${why}`);
      }
    }
    const [od, cat, ssh, gitConfig, commit] = results;
    assert.match(od!, /No such file/, why);
    assert.match(cat!, /No such file/, why);
    assert.match(ssh!, /No such file/, why);
    assert.match(gitConfig!, /Read-only file system/, why);
    assert.match(commit!, /committed/, why);
    assert.deepEqual(r.commits.map((c) => c.subject), ["Codex work"]);
    assert.doesNotMatch(Deno.readTextFileSync(`${f.repo}/.git/config`), /\[core\]\n$/);
  },
});
