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
import { isRunId, type Transcripts, type TranscriptWriter } from "./transcripts.ts";
import type { RunnerLog } from "./ports.ts";
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

/**
 * Adds a coding agent's line (an ACP update or permission decision) to run `runId`'s transcript as
 * a `wats_acp` line: in place while `cur` is that run, after its footer once it ended (a parked
 * call a person answered later goes on), so `wats agent logs` shows it either way.
 */
export function noteAcpLine(
  at: {
    cur: ActiveRun | undefined;
    transcripts: Pick<Transcripts, "appendAfterEnd">;
    log: RunnerLog;
  },
  runId: string,
  event: Record<string, unknown>,
): void {
  const { cur, transcripts, log } = at;
  const line = JSON.stringify({ ...event, type: "wats_acp" });
  if (cur?.id === runId && cur.writer !== undefined && !cur.settled) {
    cur.writer.line(line);
    return;
  }
  if (!isRunId(runId)) return;
  try {
    transcripts.appendAfterEnd(runId, line);
  } catch (err) {
    // A run that never began (the call was not a run's) or was pruned: the node's JSON lines have it.
    if (!(err instanceof Deno.errors.NotFound)) {
      log.warn(`cannot add to run ${runId}'s transcript: ${(err as Error).message}`);
    }
  }
}
