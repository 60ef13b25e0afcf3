/**
 * MCP over HTTP end to end through a real daemon with `mcp.listen` (issue 32): tokens made with
 * the real `wats mcp token`, then the MCP SDK's StreamableHTTPClientTransport, the MCP Inspector
 * CLI (`--transport http`), the real Claude Code CLI (an `http` server in `--mcp-config`) and the
 * real Codex CLI (`url` and `http_headers`), each driven by a scripted mock model, asking and
 * answering through the endpoint.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { requireCli, runInspector } from "../support/clis.ts";
import { runWats } from "../support/cli.ts";
import { runClaudeOnMcp } from "../support/claude.ts";
import { freePort } from "../support/free_port.ts";
import { call, idIn } from "../support/swarm.ts";
import { type NodeRig, nodeRig, tempDir } from "../support/rig.ts";
import {
  hasTool,
  startMockAnthropic,
  text,
  toolResultFor,
  toolUse,
} from "../support/mock_anthropic.ts";
import {
  callOutputFor,
  functionCall,
  hasTool as codexHasTool,
  MOCK_MODEL as OPENAI_MODEL,
  startMockOpenAI,
  text as openaiText,
} from "../support/mock_openai.ts";

const claude = requireCli("claude");
const codex = requireCli("codex");
const inspector = requireCli("inspector");

/** A node serving MCP over HTTP on a free loopback port, and its URL. */
async function httpNode(): Promise<{ rig: NodeRig; url: string }> {
  const port = freePort();
  const rig = await nodeRig({ config: `[mcp]\nlisten = "127.0.0.1:${port}"\n` });
  return { rig, url: `http://127.0.0.1:${port}/mcp` };
}

/** `wats mcp token create --profile P`: the token, from stdout alone. */
async function makeToken(rig: NodeRig, profile: string): Promise<string> {
  const r = await rig.wats(["mcp", "token", "create", "--profile", profile, "--label", "test"]);
  assert.equal(r.code, 0, r.stderr);
  const token = r.stdout.trim();
  assert.match(token, /^wats_mcp_[A-Za-z0-9_-]{43}$/);
  assert.match(r.stderr, /shown once/);
  return token;
}

async function httpClient(url: string, token: string): Promise<Client> {
  const c = new Client({ name: "wats-http-e2e", version: "0.0.0" });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return c;
}

Deno.test({
  name: "over HTTP alice asks and bob answers in her thread; a revoked token stops at once",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { rig, url } = await httpNode();
    await using _rig = rig;
    const aliceToken = await makeToken(rig, "alice");
    const bobToken = await makeToken(rig, "bob");
    const listed = await rig.wats(["mcp", "token", "list"]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout.trim().split("\n").length, 2);
    assert.ok(!listed.stdout.includes(aliceToken), "list never shows a token");
    const alice = await httpClient(url, aliceToken);
    const bob = await httpClient(url, bobToken);
    const askId = idIn(await call(alice, "ask", { title: "Over HTTP?", text: "Does it reach?" }));
    await call(bob, "post", { kind: "answer", parent: askId, text: "It reaches." });
    const thread = await call(alice, "thread", { id: askId });
    assert.match(thread, /It reaches\./);
    assert.match(thread, /\(bob, this node\)/);
    assert.match(thread, /\(alice, this node\)/);
    // Revoking bob's token ends his access from the next request, without a restart.
    const bobId = listed.stdout.split("\n").find((l) => l.includes(" bob "))!.split(" ")[0]!;
    const revoked = await rig.wats(["mcp", "token", "revoke", bobId]);
    assert.equal(revoked.code, 0, revoked.stderr);
    await assert.rejects(
      call(bob, "post", { kind: "answer", parent: askId, text: "Still here?" }),
      /a valid token is needed/,
    );
    const after = await call(alice, "thread", { id: askId });
    assert.ok(!after.includes("Still here?"), after);
    await alice.close();
    await bob.close().catch(() => {});
  },
});

Deno.test({
  name: "the MCP Inspector CLI lists and calls wats tools over HTTP with a bearer token",
  ignore: inspector === null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { rig, url } = await httpNode();
    await using _rig = rig;
    const token = await makeToken(rig, "carol");
    const run = (...method: string[]) =>
      runInspector([url, "--transport", "http", "--header", `Authorization: Bearer ${token}`]
        .concat(method));
    const listed = await run("--method", "tools/list");
    assert.equal(listed.code, 0, listed.out + listed.err);
    const names = (JSON.parse(listed.out).tools as Array<{ name: string }>).map((t) => t.name);
    for (const n of ["ask", "post", "thread", "status", "pending", "approve", "reject"]) {
      assert.ok(names.includes(n), `tools/list lacks ${n}: ${names}`);
    }
    const called = await run(
      "--method",
      "tools/call",
      "--tool-name",
      "ask",
      "--tool-arg",
      "title=From the inspector over HTTP",
      "--tool-arg",
      "text=Does the inspector reach the store?",
    );
    assert.equal(called.code, 0, called.out + called.err);
    assert.ok(!JSON.parse(called.out).isError, called.out);
    await rig.waitEvent("post_stored", { where: (e) => e.kind === "ask", timeoutMs: 60_000 });
    // Without the header the inspector gets nothing.
    const r = await runInspector([url, "--transport", "http", "--method", "tools/list"]);
    assert.notEqual(r.code, 0);
  },
});

