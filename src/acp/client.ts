/**
 * One ACP agent (a harness) and the client side of its connection
 * (`@agentclientprotocol/sdk` 2.x over a pair of byte streams). The streams
 * come from a `Connect` function (agent_link.ts): by default the harness's process
 * (src/acp/agent_process.ts); in tests, an agent in the same process. What the
 * real agents need, measured (shared/docs/harness_facts.md, "ACP agents"):
 *
 * - Sessions start in a mode that never asks, so the mode is set after
 *   `session/new`, load and resume (`default` for Claude, `read-only` for Codex).
 * - A permission request may arrive before its `tool_call`, without title or
 *   rawInput: the latest `tool_call` of each `toolCallId` is kept and merged in.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import * as acp from "@agentclientprotocol/sdk";
import type { HarnessConfig } from "../config/acp_tables.ts";
import { WatsError } from "../errors.ts";
import { spawnAgentProcess } from "./agent_process.ts";
import type { AgentLink, SpawnOptions } from "./agent_link.ts";

/** A session update as the SDK parses it. */
export type SessionUpdate = acp.SessionNotification["update"];
/** A tool call as the agent last described it. */
export type ToolCallInfo = acp.ToolCallUpdate;

/** What the caller of a prompt does with the agent's messages. */
export interface SessionHandlers {
  onUpdate(update: SessionUpdate): void;
  /** Returns the option to choose, or undefined to answer `cancelled`. */
  onPermission(
    toolCall: ToolCallInfo,
    options: readonly acp.PermissionOption[],
  ): Promise<string | undefined>;
}

/** An ACP agent failed to start or answer; the message says what to check. */
export class AcpError extends WatsError {}

/** The safety options every Claude ACP session gets, whatever the harness's `meta` says. */
export const FORCED_META = {
  claudeCode: {
    options: {
      // Neither ~/.claude nor the repository's .claude/settings.json may allow a tool.
      settingSources: [],
      allowDangerouslySkipPermissions: false,
      // A predicted next prompt for a person at a keyboard: nobody types here, and each one
      // is a model request paid for (measured: one per turn).
      promptSuggestions: false,
      settings: {
        permissions: {
          // Without these, `cat "$(printf %s /abs/out)/secret"` runs unasked (measured).
          blockReadsOutsideWorkingDirectories: true,
          blockWritesOutsideWorkingDirectories: true,
        },
      },
    },
  },
} as const;

/** Merges `b` into `a`, tables recursively; `b` wins. */
export function deepMerge(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const was = out[k];
    out[k] = isTable(was) && isTable(v) ? deepMerge(was, v) : v;
  }
  return out;
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The modes that make an agent ask before acting, by preference. */
const ASKING_MODES = ["default", "read-only"];

/** A running ACP agent. */
export class AcpAgent {
  readonly harness: HarnessConfig;
  readonly #link: AgentLink;
  readonly #conn: acp.ClientConnection;
  readonly #sessions = new Map<string, SessionHandlers>();
  readonly #toolCalls = new Map<string, ToolCallInfo>();
  #init?: acp.InitializeResponse;
  #stopped = false;
  /** Settles when the agent has ended. */
  readonly exited: Promise<Deno.CommandStatus>;

  private constructor(harness: HarnessConfig, link: AgentLink) {
    this.harness = harness;
    this.#link = link;
    this.exited = link.exited;
    const app = acp.client({ name: "wats" })
      .onRequest("session/request_permission", async ({ params }) => {
        const handlers = this.#sessions.get(params.sessionId);
        const known = this.#toolCalls.get(params.toolCall.toolCallId);
        const toolCall = { ...known, ...dropNulls(params.toolCall) } as ToolCallInfo;
        const optionId = handlers
          ? await handlers.onPermission(toolCall, params.options)
          : undefined;
        return {
          outcome: optionId === undefined
            ? { outcome: "cancelled" as const }
            : { outcome: "selected" as const, optionId },
        };
      })
      .onNotification("session/update", ({ params }) => {
        const u = params.update;
        if (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") {
          const before = this.#toolCalls.get(u.toolCallId);
          this.#toolCalls.set(u.toolCallId, { ...before, ...dropNulls(u) } as ToolCallInfo);
        }
        this.#sessions.get(params.sessionId)?.onUpdate(u);
      });
    this.#conn = app.connect(acp.ndJsonStream(link.input, link.output));
  }

  /**
   * Starts the harness in `cwd` (by `opts.connect`, its process by default)
   * and initialises the connection. `env` is the environment it starts from
   * (the harness's `env` is added, `IS_SANDBOX` removed).
   *
   * Requires `--allow-run` on the harness's command.
   */
  static async start(
    harness: HarnessConfig,
    cwd: string,
    env: Record<string, string>,
    opts: SpawnOptions = {},
  ): Promise<AcpAgent> {
    const agent = AcpAgent.spawn(harness, cwd, env, opts);
    await agent.initialize();
    return agent;
  }

