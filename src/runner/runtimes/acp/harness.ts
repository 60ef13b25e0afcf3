/**
 * The heartbeat agent over ACP (`agent.runtime = "acp"`, `agent.harness =
 * NAME`; docs/acp.md "The heartbeat agent over ACP"): a run starts the
 * harness's ACP agent in a process group of its own, opens the session of the
 * run's thread (loaded when that thread woke it before, else new) with the wats
 * MCP server (`wats mcp` with the run's token) in `session/new`, sets the mode
 * that asks, sends the wake prompt and ends the agent when the prompt ends.
 *
 * The run is held like a CLI run (execute.ts): the process group is recorded,
 * killed on timeout, stop or halt; the transcript holds one JSON line per
 * session update, decision and result (acp_parser.ts).
 *
 * Locked (`agent.access = locked`): the session gets no built-in tool
 * (`tools: []`) and wats's system prompt; only `mcp__wats__*` is allowed, and
 * every other permission request is refused. Workspace: the built-in tools of
 * `agent.tools`, in `agent.workdir`; each request is judged by the wats policy
 * as a coding agent's is, with the workspace as its worktree, and `ask` refuses
 * (a heartbeat run is not held for a person). Only agents that take Claude's
 * options (`_meta.claudeCode`) can be held so: others are refused at start.
 *
 * @module
 */

import { errorMessage } from "../../../error_message.ts";
import type * as acp from "@agentclientprotocol/sdk";
import { AcpAgent, deepMerge, type SessionUpdate, type ToolCallInfo } from "../../../acp/client.ts";
import { chooseOption, decide, type Policy, resolveLocation } from "../../../acp/policy.ts";
import { commandOf } from "../../../acp/shell_split.ts";
import type { HarnessConfig } from "../../../config/acp_tables.ts";
import { HarnessError } from "../../../errors.ts";
import { MCP_SERVER_NAME } from "../../../contracts/session.ts";
import { runSystemPrompt } from "../../../prompts.ts";
import type {
  Harness,
  HarnessCommand,
  ProcessStatus,
  RunContext,
  RunningProcess,
} from "../../harness.ts";
import { signalProcessGroup } from "../../spawn.ts";
import { ACP_RUNTIME, type AcpRunLine, AcpRunParser } from "./parser.ts";
import { mcpConfig, NO_TOOL_SEARCH_ENV, validateMaxTurns } from "../claude/harness.ts";

/** The agents wats can lock: they take Claude's options from `_meta.claudeCode`. */
export const LOCKABLE_AGENTS: ReadonlySet<string> = new Set([
  "@agentclientprotocol/claude-agent-acp",
  "@zed-industries/claude-code-acp",
]);

/** What the ACP runtime is given. */
export interface AcpRuntimeOptions {
  harness: HarnessConfig;
  /** The environment the agent starts from (the harness's `env` is added, `WATS_*` and `IS_SANDBOX` dropped). */
  env: Record<string, string>;
  /** Where each thread's session is kept (`<data>/agent`). */
  agentDir: string;
  /** `locked`: no built-in tool; else the built-in tools the session gets (`agent.tools`). */
  tools: "locked" | string[];
  /** The node's policy (workspace access judges requests with it). */
  policy: Policy;
  /** Between SIGTERM and SIGKILL of a killed run; 5 s when unset. */
  graceMs?: number;
  /** Wraps the agent's command in the run's OS sandbox (src/safety/sandboxer.ts); unset: none. */
  wrap?: (program: string, args: readonly string[]) => { program: string; args: string[] };
}

/** Where each thread's session is kept, with the cost the agent last reported for it. */
export interface ThreadSession {
  session: string;
  /** The harness that holds it: a session of another harness is not continued. */
  harness: string;
  /** The session's cumulative cost (USD) at the end of its last run. */
  cost?: number;
  /** When a run last used it (ms): the least recently used go first past the cap. */
  used_at?: number;
}

/** How many threads' sessions are kept: past it, the least recently used are forgotten. */
export const MAX_THREAD_SESSIONS = 500;

/** The thread sessions file: `{ [thread]: ThreadSession }`. */
export function threadSessionsPath(agentDir: string): string {
  return `${agentDir}/acp_threads.json`;
}