Deno.test({
  name: "the real Claude Code CLI asks over HTTP (type http in --mcp-config) and reads the answer",
  ignore: claude === null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { rig, url } = await httpNode();
    await using _rig = rig;
    const token = await makeToken(rig, "dave");
    // Someone answers an ask already in the store; Claude asks anew and reads that thread.
    const helper = await httpClient(url, await makeToken(rig, "erin"));
    const earlier = idIn(await call(helper, "ask", { title: "Relay owner?", text: "who?" }));
    await call(helper, "post", {
      kind: "answer",
      parent: earlier,
      text: "Erin maintains the relay.",
    });
    await using mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("mcp__wats__thread"), reply: text("Erin maintains it.") },
        {
          when: toolResultFor("mcp__wats__ask"),
          reply: toolUse("mcp__wats__thread", { id: earlier }),
        },
        {
          when: hasTool("mcp__wats__ask"),
          reply: toolUse("mcp__wats__ask", { title: "Claude asks over HTTP", text: "Who?" }),
        },
      ],
    });
    await using cwd = tempDir("wats-claude-http-");
    const run = await runClaudeOnMcp({
      servers: { wats: { type: "http", url, headers: { Authorization: `Bearer ${token}` } } },
      prompt: "Ask the swarm who maintains the relay, then read the earlier thread.",
      cwd: cwd.path,
      mockUrl: mock.url,
      env: { MCP_CONNECTION_NONBLOCKING: "false" },
    });
    assert.ok(run.init, run.stdout + run.stderr);
    assert.deepEqual(run.init.servers, [{ name: "wats", status: "connected" }]);
    const result = run.events.find((e) => e.type === "result") as { is_error: boolean };
    assert.equal(result?.is_error, false, run.stdout);
    // The thread's answer reached the model through the endpoint.
    const sent = mock.requests.map((r) => JSON.stringify(r.body)).join("\n");
    assert.match(sent, /Erin maintains the relay\./);
    const stored = await rig.waitEvent("post_stored", {
      where: (e) => e.kind === "ask" && e.source === "local" && e.id !== earlier,
      timeoutMs: 60_000,
    });
    assert.equal(stored.kind, "ask");
    await helper.close();
  },
});

Deno.test({
  name: "a node refuses to start on an mcp.listen it may not serve, saying what to set instead",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using dir = tempDir("wats-data-");
    for (
      const [listen, said] of [
        ["0.0.0.0:7449", /every address at once/],
        ["192.0.2.7:7449", /wats config set mcp\.remote true/],
        ["localhost:7449", /not a host name/],
      ] as const
    ) {
      await Deno.writeTextFile(`${dir.path}/config.toml`, `[mcp]\nlisten = "${listen}"\n`);
      const r = await runWats(["--data-dir", dir.path, "node", "--agent", "none"], {
        timeoutMs: 120_000,
      });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, said);
    }
  },
});

Deno.test({
  name: "the real Codex CLI (streamable HTTP: url and http_headers) asks through the endpoint",
  ignore: codex === null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { rig, url } = await httpNode();
    await using _rig = rig;
    const token = await makeToken(rig, "frank");
    await using mock = startMockOpenAI({
      rules: [
        { when: callOutputFor("mcp__wats", "ask"), reply: openaiText("Asked.") },
        {
          when: codexHasTool("mcp__wats", "ask"),
          reply: functionCall("mcp__wats", "ask", { title: "Codex over HTTP", text: "Lands?" }),
        },
      ],
    });
    await using tmp = tempDir("wats-codex-http-");
    for (const d of ["codex-home", "home", "work"]) await Deno.mkdir(`${tmp.path}/${d}`);
    const c = (kv: string) => ["-c", kv];
    const child = new Deno.Command(codex![0]!, {
      args: [
        ...codex!.slice(1),
        "exec",
        "--json",
        "--ephemeral",
        "--ignore-user-config",
        "--ignore-rules",
        "--skip-git-repo-check",
        "-C",
        `${tmp.path}/work`,
        "-s",
        "read-only",
        ...c('approval_policy="never"'),
        ...c('model_provider="wats_mock"'),
        ...c('model_providers.wats_mock.name="mock"'),
        ...c(`model_providers.wats_mock.base_url="${mock.url}/v1"`),
        ...c('model_providers.wats_mock.wire_api="responses"'),
        ...c("model_providers.wats_mock.request_max_retries=0"),
        ...c("model_providers.wats_mock.stream_max_retries=0"),
        // What `wats setup codex --http` writes.
        ...c(`mcp_servers.wats.url="${url}"`),
        ...c(`mcp_servers.wats.http_headers={Authorization="Bearer ${token}"}`),
        ...c("mcp_servers.wats.required=true"),
        ...c('mcp_servers.wats.default_tools_approval_mode="approve"'),
        "--disable",
        "unbounded_connection_retries",
        "-m",
        OPENAI_MODEL,
        "-",
      ],
      env: {
        CODEX_HOME: `${tmp.path}/codex-home`,
        HOME: `${tmp.path}/home`,
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      },
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode("Ask the swarm whether it lands."));
    await w.close();
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, stdout + new TextDecoder().decode(out.stderr));
    // Exit 0 does not mean the tool worked (docs/harness_facts.md): read the call's item.
    const call = stdout.split("\n").filter((l) => l.includes('"item.completed"'))
      .map((l) => JSON.parse(l).item).find((i) => i.type === "mcp_tool_call");
    assert.equal(call?.status, "completed", stdout);
    assert.match(JSON.stringify(call.result), /Posted ask [0-9a-f]{64}/);
    await rig.waitEvent("post_stored", { where: (e) => e.kind === "ask", timeoutMs: 60_000 });
  },
});
