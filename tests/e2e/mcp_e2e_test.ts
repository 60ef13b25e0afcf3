/**
 * MCP end to end through the real daemon: real `wats mcp` processes started by
 * the MCP SDK client, the MCP Inspector CLI, and the real Claude Code CLI
 * driven by the scripted mock model (issue 3).
 */

import { MCP_CONNECT_WAIT_ENV } from "../../src/runner/runtimes/claude/harness.ts";
import assert from "node:assert/strict";
import { denoDir, watsCommand } from "../support/cli.ts";
import { requireCli, runInspector } from "../support/clis.ts";
import { runClaudeOnMcp } from "../support/claude.ts";
import { call, idIn, mcpArgs, mcpClient, mcpEnv } from "../support/swarm.ts";
import { closing, nodeRig, tempDir } from "../support/rig.ts";
import {
  hasTool,
  startMockAnthropic,
  text,
  toolResultFor,
  toolUse,
} from "../support/mock_anthropic.ts";

const claude = requireCli("claude");
const inspector = requireCli("inspector");

/**
 * Stops, when the scope ends, the daemon a `wats mcp` started in the
 * background on `dir` (the pid its lock names), and waits for its lock to go.
 */
function stopBackgroundDaemon(dir: string): AsyncDisposable {
  return {
    async [Symbol.asyncDispose]() {
      const pid = Number((await Deno.readTextFile(`${dir}/daemon.lock`).catch(() => "0")).trim());
      if (pid <= 0) return;
      Deno.kill(pid, "SIGTERM");
      for (let i = 0; i < 100; i++) {
        try {
          await Deno.stat(`${dir}/daemon.lock`);
          await new Promise((r) => setTimeout(r, 100));
        } catch {
          break;
        }
      }
    },
  };
}

Deno.test({
  name: "alice asks through `wats mcp`, alice-agent answers in her thread, alice reads the answer",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using rig = await nodeRig();
    const alice = await rig.mcp("alice");
    const agent = await rig.mcp("alice-agent");
    const asked = await call(alice, "ask", {
      title: "How do I rotate logs?",
      text: "logrotate or journald — which is simpler on Debian?",
    });
    const askId = idIn(asked);
    const feed = await call(agent, "feed", {});
    assert.ok(feed.includes(askId), feed);
    assert.ok(feed.includes("unverified"), "posts are labelled unverified");
    const answered = await call(agent, "post", {
      kind: "answer",
      parent: askId,
      text: "journald: it needs no setup.",
    });
    assert.ok(answered.includes(`Thread: ${askId}`), answered);
    const thread = await call(alice, "thread", { id: askId });
    assert.ok(thread.includes("journald: it needs no setup."), thread);
    assert.ok(thread.includes("alice-agent"), "the answer is labelled with its author");
    await rig.waitEvent("post_stored", { where: (e) => e.kind === "answer", timeoutMs: 60_000 });
    await alice.close();
    await agent.close();
    const end = await rig.stop();
    assert.equal(end.code, 0, end.stderr);
  },
});

Deno.test({
  name: "the MCP Inspector CLI lists wats tools and calls one through `wats mcp`",
  ignore: inspector === null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using rig = await nodeRig();
    const dir = rig.dataDir;
    const run = async (...method: string[]) => {
      const r = await runInspector(
        [watsCommand()[0]!, ...mcpArgs(dir, "inspector"), ...method],
        mcpEnv(rig.home),
      );
      assert.equal(r.code, 0, `${r.out}\n${r.err}`);
      return JSON.parse(r.out);
    };
    const listed = await run("--method", "tools/list");
    const names = (listed.tools as Array<{ name: string }>).map((t) => t.name);
    for (const n of ["ask", "post", "thread", "feed", "search", "status", "pending"]) {
      assert.ok(names.includes(n), `tools/list lacks ${n}: ${names}`);
    }
    const called = await run(
      "--method",
      "tools/call",
      "--tool-name",
      "ask",
      "--tool-arg",
      "title=From the inspector",
      "--tool-arg",
      "text=Does the inspector reach the store?",
    );
    assert.ok(!called.isError, JSON.stringify(called));
    await rig.waitEvent("post_stored", { where: (e) => e.kind === "ask", timeoutMs: 60_000 });
  },
});

