/**
 * A coding agent's work as a person sees it (issue 19, docs/acp.md "Works"):
 * the branch `wats/<agent>/<thread>/<work>` in a checkout, its worktree, its
 * diff against the checkout's base, and the calls made on it. The daemon
 * (src/acp) computes these; `wats work` and the dashboard only show them and
 * send the operations as control requests (src/contracts/session.ts), so
 * neither runs git itself.
 *
 * @module
 */

/** Where a work is now. */
export type WorkState =
  /** A call is running on it. */
  | "running"
  /** A call waits for a person's decision on a permission request. */
  | "parked"
  /** A call was cut off and waits for a person to decide (docs/acp.md). */
  | "in doubt"
  /** The budget stopped its last call mid-way; it goes on after the budget window resets. */
  | "stopped: budget"
  /** No call is running; the branch is not in the base yet, or its worktree holds uncommitted changes. */
  | "idle"
  /** The branch is in the base and the worktree holds nothing else; the sweep removes it. */
  | "merged"
  /** The worktree is gone (swept or discarded); the branch may remain. */
  | "swept";

/** One work, as the list shows it. */
export interface WorkSummary {
  /**
   * Opaque, stable, URL-safe id (`[A-Za-z0-9._~-]+`, at most 200 characters):
   * what `wats work show ID` and the dashboard's `/works/ID` take.
   */
  id: string;
  /** The harness its calls ran on (`[harnesses.NAME]`). */
  harness: string;
  /** The checkout's name (`[checkouts.NAME]`). */
  checkout: string;
  /** The agent profile that called the coding agent. */
  agent: string;
  /** The thread the work is for (64-hex root id). */
  thread: string;
  /** The work's name, as the call gave it. */
  work: string;
  branch: string;
  /** The worktree's absolute path (it may be gone when `state` is `swept`). */
  worktree: string;
  /** The checkout's base branch. */
  base: string;
  /** The branch's head commit, when the branch exists. */
  head?: string;
  state: WorkState;
  /** Milliseconds since the epoch of the last change seen (newest first in lists). */
  updatedAt: number;
}

/** One commit on the work's branch that the base does not have. */
export interface WorkCommit {
  sha: string;
  subject: string;
  author: string;
  /** Seconds since the epoch (the committer date). */
  at: number;
}

/** One line of a hunk. */
export interface DiffLine {
  /** `+` added, `-` deleted, ` ` context. */
  op: "+" | "-" | " ";
  text: string;
  /** The line's number in the old file (deleted and context lines). */
  old?: number;
  /** The line's number in the new file (added and context lines). */
  new?: number;
}

/** One hunk of a file's diff. */
export interface DiffHunk {
  /** The `@@ -a,b +c,d @@ …` line. */
  header: string;
  lines: DiffLine[];
}

/** One file of the diff against the base. */
export interface DiffFile {
  path: string;
  /** The old path of a renamed file. */
  oldPath?: string;
  status: "added" | "modified" | "deleted" | "renamed";
  /** A binary file is named, never shown. */
  binary: boolean;
  additions: number;
  deletions: number;
  hunks: DiffHunk[];
  /** True when hunks were left out because the file's diff is too long to show. */
  cut: boolean;
}

/** One call made on the work (from the daemon's record of calls). */
export interface WorkCall {
  id: string;
  /** Milliseconds since the epoch. */
  at: number;
  /** What the call asked the coding agent to do. */
  task: string;
  /** The coding agent's final message, when it ended. */
  message?: string;
  /** `ok`, `error`, `running`, `parked`, `in doubt`, … as the call recorded it. */
  outcome: string;
  /** The permission requests refused during the call, one line each. */
  refused: string[];
}

/** One work, whole: what `wats work show` prints and the work page renders. */
export interface WorkDetail extends WorkSummary {
  commits: WorkCommit[];
  diff: DiffFile[];
  /** True when files were left out because the diff is too large (the CLI names `git diff`). */
  diffCut: boolean;
  calls: WorkCall[];
  /** The ACP session transcript, one JSON line per entry, newest last (may be empty). */
  transcript: string[];
  /** The checkout's remote that `push` uses, when it has one. */
  remote?: string;
  /** How `merge` joins the branch to the base: `ff` or `merge` (`[checkouts.NAME] merge`). */
  mergeMode: "ff" | "merge";
  /**
   * The local branch `merge` moves (`main`); absent when the base is not a
   * local branch (`origin/main`, a detached HEAD): push the work instead.
   */
  mergeInto?: string;
  /**
   * The worktree's changes that are not committed on the branch (a commit
   * the coding agent said it made but never did), with their diff; absent
   * when it has none. Merge and push carry only commits: these stay behind.
   */
  uncommitted?: { diff: DiffFile[]; cut: boolean };
  /**
   * What the work's calls cost this month, as the dashboard's work page shows
   * it: the daemon totals its spend files with src/runner/spend_figures.ts
   * (`callsSpend`) when it answers `work_show`.
   */
  spentUsd?: number;
}

/** A page of works, newest first. */
export interface WorksPage {
  works: WorkSummary[];
  /** The page to ask for next; absent on the last page. */
  next?: number;
  /** What a new work may use (the dashboard's "New work"): enabled harnesses, allowed checkouts. */
  start?: { harnesses: string[]; checkouts: string[] };
}
