/**
 * Transcripts and the runs index for people: `wats agent logs` and `attach`
 * show a run as assistant text, tool calls with their arguments and tool results
 * truncated, with the `wats_run` header and `wats_end` footer summarised;
 * the coding agents a run called (ACP, `wats_acp` lines) show indented under their harness's
 * name, with each permission decision; `wats agent runs` shows the index as a table with the spend against the
 * budget. Pure: lines in, text out.
 *
 * @module
 */

import { usd, usdOf } from "../money.ts";
import { BudgetLedger, type BudgetLimits, type BudgetState } from "./budget.ts";
import type { OutputParser, RunEvent } from "./harness.ts";
import { limitsTurns, reportsCost, runtimeFacts } from "./runtimes/facts.ts";
import { parseJsonLine, type RunFooter, type RunHeader, type SpendLine } from "./transcripts.ts";
import type { RunIndexEntry } from "../contracts/runs.ts";
import { formatAge, formatElapsed } from "../duration.ts";

/** How many characters of a tool result to show. */
export const RESULT_CHARS = 300;

/** A parser for the output of `harness` (a transcript header's): its runtime's, if it has one. */
export function parserFor(harness: string): OutputParser | undefined {
  return runtimeFacts(harness)?.parser();
}

/** Lines the renderer shows itself: ACP sessions and decisions, coding agents' lines. */
export const ACP_LINE_TYPES: ReadonlySet<string> = new Set([
  "wats_acp",
  "acp_session",
  "acp_permission",
]);

/** Options of the renderer. */
export interface RenderOptions {
  /** Tool results longer than this are cut (300 when unset). */
  resultChars?: number;
}

/**
 * Renders a transcript line by line, so `logs -f` and `attach` can print lines
 * as they are written. Lines the harness parser does not know are skipped;
 * lines that are not JSON are shown as they are.
 */
export class TranscriptRenderer {
  readonly #max: number;
  #parser: OutputParser | undefined;
  /** A coding agent's message so far (its chunks), shown once something else comes. */
  #acpText: { harness: string; text: string } | undefined;
  /** The footer was read: coding agent lines after it went on after the run (once said). */
  #after: "no" | "ended" | "said" = "no";

  constructor(opts: RenderOptions = {}) {
    this.#max = opts.resultChars ?? RESULT_CHARS;
  }

