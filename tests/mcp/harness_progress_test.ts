/**
 * Progress of a coding agent's call: an MCP client whose `tools/call` carries a
 * `_meta.progressToken` (the SDK's `onprogress`) hears `notifications/progress` as the call's ACP
 * session reports updates, over `mcp.sock` and over HTTP; one without a token hears none and gets
 * its answer as JSON. The layer is the real `AcpLayer` against a scripted ACP agent
 * (tests/support/fake_acp_agent.ts) in a real git checkout; the clients are the MCP SDK's.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { AcpLayer } from "../../src/acp/calls.ts";
import { NOTE_CHARS } from "../../src/acp/call_plan.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import { git } from "../../src/acp/worktrees.ts";
import { ConnTransport, LineReader } from "../../src/mcp/conn_transport.ts";
import { serveMcpHttp } from "../../src/mcp/http_server.ts";
import { createToken, TokenBook } from "../../src/mcp/http_tokens.ts";
import { serveMcpSocket } from "../../src/mcp/socket_server.ts";
import { fakeAcpAgent, type FakeTurn } from "../support/fake_acp_agent.ts";
import { bareHarness } from "../support/harness_fixtures.ts";
import { tempDir } from "../support/rig.ts";
import { FakeService } from "./fake_service.ts";

const ID = ["-c", "user.name=t", "-c", "user.email=t@example.com"];

/** One turn: the agent reads a file (allowed in its worktree), then replies in two chunks. */
const TURN: FakeTurn = {
  requests: [{ toolCallId: "t1", kind: "read", title: "Read README.md", locations: ["README.md"] }],
  message: "Read it.",
};

const ARGS = { task: "read the readme", checkout: "app", work: "readme" };

/** A node service whose coding agent `fake` plays `turns` in a fresh checkout. */
async function nodeWithAgent(turns: FakeTurn[]) {
  const dir = tempDir("wats-progress-");
  const repo = `${dir.path}/repo`;
  Deno.mkdirSync(repo);
  await git(["init", "-q", "-b", "main"], repo);
  Deno.writeTextFileSync(`${repo}/README.md`, "hi\n");
  await git(["add", "README.md"], repo);
  await git([...ID, "commit", "-qm", "first"], repo);
  const layer = new AcpLayer({
    worktrees: `${dir.path}/worktrees`,
    harnesses: { fake: bareHarness("fake", "fake-agent") },
    checkouts: { app: { name: "app", path: repo, base: "main", fetch: false } },
    allowedCheckouts: [],
    policy: makePolicy([], [], `${dir.path}/data`, { foldCase: false }),
    env: {},
    connect: fakeAcpAgent(turns).connect,
  });
  const service = Object.assign(new FakeService(), { codingAgents: layer });
  return {
    dir: dir.path,
    service,
    async [Symbol.asyncDispose]() {
      await layer.close();
      await dir[Symbol.asyncDispose]();
    },
  };
}

/** Calls the coding agent; with `notes`, asks for progress and gathers it there. */
async function callAgent(c: Client, notes?: Progress[]): Promise<string> {
  const r = await c.callTool(
    { name: "fake", arguments: ARGS },
    undefined,
    notes ? { onprogress: (p: Progress) => notes.push(p) } : {},
  );
  assert.notEqual(r.isError, true, JSON.stringify(r));
  return (r.content as { text: string }[]).map((b) => b.text).join("\n");
}

/** What every progress run must show: the tool started, then the reply, each a step further. */
function assertProgress(notes: Progress[]): void {
  assert.deepEqual(notes.map((n) => n.message), ["read: Read README.md", "writing its reply"]);
  assert.deepEqual(notes.map((n) => n.progress), [1, 2]);
}

Deno.test("over mcp.sock a call asking for progress hears the coding agent's steps", async () => {
  const twoCalls = [TURN, TURN];
  await using node = await nodeWithAgent(twoCalls);
  const path = `${node.dir}/mcp.sock`;
  const server = await serveMcpSocket({ path, service: node.service });
  try {
    const conn = await Deno.connect({ transport: "unix", path });
    await conn.write(new TextEncoder().encode('{"wats":"hello","profile":"bob"}\n'));
    const reader = new LineReader(conn);
    assert.match((await reader.readLine()) ?? "", /"wats":"ready"/);
    const c = new Client({ name: "progress-test", version: "0" });
    await c.connect(new ConnTransport(conn, reader));
    const notes: Progress[] = [];
    assert.match(await callAgent(c, notes), /Read it\./);
    assertProgress(notes);
    // No token, no notes: the SDK client would throw on a progress it did not ask for.
    assert.match(await callAgent(c), /Read it\./);
    await c.close();
  } finally {
    await server.close();
  }
});

Deno.test("over HTTP a call asking for progress gets an event stream of its steps; others get JSON", async () => {
  const twoCalls = [TURN, TURN];
  await using node = await nodeWithAgent(twoCalls);
  const file = `${node.dir}/mcp_tokens.json`;
  const { token } = await createToken(file, { profile: "bob" });
  const server = serveMcpHttp({
    listen: { hostname: "127.0.0.1", port: 0, hostPort: "127.0.0.1:0", loopback: true },
    service: node.service,
    tokens: new TokenBook(file),
    ratePerMinute: 600,
  });
  const types: string[] = [];
  const c = new Client({ name: "progress-test", version: "0" });
  try {
    await c.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
        // Records how each answer came.
        fetch: async (input: string | URL, init?: RequestInit) => {
          const res = await fetch(input, init);
          types.push(res.headers.get("content-type") ?? "");
          return res;
        },
      }),
    );
    const notes: Progress[] = [];
    assert.match(await callAgent(c, notes), /Read it\./);
    assertProgress(notes);
    assert.equal(types.at(-1), "text/event-stream");
    assert.match(await callAgent(c), /Read it\./);
    assert.equal(types.at(-1), "application/json");
    assert.ok(
      types.every((t) => t === "application/json" || t === "text/event-stream" || t === ""),
      types.join(", "),
    );
  } finally {
    await c.close();
    await server.close();
  }
});

Deno.test("a tool title from the coding agent reaches the client as one plain, short line", async () => {
  const title = "Read \x1b]0;owned\x07 the\u202e file\n" + "x".repeat(300);
  await using node = await nodeWithAgent([{
    requests: [{ toolCallId: "t1", kind: "read", title, locations: ["README.md"] }],
    message: "ok",
  }]);
  const file = `${node.dir}/mcp_tokens.json`;
  const { token } = await createToken(file, { profile: "bob" });
  const server = serveMcpHttp({
    listen: { hostname: "127.0.0.1", port: 0, hostPort: "127.0.0.1:0", loopback: true },
    service: node.service,
    tokens: new TokenBook(file),
    ratePerMinute: 600,
  });
  const c = new Client({ name: "progress-test", version: "0" });
  try {
    await c.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    const notes: Progress[] = [];
    await callAgent(c, notes);
    const first = notes[0]!.message!;
    assert.doesNotMatch(first, /[\p{Cc}\p{Cf}]/u);
    assert.ok(first.startsWith("read: Read ]0;owned the file x"), first);
    assert.equal(first.length, NOTE_CHARS);
  } finally {
    await c.close();
    await server.close();
  }
});
