/**
 * The exact tool list a locked heartbeat session offers the model: the wats
 * tools of a runner session (src/mcp/tools.ts) and nothing else, named as each
 * runtime names MCP tools. Tests compare it whole, so a tool that slips in (a
 * built-in, a placeholder) fails them, not only the few names they thought of.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ALL_TOOLS } from "../../src/mcp/tools.ts";
import { MCP_SERVER_NAME } from "../../src/contracts/session.ts";

/**
 * The wats tools a runner session gets, plus one tool per enabled coding-agent
 * harness (`harnessTools`), sorted: `mcp__wats__ask` for Claude Code (`__`),
 * `mcp__wats/ask` for Codex (`/`).
 */
export function lockedToolNames(separator: "__" | "/", harnessTools: string[] = []): string[] {
  return [...ALL_TOOLS.filter((t) => !t.interactiveOnly).map((t) => t.name), ...harnessTools]
    .map((name) => `mcp__${MCP_SERVER_NAME}${separator}${name}`)
    .sort();
}

/**
 * Every model request that offered tools (`offered`: each request's tool
 * names) offered exactly `expected`, and there was at least one.
 */
export function assertOfferedExactly(offered: string[][], expected: string[]): void {
  const lists = offered.filter((names) => names.length > 0);
  assert.ok(lists.length > 0, "no model request offered any tool");
  for (const names of lists) assert.deepEqual([...names].sort(), expected);
}
