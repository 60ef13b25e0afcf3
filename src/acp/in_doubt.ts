/**
 * Crash recovery of coding agent calls: each call in flight is noted under
 * `<data>/agent/acp_calls`; a note a stopped daemon left is a call whose
 * state is in doubt, parked for a person at the next start (docs/acp.md).
 *
 * @module
 */

import { IN_DOUBT, type PermissionAsk } from "../contracts/coding_agents.ts";
import { noteDeclined } from "./work_state.ts";
import { workPlace } from "./worktrees.ts";

/** A call in flight, as noted under the in-flight directory. */
export interface InFlight {
  callId: string;
  harness: string;
  checkout: string;
  work: string;
  agent: string;
  thread: string;
  task: string;
  worktree: string;
}

/** A call's note: `write` notes it (again), `remove` forgets it. */
export interface InFlightNote {
  path: string;
  write(): void;
  remove(): void;
}

/** Notes the call as in flight, for the next start should the daemon stop now. */
export function noteInFlight(dir: string, call: InFlight): InFlightNote {
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = `${dir}/${call.callId.replace(/[^A-Za-z0-9._-]/g, "_")}.json`;
  const write = () => Deno.writeTextFileSync(path, JSON.stringify(call) + "\n", { mode: 0o600 });
  write();
  return { path, write, remove: () => Deno.removeSync(path) };
}

/**
 * Parks each call noted under `dir` as in doubt (by `park`, which returns its
 * pending id) and removes its note. Returns the pending ids.
 */
export function parkInDoubt(dir: string, park: (ask: PermissionAsk) => string): string[] {
  const ids: string[] = [];
  let names: string[];
  try {
    names = [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".json")).map((e) => e.name);
  } catch {
    return [];
  }
  for (const name of names) {
    try {
      const note = JSON.parse(Deno.readTextFileSync(`${dir}/${name}`)) as InFlight;
      ids.push(park({
        request_id: note.callId,
        harness: note.harness,
        kind: IN_DOUBT,
        title: `call ${note.callId} was running when the node stopped`,
        locations: [],
        worktree: note.worktree,
        checkout: note.checkout,
        work: note.work,
        agent: note.agent,
        thread: note.thread,
        task: note.task,
        reason: "the node stopped during this call: its state is in doubt",
      }));
    } catch {
      // A damaged note cannot be answered; it goes all the same.
    }
    Deno.removeSync(`${dir}/${name}`);
  }
  return ids;
}

/** The task of the call that tells a coding agent a person's decision on `ask` made while it was stopped. */
export function answerTask(ask: PermissionAsk, approved: boolean): string {
  if (ask.kind === IN_DOUBT) {
    return `The node restarted while you worked on this task, so your last turn was cut off:\n\n${ask.task}\n\n` +
      "Check the worktree (git status, git log, the files) for what is done, then finish the task.";
  }
  const verb = approved ? "approved" : "rejected";
  return `A person ${verb} your request "${ask.title ?? `${ask.harness}/${ask.kind}`}" ` +
    `(${ask.harness}/${ask.kind}), which waited while you were stopped. ` +
    (approved
      ? "Make that same request again now, unchanged (it is allowed once; any other request " +
        "is decided as usual) and finish the task."
      : "Do not make it again; finish what you can without it and say what is left.") +
    `\n\nThe task was:\n${ask.task}`;
}

/**
 * Notes a call in doubt a person rejected, for the next call on its work
 * (under `worktrees`); says what that next call does.
 */
export function declineInDoubt(worktrees: string, ask: PermissionAsk): string {
  try {
    const place = workPlace(worktrees, ask);
    const noted = noteDeclined(place.stateFile, place.dir, {
      call: ask.request_id,
      task: ask.task,
    });
    return noted
      ? "the next call on it tells the coding agent not to finish that task"
      : "its worktree is gone, so the next call starts afresh";
  } catch (err) {
    return `but the next call cannot be told (${(err as Error).message})`;
  }
}
