/**
 * One finished agent run as `agent/runs.jsonl` records it: the runner writes
 * it, `wats agent runs`, `wats ui` and the node's `run_ended` event show it.
 *
 * @module
 */

/** How a run ended. */
export type RunStatus = "ok" | "error" | "timeout" | "stopped" | "halted" | "interrupted";

/** Why a run started. */
export type RunTrigger = "events" | "heartbeat";

/** One line of `runs.jsonl`. */
export interface RunIndexEntry {
  id: string;
  trigger: RunTrigger;
  /** How many events woke it. */
  events: number;
  /** The decisions that woke it (a person decided a coding agent's request), when any. */
  decided?: string[];
  started_at: string;
  ended_at: string;
  harness: string;
  status: RunStatus;
  exit_code: number | null;
  duration_ms: number;
  turns?: number;
  cost_usd?: number;
  error?: string;
  /**
   * Present when the run ended before the agent could act (src/runner/retry.ts): its events'
   * highest try counting this run, of how many, when what it gave back goes again (ISO), and how
   * many were given up. Such a run is not counted against `agent.max_runs_per_hour`.
   */
  retry?: { try: number; of: number; at?: string; gave_up?: number };
}