  /**
   * Starts the harness (by `opts.connect`, its process by default) without
   * initialising the connection (call `initialize`). `detached`: in a process group of its own (its pid is the
   * group's id), so that a run's whole tree can be killed (src/runner/spawn.ts).
   */
  static spawn(
    harness: HarnessConfig,
    cwd: string,
    env: Record<string, string>,
    opts: SpawnOptions = {},
  ): AcpAgent {
    try {
      return new AcpAgent(harness, (opts.connect ?? spawnAgentProcess)(harness, cwd, env, opts));
    } catch (err) {
      throw new AcpError(
        "acp.spawn",
        `could not start harness ${harness.name} (${harness.command}): ${
          errorMessage(err)
        }; check [harnesses.${harness.name}] command in config.toml`,
        { cause: err },
      );
    }
  }

  /** The `initialize` exchange; stops the agent when it fails. */
  async initialize(): Promise<void> {
    try {
      this.#init = await this.#request(() =>
        this.#conn.agent.request("initialize", {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: {
            fs: { readTextFile: false, writeTextFile: false },
            terminal: false,
          },
          clientInfo: { name: "wats", version: "0" },
        })
      );
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** The agent's name as it gave it in `initialize` (`@agentclientprotocol/claude-agent-acp`). */
  get agentName(): string | undefined {
    return this.#init?.agentInfo?.name;
  }

  /** The process id, for logs. */
  get pid(): number {
    return this.#link.pid;
  }

  /** The last of what the agent wrote to stderr (for error messages). */
  get stderrTail(): string {
    return this.#link.stderrTail();
  }

  /** True once stop() ran or the process ended. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * Opens a session in `cwd`: continues `sessionId` when given and the agent
   * can (load, else resume), else starts a new one. Sets a mode that asks.
   * Returns the session id and whether it continued an old one.
   */
  async openSession(
    cwd: string,
    meta: Record<string, unknown>,
    sessionId?: string,
    mcpServers: acp.McpServer[] = [],
  ): Promise<{ sessionId: string; continued: boolean }> {
    const _meta = deepMerge(meta, FORCED_META);
    const caps = this.#init?.agentCapabilities;
    if (sessionId !== undefined) {
      try {
        let modes: acp.SessionModeState | null | undefined;
        if (caps?.loadSession) {
          // A load replays the history as updates; no handlers are attached yet, so they are dropped.
          modes = (await this.#request(() =>
            this.#conn.agent.request("session/load", { sessionId, cwd, mcpServers, _meta })
          )).modes;
        } else if (caps?.sessionCapabilities?.resume) {
          modes = (await this.#request(() =>
            this.#conn.agent.request("session/resume", { sessionId, cwd, mcpServers, _meta })
          )).modes;
        } else {
          throw new AcpError("acp.no_continue", "the agent can neither load nor resume sessions");
        }
        await this.#setAskingMode(sessionId, modes);
        return { sessionId, continued: true };
      } catch {
        // The session is gone (another process, or the agent forgot it): start a new one.
      }
    }
    const created = await this.#request(() =>
      this.#conn.agent.request("session/new", { cwd, mcpServers, _meta })
    );
    await this.#setAskingMode(created.sessionId, created.modes);
    return { sessionId: created.sessionId, continued: false };
  }

  async #setAskingMode(sessionId: string, modes: acp.SessionModeState | null | undefined) {
    const ids = (modes?.availableModes ?? []).map((m) => m.id);
    const mode = ASKING_MODES.find((m) => ids.includes(m));
    if (mode === undefined || modes?.currentModeId === mode) return;
    await this.#request(() =>
      this.#conn.agent.request("session/set_mode", { sessionId, modeId: mode })
    );
  }

  /** Sends one prompt and waits for its stop reason; updates and requests go to `handlers`. */
  async prompt(
    sessionId: string,
    prompt: acp.ContentBlock[],
    handlers: SessionHandlers,
  ): Promise<acp.StopReason> {
    this.#sessions.set(sessionId, handlers);
    try {
      const r = await this.#request(() =>
        this.#conn.agent.request("session/prompt", { sessionId, prompt })
      );
      return r.stopReason;
    } finally {
      this.#sessions.delete(sessionId);
    }
  }

  /** Asks the agent to stop the current prompt of a session. */
  async cancel(sessionId: string): Promise<void> {
    try {
      await this.#conn.agent.notify("session/cancel", { sessionId });
    } catch {
      // The connection is gone; nothing to cancel.
    }
  }

  /** Ends the agent: closes the connection and its stdin, then SIGTERM, then SIGKILL. */
  async stop(): Promise<void> {
    if (this.#stopped) {
      await this.exited;
      return;
    }
    this.#stopped = true;
    this.#conn.close();
    await this.#link.end();
  }

  /** Runs an ACP request; a failure names the harness and what it wrote to stderr. */
  async #request<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      if (err instanceof AcpError) throw err;
      const detail = err instanceof Error ? err.message : JSON.stringify(err);
      const tail = this.#link.stderrTail().trim().split("\n").slice(-3).join(" | ");
      throw new AcpError(
        "acp.request",
        `harness ${this.harness.name}: ${detail}${tail ? ` (stderr: ${tail})` : ""}`,
        { cause: err },
      );
    }
  }
}

function dropNulls<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(o).filter(([, v]) => v !== null && v !== undefined),
  ) as Partial<T>;
}
