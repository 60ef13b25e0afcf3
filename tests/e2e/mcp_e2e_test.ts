/**
 * MCP end to end through the real daemon: real `wats mcp` processes started by
 * the MCP SDK client, the MCP Inspector CLI, and the real Claude Code CLI
 * driven by the scripted mock model (issue 3).
 */

import assert from "node:assert/strict";
import { denoDir, type RunningWats, startWats, tempDataDir, watsCommand } from "../support/cli.ts";
import { inspectorBin, requireCli } from "../support/clis.ts";
import { runClaude } from "../support/claude.ts";
import { call, idIn, mcpArgs, mcpClient, mcpEnv } from "../support/swarm.ts";
import {
  hasTool,
  MOCK_MODEL,
  startMockAnthropic,
  text,
  toolResultFor,
  toolUse,
} from "../support/mock_anthropic.ts";

const claude = requireCli("claude");
const inspector = requireCli("inspector");

async function startNode(dataDir: string, extra: string[] = []): Promise<RunningWats> {
  const node = startWats(["--data-dir", dataDir, "node", ...extra]);
  await node.waitForLine((l) => l.includes('"event":"started"'));
  return node;
}

Deno.test({
  name: "alice asks through `wats mcp`, alice-agent answers in her thread, alice reads the answer",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = tempDataDir();
    const node = await startNode(dir);
    const home = node.home;
    const alice = await mcpClient(dir, "alice", home);
    const agent = await mcpClient(dir, "alice-agent", home);
    try {
      const asked = await call(alice, "ask", {
        title: "How do I rotate logs?",
        text: "logrotate or journald — which is simpler on Debian?",
      });
      const askId = idIn(asked);
      const feed = await call(agent, "feed", {});
      assert.ok(feed.includes(askId), feed);
      assert.ok(feed.includes("unverified"), "posts are labelled unverified");
      const answered = await call(agent, "answer", {
        parent: askId,
        text: "journald: it needs no setup.",
      });
      assert.ok(answered.includes(`Thread: ${askId}`), answered);
      const thread = await call(alice, "thread", { id: askId });
      assert.ok(thread.includes("journald: it needs no setup."), thread);
      assert.ok(thread.includes("alice-agent"), "the answer is labelled with its author");
      await node.waitForLine((l) =>
        l.includes('"event":"post_stored"') && l.includes('"kind":"answer"')
      );
    } finally {
      await alice.close();
      await agent.close();
      const end = await node.stop();
      assert.equal(end.code, 0, end.stderr);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "the MCP Inspector CLI lists wats tools and calls one through `wats mcp`",
  ignore: inspector === null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = tempDataDir();
    const node = await startNode(dir);
    try {
      const { command, cwd } = inspectorBin();
      const run = async (...method: string[]) => {
        const r = await new Deno.Command(command[0], {
          args: [...command.slice(1), watsCommand()[0], ...mcpArgs(dir, "inspector"), ...method],
          cwd,
          env: mcpEnv(node.home),
          stdout: "piped",
          stderr: "piped",
        }).output();
        const out = new TextDecoder().decode(r.stdout);
        assert.equal(r.code, 0, `${out}\n${new TextDecoder().decode(r.stderr)}`);
        return JSON.parse(out);
      };
      const listed = await run("--method", "tools/list");
      const names = (listed.tools as Array<{ name: string }>).map((t) => t.name);
      for (const n of ["ask", "answer", "thread", "feed", "search", "status", "pending"]) {
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
      await node.waitForLine((l) =>
        l.includes('"event":"post_stored"') && l.includes('"kind":"ask"')
      );
    } finally {
      await node.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "the real Claude Code CLI calls a wats tool through `wats mcp` and the post lands in the store",
  ignore: claude === null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = tempDataDir();
    const node = await startNode(dir);
    const mock = startMockAnthropic({
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
    const work = await Deno.makeTempDir({ prefix: "wats-claude-cwd-" });
    try {
      const config = `${work}/mcp.json`;
      await Deno.writeTextFile(
        config,
        JSON.stringify({
          mcpServers: {
            wats: {
              command: watsCommand()[0],
              args: mcpArgs(dir, "bob"),
              env: { DENO_DIR: denoDir() },
            },
          },
        }),
      );
      const run = await runClaude({
        args: [
          "-p",
          "--output-format",
          "stream-json",
          "--verbose",
          "--model",
          MOCK_MODEL,
          "--mcp-config",
          config,
          "--strict-mcp-config",
          "--allowedTools",
          "mcp__wats__*",
          "--tools",
          "",
          "--setting-sources",
          "",
        ],
        prompt: "Ask the swarm who maintains the relay.",
        cwd: work,
        mockUrl: mock.url,
      });
      const init = run.events.find((e) => e.type === "system" && e.subtype === "init") as
        | { mcp_servers: Array<{ name: string; status: string }>; tools: string[] }
        | undefined;
      assert.ok(init, run.stdout + run.stderr);
      assert.deepEqual(init.mcp_servers, [{ name: "wats", status: "connected" }]);
      assert.ok(
        init.tools.every((t) => t.startsWith("mcp__wats__")),
        `built-in tools leaked: ${init.tools}`,
      );
      const result = run.events.find((e) => e.type === "result") as
        | { is_error: boolean }
        | undefined;
      assert.equal(result?.is_error, false, run.stdout);
      const stored = await node.waitForLine((l) =>
        l.includes('"event":"post_stored"') && l.includes('"kind":"ask"')
      );
      assert.ok(stored.includes('"source":"local"'), stored);
    } finally {
      await mock.close();
      await node.stop();
      await Deno.remove(work, { recursive: true });
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "`wats mcp` with no daemon starts one in the background that never runs agents",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = tempDataDir();
    // The config asks for an agent: a node started by `wats mcp` must ignore it.
    await Deno.writeTextFile(`${dir}/config.toml`, '[agent]\nruntime = "claude"\n');
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    const client = await mcpClient(dir, "carol", home);
    try {
      const status = await call(client, "status");
      assert.match(status, /agent: not running/);
      const lock = (await Deno.readTextFile(`${dir}/daemon.lock`)).trim();
      assert.match(lock, /^\d+$/);
    } finally {
      await client.close();
      const pid = Number((await Deno.readTextFile(`${dir}/daemon.lock`).catch(() => "0")).trim());
      if (pid > 0) {
        Deno.kill(pid, "SIGTERM");
        for (let i = 0; i < 100; i++) {
          try {
            await Deno.stat(`${dir}/daemon.lock`);
            await new Promise((r) => setTimeout(r, 100));
          } catch {
            break;
          }
        }
      }
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "an MCP session through `wats mcp` carries on when a foreground `wats` takes over from the node it started",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    // No node runs: `wats mcp` starts one in the background.
    const client = await mcpClient(dir, "carol", home);
    let node: RunningWats | undefined;
    try {
      const asked = idIn(await call(client, "ask", { title: "Before", text: "asked before" }));
      const background = Number((await Deno.readTextFile(`${dir}/daemon.lock`)).trim());
      node = await startNode(dir);
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
    } finally {
      await client.close();
      const end = node ? await node.stop() : undefined;
      assert.equal(end?.code, 0, end?.stderr);
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
});