/** Reads the thread sessions (an unreadable file reads as none: new sessions start). */
export function readThreadSessions(agentDir: string): Record<string, ThreadSession> {
  try {
    const v = JSON.parse(Deno.readTextFileSync(threadSessionsPath(agentDir)));
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/**
 * Keeps `s` as the session of `thread`. The file holds at most
 * {@linkcode MAX_THREAD_SESSIONS} threads: every thread that wakes the agent
 * adds one, so without a cap it would grow for as long as the node runs.
 */
export function saveThreadSession(agentDir: string, thread: string, s: ThreadSession): void {
  const all = readThreadSessions(agentDir);
  delete all[thread];
  all[thread] = { ...s, used_at: s.used_at ?? Date.now() };
  const threads = Object.keys(all);
  if (threads.length > MAX_THREAD_SESSIONS) {
    const byUse = threads.sort((a, b) => (all[a]?.used_at ?? 0) - (all[b]?.used_at ?? 0));
    for (const t of byUse.slice(0, threads.length - MAX_THREAD_SESSIONS)) delete all[t];
  }
  const path = threadSessionsPath(agentDir);
  Deno.writeTextFileSync(`${path}.tmp`, JSON.stringify(all, null, 1) + "\n", { mode: 0o600 });
  Deno.renameSync(`${path}.tmp`, path);
}

/** The ACP runtime as a runner harness. */
export function acpRuntimeHarness(o: AcpRuntimeOptions): Harness {
  return {
    name: ACP_RUNTIME,
    command(ctx: RunContext): HarnessCommand {
      validateMaxTurns(ctx.maxTurns);
      return {
        program: o.harness.command,
        args: o.harness.args,
        env: {},
        cwd: ctx.cwd,
        stdin: ctx.prompt,
        files: [],
      };
    },
    parser: () => new AcpRunParser(),
    launch: (_cmd, ctx) => launch(o, ctx),
  };
}

/** The `_meta` of a heartbeat session (client.ts adds its forced safety options over it). */
export function heartbeatMeta(o: AcpRuntimeOptions, ctx: RunContext): Record<string, unknown> {
  const locked = o.tools === "locked";
  return deepMerge(o.harness.meta, {
    // Locked: wats's prompt replaces Claude Code's, which is about tools it does not have.
    systemPrompt: locked ? runSystemPrompt() : { append: runSystemPrompt() },
    claudeCode: {
      options: {
        tools: locked ? [] : o.tools,
        allowedTools: [`mcp__${MCP_SERVER_NAME}__*`],
        maxTurns: ctx.maxTurns,
        maxBudgetUsd: Math.max(0, ctx.maxBudgetUsd),
      },
    },
  });
}

/** The wats MCP server of a run, as `session/new` takes it. */
export function watsServer(ctx: RunContext): acp.McpServer {
  const s = mcpConfig(ctx).mcpServers[MCP_SERVER_NAME] as {
    command: string;
    args: string[];
    env: Record<string, string>;
  };
  return {
    name: MCP_SERVER_NAME,
    command: s.command,
    args: s.args,
    env: Object.entries(s.env).map(([name, value]) => ({ name, value })),
  };
}

/**
 * Decides one permission request of the heartbeat session: the wats tools are
 * allowed; locked, everything else is refused; workspace, the policy judges
 * it with the working directory as the worktree, and `ask` refuses.
 */
export function decideHeartbeat(
  o: Pick<AcpRuntimeOptions, "harness" | "tools" | "policy">,
  cwd: string,
  toolCall: ToolCallInfo,
): { allow: boolean; request: string; locations: string[]; verdict: string; reason: string } {
  const kind = toolCall.kind ?? "other";
  const request = `${o.harness.name}/${kind}`;
  const locations = (toolCall.locations ?? []).map((l) =>
    resolveLocation(l.path, cwd, o.policy.home)
  );
  const meta = toolCall._meta as { claudeCode?: { toolName?: unknown } } | undefined;
  const toolName = meta?.claudeCode?.toolName;
  if (typeof toolName === "string" && toolName.startsWith(`mcp__${MCP_SERVER_NAME}__`)) {
    return {
      allow: true,
      request,
      locations,
      verdict: "allow",
      reason: `${toolName} is a wats tool`,
    };
  }
  if (o.tools === "locked") {
    return {
      allow: false,
      request,
      locations,
      verdict: "deny",
      reason: `${request} is refused: the agent is locked (agent.access = locked) ` +
        "and has only the wats tools",
    };
  }
  const d = decide(o.policy, {
    harness: o.harness.name,
    kind,
    locations,
    worktree: cwd,
    command: commandOf(toolCall.rawInput),
  });
  if (d.verdict === "ask") {
    return {
      allow: false,
      request,
      locations,
      verdict: "ask",
      reason: `${d.reason}; a heartbeat run is not held for a person, so it was refused`,
    };
  }
  return { allow: d.verdict === "allow", request, locations, ...d };
}

/**
 * The harness as a heartbeat run starts it: its `env` with Claude Code's tool
 * search off, set over the harness's own `env` (the heartbeat's tool list is
 * wats's to decide).
 */
export function heartbeatHarness(harness: HarnessConfig): HarnessConfig {
  return { ...harness, env: { ...harness.env, ...NO_TOOL_SEARCH_ENV } };
}

/** One run: the agent in its own process group, driven over ACP, its lines as output. */
function launch(o: AcpRuntimeOptions, ctx: RunContext): RunningProcess {
  let agent: AcpAgent;
  try {
    agent = AcpAgent.spawn(heartbeatHarness(o.harness), ctx.cwd, o.env, {
      detached: true,
      command: o.wrap?.(o.harness.command, o.harness.args),
    });
  } catch (err) {
    throw new HarnessError(
      "harness.spawn",
      `${errorMessage(err)} (agent.harness = "${o.harness.name}")`,
      { cause: err },
    );
  }
  const pid = agent.pid;
  const out = new LineQueue();
  const emit = (line: AcpRunLine) => out.push(JSON.stringify(line));
  let killing = false;
  const graceMs = o.graceMs ?? 5000;

  const flow = async () => {
    await agent.initialize();
    const thread = ctx.thread;
    const saved = thread !== undefined ? readThreadSessions(o.agentDir)[thread] : undefined;
    const before = saved?.harness === o.harness.name ? saved : undefined;
    const opened = await agent.openSession(
      ctx.cwd,
      heartbeatMeta(o, ctx),
      before?.session,
      [watsServer(ctx)],
    );
    emit({
      type: "acp_session",
      harness: o.harness.name,
      session: opened.sessionId,
      continued: opened.continued,
      ...(thread !== undefined ? { thread } : {}),
    });
    // The session's cost as it was before this run: a loaded session reports its
    // total since it began (the agent restores it from its transcript).
    const baseline = opened.continued ? before?.cost ?? 0 : 0;
    const keep = (cost?: number) => {
      if (thread === undefined) return;
      saveThreadSession(o.agentDir, thread, {
        session: opened.sessionId,
        harness: o.harness.name,
        ...(cost !== undefined ? { cost } : baseline > 0 ? { cost: baseline } : {}),
      });
    };
    keep();
    let cost: number | undefined;
    const stopReason = await agent.prompt(opened.sessionId, [{ type: "text", text: ctx.prompt }], {
      onUpdate: (u: SessionUpdate) => {
        if (u.sessionUpdate === "usage_update" && u.cost?.currency === "USD") {
          cost = u.cost.amount;
        }
        // The agent's slash commands and skills (kilobytes of descriptions, each run): not
        // something the run did.
        if (u.sessionUpdate === "available_commands_update") return;
        emit({ type: "acp_update", update: u as unknown as Record<string, unknown> });
      },
      onPermission: (toolCall, options) => {
        const d = decideHeartbeat(o, ctx.cwd, toolCall);
        const chosen = chooseOption(options, d.allow);
        emit({
          type: "acp_permission",
          request: d.request,
          locations: d.locations,
          verdict: d.verdict,
          answer: chosen?.kind ?? "cancelled",
          reason: d.reason,
        });
        return Promise.resolve(chosen?.optionId);
      },
    });
    if (cost !== undefined) keep(cost);
    const spent = cost === undefined ? undefined : cost >= baseline ? cost - baseline : cost;
    emit({
      type: "acp_result",
      stop_reason: stopReason,
      ...(spent !== undefined ? { cost_usd: spent } : {}),
    });
  };
  const drive = async () => {
    // A request in flight when the agent dies may never settle: its exit ends the run.
    const exited = agent.exited.then((s) => {
      throw new Error(`the agent exited (${s.signal ?? `code ${s.code}`}) before the prompt ended`);
    });
    try {
      await Promise.race([flow(), exited]);
    } catch (err) {
      if (!killing) emit({ type: "acp_error", message: errorMessage(err) });
    } finally {
      exited.catch(() => {});
      await agent.stop();
      out.end();
    }
  };
  const driven = drive();
  // Whatever the agent started dies with the run: the run ends once that was sent.
  const status: Promise<ProcessStatus> = Promise.all([driven, agent.exited]).then(
    async ([, s]) => {
      await signalProcessGroup(pid, "SIGKILL");
      return { code: s.signal === null ? s.code : null, signal: s.signal };
    },
  );
  return {
    pid,
    lines: out,
    status,
    stderrTail: () => agent.stderrTail,
    kill() {
      if (killing) return;
      killing = true;
      signalProcessGroup(pid, "SIGTERM");
      const t = setTimeout(() => signalProcessGroup(pid, "SIGKILL"), graceMs);
      status.then(() => clearTimeout(t));
    },
  };
}

/** Lines pushed by the driver, read once by the runner. */
class LineQueue implements AsyncIterable<string> {
  #lines: string[] = [];
  #ended = false;
  #wake: (() => void) | undefined;

  push(line: string): void {
    this.#lines.push(line);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    while (true) {
      const line = this.#lines.shift();
      if (line !== undefined) {
        yield line;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((r) => this.#wake = r);
      this.#wake = undefined;
    }
  }
}
