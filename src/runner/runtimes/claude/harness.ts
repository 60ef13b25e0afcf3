/**
 * The Claude Code harness (docs/decisions/runner.md, "What a run is"; docs/harness_facts.md).
 *
 * A run is `claude -p --output-format stream-json --verbose` with a generated
 * MCP config holding only the wats server (`wats mcp --profile <agent profile>`,
 * with the run's token), `--strict-mcp-config`, `--allowedTools "mcp__wats__*"`,
 * and `--tools ""` (without it the built-in tools stay available), plus
 * `--setting-sources ""` so the user's own settings are not merged in. The
 * system prompt is wats's own (src/prompts.ts), written per run beside the MCP
 * config: `--system-prompt-file` when the agent is locked (Claude Code's
 * coding-assistant prompt, about 5,500 characters, is about tools a locked agent
 * does not have), `--append-system-prompt-file` when it has built-in tools
 * (workspace, inherit), whose use that prompt explains. Claude Code 2.1.197 still
 * adds one line of its own ("You are a Claude agent, built on Anthropic's Claude
 * Agent SDK."), a billing header and the date. The prompt goes on stdin, which is closed (the CLI waits for EOF). The
 * environment is inherited, not cleared: ANTHROPIC_API_KEY is used when set,
 * otherwise the user's Claude login. Tool search is turned off in it
 * (`NO_TOOL_SEARCH_ENV`), and the wait for the wats MCP server is long
 * (`MCP_CONNECT_WAIT_ENV`).
 *
 * Output: stream-json, one object a line. Success is `is_error` of the `result`
 * event, never its `subtype` (an API error is `subtype: "success"`,
 * `is_error: true`). An MCP server with status `failed` in `system/init` fails
 * the run even though the CLI reports success. Cost is `total_cost_usd`, turns
 * `num_turns`; per-message usage is never added up (one message comes as one
 * event per content block, each with the message's usage).
 *
 * @module
 */

import { ConfigError } from "../../../errors.ts";
import { MCP_SERVER_NAME, RUN_TOKEN_ENV } from "../../../contracts/session.ts";
import { runSystemPrompt } from "../../../prompts.ts";
import type {
  Harness,
  HarnessCommand,
  OutputParser,
  RunContext,
  RunEvent,
  RunResult,
} from "../../harness.ts";

/** Options of the Claude harness. */
export interface ClaudeHarnessOptions {
  /** The program; `claude` (found on PATH) when unset. */
  program?: string;
}

/**
 * `agent.max_turns` as the CLI gets it. The CLI accepts anything for
 * `--max-turns` (even `abc`), so wats checks it.
 *
 * @throws {ConfigError} code `agent.max_turns` when it is not a positive whole number.
 */
export function validateMaxTurns(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new ConfigError(
      "agent.max_turns",
      `agent.max_turns is ${n}: it must be a whole number ≥ 1 (e.g. wats config set agent.max_turns 10)`,
    );
  }
  return n;
}

/** `--max-budget-usd`'s value: rounded down to 1/100 of a cent, so it never exceeds what is left. */
export function formatBudget(usd: number): string {
  if (!Number.isFinite(usd) || usd <= 0) return "0";
  return (Math.floor(usd * 10_000 + 1e-6) / 10_000).toFixed(4);
}

/** The generated MCP config of a run: the wats server only, speaking as the agent profile. */
export function mcpConfig(ctx: RunContext): { mcpServers: Record<string, unknown> } {
  return {
    mcpServers: {
      [MCP_SERVER_NAME]: {
        command: ctx.selfCommand.command,
        args: [
          ...ctx.selfCommand.args,
          "mcp",
          "--profile",
          ctx.agentProfile,
          "--data-dir",
          ctx.dataDir,
        ],
        env: ctx.token !== undefined ? { [RUN_TOKEN_ENV]: ctx.token } : {},
      },
    },
  };
}

/** Where a run's MCP config is written (it holds the run token: mode 0600, removed after). */
export function mcpConfigPath(ctx: RunContext): string {
  return `${ctx.configDir}/${ctx.runId}.mcp.json`;
}

/** Where a run's system prompt is written (beside its MCP config; removed after). */
export function systemPromptPath(ctx: RunContext): string {
  return `${ctx.configDir}/${ctx.runId}.system.md`;
}

