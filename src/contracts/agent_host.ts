/**
 * The port between the ACP layer and the heartbeat agent runner (issue 17,
 * item 3): what the coding agents' calls need of the runner. The runner
 * (src/runner/scheduler.ts `Runner`) implements it; the ACP layer
 * (src/acp/setup.ts) receives it when it is built, so the daemon builds the
 * runner first and hands it over, and no closure looks the runner up later.
 *
 * @module
 */

import type { NodeBudget } from "./budget.ts";

/** What the ACP layer asks of the runner that hosts the node's agent. */
export interface AgentHost {
  /** The budget runs and calls share: each call is admitted, holds, spends and settles in it. */
  readonly budget: NodeBudget;
  /** The thread the run `runId` is about, while it is about one. */
  threadOfRun(runId: string): string | undefined;
  /** Adds what a coding agent the run `runId` called did to that run's transcript. */
  noteAcp(runId: string, event: Record<string, unknown>): void;
  /**
   * A person decided a parked request, or a work the budget stopped went on
   * after the reset and ended: wakes the agent, with `reason` among the run's reasons.
   */
  permissionDecided(reason: string, thread?: string): void;
}
