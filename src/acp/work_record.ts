/**
 * What a work keeps of its calls, beside its worktree like its state file
 * (docs/acp.md "Works"): `<worktree>.calls.jsonl`, one line when a call starts
 * and one when it ends (task, final message, refused requests), and
 * `<worktree>.session.jsonl`, the ACP session's updates and permission
 * decisions as the daemon saw them. `wats work show` and the dashboard's work
 * page read both; the sweep and `wats work discard` remove them with the worktree.
 *
 * Both are bounded: the calls file keeps its newest {@linkcode MAX_CALLS}
 * calls, and the session file stops growing at {@linkcode MAX_SESSION_BYTES}
 * (with one line saying so).
 *
 * @module
 */

import type { WorkCall } from "../contracts/works.ts";

/** The newest calls a work keeps. */
export const MAX_CALLS = 200;
/** Where a work's session transcript stops growing. */
export const MAX_SESSION_BYTES = 4 * 1024 * 1024;

/** The record files of the work whose worktree is `dir`. */
export function recordFiles(dir: string): { calls: string; session: string } {
  return { calls: `${dir}.calls.jsonl`, session: `${dir}.session.jsonl` };
}

/** One line of the calls file: a call started, or ended. */
export interface CallLine {
  id: string;
  at: number;
  /** Present on the start line. */
  task?: string;
  /** The profile and the full thread id the call was made for (the start line). */
  agent?: string;
  thread?: string;
  harness?: string;
  /** Present on the end line. */
  outcome?: string;
  message?: string;
  refused?: string[];
}

/**
 * Appends a line to the calls file, rewriting it with the newest
 * {@linkcode MAX_CALLS} calls when it holds more.
 *
 * Requires `--allow-read` and `--allow-write` on the file.
 */
export function noteCall(dir: string, line: CallLine): void {
  const path = recordFiles(dir).calls;
  Deno.writeTextFileSync(path, JSON.stringify(line) + "\n", { append: true, mode: 0o600 });
  const lines = readLines(path);
  const ids = [...new Set(lines.map((l) => l.id))];
  if (ids.length <= MAX_CALLS) return;
  const keep = new Set(ids.slice(-MAX_CALLS));
  Deno.writeTextFileSync(
    path,
    lines.filter((l) => keep.has(l.id)).map((l) => JSON.stringify(l) + "\n").join(""),
  );
}

/**
 * The work's calls, oldest first: each start line merged with its end line;
 * a call with no end line is `running` (or was cut off: the daemon's live
 * state tells, src/acp/works.ts).
 *
 * Requires `--allow-read` on the file.
 */
export function readCalls(dir: string): WorkCall[] {
  const byId = new Map<string, WorkCall>();
  for (const l of readLines(recordFiles(dir).calls)) {
    const c = byId.get(l.id) ?? { id: l.id, at: l.at, task: "", outcome: "running", refused: [] };
    if (l.task !== undefined) {
      c.task = l.task;
      c.at = l.at;
    }
    if (l.outcome !== undefined) c.outcome = l.outcome;
    if (l.message !== undefined) c.message = l.message;
    if (l.refused !== undefined) c.refused = l.refused;
    byId.set(l.id, c);
  }
  return [...byId.values()];
}

/** The start line of the work's newest call (who made it, for which thread). */
export function lastStart(dir: string): CallLine | undefined {
  return readLines(recordFiles(dir).calls).findLast((l) => l.task !== undefined);
}

function readLines(path: string): CallLine[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return [];
  }
  const out: CallLine[] = [];
  for (const line of text.split("\n")) {
    try {
      const v = JSON.parse(line);
      if (typeof v?.id === "string" && typeof v?.at === "number") out.push(v);
    } catch {
      // Blank, or cut short by a crash.
    }
  }
  return out;
}

/**
 * Appends one entry to the work's session transcript, until it reaches
 * {@linkcode MAX_SESSION_BYTES}; then one last line says it stopped.
 *
 * Requires `--allow-read` and `--allow-write` on the file.
 */
export function noteSession(dir: string, entry: unknown): void {
  const path = recordFiles(dir).session;
  let size = 0;
  try {
    size = Deno.statSync(path).size;
  } catch {
    // No transcript yet.
  }
  const line = JSON.stringify(entry) + "\n";
  if (size + line.length <= MAX_SESSION_BYTES) {
    Deno.writeTextFileSync(path, line, { append: true, mode: 0o600 });
  } else if (!endsWith(path, size, CUT_LINE)) {
    Deno.writeTextFileSync(path, CUT_LINE, { append: true, mode: 0o600 });
  }
}

/** The last line of a full transcript. */
const CUT_LINE = JSON.stringify({ type: "wats_cut", reason: "the work's transcript is full" }) +
  "\n";

function endsWith(path: string, size: number, tail: string): boolean {
  const want = new TextEncoder().encode(tail);
  if (size < want.length) return false;
  const f = Deno.openSync(path);
  try {
    f.seekSync(size - want.length, Deno.SeekMode.Start);
    const got = new Uint8Array(want.length);
    f.readSync(got);
    return got.every((b, i) => b === want[i]);
  } finally {
    f.close();
  }
}

/**
 * The work's session transcript, one JSON line per entry, newest last: at most
 * `max` of the newest, and no more than `maxChars` characters in all (it
 * travels with the work's diff as one line on the socket).
 *
 * Requires `--allow-read` on the file.
 */
export function readSession(dir: string, max = 2_000, maxChars = 600_000): string[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(recordFiles(dir).session);
  } catch {
    return [];
  }
  const lines = text.split("\n").filter((l) => l.trim() !== "").slice(-max);
  let chars = 0;
  let from = lines.length;
  while (from > 0 && chars + lines[from - 1]!.length <= maxChars) chars += lines[--from]!.length;
  return lines.slice(from);
}

/**
 * Removes the work's record files (the sweep, `wats work discard`).
 *
 * Requires `--allow-write` on the files.
 */
export function removeRecord(dir: string): void {
  const f = recordFiles(dir);
  for (const p of [f.calls, f.session]) {
    try {
      Deno.removeSync(p);
    } catch {
      // Never written, or already gone.
    }
  }
}
