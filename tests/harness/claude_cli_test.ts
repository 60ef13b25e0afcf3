/**
 * The real Claude Code CLI against the scripted mock model server and the echo
 * MCP server: proves the pipeline the heartbeat runner relies on, and the
 * facts it must guard against (a failed MCP server does not fail the run).
 *
 * @module
 */

import assert from "node:assert/strict";
import { requireCli } from "../support/clis.ts";
import { type ClaudeRun, runClaude } from "../support/claude.ts";
import { ECHO_OUT_ENV, echoServerCommand } from "../support/echo_mcp_server.ts";
import { MCP_CONNECT_WAIT_ENV } from "../../src/runner/runtimes/claude/harness.ts";
import {
  hasTool,
  MOCK_MODEL,
  startMockAnthropic,
  text,
  toolResultFor,
  toolUse,
} from "../support/mock_anthropic.ts";

const claude = requireCli("claude");

/** The flags the runner uses to allow only MCP tools (docs/harness_facts.md). */
function lockedDownArgs(mcpConfig: string): string[] {
  return [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--model",
    MOCK_MODEL,
    "--mcp-config",
    mcpConfig,
    "--strict-mcp-config",
    "--allowedTools",
    "mcp__echo__*",
    "--tools",
    "",
    "--setting-sources",
    "",
  ];
}

function eventOf(run: ClaudeRun, type: string, subtype?: string): Record<string, unknown> {
  const e = run.events.find((e) =>
    e.type === type && (subtype === undefined || e.subtype === subtype)
  );
  assert.ok(e, `no ${type}/${subtype ?? "*"} event; stderr: ${run.stderr}\nstdout: ${run.stdout}`);
  return e;
}

