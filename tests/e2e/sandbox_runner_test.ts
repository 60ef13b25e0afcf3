/**
 * The heartbeat agent's OS sandbox end to end (issue 21): a real `wats node`
 * runs the real `claude -p` at `agent.access = "workspace"` with Bash, against
 * the scripted Anthropic mock. Its shell reaches past the generated deny rules
 * (`$(printf …)` builds every name), as found from outside; inside the sandbox
 * none of it finds the data dir or the user's ssh key, and its work in the
 * workspace still commits.
 *
 * Data dir, HOME and workspace live under /var/tmp, not /tmp: the sandbox's
 * private /tmp would hide a fixture there whatever else it did.
 */

import assert from "node:assert/strict";
import { git } from "../../src/acp/worktrees.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { denoDir, runWats } from "../support/cli.ts";
import { CLIS_DIR, requireCli } from "../support/clis.ts";
import { requireTool } from "../support/debian_tools.ts";
import {
  hasTool,
  type Reply,
  startMockAnthropic,
  text,
  toolResults,
  toolUse,
} from "../support/mock_anthropic.ts";
import { spelled } from "../support/spelled.ts";
import { answeringCodexMock, call } from "../support/swarm.ts";
import { nodeRig, tempDir } from "../support/rig.ts";
import { claudeAcpToml } from "../support/harness_fixtures.ts";

const claude = requireCli("claude");
const bwrap = requireTool("bwrap");
const opts = { ignore: claude === null || !bwrap, sanitizeOps: false, sanitizeResources: false };
const codex = requireCli("codex");
const claudeAcp = requireCli("claude-acp");

const SSH = "SECRET-SSH-e2a9";
const CONFIG = "SECRET-CONFIG-0d7c";

Deno.test({
  name: "a sandboxed heartbeat agent with Bash at workspace access cannot read the node key, " +
    "config.toml or the user's ssh key, nor write config.toml, and still commits in its workspace",
  ...opts,
  async fn() {
    await using tmp = tempDir("wats-sbr-", "/var/tmp");
    const root = tmp.path;
    const data = `${root}/data`;
    const home = `${root}/home`;
    const work = `${root}/work`;
    Deno.mkdirSync(`${home}/.ssh`, { recursive: true });
    Deno.writeTextFileSync(`${home}/.ssh/id_ed25519`, `${SSH}\n`);
    Deno.mkdirSync(work);
    const p = dataPaths(data);
    Deno.mkdirSync(data);
    Deno.writeTextFileSync(p.config, `# ${CONFIG}\n`);
    const bash = (command: string): Reply => toolUse("Bash", { command, description: "probe" });
    const steps: Reply[] = [
      bash(`od -An -tx1 -v ${spelled(p.nodeKey)}`),
      bash(`cat ${spelled(p.config)}`),
      bash(`python3 -c "import sys; print(open(sys.argv[1]).read())" ${spelled(p.safety)}`),
      bash(`ls -a ${spelled(data)}; echo ls-done`),
      bash(`cat ${spelled(`${home}/.ssh/id_ed25519`)}`),
      bash(`echo pwned >> ${spelled(p.config)}; echo tried`),
      bash(
        "git init -q -b main && echo done > work.txt && git add work.txt && " +
          "git -c user.email=a@example.org -c user.name=A commit -qm 'Heartbeat work' && " +
          "echo committed",
      ),
      text("Finished."),
    ];
    await using mock = startMockAnthropic({
      rules: [{
        when: hasTool("mcp__wats__ask"),
        reply: (req) => steps[Math.min(toolResults(req).length, steps.length - 1)]!,
      }],
    });
    await using rig = await nodeRig({
      dataDir: data,
      home,
      agent: {
        mock,
        settings: {
          WATS_AGENT_ACCESS: "workspace",
          WATS_AGENT_WORKDIR: work,
          WATS_AGENT_TOOLS: "Bash",
        },
      },
    });
    const node = rig.node;
    // The banner and `wats status` say the runs are sandboxed.
    assert.match(node.stderr(), /runs: sandboxed/, node.stderr());
    const status = await runWats(["--data-dir", data, "status"], { home });
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^sandbox: agent runs \(claude\): sandboxed$/m, status.stdout);
    const secrets = [
      CONFIG,
      SSH,
      // The node key's first bytes as od prints them.
      [...Deno.readFileSync(p.nodeKey).slice(0, 8)].map((b) => b.toString(16).padStart(2, "0"))
        .join(" "),
    ];
    const config = Deno.readFileSync(p.config);
    const bob = await rig.mcp("bob");
    await call(bob, "ask", { title: "Hi", text: "Anyone there?" });
    const ended = await rig.waitEvent("run_ended");
    assert.equal(ended.status, "ok", JSON.stringify(ended));
    const bodies = mock.messages().map((m) => m.body!);
    const results = bodies.map(toolResults).reduce((a, b) => b.length > a.length ? b : a, []);
    const why = JSON.stringify(results, null, 1);
    assert.equal(results.length, steps.length - 1, why);
    const sent = JSON.stringify(bodies);
    for (const s of secrets) assert.ok(!sent.includes(s), `${s} reached the model\n${why}`);
    const [od, cat, py, ls, ssh, write, commit] = results;
    assert.match(od!, /No such file/, why);
    assert.match(cat!, /No such file/, why);
    assert.match(py!, /No such file|FileNotFoundError/, why);
    assert.doesNotMatch(ls!, /node\.key|config\.toml|safety\.json|store/, why);
    assert.match(ssh!, /No such file/, why);
    assert.match(write!, /tried/, why);
    assert.match(commit!, /committed/, why);
    assert.deepEqual(Deno.readFileSync(p.config), config);
    assert.equal((await git(["log", "-1", "--format=%s"], work)).trim(), "Heartbeat work");
  },
});

