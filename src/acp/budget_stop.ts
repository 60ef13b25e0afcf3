/**
 * Works the budget stopped mid-call (docs/acp.md, "Costs"): the note in the
 * work's state file (src/acp/work_state.ts) says the work waits for the budget
 * window to reset, and what the call that goes on then tells the coding agent.
 *
 * @module
 */

import { findWorks } from "./sweep.ts";
import { type BudgetStop, readWorkState } from "./work_state.ts";

/**
 * The works under `root` whose state file says the budget stopped them.
 *
 * Requires `--allow-read` on `root`.
 */
export function budgetStopsUnder(root: string): BudgetStop[] {
  return findWorks(root).flatMap((w) => readWorkState(`${w.dir}.acp.json`).budgetStop ?? []);
}

/** The task of the call that goes on with a work the budget stopped: same session, same worktree. */
export function resumeTask(stop: BudgetStop): string {
  return "wats stopped your previous turn on this work because the budget had no room for your " +
    "next reply; the budget window has reset. Go on with that task from where you stopped " +
    "(check the worktree and your commits first), and commit what you finish.\n\n" +
    (stop.decision === undefined
      ? ""
      : stop.decision.approved
      ? "A person approved the request you were waiting on when you were stopped: make that " +
        "same request again, unchanged (it is allowed once).\n\n"
      : "A person rejected the request you were waiting on when you were stopped: do not make " +
        "it again.\n\n") +
    `The task:\n---\n${stop.task}\n---`;
}