Deno.test({
  name: "claude CLI calls an MCP tool the mock asks for, offers only MCP tools, and reports a cost",
  ignore: claude === null,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "wats-claude-test-" });
    const out = `${dir}/echo.txt`;
    const { command, args } = echoServerCommand();
    const config = await echoConfig(dir, { command, args, env: { [ECHO_OUT_ENV]: out } });
    const mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("mcp__echo__echo"), reply: text("The echo worked.") },
        {
          when: hasTool("mcp__echo__echo"),
          reply: toolUse("mcp__echo__echo", { text: "hello swarm" }),
        },
      ],
    });
    try {
      const run = await runClaude({
        args: lockedDownArgs(config),
        prompt: "Please echo hello swarm.",
        cwd: dir,
        mockUrl: mock.url,
      });
      console.log(`claude run with one MCP tool call took ${run.ms.toFixed(0)} ms`);
      assert.equal(run.timedOut, false);
      assert.equal(run.code, 0, run.stderr);

      assert.equal(await Deno.readTextFile(out), "hello swarm\n");

      const init = eventOf(run, "system", "init");
      const tools = init.tools as string[];
      assert.deepEqual(tools, ["mcp__echo__echo"], `init offered ${tools.join(", ")}`);
      assert.deepEqual(servers(init), [{ name: "echo", status: "connected" }]);

      const result = eventOf(run, "result");
      assert.equal(result.is_error, false);
      assert.equal(result.subtype, "success");
      assert.equal(result.result, "The echo worked.");
      assert.equal(typeof result.total_cost_usd, "number");
      assert.ok((result.total_cost_usd as number) > 0, `cost was ${result.total_cost_usd}`);

      const used = mock.messages().map((r) => r.matched);
      assert.ok(used.includes(0) && used.includes(1), `rules matched: ${used.join(", ")}`);
    } finally {
      await mock.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "claude CLI reports an MCP server that failed to start only in init, and the run still succeeds",
  ignore: claude === null,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "wats-claude-test-" });
    const config = await echoConfig(dir, { command: `${dir}/no-such-server`, args: [] });
    const mock = startMockAnthropic({ default: text("Nothing to do.") });
    try {
      const run = await runClaude({
        args: lockedDownArgs(config),
        prompt: "Please echo hello swarm.",
        cwd: dir,
        mockUrl: mock.url,
      });
      console.log(`claude run with a failed MCP server took ${run.ms.toFixed(0)} ms`);
      assert.equal(run.code, 0, run.stderr);
      const init = eventOf(run, "system", "init");
      assert.deepEqual(servers(init), [{ name: "echo", status: "failed" }]);
      assert.deepEqual(init.tools, []);
      const result = eventOf(run, "result");
      assert.equal(result.subtype, "success");
      assert.equal(result.is_error, false);
      assert.equal(result.result, "Nothing to do.");
    } finally {
      await mock.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "claude CLI runs without the tools of an MCP server that has not answered (pending, or failed after its connect timeout)",
  ignore: claude === null,
  async fn() {
    // A server that reads MCP's initialize and never answers: the CLI waits only briefly (about
    // 1–2 s measured) and then asks the model without the server's tools. It ends when the CLI
    // closes its stdin, whatever the load: a `sleep 30` that ran out before a slow CLI's init
    // showed as `failed`, not `pending` (seen beside two CPU hogs).
    const dir = await Deno.makeTempDir({ prefix: "wats-claude-test-" });
    const config = await echoConfig(dir, { command: "sh", args: ["-c", "exec cat > /dev/null"] });
    const mock = startMockAnthropic({
      rules: [{ when: hasTool("mcp__echo__echo"), reply: text("I had the echo tool.") }],
      default: text("No tools here."),
    });
    try {
      const run = await runClaude({
        args: lockedDownArgs(config),
        prompt: "Please echo hello swarm.",
        cwd: dir,
        mockUrl: mock.url,
        // 2.1.332 waits MCP_TIMEOUT (30 s by default) for the server; 5 s keeps the test short.
        env: { MCP_TIMEOUT: "5000" },
      });
      console.log(`claude run with an unanswering MCP server took ${run.ms.toFixed(0)} ms`);
      assert.equal(run.code, 0, run.stderr);
      const init = eventOf(run, "system", "init");
      // 2.1.332 waits MCP_TIMEOUT, then reports the server `pending` or `failed` (a race at the
      // deadline: both seen on an idle machine). Either way: no tools.
      const [echo, ...more] = servers(init) as { name: string; status: string }[];
      assert.equal(more.length, 0);
      assert.equal(echo?.name, "echo");
      assert.ok(echo.status === "pending" || echo.status === "failed", `status ${echo.status}`);
      assert.deepEqual(init.tools, []);
      const result = eventOf(run, "result");
      assert.equal(result.is_error, false);
      assert.equal(result.result, "No tools here.");
      assert.deepEqual(mock.messages().map((r) => r.matched), ["default"]);
    } finally {
      await mock.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "with the runner's MCP wait, claude waits for a server that answers only after 3 s and offers its tools",
  ignore: claude === null,
  async fn() {
    // The runner's `wats mcp` bridge can take seconds to connect on a loaded machine (issue 27):
    // without MCP_CONNECTION_NONBLOCKING=false the run starts without it (the test above).
    const dir = await Deno.makeTempDir({ prefix: "wats-claude-test-" });
    const out = `${dir}/echo.txt`;
    const { command, args } = echoServerCommand();
    const slow = ["-c", 'sleep 3; exec "$0" "$@"', command, ...args];
    const config = await echoConfig(dir, {
      command: "sh",
      args: slow,
      env: { [ECHO_OUT_ENV]: out },
    });
    const mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("mcp__echo__echo"), reply: text("The echo worked.") },
        {
          when: hasTool("mcp__echo__echo"),
          reply: toolUse("mcp__echo__echo", { text: "hello swarm" }),
        },
      ],
      default: text("No tools here."),
    });
    try {
      const run = await runClaude({
        args: lockedDownArgs(config),
        prompt: "Please echo hello swarm.",
        cwd: dir,
        mockUrl: mock.url,
        env: { ...MCP_CONNECT_WAIT_ENV },
      });
      assert.equal(run.code, 0, run.stderr);
      const init = eventOf(run, "system", "init");
      assert.deepEqual(servers(init), [{ name: "echo", status: "connected" }]);
      assert.deepEqual(init.tools, ["mcp__echo__echo"]);
      assert.equal(await Deno.readTextFile(out), "hello swarm\n");
      assert.ok(!mock.messages().some((r) => r.matched === "default"), "no request without tools");
    } finally {
      await mock.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "claude's wait for an MCP server is bounded by MCP_TIMEOUT, whatever MCP_CONNECT_TIMEOUT_MS says (why the runner sets both)",
  ignore: claude === null,
  async fn() {
    // 2.1.197 waited MCP_CONNECT_TIMEOUT_MS; 2.1.332 waits MCP_TIMEOUT (docs/harness_facts.md).
    // A server that answers only after 3 s, against a 1 s MCP_TIMEOUT and a 60 s connect timeout:
    // the run goes on without it, so the runner's long wait must set MCP_TIMEOUT too.
    const dir = await Deno.makeTempDir({ prefix: "wats-claude-test-" });
    const { command, args } = echoServerCommand();
    const config = await echoConfig(dir, {
      command: "sh",
      args: ["-c", 'sleep 3; exec "$0" "$@"', command, ...args],
    });
    const mock = startMockAnthropic({ rules: [], default: text("No tools here.") });
    try {
      const run = await runClaude({
        args: lockedDownArgs(config),
        prompt: "Please echo hello swarm.",
        cwd: dir,
        mockUrl: mock.url,
        env: { ...MCP_CONNECT_WAIT_ENV, MCP_TIMEOUT: "1000" },
      });
      assert.equal(run.code, 0, run.stderr);
      const init = eventOf(run, "system", "init");
      const [echo] = servers(init);
      assert.notEqual(echo?.status, "connected");
      assert.deepEqual(init.tools, []);
      assert.equal(MCP_CONNECT_WAIT_ENV.MCP_TIMEOUT, "60000", "the runner's wait is 60 s");
    } finally {
      await mock.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** Writes `<dir>/mcp.json` with `server` as the one MCP server, `echo`; returns its path. */
async function echoConfig(
  dir: string,
  server: { command: string; args: string[]; env?: Record<string, string> },
): Promise<string> {
  const config = `${dir}/mcp.json`;
  await Deno.writeTextFile(config, JSON.stringify({ mcpServers: { echo: server } }));
  return config;
}

/**
 * The name and status of each server in `system/init`: what the runner reads
 * (src/runner/runtimes/claude/harness.ts). Newer releases add fields (2.1.332: `source`).
 */
function servers(init: Record<string, unknown>): Array<{ name: unknown; status: unknown }> {
  const list = Array.isArray(init.mcp_servers) ? init.mcp_servers : [];
  return list.map((s: Record<string, unknown>) => ({ name: s.name, status: s.status }));
}
