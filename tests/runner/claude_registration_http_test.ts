/**
 * Claude Code's wats entry when MCP over HTTP is on (issue 32): an `http` entry at this node's
 * endpoint, the one `wats setup claude --http` made, is wats's entry and stays; an `http` entry
 * anywhere else, or one carrying more than its header, is replaced by the stdio bridge.
 */

import assert from "node:assert/strict";
import {
  ensureClaudeRegistration,
  personEntry,
  readClaudeEntry,
} from "../../src/runner/runtimes/claude/registration.ts";
import type { CommandOutput } from "../../src/runner/spawn.ts";

const ENTRY = personEntry({ command: "/usr/local/bin/wats", args: [] }, "alice");
const URL = "http://127.0.0.1:7449/mcp";

function fakeClaude() {
  const calls: string[][] = [];
  const run = (program: string, args: string[]): Promise<CommandOutput> => {
    calls.push([program, ...args]);
    return Promise.resolve({ code: 0, stdout: "", stderr: "" });
  };
  return { calls, run };
}

function found(e: Record<string, unknown>) {
  return readClaudeEntry(
    { home: "/h", cwd: "/w" },
    (p) => p === "/h/.claude.json" ? JSON.stringify({ mcpServers: { wats: e } }) : undefined,
  )!;
}

const HTTP = { type: "http", url: URL, headers: { Authorization: "Bearer wats_mcp_x" } };

Deno.test("the runner keeps an http entry at this node's endpoint, and replaces any other", async () => {
  const kept = fakeClaude();
  const out = await ensureClaudeRegistration({
    run: kept.run,
    found: found(HTTP),
    entry: ENTRY,
    httpUrl: URL,
  });
  assert.equal(out.action, "unchanged");
  assert.deepEqual(kept.calls, []);
  for (
    const e of [
      { ...HTTP, url: "http://127.0.0.1:9999/mcp" },
      { ...HTTP, env: { NODE_OPTIONS: "--require /tmp/x.js" } },
    ]
  ) {
    const c = fakeClaude();
    const r = await ensureClaudeRegistration({
      run: c.run,
      found: found(e),
      entry: ENTRY,
      httpUrl: URL,
    });
    assert.equal(r.action, "replaced", JSON.stringify(e));
  }
  // With mcp.listen off, an http entry is not wats's.
  const off = fakeClaude();
  assert.equal(
    (await ensureClaudeRegistration({ run: off.run, found: found(HTTP), entry: ENTRY })).action,
    "replaced",
  );
});

Deno.test("`--http` registers the endpoint with its token header, replacing the stdio entry", async () => {
  const c = fakeClaude();
  const r = await ensureClaudeRegistration({
    run: c.run,
    found: found({ command: "/usr/local/bin/wats", args: ["mcp", "--profile", "alice"] }),
    entry: ENTRY,
    http: { url: URL, token: "wats_mcp_y" },
  });
  assert.equal(r.action, "replaced");
  assert.deepEqual(c.calls.at(-1), [
    "claude",
    "mcp",
    "add",
    "--transport",
    "http",
    "-s",
    "user",
    "wats",
    URL,
    "--header",
    "Authorization: Bearer wats_mcp_y",
  ]);
});
