/**
 * A coding agent call as one object (issue 28, item 3): what it is for, where
 * it works, who made it and what a person carried to it travel together from
 * the work's queue to the call's end (src/acp/calls.ts), and its result is
 * made from it.
 *
 * @module
 */

import type { CheckoutConfig, HarnessConfig } from "../config/acp_tables.ts";
import type { CallArgs, CallOrigin, CallResult } from "../contracts/coding_agents.ts";
import { errorMessage } from "../error_message.ts";
import type { Sandboxer } from "../safety/sandboxer.ts";
import type { SessionUpdate } from "./client.ts";
import type { Grant } from "./judge.ts";
import { importWork } from "./work_import.ts";
import { type CallLine, noteCall } from "./work_record.ts";
import { workId } from "./works.ts";
import { commitsSince, headOf, type workPlace } from "./worktrees.ts";

/** Where a work lives: its worktree, branch and state file. */
export type WorkPlace = ReturnType<typeof workPlace>;

/** One call of a coding agent. */
export interface CallPlan {
  harness: HarnessConfig;
  co: CheckoutConfig;
  place: WorkPlace;
  origin: CallOrigin;
  args: CallArgs;
  /** Cancels the coding agent's prompt (the MCP call was cancelled or timed out). */
  signal?: AbortSignal;
  /** Hears what the coding agent is doing (the caller's progress notifications). */
  progress?: (note: string) => void;
  /** A person's decision carried to this call, for the request it answers. */
  grant?: Grant;
}

/** What a call tells the work's queue as it goes. */
export interface CallHooks {
  /** The worktree is there and the call begins: noted in the work's calls file. */
  started(): void;
  /** A request waits for a person: the call returns this now; the prompt goes on. */
  parked(r: CallResult): void;
}

/** The work's id as `wats work` names it. */
export function workOf(plan: CallPlan): string {
  return workId(plan.co.name, plan.place.branch);
}

/** How a call ended, as the work's calls file and the node's lines say it. */
export function outcomeOf(r: Pick<CallResult, "stop_reason" | "stopped">): string {
  if (r.stopped !== undefined) return `stopped: ${r.stopped}`;
  return r.stop_reason === "end_turn" ? "ok" : r.stop_reason;
}

/** Notes a line in the work's calls file; a note that cannot be written never fails the call. */
export function noteCallSafely(dir: string, line: CallLine): void {
  try {
    noteCall(dir, line);
  } catch {
    // The folder above the worktree is missing: the call itself says why.
  }
}

/**
 * A call's result: what it did, then the work's branch, head and commits as
 * the checkout holds them once the work's commits are imported (hash-checked,
 * src/acp/work_import.ts). An import that is refused is told among the
 * refusals, and the checkout's branch stays as it was.
 */
export async function resultOf(
  plan: CallPlan,
  sandbox: Sandboxer | undefined,
  r: Pick<
    CallResult,
    "message" | "stop_reason" | "refused" | "labels" | "usd" | "parked" | "stopped"
  >,
): Promise<CallResult> {
  const { co, place } = plan;
  const refused = [...r.refused];
  try {
    await importWork(co, place, sandbox);
  } catch (err) {
    refused.push({
      id: `${plan.origin.callId}:import`,
      request: "wats/import",
      reason: errorMessage(err),
    });
  }
  return {
    message: r.message,
    stop_reason: r.stop_reason,
    branch: place.branch,
    worktree: place.dir,
    head: await headOf(co, place.branch),
    commits: await commitsSince(co, place.branch, co.base),
    refused,
    labels: r.labels,
    usd: r.usd,
    ...(r.parked !== undefined ? { parked: r.parked } : {}),
    ...(r.stopped !== undefined ? { stopped: r.stopped } : {}),
  };
}

/** `path` resolved through symlinks, or as given when it cannot be. */
export function realOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/**
 * Turns a call's session updates into progress notes: one per tool call the coding agent starts
 * (its title), and one when it starts to write or to think after something else. A reply streams
 * as many chunks; one note for the run of them keeps a client's notifications to a few per step.
 * Costs and plans say nothing a waiting client needs. A title is the coding agent's text, which
 * may come from what it read: runs of control and format characters (a terminal's escapes) and
 * spaces become one space, and it is cut at {@linkcode NOTE_CHARS} characters.
 */
export function progressNotes(progress: (note: string) => void): (update: SessionUpdate) => void {
  let last = "";
  return (update) => {
    const kind = update.sessionUpdate;
    if (kind === "tool_call") progress(plainNote(`${update.kind ?? "tool"}: ${update.title}`));
    else if (kind === "agent_message_chunk" && last !== kind) progress("writing its reply");
    else if (kind === "agent_thought_chunk" && last !== kind) progress("thinking");
    if (kind !== "usage_update") last = kind;
  };
}

/** The longest progress note: a line a host shows beside a running call. */
export const NOTE_CHARS = 120;

function plainNote(text: string): string {
  const one = text.replace(/[\p{Cc}\p{Cf}\s]+/gu, " ").trim();
  return one.length > NOTE_CHARS ? `${one.slice(0, NOTE_CHARS - 1)}…` : one;
}
