/**
 * The run in progress as the runner holds it: what it was given (owed back
 * when it does not complete), its transcript once open, and how it is killed.
 * A kill that comes before its process is spawned kills the process as soon
 * as it is (execute.ts calls `started`).
 *
 * @module
 */

import type { RunControl } from "./execute.ts";
import type { RunningProcess } from "./harness.ts";
import type { PromptFeedback } from "./prompt.ts";
import type { QueuedEvent } from "./run_setup.ts";
import type { Decided } from "./retry.ts";
import type { CurrentRun } from "./runner_status.ts";
import type { TranscriptWriter } from "./transcripts.ts";
import type { RunStatus } from "../contracts/runs.ts";

/** The run in progress. */
export interface ActiveRun extends CurrentRun {
  /** The events and feedback it was given, owed back if it does not complete. */
  queued: QueuedEvent[];
  feedback: PromptFeedback[];
  /** The decisions on parked requests it was given, owed back if it ends before acting. */
  decided: Decided[];
  /** True once its events are done or given back. */
  settled?: boolean;
  /** Ends its process; `why` is how the run is recorded (the first kill's). */
  kill: (why: RunStatus) => void;
  /** Resolves when it has ended and been recorded. */
  done: Promise<void>;
  /** Its transcript, once open. */
  writer?: TranscriptWriter;
}

/** A run about to start, and the control execute.ts steers its process with. */
export function activeRun(
  run: Omit<ActiveRun, "kill" | "done" | "writer" | "settled">,
): { active: ActiveRun; control: RunControl } {
  let killWith: RunStatus | undefined;
  let proc: RunningProcess | undefined;
  const active: ActiveRun = {
    ...run,
    kill: (why) => {
      killWith ??= why;
      proc?.kill();
    },
    done: Promise.resolve(),
  };
  const control: RunControl = {
    started: (p) => {
      proc = p;
      if (killWith !== undefined) p.kill();
    },
    killedWith: () => killWith,
  };
  return { active, control };
}