/**
 * Locked access: only the MCP tools exist (`--allowedTools` alone leaves the
 * built-in tools available), the user's settings are not merged in, and no
 * MCP server but the generated one loads (docs/harness_facts.md).
 */
export const LOCKED_ARGS: readonly string[] = [
  "--tools",
  "",
  "--setting-sources",
  "",
  "--strict-mcp-config",
];

/**
 * True when the access flags leave the agent no built-in tool (`--tools ""`):
 * then wats's system prompt replaces Claude Code's, else it is appended.
 */
export function hasNoBuiltinTools(accessArgs: readonly string[]): boolean {
  const i = accessArgs.indexOf("--tools");
  return i >= 0 && accessArgs[i + 1] === "";
}

/** The argument list of a run, in order. */
export function claudeArgs(ctx: RunContext): string[] {
  const access = ctx.access?.args ?? LOCKED_ARGS;
  const args = [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--mcp-config",
    mcpConfigPath(ctx),
    "--allowedTools",
    `mcp__${MCP_SERVER_NAME}__*`,
    ...(ctx.access?.allowedTools ?? []),
    ...access,
    hasNoBuiltinTools(access) ? "--system-prompt-file" : "--append-system-prompt-file",
    systemPromptPath(ctx),
    "--max-turns",
    String(validateMaxTurns(ctx.maxTurns)),
    "--max-budget-usd",
    formatBudget(ctx.maxBudgetUsd),
  ];
  if (ctx.settingsFile !== undefined) args.push("--settings", ctx.settingsFile);
  return args;
}

/**
 * Claude Code's tool search turned off. While it is on, claude-agent-acp
 * 0.101.0 offers a `DeferredToolPlaceholder` tool in every model request
 * besides the ones the session was given (measured), and Claude Code may defer
 * MCP tools behind a search when they are many: either way a locked run would
 * not offer exactly the wats tools (docs/acp.md, docs/runner.md).
 */
export const NO_TOOL_SEARCH_ENV: Readonly<Record<string, string>> = { ENABLE_TOOL_SEARCH: "false" };

/**
 * Makes Claude Code wait for the wats MCP server before its first model request. `wats mcp` is a
 * Deno program that connects to the daemon and on a loaded machine takes seconds; without the wait
 * the run has no wats tool. A server that fails still fails at once. What bounds the wait moved
 * between releases (docs/harness_facts.md), so all three variables are set:
 *
 * - 2.1.197 starts `--mcp-config` servers without waiting in `-p` mode unless
 *   `MCP_CONNECTION_NONBLOCKING` is a false value, and then waits `MCP_CONNECT_TIMEOUT_MS` (read in
 *   its code; 7 of 8 bare runs came up `pending` without the first variable, 0 of 8 with it).
 * - 2.1.332 waits in `-p` mode either way, for `MCP_TIMEOUT` (30 s by default);
 *   `MCP_CONNECT_TIMEOUT_MS` no longer lengthens it (measured against the mock).
 */
export const MCP_CONNECT_WAIT_ENV: Readonly<Record<string, string>> = {
  MCP_CONNECTION_NONBLOCKING: "false",
  MCP_CONNECT_TIMEOUT_MS: "60000",
  MCP_TIMEOUT: "60000",
};

/** The Claude Code harness. */
export function claudeHarness(opts: ClaudeHarnessOptions = {}): Harness {
  const program = opts.program ?? "claude";
  return {
    name: "claude",
    command(ctx: RunContext): HarnessCommand {
      const args = claudeArgs(ctx);
      return {
        program,
        args,
        env: { ...NO_TOOL_SEARCH_ENV, ...MCP_CONNECT_WAIT_ENV },
        cwd: ctx.cwd,
        stdin: ctx.prompt,
        files: [{
          path: mcpConfigPath(ctx),
          text: JSON.stringify(mcpConfig(ctx), null, 2) + "\n",
          mode: 0o600,
        }, {
          path: systemPromptPath(ctx),
          text: runSystemPrompt(),
          mode: 0o600,
        }],
      };
    },
    parser: () => new ClaudeStreamParser(),
  };
}

type Json = Record<string, unknown>;

/** Reads `--output-format stream-json` output. */
export class ClaudeStreamParser implements OutputParser {
  #servers: { name: string; status: string }[] = [];
  #result: Json | undefined;

