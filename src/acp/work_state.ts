/**
 * The state file of a work, `<worktree>.acp.json` (docs/acp.md): the ACP
 * session a later call continues, and the tasks of calls in doubt a person
 * declined to let finish, which the next call on the work tells the coding
 * agent about. The sweep removes it with the worktree.
 *
 * Reads and writes are synchronous, so that no write lands between another
 * one's read and write: the session is saved by a call while a person's
 * decision, from another request, adds a declined task.
 *
 * @module
 */

/** A call in doubt whose task a person declined to let finish. */
export interface DeclinedTask {
  /** The call's id. */
  call: string;
  /** What that call asked the coding agent to do. */
  task: string;
}

/**
 * A call the budget stopped (docs/acp.md, "Costs"): what the call that goes on
 * after the budget window resets needs, also after a restart.
 */
export interface BudgetStop {
  /** The stopped call's id. */
  call: string;
  harness: string;
  checkout: string;
  work: string;
  agent: string;
  thread: string;
  /** What the stopped call asked the coding agent to do. */
  task: string;
  /** When it was stopped, ms since the epoch. */
  at: number;
  /**
   * A person's decision on the request it waited on, which came when the
   * budget had no room for it to go on: the call that goes on answers that same
   * request with it, once (src/acp/carried.ts).
   */
  decision?: { kind: string; locations: string[]; rawInput?: unknown; approved: boolean };
}

/** What the state file holds; every part may be missing. */
export interface WorkState {
  harness?: string;
  sessionId?: string;
  /**
   * The session's cumulative cost (USD) as the agent last reported it: a loaded
   * session goes on counting from its earlier calls' cost (docs/harness_facts.md).
   */
  cost?: number;
  declined?: DeclinedTask[];
  /** Set while the work waits for the budget window to reset. */
  budgetStop?: BudgetStop;
}

/**
 * Reads the state file; `{}` when it is missing or unreadable (the work then
 * starts a new session).
 *
 * Requires `--allow-read` on the file.
 */
export function readWorkState(path: string): WorkState {
  let v: unknown;
  try {
    v = JSON.parse(Deno.readTextFileSync(path));
  } catch {
    return {};
  }
  if (typeof v !== "object" || v === null) return {};
  const o = v as Record<string, unknown>;
  const out: WorkState = {};
  if (typeof o.harness === "string" && typeof o.sessionId === "string") {
    out.harness = o.harness;
    out.sessionId = o.sessionId;
    if (typeof o.cost === "number" && Number.isFinite(o.cost) && o.cost >= 0) out.cost = o.cost;
  }
  if (Array.isArray(o.declined)) {
    out.declined = o.declined.filter((d): d is DeclinedTask =>
      typeof d?.call === "string" && typeof d?.task === "string"
    );
  }
  const b = o.budgetStop as Record<string, unknown> | undefined;
  if (
    typeof b === "object" && b !== null &&
    ["call", "harness", "checkout", "work", "agent", "thread", "task"].every((k) =>
      typeof b[k] === "string"
    ) && typeof b.at === "number"
  ) {
    const { decision, ...stop } = b as unknown as BudgetStop;
    const whole = typeof decision?.kind === "string" && typeof decision.approved === "boolean" &&
      Array.isArray(decision.locations) && decision.locations.every((l) => typeof l === "string");
    out.budgetStop = whole ? { ...stop, decision } : stop;
  }
  return out;
}

/**
 * Notes that the budget stopped a call on the work (`stop`), or, with
 * undefined, that the work goes on (a call on it was admitted). Nothing is
 * noted when the state file is gone with its worktree.
 *
 * Requires `--allow-read` and `--allow-write` on the file.
 */
export function noteBudgetStop(path: string, stop: BudgetStop | undefined): void {
  const { budgetStop: _, ...state } = readWorkState(path);
  if (stop === undefined && _ === undefined) return;
  write(path, stop === undefined ? state : { ...state, budgetStop: stop });
}

/**
 * Records the work's session, keeping the declined tasks noted meanwhile;
 * `fresh` (a worktree just cut) drops whatever the file held before.
 *
 * Requires `--allow-read` and `--allow-write` on the file.
 */
export function saveSession(
  path: string,
  harness: string,
  sessionId: string,
  fresh: boolean,
): void {
  const { cost, ...before } = fresh ? {} : readWorkState(path);
  // The count of the session it was: a new session starts its own.
  const same = before.sessionId === sessionId && cost !== undefined;
  write(path, { ...before, harness, sessionId, ...(same ? { cost } : {}) });
}

/**
 * Records the session's cumulative cost after a call, keeping the rest.
 *
 * Requires `--allow-read` and `--allow-write` on the file.
 */
export function saveCost(path: string, sessionId: string, cost: number): void {
  const state = readWorkState(path);
  if (state.sessionId !== sessionId) return;
  write(path, { ...state, cost });
}

/**
 * Notes that a person declined to let a call in doubt finish, for the next
 * call on the work. Nothing is noted when the work's worktree is gone (swept):
 * a new one starts with a new session, which knows nothing of that task.
 *
 * Requires `--allow-read` and `--allow-write` on the file, and `--allow-read`
 * on `worktree`.
 */
export function noteDeclined(path: string, worktree: string, declined: DeclinedTask): boolean {
  try {
    Deno.statSync(worktree);
  } catch {
    return false;
  }
  const state = readWorkState(path);
  write(path, { ...state, declined: [...(state.declined ?? []), declined] });
  return true;
}

/**
 * The declined tasks noted for the work, removed from the file: each is told
 * to the coding agent once, in the prompt about to be sent.
 *
 * Requires `--allow-read` and `--allow-write` on the file.
 */
export function takeDeclined(path: string): DeclinedTask[] {
  const { declined, ...rest } = readWorkState(path);
  if (declined === undefined || declined.length === 0) return [];
  write(path, rest);
  return declined;
}

/**
 * What the next call's prompt starts with, so the coding agent, which may see
 * the cut-off task in its session's history, does not resume it on its own.
 */
export function declinedNotice(declined: readonly DeclinedTask[]): string {
  const which = declined.length === 1 ? "the task below" : `the ${declined.length} tasks below`;
  return `Before your task: the node restarted while you worked on ${which}, and a person ` +
    "declined to let that interrupted work finish. Do not resume or finish it on your own, and " +
    "leave what it changed in the worktree as it is unless your task says otherwise.\n\n" +
    declined.map((d) => `Interrupted task:\n---\n${d.task}\n---`).join("\n\n");
}

function write(path: string, state: WorkState): void {
  Deno.writeTextFileSync(path, JSON.stringify(state) + "\n");
}
