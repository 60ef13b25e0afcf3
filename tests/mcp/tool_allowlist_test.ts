/**
 * The reviewed list of MCP tools (docs/decisions/runner.md, safety settings: "No MCP tool
 * writes settings; a test lists every tool against a reviewed allowlist, so a
 * new one fails until reviewed").
 *
 * Adding a tool: check that it writes no setting, cannot acknowledge safety
 * changes, resume or halt agents, or reach files; give it all four hints; then
 * add it below with the session kinds that may see it.
 *
 * @module
 */

import assert from "node:assert/strict";
import { call, connect, interactive, runner } from "./connect.ts";
import { FakeService } from "./fake_service.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serveMcpHttp } from "../../src/mcp/http_server.ts";
import { createToken, TokenBook } from "../../src/mcp/http_tokens.ts";
import { tempDir } from "../support/rig.ts";
import type { CodingAgents } from "../../src/contracts/coding_agents.ts";

interface Reviewed {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
  /** False: interactive sessions only. */
  runner: boolean;
}

const POST = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
  runner: true,
};
const READ = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
  runner: true,
};

/**
 * Reviewed 2026-12 (issue 30): every tool a wats MCP session can see. `post`
 * posts every reply kind (answer, clarify, claim, release, offer, note, react,
 * vouch, progress) as the nine per-kind tools it replaces did, through the same
 * checks; a runner session gets only `ask`, `post` and `thread`.
 */
const ALLOWLIST: Record<string, Reviewed> = {
  ask: POST,
  post: POST,
  thread: READ,
  feed: { ...READ, runner: false },
  search: { ...READ, runner: false },
  status: { ...READ, runner: false },
  agents: { ...READ, runner: false },
  pending: { ...READ, runner: false },
  approve: { ...POST, runner: false },
  reject: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
    runner: false,
  },
};

/**
 * Reviewed 2026-11 (issue 10): one tool per enabled coding-agent harness, named
 * after it. It writes no setting and reaches files only through its own
 * worktree, with every request of the coding agent decided by the policy.
 */
const HARNESS: Reviewed = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
  runner: true,
};

/** A node whose config.toml declares these harnesses. */
function withHarnesses(names: string[]): FakeService {
  const agents: CodingAgents = {
    harnessNames: () => names,
    checkoutNames: () => ["app"],
    call: () => Promise.reject(new Error("not called in these tests")),
  };
  return Object.assign(new FakeService(), { codingAgents: agents });
}

async function listed(runnerSession: boolean, harnesses: string[] = [], http = false) {
  const service = harnesses.length > 0 ? withHarnesses(harnesses) : new FakeService();
  if (http) return await listedOverHttp(service);
  const c = await connect(service, runnerSession ? runner() : interactive());
  const tools = (await c.listTools()).tools;
  await c.close();
  return tools as { name: string; annotations?: Record<string, unknown> }[];
}

/** The tools a session of MCP over HTTP lists: the real endpoint, a token of `alice`. */
async function listedOverHttp(service: FakeService) {
  await using dir = tempDir("wats-allowlist-");
  const file = `${dir.path}/mcp_tokens.json`;
  const { token } = await createToken(file, { profile: "alice" });
  const server = serveMcpHttp({
    listen: { hostname: "127.0.0.1", port: 0, hostPort: "127.0.0.1:0", loopback: true },
    service,
    tokens: new TokenBook(file),
    ratePerMinute: 600,
  });
  try {
    const c = new Client({ name: "allowlist", version: "0.0.0" });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    const tools = (await c.listTools()).tools;
    await c.close();
    return tools as { name: string; annotations?: Record<string, unknown> }[];
  } finally {
    await server.close();
  }
}

for (
  const [kind, isRunner, harnesses, http] of [
    ["interactive", false, [], false],
    ["runner", true, [], false],
    ["interactive (with harnesses claude and codex)", false, ["claude", "codex"], false],
    ["runner (with harness claude)", true, ["claude"], false],
    // MCP over HTTP (issue 32): a token's session is an interactive one, never a runner's.
    ["MCP over HTTP", false, [], true],
    ["MCP over HTTP (with harnesses claude and codex)", false, ["claude", "codex"], true],
  ] as const
) {
  Deno.test(`every tool of ${kind} sessions is on the reviewed allowlist with its hints`, async () => {
    const tools = await listed(isRunner, [...harnesses], http);
    // The harness tools are exactly the configured harnesses, nothing else.
    const expected = [
      ...Object.entries(ALLOWLIST).filter(([, r]) => !isRunner || r.runner).map(([name]) => name),
      ...harnesses,
    ].sort();
    assert.deepEqual(
      tools.map((t) => t.name).sort(),
      expected,
      "the tool list changed: review the new tool and add it to ALLOWLIST",
    );
    for (const t of tools) {
      const r = (harnesses as readonly string[]).includes(t.name) ? HARNESS : ALLOWLIST[t.name]!;
      const a = t.annotations ?? {};
      assert.deepEqual(
        {
          readOnlyHint: a.readOnlyHint,
          destructiveHint: a.destructiveHint,
          idempotentHint: a.idempotentHint,
          openWorldHint: a.openWorldHint,
        },
        {
          readOnlyHint: r.readOnlyHint,
          destructiveHint: r.destructiveHint,
          idempotentHint: r.idempotentHint,
          openWorldHint: r.openWorldHint,
        },
        `${t.name}: annotations differ from the reviewed ones`,
      );
    }
  });
}

Deno.test("no tool is named for settings, acknowledgement, resume or halt", async () => {
  const names = [...await listed(false), ...await listed(false, [], true)].map((t) => t.name);
  for (const n of names) {
    assert.doesNotMatch(n, /config|setting|ack|safety|resume|halt|guardian|setup|exec|shell|file/);
  }
});

Deno.test("a runner session cannot reach a tool it was not listed, by calling its name", async () => {
  const svc = new FakeService({ review: true });
  const c = await connect(svc, runner());
  for (const name of ["pending", "approve", "reject", "feed", "status", "answer"]) {
    const r = await call(c, name, { id: "draft-1" });
    assert.equal(r.isError, true, `${name} ran in a runner session`);
  }
  assert.deepEqual(svc.calls, []);
  await c.close();
});