  push(line: string): RunEvent[] {
    const e = parseObject(line);
    if (e === undefined) return [];
    switch (e.type) {
      case "system":
        return e.subtype === "init" ? this.#init(e) : [];
      case "assistant":
        return assistantEvents(e);
      case "user":
        return toolResults(e);
      case "result":
        return this.#resultEvents(e);
      default:
        return [];
    }
  }

  finish(exitCode: number | null): RunResult {
    const r = this.#result;
    // Only "connected" means the agent had its tools: a server still starting
    // shows "pending" and the run goes on without it, reporting success.
    const failed = this.#servers.filter((s) => s.status !== "connected");
    const costUsd = r && typeof r.total_cost_usd === "number" ? r.total_cost_usd : undefined;
    const turns = r && typeof r.num_turns === "number" ? r.num_turns : undefined;
    const extra = {
      ...(costUsd !== undefined ? { costUsd } : {}),
      ...(turns !== undefined ? { turns } : {}),
    };
    if (failed.length > 0) {
      // "pending": it was still starting when the run began (a slow start, e.g. a loaded
      // machine), not broken; only "failed" points at the bridge itself.
      const broken = failed.some((s) => s.status !== "pending");
      return {
        ok: false,
        error: `MCP server ${
          failed.map((s) => `${s.name} (status "${s.status}" in init)`).join(", ")
        } ${broken ? "did not start" : "was not connected in time"}: the agent had no wats ` +
          `tools, so the run could not act and its events are tried again later ` +
          `(docs/runner.md, "A run that could not act")` +
          (broken ? `; if it keeps failing, check that \`wats mcp\` runs` : ""),
        ...extra,
      };
    }
    if (r === undefined) {
      return {
        ok: false,
        error: exitCode === null
          ? "the CLI was killed before it reported a result"
          : `the CLI exited with code ${exitCode} without reporting a result`,
      };
    }
    if (r.is_error === false) return { ok: true, ...extra };
    return { ok: false, error: resultError(r), ...extra };
  }

  #init(e: Json): RunEvent[] {
    const servers = Array.isArray(e.mcp_servers) ? e.mcp_servers as Json[] : [];
    this.#servers = servers.map((s) => ({ name: String(s.name), status: String(s.status) }));
    const tools = Array.isArray(e.tools) ? (e.tools as unknown[]).map(String) : [];
    return [{ type: "init", mcpServers: this.#servers, tools }];
  }

  #resultEvents(e: Json): RunEvent[] {
    this.#result = e;
    const out: RunEvent[] = [];
    if (typeof e.num_turns === "number") out.push({ type: "turns", turns: e.num_turns });
    if (typeof e.total_cost_usd === "number") out.push({ type: "cost", usd: e.total_cost_usd });
    if (e.is_error !== false) out.push({ type: "error", message: resultError(e) });
    return out;
  }
}

function resultError(r: Json): string {
  if (Array.isArray(r.errors) && r.errors.length > 0) return r.errors.map(String).join("; ");
  if (typeof r.result === "string" && r.result !== "") return r.result;
  return `the run ended with ${String(r.subtype ?? "an error")}`;
}

function assistantEvents(e: Json): RunEvent[] {
  const out: RunEvent[] = [];
  for (const b of contentOf(e)) {
    if (b.type === "text" && typeof b.text === "string") out.push({ type: "text", text: b.text });
    else if (b.type === "tool_use") {
      out.push({
        type: "tool_call",
        id: typeof b.id === "string" ? b.id : undefined,
        name: String(b.name),
        args: b.input ?? {},
      });
    }
  }
  return out;
}

function toolResults(e: Json): RunEvent[] {
  const out: RunEvent[] = [];
  for (const b of contentOf(e)) {
    if (b.type !== "tool_result") continue;
    out.push({
      type: "tool_result",
      id: typeof b.tool_use_id === "string" ? b.tool_use_id : undefined,
      text: textOf(b.content),
      isError: b.is_error === true,
    });
  }
  return out;
}

function contentOf(e: Json): Json[] {
  const m = e.message as Json | undefined;
  return m && Array.isArray(m.content) ? m.content as Json[] : [];
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Json[]).map((c) => typeof c.text === "string" ? c.text : JSON.stringify(c))
    .join("\n");
}

function parseObject(line: string): Json | undefined {
  const t = line.trim();
  if (!t.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(t);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
