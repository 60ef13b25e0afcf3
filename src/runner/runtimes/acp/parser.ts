/**
 * The transcript of a heartbeat run over ACP (`agent.runtime = "acp"`,
 * docs/acp.md "The heartbeat agent over ACP"), and its parser. The ACP client
 * (acp.ts) writes one JSON object a line: the session it opened, each session
 * update as the agent sent it, each permission decision, then the result or
 * the error. The parser turns those lines into run events and a verdict, as
 * the CLI harnesses' parsers do with their output. Pure: `wats agent logs`
 * renders with it and must not reach code that spawns.
 *
 * @module
 */

import type { OutputParser, RunEvent, RunResult } from "../../harness.ts";
import { parseJsonLine } from "../../transcripts.ts";

/** The `harness` of an ACP run's transcript header. */
export const ACP_RUNTIME = "acp";

/** One line of an ACP run's transcript. */
export type AcpRunLine =
  | {
    type: "acp_session";
    /** The harness (`[harnesses.NAME]`). */
    harness: string;
    session: string;
    /** True when an earlier session of the thread was loaded or resumed. */
    continued: boolean;
    thread?: string;
  }
  | { type: "acp_update"; update: Record<string, unknown> }
  | {
    type: "acp_permission";
    request: string;
    locations: string[];
    verdict: string;
    answer: string;
    reason: string;
  }
  | {
    type: "acp_result";
    stop_reason: string;
    /** What this run cost: the session's cumulative cost grew by this much. */
    cost_usd?: number;
  }
  | { type: "acp_error"; message: string };

/** Stop reasons of a prompt that did what it was asked. */
const DONE = new Set(["end_turn"]);

/** Reads an ACP run's transcript lines into run events and a verdict. */
export class AcpRunParser implements OutputParser {
  #text = "";
  #result: { stop_reason: string; cost_usd?: number } | undefined;
  #error: string | undefined;
  #toolCalls = 0;
  /** Tool calls not ended yet: the name and arguments they have so far. */
  #calls = new Map<string, { name: string; args: unknown; shown: boolean }>();

  push(line: string): RunEvent[] {
    const obj = parseJsonLine(line);
    if (obj === undefined) return [];
    switch (obj.type) {
      case "acp_update":
        return this.#update((obj.update ?? {}) as Update);
      case "acp_result": {
        const r = obj as { stop_reason?: unknown; cost_usd?: unknown };
        const cost = typeof r.cost_usd === "number" ? r.cost_usd : undefined;
        this.#result = {
          stop_reason: String(r.stop_reason),
          ...(cost !== undefined ? { cost_usd: cost } : {}),
        };
        return [
          ...this.#flush(),
          ...(cost !== undefined ? [{ type: "cost", usd: cost } as const] : []),
        ];
      }
      case "acp_error":
        this.#error = String(obj.message);
        return [...this.#flush(), { type: "error", message: this.#error }];
      default:
        return [];
    }
  }

  finish(exitCode: number | null): RunResult {
    const r = this.#result;
    if (r === undefined) {
      return {
        ok: false,
        error: this.#error ??
          `the ACP agent ended without a result (exit ${exitCode ?? "by a signal"})`,
      };
    }
    const ok = DONE.has(r.stop_reason);
    return {
      ok,
      ...(ok ? {} : { error: `the prompt ended with stop reason ${r.stop_reason}` }),
      ...(r.cost_usd !== undefined ? { costUsd: r.cost_usd } : {}),
      // A model turn per tool call, plus the answer.
      turns: this.#toolCalls + 1,
    };
  }

  #update(u: Update): RunEvent[] {
    switch (u.sessionUpdate) {
      case "agent_message_chunk":
        if (!Array.isArray(u.content) && u.content?.type === "text") {
          this.#text += u.content.text ?? "";
        }
        return [];
      case "tool_call":
      case "tool_call_update": {
        // A call is announced before its arguments stream in: it is shown once they are
        // complete (or when it ends), with the name and arguments it had by then. While
        // they stream, claude-agent-acp refines the call with the top-level fields done so
        // far and no `content`: `post`'s `kind` alone is not the call (issue 30).
        const id = u.toolCallId ?? "";
        const known = this.#calls.get(id) ?? { name: "tool", args: {}, shown: false };
        if (u.sessionUpdate === "tool_call") this.#toolCalls++;
        if (u._meta?.claudeCode?.toolName || u.title) known.name = toolName(u);
        if (isFilled(u.rawInput)) known.args = u.rawInput;
        this.#calls.set(id, known);
        const out: RunEvent[] = [];
        const ended = u.status === "completed" || u.status === "failed";
        const partial = u.sessionUpdate === "tool_call_update" && u.content === undefined;
        if (!known.shown && ((isFilled(u.rawInput) && !partial) || ended)) {
          known.shown = true;
          out.push(...this.#flush(), {
            type: "tool_call",
            ...(id ? { id } : {}),
            name: known.name,
            args: known.args,
          });
        }
        if (ended) {
          this.#calls.delete(id);
          out.push(...this.#flush(), {
            type: "tool_result",
            ...(id ? { id } : {}),
            text: resultText(u),
            isError: u.status === "failed",
          });
        }
        return out;
      }
      default:
        return [];
    }
  }

  #flush(): RunEvent[] {
    const t = this.#text.trim();
    this.#text = "";
    return t === "" ? [] : [{ type: "text", text: t }];
  }
}

/** The session update fields the parser reads. */
interface Update {
  sessionUpdate?: string;
  content?: { type?: string; text?: string } | Array<{ content?: { text?: string } }>;
  toolCallId?: string;
  title?: string;
  kind?: string;
  status?: string;
  rawInput?: unknown;
  rawOutput?: unknown;
  _meta?: { claudeCode?: { toolName?: string } };
}

/** The tool's own name when the agent gives it (Claude: `mcp__wats__post`), else its title. */
function toolName(u: Update): string {
  return u._meta?.claudeCode?.toolName ?? u.title ?? u.kind ?? "tool";
}

function isFilled(v: unknown): boolean {
  return typeof v === "object" && v !== null && Object.keys(v).length > 0;
}

function resultText(u: Update): string {
  if (Array.isArray(u.content)) {
    const text = u.content.map((c) => c.content?.text ?? "").join("\n").trim();
    if (text !== "") return text;
  }
  return u.rawOutput === undefined ? "" : JSON.stringify(u.rawOutput);
}
