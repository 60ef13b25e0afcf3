/**
 * What the MCP room needs of the coding agents over ACP, and the shapes a
 * call takes and returns (docs/acp.md). The ACP layer implements
 * {@linkcode CodingAgents}; the MCP harness tools call it, the review queue
 * and `wats ui` show a {@linkcode PermissionAsk}. Neither side imports the
 * other: both import this.
 *
 * @module
 */

/** How an agent's prompt turn ended (the ACP `StopReason`). */
export type AgentStopReason =
  | "end_turn"
  | "max_tokens"
  | "max_turn_requests"
  | "refusal"
  | "cancelled";

/** One commit of the work. */
export interface Commit {
  sha: string;
  subject: string;
}

/** The kind of a call parked because the daemon stopped during it. */
export const IN_DOUBT = "in_doubt";

/** The arguments of a harness tool. */
export interface CallArgs {
  /** What to do. */
  task: string;
  /** The name of a `[checkouts.NAME]`. */
  checkout: string;
  /** A name for the piece of work, such as `fix-login`. */
  work: string;
}

/**
 * Who calls: the agent's profile, its thread (`_` for none), this call's id,
 * and the run it is part of, when a runner session calls.
 */
export interface CallOrigin {
  agent: string;
  thread: string;
  callId: string;
  /** The runner's run id, when a run called (its transcript gets the call's lines). */
  run?: string;
}

/** A permission request the policy refused. */
export interface Refusal {
  /** `<call id>:<toolCallId>`. */
  id: string;
  /** `<harness>/<kind>`. */
  request: string;
  title?: string;
  reason: string;
}

/**
 * A request held for a person's decision (agent.review): what `wats agent
 * pending` shows, and what answering it needs when its call is gone.
 */
export interface PermissionAsk {
  /** `<call id>:<toolCallId>`; for a call in doubt, the call id. */
  request_id: string;
  harness: string;
  /** The ACP tool kind; `in_doubt` for a call the daemon was running when it stopped. */
  kind: string;
  title?: string;
  arguments?: unknown;
  locations: string[];
  worktree: string;
  checkout: string;
  work: string;
  agent: string;
  thread: string;
  /** What the call asked the coding agent to do. */
  task: string;
  reason: string;
}

/** A parked call, as its result names it. */
export interface Parked {
  /** The pending id: `wats agent approve/reject ID`. */
  id: string;
  request_id: string;
  request: string;
}

/** What a call returns to the agent (the seed's map, plus `usd` and `labels`). */
export interface CallResult {
  message: string;
  /** `parked` while a request waits for a person. */
  stop_reason: AgentStopReason | "parked";
  branch: string;
  worktree: string;
  head: string;
  commits: Commit[];
  refused: Refusal[];
  /** `outside` once the coding agent asked to fetch from the network. */
  labels: string[];
  /** What the call cost, in USD, when the agent reports it (Claude does; Codex does not). */
  usd: number;
  /** Set when the call waits for a person: the prompt goes on once they decide. */
  parked?: Parked;
  /**
   * Set when wats stopped the call: `budget` when the money ran out mid-call
   * (the work goes on by itself after the budget window resets, docs/acp.md).
   */
  stopped?: "budget";
}

/** How the caller follows its call. */
export interface CallControl {
  /** Cancels the coding agent's prompt (the MCP call was cancelled or timed out). */
  signal?: AbortSignal;
  /**
   * Hears, in a few words, what the coding agent is doing as its session reports it (a tool it
   * starts, that it began to write or think): an MCP client's progress notifications.
   */
  progress?: (note: string) => void;
}

/** What the MCP server needs of the ACP layer (`AcpLayer` in src/acp/calls.ts is one). */
export interface CodingAgents {
  harnessNames(): string[];
  checkoutNames(): string[];
  call(
    harness: string,
    origin: CallOrigin,
    args: CallArgs,
    control?: CallControl,
  ): Promise<CallResult>;
  /** The thread the run `runId` is about, if it is about one. */
  threadOfRun?(runId: string): string | undefined;
  /** A person's decision on a parked request (pending id `id`); says what happened. */
  answer?(id: string, approved: boolean, ask: PermissionAsk): string;
}

/** What one sweep did. */
export interface SweepReport {
  removed: string[];
  /** Worktrees kept, each with why. */
  kept: { dir: string; reason: string }[];
  /** Set when the sweep stopped on an error (what it removed before stays listed). */
  error?: string;
}