  /** The human lines for one transcript line (often none). */
  line(raw: string): string[] {
    const obj = parseJsonLine(raw);
    if (obj === undefined) return raw.trim() === "" ? [] : [raw];
    if (obj.type === "wats_acp") return this.#acp(obj as unknown as AcpLine);
    const before = this.flush();
    if (obj.type === "wats_run") return [...before, ...this.#header(obj as unknown as RunHeader)];
    if (obj.type === "wats_end") {
      this.#after = "ended";
      return [...before, footerLine(obj as unknown as RunFooter)];
    }
    if (obj.type === "acp_session") return [...before, sessionLine(obj)];
    if (obj.type === "acp_permission") {
      return [...before, `? ${decisionLine(obj as unknown as AcpLine, this.#max)}`];
    }
    if (this.#parser === undefined) return before;
    return [...before, ...this.#parser.push(raw).flatMap((e) => this.#event(e))];
  }

  /** The coding agent's message not shown yet (call at the end of what there is). */
  flush(): string[] {
    const t = this.#acpText;
    this.#acpText = undefined;
    if (t === undefined || t.text.trim() === "") return [];
    return this.#afterEnd(t.text.trim().split("\n").map((l) => `   ${t.harness}│ ${l}`));
  }

  /** Coding agent lines read after the footer: said once to have come after the run. */
  #afterEnd(out: string[]): string[] {
    if (this.#after !== "ended" || out.length === 0) return out;
    this.#after = "said";
    return ["── after the run ended, its coding agent went on:", ...out];
  }

  /** A coding agent's session update or permission decision, indented under the call. */
  #acp(a: AcpLine): string[] {
    const u = a.update;
    if (a.event === "acp_update" && u?.sessionUpdate === "agent_message_chunk") {
      if (u.content?.type === "text") {
        if (this.#acpText?.harness !== a.harness) this.#acpText = { harness: a.harness, text: "" };
        this.#acpText.text += u.content.text ?? "";
      }
      return [];
    }
    const out = this.flush();
    if (a.event === "acp_permission") {
      out.push(`   ${a.harness}│ ? ${decisionLine(a, this.#max)}`);
    } else if (u?.sessionUpdate === "tool_call") {
      out.push(`   ${a.harness}│ → ${u.title ?? u.kind ?? "tool"}${u.kind ? ` [${u.kind}]` : ""}`);
    }
    return this.#afterEnd(out);
  }

  #header(h: RunHeader): string[] {
    this.#parser = parserFor(h.harness);
    const parts = [
      `run ${h.id}`,
      h.trigger,
      `${h.events.length} event(s)`,
      `started ${shortTime(h.started_at)}`,
      h.harness,
    ];
    // Only the limits the runtime applies: transcripts written before the header left
    // them out for Codex still carry them.
    if (h.max_turns !== undefined && limitsTurns(h.harness)) parts.push(`max ${h.max_turns} turns`);
    if (h.max_budget_usd !== undefined && reportsCost(h.harness)) {
      parts.push(`budget ${usd(h.max_budget_usd)}`);
    }
    const out = [`── ${parts.join(" · ")}`];
    if (h.events.length > 0) out.push(`   events: ${h.events.join(", ")}`);
    if (h.feedback && h.feedback.length > 0) out.push(`   feedback: ${h.feedback.join(", ")}`);
    return out;
  }

  #event(e: RunEvent): string[] {
    switch (e.type) {
      case "init": {
        const servers = e.mcpServers.map((s) => `${s.name} ${s.status}`).join(", ") || "none";
        return [`   mcp: ${servers} · ${e.tools.length} tool(s)`];
      }
      case "text":
        return e.text.split("\n");
      case "tool_call":
        return [`→ ${e.name} ${JSON.stringify(e.args)}`];
      case "tool_result":
        return [
          `← ${e.isError ? "error: " : ""}${
            truncate(e.text.replace(/\s+/g, " ").trim(), this.#max)
          }`,
        ];
      case "error":
        return [`! ${e.message}`];
      default:
        return [];
    }
  }
}

/** Renders a whole transcript. */
export function renderTranscript(lines: readonly string[], opts: RenderOptions = {}): string {
  const r = new TranscriptRenderer(opts);
  return [...lines.flatMap((l) => r.line(l)), ...r.flush()].join("\n");
}

/** A `wats_acp` line: the node's JSON line of an ACP call, in the run's transcript. */
interface AcpLine {
  event: "acp_update" | "acp_permission";
  harness: string;
  call: string;
  update?: {
    sessionUpdate?: string;
    content?: { type?: string; text?: string };
    title?: string;
    kind?: string;
  };
  request?: string;
  /** An execute request's command line. */
  command?: string;
  locations?: string[];
  verdict?: string;
  answer?: string;
  reason?: string;
}

/** A permission decision: `claude/edit /path → reject_once (deny: why)`. */
function decisionLine(
  a: Pick<AcpLine, "request" | "command" | "locations" | "answer" | "verdict" | "reason">,
  max: number,
): string {
  const command = typeof a.command === "string"
    ? ` \`${truncate(oneLineOf(a.command), max)}\``
    : "";
  const where = command +
    (a.locations && a.locations.length > 0 ? ` ${a.locations.join(" ")}` : "");
  return `${a.request}${where} → ${a.answer} (${a.verdict}: ${truncate(a.reason ?? "", max)})`;
}

/** The session an ACP run opened (agent.runtime = acp). */
function sessionLine(o: Record<string, unknown>): string {
  const how = o.continued ? "continued" : "new";
  const thread = typeof o.thread === "string" ? ` for thread ${o.thread.slice(0, 12)}` : "";
  return `   session ${String(o.session)} on [harnesses.${String(o.harness)}] (${how})${thread}`;
}

function footerLine(f: RunFooter): string {
  const parts = [
    `end: ${f.status}`,
    `exit ${f.exit_code ?? "-"}`,
    formatElapsed(f.duration_ms),
    `${f.turns ?? "?"} turn(s)`,
    f.cost_usd !== undefined ? usd(f.cost_usd) : "no cost reported",
  ];
  return `── ${parts.join(" · ")}${f.error ? `\n   error: ${f.error}` : ""}`;
}

/** The budget at `now`, from `Transcripts.spend(now)`, for the table's last line. */
export function budgetOf(
  spend: readonly SpendLine[],
  limits: BudgetLimits,
  now: number,
): BudgetState {
  const l = new BudgetLedger(limits);
  l.restore(spend);
  return l.state(now);
}

/** `wats agent runs`: one row per run, oldest first, then the spend against the budget. */
export function renderRunsTable(
  entries: readonly RunIndexEntry[],
  budget?: BudgetState,
  /** The runtime, when its harness reports no cost (Codex): then only runs are counted. */
  noCostRuntime?: string,
  /** Now (ms): a retry still to come says when. */
  now: number = Date.now(),
): string {
  const head = ["RUN", "STARTED (UTC)", "TRIGGER", "EVENTS", "STATUS", "DURATION", "TURNS", "COST"];
  const rows = entries.map((e) => [
    e.id,
    shortTime(e.started_at),
    // A run a person's decision woke has no event: it says so instead of "0".
    e.events === 0 && (e.decided?.length ?? 0) > 0 ? "decision" : e.trigger,
    String(e.events),
    e.retry ? `${e.status}, before acting: ${retryNote(e.retry, now)}` : e.status,
    formatElapsed(e.duration_ms),
    e.turns !== undefined ? String(e.turns) : "-",
    e.cost_usd !== undefined ? usd(e.cost_usd) : "-",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const fmt = (r: string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ").trimEnd();
  const lines = entries.length === 0 ? ["no runs yet"] : [fmt(head), ...rows.map(fmt)];
  if (budget && noCostRuntime !== undefined) {
    lines.push(
      "",
      `runs today ${budget.runsWithoutCostToday} of ${budget.limits.runsPerDay} ` +
        `(${noCostRuntime} reports no cost: runs count against agent.max_runs_per_day)`,
    );
  } else if (budget) {
    const l = budget.limits;
    lines.push(
      "",
      `spend today ${usdOf(budget.usdToday, l.usdPerDay)} · this month ${
        usdOf(budget.usdMonth, l.usdPerMonth)
      } · runs without a cost today ${budget.runsWithoutCostToday} of ${l.runsPerDay}`,
    );
  }
  if (budget?.blocked) {
    lines.push(
      `paused: ${budget.blocked.reason} until ${
        shortTime(new Date(budget.blocked.resetsAt).toISOString())
      }`,
    );
  }
  return lines.join("\n");
}

/** What became of the events of a run that ended before the agent could act (retry.ts). */
function retryNote(r: NonNullable<RunIndexEntry["retry"]>, now: number): string {
  if (r.gave_up !== undefined) return `gave up after ${r.try} tries`;
  if (r.at === undefined) return `try ${r.try} of ${r.of}`;
  const at = Date.parse(r.at);
  return at > now
    ? `retrying in ${formatAge(Math.ceil((at - now) / 1000))} (try ${r.try + 1} of ${r.of})`
    : `tried again at ${shortTime(r.at)} (try ${r.try + 1} of ${r.of})`;
}

function oneLineOf(s: string): string {
  return s.replace(/\s*\n\s*/g, " ");
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length - max} more chars)`;
}

function shortTime(iso: string): string {
  return iso.replace("T", " ").replace(/\.\d+Z$/, "").replace(/Z$/, "");
}
