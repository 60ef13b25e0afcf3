/**
 * Helpers for end-to-end tests of a swarm: MCP clients through real
 * `wats mcp` processes, daemons with the runner on against the mock model,
 * and the mock's usual script (answer the newest event the prompt names).
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { denoDir, type RunningWats, startWats, watsCommand } from "./cli.ts";
import { CLIS_DIR } from "./clis.ts";
import {
  hasTool,
  type MessagesRequest,
  type MockAnthropic,
  startMockAnthropic,
  text,
  textOf,
  toolResultFor,
  toolUse,
} from "./mock_anthropic.ts";
import {
  callOutputFor,
  functionCall,
  hasTool as codexHasTool,
  type MockOpenAI,
  type ResponsesRequest,
  startMockOpenAI,
  text as codexText,
  userText,
} from "./mock_openai.ts";

/** The arguments that start `wats mcp` for `profile` on `dataDir` (after the program). */
export function mcpArgs(dataDir: string, profile: string): string[] {
  const [, ...rest] = watsCommand();
  return [...rest, "--data-dir", dataDir, "mcp", "--profile", profile];
}

/** The environment of a `wats mcp` child: a throwaway HOME, the shared Deno cache. */
export function mcpEnv(home: string): Record<string, string> {
  return {
    HOME: home,
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    DENO_DIR: denoDir(),
    NO_COLOR: "1",
  };
}

/** An MCP SDK client speaking through a real `wats mcp --profile <profile>` process. */
export async function mcpClient(dataDir: string, profile: string, home: string): Promise<Client> {
  const client = new Client({ name: `test-${profile}`, version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: watsCommand()[0],
      args: mcpArgs(dataDir, profile),
      env: mcpEnv(home),
      stderr: "pipe",
    }),
  );
  return client;
}

/** Calls a tool, fails the test on an `isError` result, and returns its text. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<string> {
  const r = await client.callTool({ name, arguments: args });
  const out = (r.content as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");
  assert.ok(!r.isError, `${name} failed: ${out}`);
  return out;
}

/** The first post id (64 hex) in a tool's answer. */
export function idIn(s: string): string {
  const m = s.match(/\b([0-9a-f]{64})\b/);
  assert.ok(m, `no post id in: ${s}`);
  return m[1]!;
}

/** Polls `check` until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean,
  timeoutMs = 60_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The environment of a daemon whose runner drives the real Claude CLI against `mock`. */
export function agentEnv(
  mock: MockAnthropic,
  settings: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
    ANTHROPIC_BASE_URL: mock.url,
    ANTHROPIC_API_KEY: "test-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    WATS_AGENT_EVERY: "0",
    WATS_AGENT_HEARTBEAT: "0",
    ...settings,
  };
}

/**
 * Starts `wats node --agent claude --agent-profile helper` on `dataDir`, with
 * settings as WATS_* variables. `agent.ignore_local` is off: in these tests the
 * askers are profiles of the same node.
 */
export async function startAgentNode(
  dataDir: string,
  mock: MockAnthropic,
  settings: Record<string, string> = {},
): Promise<RunningWats> {
  const node = startWats([
    "--data-dir",
    dataDir,
    "node",
    "--agent",
    "claude",
    "--agent-profile",
    "helper",
  ], {
    env: agentEnv(mock, { WATS_AGENT_IGNORE_LOCAL: "false", ...settings }),
  });
  await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
  return node;
}

/**
 * The ids of the events a wake prompt's "New events (n):" list names, in
 * order: only those woke the run. Other lists of the prompt name post ids in
 * the same `- <id>: ` shape (asks other agents claimed, feedback), which the
 * run was not woken for.
 */
export function newEventIds(prompt: string): string[] {
  const list = /^New events \(\d+\):\n((?:- .*(?:\n|$))*)/m.exec(prompt)?.[1] ?? "";
  return [...list.matchAll(/^- ([0-9a-f]{64}): /gm)].map((m) => m[1]!);
}

/** The ids of the events a run's prompt lists as new, in order. */
export function eventIds(req: MessagesRequest): string[] {
  return newEventIds(textOf(req.messages[0]?.content));
}

/**
 * A mock model that answers the newest event it was woken for with
 * `Use journald (<number of events>).`, then says "Answered.". With `delayMs`
 * the answer hangs that long (timeouts, halts).
 */
export function answeringMock(delayMs?: number): MockAnthropic {
  return startMockAnthropic({
    rules: [
      { when: toolResultFor("mcp__wats__post"), reply: text("Answered.") },
      {
        when: hasTool("mcp__wats__post"),
        reply: (req) => {
          const ids = eventIds(req);
          if (ids.length === 0) return text("Nothing new.");
          return {
            ...toolUse("mcp__wats__post", {
              kind: "answer",
              parent: ids.at(-1),
              text: `Use journald (${ids.length}).`,
            }),
            ...(delayMs !== undefined ? { delayMs } : {}),
          };
        },
      },
    ],
  });
}

/** The ids of the events a Codex wake prompt (a Responses API request) lists, in order. */
export function codexEventIds(req: ResponsesRequest): string[] {
  return newEventIds(userText(req));
}

/**
 * The Responses API twin of {@linkcode answeringMock}, for Codex: answers the
 * newest event it was woken for with `say(<number of events>)` (`Use journald.`
 * when unset), then says "Answered.".
 */
export function answeringCodexMock(
  say: (events: number) => string = () => "Use journald.",
): MockOpenAI {
  return startMockOpenAI({
    rules: [
      { when: callOutputFor("mcp__wats", "post"), reply: codexText("Answered.") },
      {
        when: codexHasTool("mcp__wats", "post"),
        reply: (req) => {
          const ids = codexEventIds(req);
          if (ids.length === 0) return codexText("Nothing new.");
          return functionCall("mcp__wats", "post", {
            kind: "answer",
            parent: ids.at(-1),
            text: say(ids.length),
          });
        },
      },
    ],
  });
}
