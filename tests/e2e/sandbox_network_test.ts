/**
 * `sandbox.network = "model-only"` end to end (issue 26): the real `claude -p` at
 * `agent.access = "workspace"` with Bash under a real `wats node`, and the real
 * `claude-agent-acp` under the ACP layer, both scripted by the Anthropic mock and run in
 * bubblewrap. The run still talks to its model; from inside, a listener the test opens on
 * 127.0.0.1, the daemon's relay endpoint and a host that is not the model are out of reach by
 * every route tried (curl, bash's /dev/tcp, the relay's proxy, the model socket itself), and
 * `/proc/net/unix` does not list the daemon's mcp.sock. With `sandbox.network = "open"` the
 * same attempt reaches the test's listener: the control.
 *
 * Fixtures live under /var/tmp: the sandbox's private /tmp would hide them.
 */

import assert from "node:assert/strict";
import { AcpLayer } from "../../src/acp/calls.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import { git } from "../../src/acp/worktrees.ts";
import { Sandboxer } from "../../src/safety/sandboxer.ts";
import { modelSocketPath, SandboxNetwork } from "../../src/safety/net_gate.ts";
import { nodeModelHosts } from "../../src/safety/net_policy.ts";
import { MODEL_SOCKET_INSIDE } from "../../src/safety/net_relay.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { denoDir, watsCommand } from "../support/cli.ts";
import { requireCli } from "../support/clis.ts";
import { requireTool } from "../support/debian_tools.ts";
import {
  hasTool,
  promptContains,
  type Reply,
  startMockAnthropic,
  text,
  toolResults,
  toolUse,
} from "../support/mock_anthropic.ts";
import { call } from "../support/swarm.ts";
import { closing, gitRepo, nodeRig, tempDir } from "../support/rig.ts";
import { claudeAcpHarness } from "../support/harness_fixtures.ts";
import { AGENTS, harnessAgent, nodeAgents } from "../../src/runner/runtimes/agents.ts";

const claude = requireCli("claude");
const claudeAcp = requireCli("claude-acp");
const bwrap = requireTool("bwrap");
const opts = { sanitizeOps: false, sanitizeResources: false };