Deno.test({
  name: "codex exec at workspace access runs in the sandbox: it still answers through wats mcp " +
    "with its locked catalog, and `wats status` says it is sandboxed",
  ...opts,
  ignore: codex === null || !bwrap,
  async fn() {
    await using tmp = tempDir("wats-sbc-", "/var/tmp");
    const root = tmp.path;
    const data = `${root}/data`;
    const home = `${root}/home`;
    const work = `${root}/work`;
    Deno.mkdirSync(`${home}/.codex`, { recursive: true });
    Deno.mkdirSync(work);
    await using mock = answeringCodexMock();
    await using rig = await nodeRig({
      dataDir: data,
      home,
      args: ["--agent", "codex", "--agent-profile", "helper"],
      env: {
        PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
        CODEX_HOME: `${home}/.codex`,
        WATS_AGENT_EVERY: "0",
        WATS_AGENT_HEARTBEAT: "0",
        WATS_AGENT_IGNORE_LOCAL: "false",
        WATS_AGENT_CODEX_BASE_URL: `${mock.url}/v1`,
        WATS_AGENT_ACCESS: "workspace",
        WATS_AGENT_WORKDIR: work,
      },
      startTimeoutMs: 120_000,
    });
    const node = rig.node;
    const status = await runWats(["--data-dir", data, "status"], { home });
    assert.match(status.stdout, /^sandbox: agent runs \(codex\): sandboxed$/m, status.stdout);
    const alice = await rig.mcp("alice");
    await call(alice, "ask", { title: "Logs", text: "logrotate or journald?" });
    const ended = await rig.waitEvent("run_ended");
    assert.equal(ended.status, "ok", `${JSON.stringify(ended)}\n${node.stderr()}`);
    assert.ok(
      rig.events("post_stored").some((e) => e.kind === "answer"),
      node.stdoutLines.join("\n"),
    );
  },
});

Deno.test({
  name: "the ACP runtime at workspace access runs its agent in the sandbox: an allowed shell " +
    "cannot read the node key or ~/.ssh, and the agent still answers through wats mcp",
  ...opts,
  ignore: claudeAcp === null || !bwrap,
  async fn() {
    await using tmp = tempDir("wats-sba-", "/var/tmp");
    const root = tmp.path;
    const data = `${root}/data`;
    const home = `${root}/home`;
    const work = `${root}/work`;
    Deno.mkdirSync(`${home}/.ssh`, { recursive: true });
    Deno.mkdirSync(`${home}/.claude`);
    Deno.writeTextFileSync(`${home}/.ssh/id_ed25519`, `${SSH}\n`);
    Deno.mkdirSync(work);
    Deno.mkdirSync(data);
    const p = dataPaths(data);
    const bash = (command: string): Reply => toolUse("Bash", { command, description: "probe" });
    await using mock = startMockAnthropic({
      rules: [{
        when: hasTool("mcp__wats__post"),
        reply: (req) => {
          const n = toolResults(req).length;
          if (n === 0) return bash(`od -An -tx1 -v ${spelled(p.nodeKey)}`);
          if (n === 1) return bash(`cat ${spelled(`${home}/.ssh/id_ed25519`)}`);
          if (n === 2) {
            const id = [...JSON.stringify(req).matchAll(/- ([0-9a-f]{64}): /g)].at(-1)?.[1];
            return toolUse("mcp__wats__post", { kind: "answer", parent: id, text: "Probed." });
          }
          return text("Done.");
        },
      }],
    });
    Deno.writeTextFileSync(
      p.config,
      [
        ...claudeAcpToml(claudeAcp!, mock.url, home, { DENO_DIR: denoDir() }),
        "",
        "[policy]",
        'allow = ["claude/execute"]',
        "",
        "[agent]",
        'runtime = "acp"',
        'harness = "claude"',
        'profile = "helper"',
        'every = "0"',
        'heartbeat = "0"',
        "ignore_local = false",
        'access = "workspace"',
        `workdir = "${work}"`,
        'tools = ["Bash"]',
        "",
      ].join("\n"),
    );
    await using rig = await nodeRig({
      dataDir: data,
      home,
      env: { IS_SANDBOX: "1" },
      startTimeoutMs: 120_000,
    });
    const node = rig.node;
    const status = await runWats(["--data-dir", data, "status"], { home });
    assert.match(status.stdout, /^sandbox: agent runs \(acp\): sandboxed$/m, status.stdout);
    const alice = await rig.mcp("alice");
    await call(alice, "ask", { title: "Hi", text: "Anyone there?" });
    const ended = await rig.waitEvent("run_ended");
    const bodies = mock.messages().map((m) => m.body!);
    const results = bodies.map(toolResults).reduce((a, b) => b.length > a.length ? b : a, []);
    const why = `${JSON.stringify({ ended, results }, null, 1)}\n${node.stderr()}`;
    assert.equal(ended.status, "ok", why);
    assert.ok(results.length >= 2, why);
    const key = [...Deno.readFileSync(p.nodeKey).slice(0, 8)]
      .map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const sent = JSON.stringify(bodies);
    assert.ok(!sent.includes(key), `the node key reached the model\n${why}`);
    assert.ok(!sent.includes(SSH), `the ssh key reached the model\n${why}`);
    assert.match(results[0]!, /No such file/, why);
    assert.match(results[1]!, /No such file/, why);
  },
});
