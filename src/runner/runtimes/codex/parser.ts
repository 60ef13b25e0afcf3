/**
 * Reads `codex exec --json` output into run events and a verdict (docs/codex.md, "What a run
 * is"). Its own file, apart from the harness that builds the command, so that `wats agent logs`
 * and the dashboard can render a Codex transcript without importing what spawns Codex (as
 * acp_parser.ts is for ACP).
 *
 * @module
 */

import type { OutputParser, RunEvent, RunResult } from "../../harness.ts";

/**
 * Event items that only exist when the lock is broken: a shell command, a patch, a sub-agent, a
 * web search. A locked run offers none of these tools.
 */
export const LOCK_BREAKING_ITEMS: readonly string[] = [
  "command_execution",
  "file_change",
  "collab_tool_call",
  "web_search",
];

type Json = Record<string, unknown>;

/**
 * Reads `codex exec --json` output. Turns are the model replies it implies:
 * one per completed tool call plus one per completed turn (a run that answers
 * once counts 2, as Claude Code's `num_turns` does).
 */
export class CodexJsonParser implements OutputParser {
  #started = false;
  #completedTurns = 0;
  #toolCalls = 0;
  #failed: string | undefined;
  #lastError: string | undefined;
  #announced = new Set<string>();
  #lockBroken: string | undefined;

  push(line: string): RunEvent[] {
    const e = parseObject(line);
    if (e === undefined) return [];
    switch (e.type) {
      case "thread.started":
        this.#started = true;
        return [];
      case "item.started":
        return this.#itemStarted(objectOf(e.item));
      case "item.completed":
        return this.#itemCompleted(objectOf(e.item));
      case "turn.completed":
        this.#completedTurns++;
        return [{ type: "turns", turns: this.#turns() }];
      case "turn.failed": {
        const message = messageOf(e.error) ?? this.#lastError ?? "the turn failed";
        this.#failed = message;
        return [{ type: "error", message }];
      }
      case "error":
        // Alone it is a warning (a retry); turn.failed follows when it is not.
        this.#lastError = typeof e.message === "string" ? e.message : this.#lastError;
        return [];
      default:
        return [];
    }
  }

  finish(exitCode: number | null): RunResult {
    const turns = this.#turns();
    const extra = this.#started ? { turns } : {};
    if (this.#lockBroken !== undefined) return { ok: false, error: this.#lockBroken, ...extra };
    if (this.#failed !== undefined) {
      return { ok: false, error: `the model turn failed: ${this.#failed}`, ...extra };
    }
    if (exitCode === null) return { ok: false, error: "codex was killed before it finished" };
    if (!this.#started) {
      return {
        ok: false,
        error: `codex exited with code ${exitCode} before the session started ` +
          `(a wats MCP server that did not start, a bad option or a missing login)`,
      };
    }
    if (this.#completedTurns === 0) {
      return {
        ok: false,
        error: `codex exited with code ${exitCode} before the turn completed` +
          (this.#lastError !== undefined ? `: ${this.#lastError}` : ""),
        ...extra,
      };
    }
    if (exitCode !== 0) {
      return { ok: false, error: `codex exited with code ${exitCode} after the turn`, ...extra };
    }
    return { ok: true, ...extra };
  }

  #turns(): number {
    return this.#completedTurns + this.#toolCalls;
  }

  #itemStarted(item: Json | undefined): RunEvent[] {
    if (item === undefined) return [];
    const call = toolCallOf(item);
    if (call === undefined) return this.#breach(item);
    this.#announced.add(String(item.id));
    return [call, ...this.#breach(item)];
  }

  /** A stop event the first time an item shows the lock broken. */
  #breach(item: Json): RunEvent[] {
    if (this.#lockBroken !== undefined || !LOCK_BREAKING_ITEMS.includes(String(item.type))) {
      return [];
    }
    const what = item.type === "command_execution"
      ? `a shell command (${JSON.stringify(item.command ?? "")})`
      : item.type === "file_change"
      ? "a file change"
      : item.type === "collab_tool_call"
      ? "a sub-agent"
      : "a web search";
    this.#lockBroken = `lock broken: Codex started ${what} (a ${item.type} item), which the ` +
      `locked run does not offer; the run was stopped. Check \`wats status\` and docs/codex.md`;
    return [{ type: "stop", reason: this.#lockBroken }];
  }

  #itemCompleted(item: Json | undefined): RunEvent[] {
    if (item === undefined) return [];
    const breach = this.#breach(item);
    if (breach.length > 0) {
      const call = toolCallOf(item);
      return call !== undefined ? [call, ...breach] : breach;
    }
    if (item.type === "agent_message" && typeof item.text === "string") {
      return [{ type: "text", text: item.text }];
    }
    const call = toolCallOf(item);
    if (call === undefined) return [];
    this.#toolCalls++;
    const out: RunEvent[] = this.#announced.delete(String(item.id)) ? [] : [call];
    out.push(toolResultOf(item));
    return out;
  }
}

/** The tool call an item stands for, or undefined for items that are not calls. */
function toolCallOf(item: Json): RunEvent | undefined {
  const id = typeof item.id === "string" ? item.id : undefined;
  switch (item.type) {
    case "mcp_tool_call":
      return {
        type: "tool_call",
        id,
        name: `mcp__${String(item.server)}__${String(item.tool)}`,
        args: item.arguments ?? {},
      };
    case "command_execution":
      return { type: "tool_call", id, name: "shell", args: { command: item.command } };
    case "file_change":
    case "web_search": {
      const { id: _id, type: _type, status: _status, ...args } = item;
      return { type: "tool_call", id, name: String(item.type), args };
    }
    default:
      return undefined;
  }
}

function toolResultOf(item: Json): RunEvent {
  const id = typeof item.id === "string" ? item.id : undefined;
  if (item.type === "mcp_tool_call") {
    const error = messageOf(item.error);
    const text = error ?? resultText(item.result);
    return {
      type: "tool_result",
      id,
      text,
      isError: error !== undefined || item.status !== "completed",
    };
  }
  if (item.type === "command_execution") {
    return {
      type: "tool_result",
      id,
      text: typeof item.aggregated_output === "string" ? item.aggregated_output : "",
      isError: item.status !== "completed" || item.exit_code !== 0,
    };
  }
  return {
    type: "tool_result",
    id,
    text: String(item.status ?? ""),
    isError: item.status === "failed",
  };
}

function resultText(result: unknown): string {
  const r = objectOf(result);
  if (r === undefined) return "";
  if (!Array.isArray(r.content)) return JSON.stringify(r);
  return (r.content as Json[]).map((c) => typeof c.text === "string" ? c.text : JSON.stringify(c))
    .join("\n");
}

function messageOf(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  const o = objectOf(v);
  return o && typeof o.message === "string" ? o.message : undefined;
}

function objectOf(v: unknown): Json | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Json : undefined;
}

function parseObject(line: string): Json | undefined {
  const t = line.trim();
  if (!t.startsWith("{")) return undefined;
  try {
    return objectOf(JSON.parse(t));
  } catch {
    return undefined;
  }
}