/** A TCP listener on 127.0.0.1 that answers one HTTP line and counts who reached it. */
function listener(): { port: number; reached: () => number } & AsyncDisposable {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let reached = 0;
  const serving = (async () => {
    for await (const c of l) {
      reached++;
      const body = "listener-reached\n";
      await c.write(new TextEncoder().encode(
        `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      )).catch(() => {});
      c.close();
    }
  })().catch(() => {});
  return {
    port: (l.addr as Deno.NetAddr).port,
    reached: () => reached,
    async [Symbol.asyncDispose]() {
      l.close();
      await serving;
    },
  };
}

/** A port nothing listens on yet (for the daemon's relay endpoint). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

function bash(command: string): Reply {
  // bash itself: /dev/tcp is bash's, whatever shell the agent's tool prefers.
  return toolUse("Bash", { command: `bash -c ${shellQuote(command)}`, description: "probe" });
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'"'"'`)}'`;
}

/** The attempts, in order; each ends with a line the assertions read. */
function attempts(port: number, relayPort: number): Reply[] {
  return [
    bash(`curl -sS -m 10 http://127.0.0.1:${port}/; echo "rc=$?"`),
    bash(`(echo hi > /dev/tcp/127.0.0.1/${port}) 2>&1; echo "rc=$?"`),
    bash(`curl -sS -m 10 http://127.0.0.1:${relayPort}/; echo "rc=$?"`),
    bash(`curl -sS -m 10 --noproxy "" -x "$HTTPS_PROXY" http://127.0.0.1:${port}/; echo "rc=$?"`),
    bash(
      `curl -sS -m 10 --unix-socket ${MODEL_SOCKET_INSIDE} http://127.0.0.1:${port}/; echo "rc=$?"`,
    ),
    bash(`curl -sS -m 10 https://example.com/; echo "rc=$?"`),
    bash("cat /proc/net/unix; echo unix-done"),
  ];
}

/** `rc=N` of a result: the attempt's exit code. */
function rc(result: string | undefined): number {
  return Number(/rc=(\d+)/.exec(result ?? "")?.[1] ?? NaN);
}

/** The paths `/proc/net/unix` names. */
function unixPaths(listing: string): string[] {
  return listing.split("\n").map((l) => l.trim().split(/\s+/)[7] ?? "").filter((p) =>
    p.startsWith("/")
  );
}

/**
 * What every route of `attempts` must show under model-only. `/proc/net/unix` lists only this
 * sandbox's own sockets: a connection from inside makes its server end in the sandbox's
 * namespace under the listener's path, so the sockets the sandbox itself reaches (`own`: the
 * model socket, a heartbeat run's mcp.sock) may be named, and so may the agent's own under its
 * private /tmp; `hidden`, a listener of this machine it never connected to, must not.
 */
function assertClosed(results: string[], why: string, own: string[], hidden: string): void {
  const [curl, devTcp, relay, viaProxy, viaSocket, other, unix] = results;
  assert.notEqual(rc(curl), 0, why);
  assert.doesNotMatch(curl!, /listener-reached/, why);
  assert.notEqual(rc(devTcp), 0, why);
  assert.notEqual(rc(relay), 0, why);
  // The relay's proxy and the model socket answer, but only with the refusal.
  assert.match(viaProxy!, /wats refused 127\.0\.0\.1:\d+/, why);
  assert.match(viaSocket!, /wats refused/, why);
  assert.notEqual(rc(other), 0, why);
  assert.match(unix!, /unix-done/, why);
  assert.ok(!unix!.includes(hidden), why);
  // The sandbox's own sockets (the agent's, under its private /tmp) are its business.
  for (const p of unixPaths(unix!)) {
    assert.ok(own.includes(p) || p.startsWith("/tmp/"), `${p} is listed\n${why}`);
  }
}

/** Runs the attempts through `claude -p` at workspace with Bash on a real node. */
async function runnerAttempts(network: "model-only" | "open") {
  await using tmp = tempDir("wats-sbn-", "/var/tmp");
  const root = tmp.path;
  const data = `${root}/data`;
  const work = `${root}/work`;
  Deno.mkdirSync(data);
  Deno.mkdirSync(work);
  // Stands for another node's mcp.sock: a listener of this machine the run never connects to.
  const otherNode = `${root}/other-node.sock`;
  const other = Deno.listen({ transport: "unix", path: otherNode });
  await using target = listener();
  const relayPort = freePort();
  const steps = [...attempts(target.port, relayPort), text("Finished.")];
  await using mock = startMockAnthropic({
    rules: [{
      when: hasTool("mcp__wats__ask"),
      reply: (req) => steps[Math.min(toolResults(req).length, steps.length - 1)]!,
    }],
  });
  await using rig = await nodeRig({
    dataDir: data,
    home: `${root}/home`,
    args: ["--listen", `127.0.0.1:${relayPort}`],
    agent: {
      mock,
      settings: {
        WATS_AGENT_ACCESS: "workspace",
        WATS_AGENT_WORKDIR: work,
        WATS_AGENT_TOOLS: "Bash",
        WATS_SANDBOX_NETWORK: network,
      },
    },
  });
  const bob = await rig.mcp("bob");
  await call(bob, "ask", { title: "Hi", text: "Anyone there?" });
  const ended = await rig.waitEvent("run_ended");
  const bodies = mock.messages().map((m) => m.body!);
  const results = bodies.map(toolResults).reduce((a, b) => b.length > a.length ? b : a, []);
  const why = JSON.stringify({ results, ended }, null, 1) + "\n" + rig.node.stderr();
  const status = await rig.wats(["status"]);
  other.close();
  return {
    ended,
    results,
    why,
    reached: target.reached(),
    // A sandboxed run's `wats mcp` reaches the run's own socket (bound at mcp.sock inside).
    own: [dataPaths(data).runSocket, modelSocketPath(dataPaths(data).agentDir)],
    otherNode,
    banner: rig.node.stderr(),
    status: status.stdout,
    steps: steps.length,
  };
}

Deno.test({
  name: "model-only (the default): a sandboxed claude -p with Bash still answers through its " +
    "model, and reaches no 127.0.0.1 listener, no relay endpoint, no other host, and no " +
    "socket of the machine in /proc/net/unix",
  ...opts,
  ignore: claude === null || !bwrap,
  async fn() {
    const r = await runnerAttempts("model-only");
    assert.equal(r.ended.status, "ok", r.why);
    assert.equal(r.results.length, r.steps - 1, r.why);
    assertClosed(r.results, r.why, r.own, r.otherNode);
    assert.equal(r.reached, 0, r.why);
    assert.doesNotMatch(r.banner, /sandbox network/, r.why);
  },
});

Deno.test({
  name: 'sandbox.network = "open" (the control): the same claude -p reaches the test\'s ' +
    "127.0.0.1 listener, sees another node's socket in /proc/net/unix, and the banner and " +
    "status say open",
  ...opts,
  ignore: claude === null || !bwrap,
  async fn() {
    const r = await runnerAttempts("open");
    assert.equal(r.ended.status, "ok", r.why);
    const [curl, devTcp, , , , , unix] = r.results;
    assert.match(curl!, /listener-reached/, r.why);
    assert.equal(rc(devTcp), 0, r.why);
    assert.ok(unix!.includes(r.otherNode), r.why);
    assert.ok(r.reached >= 2, r.why);
    assert.match(r.banner, /sandbox network: open \(sandbox\.network = open\)/, r.why);
    assert.match(r.status, /^sandbox: network: open \(sandbox\.network = open\)/m, r.status);
  },
});

Deno.test({
  name: "model-only: a sandboxed claude-agent-acp allowed to run commands answers through its " +
    "model and commits, while its shell reaches no 127.0.0.1 listener, no other host, and no " +
    "socket list with the daemon's socket",
  ...opts,
  ignore: claudeAcp === null || !bwrap,
  async fn() {
    await using tmp = tempDir("wats-sbna-", "/var/tmp");
    const root = tmp.path;
    const data = `${root}/data`;
    const home = `${root}/home`;
    Deno.mkdirSync(`${data}/worktrees`, { recursive: true });
    Deno.mkdirSync(`${data}/agent`);
    Deno.mkdirSync(`${home}/.claude`, { recursive: true });
    const repo = await gitRepo(`${root}/repo`, { identity: true });
    // Stands for the daemon's socket: a listener of this machine the sandbox must not list.
    const mcpSock = dataPaths(data).socket;
    const sock = Deno.listen({ transport: "unix", path: mcpSock });
    await using target = listener();
    const steps = [
      ...attempts(target.port, freePort()),
      bash(
        "echo done > work.txt && git add work.txt && " +
          "git -c user.email=a@example.org -c user.name=A commit -qm 'Offline work' && " +
          "echo committed",
      ),
    ];
    await using mock = startMockAnthropic({
      rules: [{
        when: promptContains("PROBE"),
        reply: (req) => steps[toolResults(req).length] ?? text("done"),
      }],
    });
    const harness = claudeAcpHarness(claudeAcp!, mock.url, home);
    // DENO_DIR: the relay is wats from source, whose cache is not under this test's HOME.
    const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, DENO_DIR: denoDir() };
    const network = new SandboxNetwork({
      network: "model-only",
      mode: "required",
      socket: modelSocketPath(`${data}/agent`),
      hosts: nodeModelHosts(
        nodeAgents(
          { "agent.runtime": "none", "agent.harness": "", "agent.codex_base_url": "" },
          { harnesses: { claude: harness }, checkouts: {} },
          env,
        ),
      ),
      self: watsCommand(),
    });
    const sandbox = new Sandboxer({
      agents: AGENTS,
      mode: "required",
      hide: [],
      dataDir: data,
      home,
      self: watsCommand(),
      network,
    });
    await using layer = closing(
      new AcpLayer({
        worktrees: `${data}/worktrees`,
        harnesses: { claude: harness },
        checkouts: { app: { name: "app", path: repo, base: "main", fetch: false } },
        allowedCheckouts: [],
        policy: makePolicy(["claude/edit(*)", "claude/execute"], [], data),
        env,
        onEvent: () => {},
        sandbox,
        agentOf: harnessAgent,
      }),
    );
    try {
      const r = await layer.call("claude", { agent: "eve", thread: "_", callId: "c" }, {
        task: "PROBE",
        checkout: "app",
        work: "w",
      });
      const bodies = mock.messages().map((m) => m.body!);
      const results = bodies.map(toolResults).reduce((a, b) => b.length > a.length ? b : a, []);
      const why = JSON.stringify({ results, message: r.message, refused: r.refused }, null, 1);
      assert.equal(r.message, "done", why);
      assert.equal(results.length, steps.length, why);
      assertClosed(results, why, [modelSocketPath(`${data}/agent`)], mcpSock);
      assert.match(results.at(-1)!, /committed/, why);
      assert.equal(target.reached(), 0, why);
      assert.equal(
        (await git(["log", "-1", "--format=%s", r.branch], repo)).trim(),
        "Offline work",
      );
    } finally {
      sock.close();
      await network.close();
    }
  },
});