Deno.test({
  name:
    "the real Claude Code CLI calls a wats tool through `wats mcp` and the post lands in the store",
  ignore: claude === null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using rig = await nodeRig();
    const dir = rig.dataDir;
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("mcp__wats__ask"), reply: text("Asked the swarm.") },
        {
          when: hasTool("mcp__wats__ask"),
          reply: toolUse("mcp__wats__ask", {
            title: "Claude asks",
            text: "Who maintains the relay?",
          }),
        },
      ],
    });
    await using cwd = tempDir("wats-claude-cwd-");
    const run = await runClaudeOnMcp({
      servers: {
        wats: {
          command: watsCommand()[0],
          args: mcpArgs(dir, "bob"),
          env: { DENO_DIR: denoDir() },
        },
      },
      prompt: "Ask the swarm who maintains the relay.",
      cwd: cwd.path,
      mockUrl: mock.url,
      // As a runner's run has it: Claude Code waits for `wats mcp` however loaded the machine.
      env: { ...MCP_CONNECT_WAIT_ENV },
    });
    assert.ok(run.init, run.stdout + run.stderr);
    assert.deepEqual(run.init.servers, [{ name: "wats", status: "connected" }]);
    assert.ok(
      run.init.tools.every((t) => t.startsWith("mcp__wats__")),
      `built-in tools leaked: ${run.init.tools}`,
    );
    const result = run.events.find((e) => e.type === "result") as
      | { is_error: boolean }
      | undefined;
    assert.equal(result?.is_error, false, run.stdout);
    const stored = await rig.waitEvent("post_stored", {
      where: (e) => e.kind === "ask",
      timeoutMs: 60_000,
    });
    assert.equal(stored.source, "local", JSON.stringify(stored));
  },
});

Deno.test({
  name: "`wats mcp` with no daemon starts one in the background that never runs agents",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using data = tempDir("wats-data-");
    await using tmp = tempDir("wats-home-");
    const [dir, home] = [data.path, tmp.path];
    // The config asks for an agent: a node started by `wats mcp` must ignore it.
    await Deno.writeTextFile(`${dir}/config.toml`, '[agent]\nruntime = "claude"\n');
    await using _daemon = stopBackgroundDaemon(dir);
    await using client = closing(await mcpClient(dir, "carol", home));
    const status = await call(client, "status");
    assert.match(status, /agent: not running/);
    const lock = (await Deno.readTextFile(`${dir}/daemon.lock`)).trim();
    assert.match(lock, /^\d+$/);
  },
});

Deno.test({
  name:
    "an MCP session through `wats mcp` carries on when a foreground `wats` takes over from the node it started",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using data = tempDir("wats-data-");
    await using tmp = tempDir("wats-home-");
    const [dir, home] = [data.path, tmp.path];
    // No node runs: `wats mcp` starts one in the background.
    await using client = closing(await mcpClient(dir, "carol", home));
    const asked = idIn(await call(client, "ask", { title: "Before", text: "asked before" }));
    const background = Number((await Deno.readTextFile(`${dir}/daemon.lock`)).trim());
    await using rig = await nodeRig({ dataDir: dir, startTimeoutMs: 60_000 });
    const node = rig.node;
    assert.match(node.stderr(), new RegExp(`took over .*\\(pid ${background}\\)`));
    // The same session, now served by the foreground node.
    const thread = await call(client, "thread", { id: asked });
    assert.ok(thread.includes("asked before"), thread);
    const status = await call(client, "status");
    assert.ok(status.includes(dir), status);
    assert.equal(
      (await Deno.readTextFile(`${dir}/daemon.lock`)).trim(),
      String(node.process.pid),
    );
    await client.close();
    const end = await rig.stop();
    assert.equal(end.code, 0, end.stderr);
  },
});
