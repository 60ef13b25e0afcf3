/**
 * What a person does with a coding agent's work (issue 19, item 2; docs/acp.md
 * "Works"): merge it into the checkout's base, push its branch (and open a
 * draft pull request with `gh`), send it back with a review comment as the
 * next call's task, or discard it. Each one refuses with a one-line reason and
 * leaves everything as it was: a merge is computed off to the side (`git
 * merge-tree`, `git commit-tree`) and lands with one ref update that checks
 * the base's old value, or one fast-forward of the checkout that git itself
 * refuses when it would lose anything.
 *
 * @module
 */

import type { CallArgs, CallOrigin, CallResult } from "../contracts/coding_agents.ts";
import type { CheckoutConfig } from "../config/acp_tables.ts";
import { WatsError } from "../errors.ts";
import { readCalls, removeRecord } from "./work_record.ts";
import {
  baseBranch,
  findWork,
  type FoundWork,
  remoteOf,
  workId,
  type WorksSource,
} from "./works.ts";
import { errorMessage } from "../error_message.ts";
import { removeWork, workStatus } from "./work_import.ts";
import { checkWorkName, git, gitResult, workPlace } from "./worktrees.ts";

/** What the operations need beyond the works themselves. */
export interface WorkOpsSource extends WorksSource {
  /** Starts a coding agent call as the heartbeat agent's call tool does (src/acp/calls.ts). */
  call(harness: string, origin: CallOrigin, args: CallArgs): Promise<CallResult>;
  /** Why no call may start now (the runner's budget), or undefined. */
  blocked(): string | undefined;
  /** The checkouts calls may use (`agent.checkouts`). */
  checkoutNames(): string[];
  /** The profile the heartbeat agent calls as (`agent.profile`): a page's new work is its. */
  agentProfile?: string;
  /** Sweeps now (src/acp/sweep.ts); resolves with the worktrees it removed. */
  sweep(): Promise<{ removed: string[] }>;
  /** Runs `gh` (the draft pull request); tests give one that records the command line. */
  gh?: (args: string[], cwd: string) => Promise<{ code: number; stdout: string; stderr: string }>;
}

function refused(w: { work: string }, why: string): WatsError {
  return new WatsError("acp.work_refused", `work ${w.work}: ${why}`);
}

/**
 * Refuses, changing nothing, when the work's branch is not at `shown`: the
 * head the person was shown (a page's hidden field, `--head`). The work was
 * imported just before (findWork), so this compares the newest commits. Says
 * what changed: the commits that arrived since, or that the branch was
 * rewritten. A prefix of at least 12 hex digits is taken (as the CLI prints
 * heads); undefined binds nothing.
 */
async function refuseMoved(w: FoundWork, shown: string | undefined, what: string): Promise<void> {
  if (shown === undefined) return;
  if (!/^[0-9a-f]{12,64}$/.test(shown)) {
    throw refused(
      w,
      `not ${what}: the head must be a commit id of 12 to 64 hex digits, as ` +
        `\`wats work show ${w.id}\` prints it`,
    );
  }
  if (w.head !== undefined && w.head.startsWith(shown)) return;
  const was = shown.slice(0, 12);
  let change: string;
  if (w.head === undefined) {
    change = `its branch ${w.branch} is gone`;
  } else {
    const full = await gitResult(
      ["rev-parse", "--verify", "--quiet", `${shown}^{commit}`],
      w.co.path,
    );
    const from = full.code === 0 ? full.stdout.trim() : undefined;
    const after = from === undefined
      ? undefined
      : await gitResult(["merge-base", "--is-ancestor", from, w.head], w.co.path);
    if (from !== undefined && after?.code === 0) {
      const log = await git(
        ["log", "--format=%h %s", "--abbrev=12", `${from}..${w.head}`, "--"],
        w.co.path,
      );
      const added = log.split("\n").filter((l) => l !== "");
      change = `its head is now ${w.head.slice(0, 12)}, with ${added.length} new commit(s): ${
        added.slice(0, 5).map(oneLine).join("; ")
      }${added.length > 5 ? `; and ${added.length - 5} more` : ""}`;
    } else {
      change = `its branch was rewritten: its head is now ${w.head.slice(0, 12)}, ` +
        `which does not contain ${was}`;
    }
  }
  throw new WatsError(
    "acp.work_moved",
    `work ${w.work}: not ${what}: it changed since you were shown head ${was}: ${change}; ` +
      `nothing was changed. Look at it again (\`wats work show ${w.id}\`) and decide on what it is now`,
  );
}

/** Refuses while a call runs on the work or waits for a person. */
function refuseBusy(w: FoundWork, what: string): void {
  const why = w.state === "running"
    ? "a call is running on it"
    : w.state === "parked"
    ? "a call on it waits for a person's decision (`wats agent pending`)"
    : w.state === "in doubt"
    ? "a call on it is in doubt (`wats agent pending` to decide)"
    : undefined;
  if (why !== undefined) throw refused(w, `not ${what}: ${why}; try again once it ends`);
}

/**
 * Merges the work into the checkout's base branch: a fast-forward (`ff`) or
 * a merge commit (`merge`), per `[checkouts.NAME] merge`. Then sweeps, which
 * removes the work folder. Says what happened: a merge that landed is told as
 * landed, also when the sweep after it fails.
 */
export async function mergeWork(
  src: WorkOpsSource,
  id: string,
  shown?: string,
): Promise<string> {
  const w = await findWork(src, id);
  refuseBusy(w, "merged");
  await refuseMoved(w, shown, "merged");
  const { co } = w;
  if (w.head === undefined) throw refused(w, `its branch ${w.branch} is gone`);
  refuseUnimported(w, "merged");
  if (w.state === "merged") {
    return `work ${w.work} is already in ${co.base}${await sweepAfter(src, w)}`;
  }
  const target = await baseBranch(co);
  if (target === undefined) {
    throw refused(
      w,
      `the base ${co.base} of checkout ${co.name} is not a local branch; push the work ` +
        `(\`wats work push ${w.id}\`) and merge it there, or set [checkouts.${co.name}] base ` +
        "to a local branch",
    );
  }
  const ref = `refs/heads/${target}`;
  const old = (await git(["rev-parse", "--verify", ref], co.path)).trim();
  const ahead = Number(
    (await git(["rev-list", "--count", `${old}..${w.head}`, "--"], co.path)).trim(),
  );
  if (ahead === 0) {
    // Not merged (or it would read so): its worktree holds what was never committed.
    throw refused(
      w,
      `not merged: it has no commit that ${target} does not have, only uncommitted changes in ` +
        `its worktree (a commit that did not happen; \`wats work show ${w.id}\` lists them): ` +
        `send it back to commit them (\`wats work send ${w.id} --text "commit your changes"\`)`,
    );
  }
  const mode = co.merge ?? "ff";
  // The base's worktree, when it is checked out: it must be clean, and moves with it.
  const checkedOut = await worktreeOf(co, ref);
  if (checkedOut !== undefined) {
    const dirty = await git(["status", "--porcelain", "--untracked-files=no"], checkedOut);
    if (dirty.trim() !== "") {
      throw refused(
        w,
        `not merged: ${target} is checked out in ${checkedOut}, which has uncommitted changes; ` +
          "commit or stash them, then merge again",
      );
    }
  }
  let next: string;
  if (mode === "ff") {
    const ff = await gitResult(["merge-base", "--is-ancestor", old, w.head], co.path);
    if (ff.code !== 0) {
      throw refused(
        w,
        `not merged: ${target} moved since the work was cut, so it cannot fast-forward; ` +
          `rebase the work on ${target} (\`wats work send ${w.id} --text "rebase on ${target}"\`), ` +
          `or set [checkouts.${co.name}] merge = "merge"`,
      );
    }
    next = w.head;
  } else {
    next = await mergeCommit(w, co, old, target);
  }
  if (checkedOut !== undefined) {
    // git refuses, changing nothing, when the base moved to where this is no
    // fast-forward or an untracked file would be overwritten.
    const r = await gitResult(["merge", "--ff-only", "--quiet", next], checkedOut);
    if (r.code !== 0) {
      throw refused(
        w,
        `not merged: git would not move ${checkedOut} to the merge (${
          firstLine(r.stderr)
        }); nothing was changed`,
      );
    }
  } else {
    const r = await gitResult(
      ["update-ref", "-m", `wats work merge ${w.branch}`, ref, next, old],
      co.path,
    );
    if (r.code !== 0) {
      throw refused(w, `not merged: ${target} moved meanwhile; merge again`);
    }
  }
  const how = next === w.head ? "fast-forwarded" : `merged with commit ${next.slice(0, 12)} into`;
  return `${how} ${target}: work ${w.work} (${w.branch}) is in the base${await leftBehind(
    w,
  )}${await sweepAfter(src, w)}`;
}

/**
 * The sweep after a merge, said in the merge's answer: the merge has landed
 * whatever happens here, so a sweep that fails is told as such, never as a
 * refused merge.
 */
async function sweepAfter(src: WorkOpsSource, w: FoundWork): Promise<string> {
  try {
    return sweptLine(await src.sweep(), w);
  } catch (err) {
    return `; the cleanup afterwards failed (${errorMessage(err)}): ` +
      "`wats agent sweep` tries again";
  }
}

/** What merge and push leave behind: the worktree's uncommitted changes, said. */
async function leftBehind(w: FoundWork): Promise<string> {
  if (!w.hasWorktree) return "";
  const status = await workStatus(w.co, { dir: w.worktree, branch: w.branch, stateFile: "" })
    .catch(() => "");
  const n = status.split("\n").filter((l) => l.trim() !== "").length;
  return n === 0
    ? ""
    : `; ${n} uncommitted change(s) in its worktree stay behind, not in the commits ` +
      `(\`wats work show ${w.id}\` lists them)`;
}

/** Refuses a work whose latest commits could not be imported: the person would act on old ones. */
function refuseUnimported(w: FoundWork, what: string): void {
  if (w.importError !== undefined) throw refused(w, `not ${what}: ${w.importError}`);
}

/** A merge commit of the work into `old`, made without touching any working tree. */
async function mergeCommit(
  w: FoundWork,
  co: CheckoutConfig,
  old: string,
  target: string,
): Promise<string> {
  const head = w.head!;
  const r = await gitResult(
    ["merge-tree", "--write-tree", "--name-only", "--no-messages", old, head],
    co.path,
  );
  if (r.code === 1) {
    const files = r.stdout.split("\n").slice(1).filter((l) => l !== "");
    throw refused(
      w,
      `not merged: it conflicts with ${target} in ${files.slice(0, 5).join(", ")}${
        files.length > 5 ? ` and ${files.length - 5} more` : ""
      }; send it back to resolve (\`wats work send ${w.id} --text "merge ${target} and resolve"\`)`,
    );
  }
  if (r.code !== 0) throw refused(w, `not merged: git merge-tree failed: ${firstLine(r.stderr)}`);
  const tree = r.stdout.split("\n")[0]!.trim();
  const ident = await identity(co);
  return (await git(
    [
      ...ident,
      "commit-tree",
      tree,
      "-p",
      old,
      "-p",
      head,
      "-m",
      `Merge work ${w.work} (${w.branch}) into ${target}`,
    ],
    co.path,
  )).trim();
}

/** `-c user.name/email` when the checkout's git has no identity of its own. */
async function identity(co: CheckoutConfig): Promise<string[]> {
  const r = await gitResult(["config", "--get", "user.email"], co.path);
  return r.code === 0 ? [] : ["-c", "user.name=wats", "-c", "user.email=wats@localhost"];
}

/** The worktree of the checkout that has `ref` checked out, if one has. */
async function worktreeOf(co: CheckoutConfig, ref: string): Promise<string | undefined> {
  const out = await git(["worktree", "list", "--porcelain"], co.path);
  for (const block of out.split("\n\n")) {
    const lines = block.split("\n");
    if (lines.includes(`branch ${ref}`)) {
      return lines.find((l) => l.startsWith("worktree "))?.slice("worktree ".length);
    }
  }
  return undefined;
}

/**
 * What the sweep after a merge did, as the merge's answer says it: the
 * merged work's folder, and by name every other work it removed (each was
 * already in its base: merged, squashed or with equal patches), so none goes
 * unsaid.
 */
function sweptLine(swept: { removed: string[] }, w: FoundWork): string {
  const own = swept.removed.includes(w.worktree)
    ? `; the sweep removed its worktree ${w.worktree}`
    : w.hasWorktree
    ? "; the sweep keeps its worktree for now (`wats agent sweep` says why)"
    : "";
  const others = swept.removed.filter((d) => d !== w.worktree);
  if (others.length === 0) return own;
  return `${own}; it also removed ${others.length} other work(s) whose commits were all in ` +
    `their base already (merged, squashed or with equal patches): ${others.join(", ")}`;
}

/**
 * Pushes the work's branch to the checkout's remote with git's own
 * credentials; with `draftPr`, then opens a draft pull request with `gh`.
 */
export async function pushWork(
  src: WorkOpsSource,
  id: string,
  draftPr: boolean,
  shown?: string,
): Promise<string> {
  const w = await findWork(src, id);
  const { co } = w;
  await refuseMoved(w, shown, "pushed");
  if (w.head === undefined) throw refused(w, `its branch ${w.branch} is gone`);
  refuseUnimported(w, "pushed");
  const remote = await remoteOf(co);
  if (remote === undefined) {
    throw refused(
      w,
      `not pushed: checkout ${co.name} has no remote; add one with ` +
        `\`git -C ${co.path} remote add origin URL\``,
    );
  }
  const r = await gitResult(
    // The commit checked above, not the ref: an import meanwhile cannot change what goes.
    ["push", "--quiet", remote, `${w.head}:refs/heads/${w.branch}`],
    co.path,
  );
  if (r.code !== 0) throw refused(w, `not pushed to ${remote}: ${firstLine(r.stderr)}`);
  const pushed = `pushed ${w.branch} to ${remote}${await leftBehind(w)}`;
  if (!draftPr) return pushed;
  const gh = src.gh ?? runGh;
  const auth = await gh(["auth", "status"], co.path).catch(() => undefined);
  if (auth === undefined || auth.code !== 0) {
    return `${pushed}; no draft pull request: gh is not installed or not logged in ` +
      "(`gh auth login`), so open it yourself";
  }
  const args = ghPrArgs({
    work: w.work,
    branch: w.branch,
    base: await remoteBase(co, remote),
    body: prBody(readCalls(w.worktree)),
  });
  const pr = await gh(args, co.path);
  if (pr.code !== 0) return `${pushed}; gh pr create failed: ${firstLine(pr.stderr)}`;
  return `${pushed}; draft pull request: ${firstLine(pr.stdout)}`;
}

/** The base branch's name on the remote: `main` of `origin/main`, or the local base's upstream. */
async function remoteBase(co: CheckoutConfig, remote: string): Promise<string> {
  if (co.base.startsWith(`${remote}/`)) return co.base.slice(remote.length + 1);
  const local = await baseBranch(co);
  if (local === undefined) return co.base;
  const up = await gitResult(["config", "--get", `branch.${local}.merge`], co.path);
  return up.code === 0 ? up.stdout.trim().replace(/^refs\/heads\//, "") : local;
}

/** The `gh` command line that opens the work's draft pull request. Pure. */
export function ghPrArgs(
  pr: { work: string; branch: string; base: string; body: string },
): string[] {
  return [
    "pr",
    "create",
    "--draft",
    "--title",
    pr.work,
    "--body",
    pr.body,
    "--head",
    pr.branch,
    "--base",
    pr.base,
  ];
}

/** The pull request's body: the calls made on the work, newest last, bounded. */
export function prBody(calls: readonly { task: string; message?: string; outcome: string }[]) {
  const shown = calls.slice(-10);
  const one = (s: string) => {
    const l = s.split("\n").find((x) => x.trim() !== "")?.trim() ?? "";
    return l.length > 200 ? `${l.slice(0, 199)}…` : l;
  };
  return [
    "Made by a coding agent through wats. Its calls:",
    "",
    ...shown.map((c) =>
      `- ${one(c.task)} (${c.outcome})${c.message ? `\n  ${one(c.message)}` : ""}`
    ),
    ...(calls.length > shown.length ? [`- and ${calls.length - shown.length} earlier calls`] : []),
  ].join("\n");
}

async function runGh(
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("gh", {
    args,
    cwd,
    env: { GH_PROMPT_DISABLED: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A person's review comment, where it applies. */
export interface ReviewComment {
  text: string;
  file?: string;
  line?: number;
}

/** The task of the call a review comment starts. Pure. */
export function reviewTask(w: { branch: string }, c: ReviewComment): string {
  const where = c.file === undefined
    ? ""
    : ` on ${c.file}${c.line === undefined ? "" : `:${c.line}`}`;
  return `A person reviewed your work on branch ${w.branch} and sent it back with this ` +
    `comment${where}:\n\n---\n${c.text}\n---\n\n` +
    "Address the comment in this worktree, then commit your changes on the branch.";
}

/**
 * Sends the work back: the comment becomes the task of a new call on the same
 * work (same worktree, same ACP session), started now as the heartbeat
 * agent's call would be, within the runner's budget. Returns at once; the
 * call's end is in `wats work show`.
 */
export async function sendWork(src: WorkOpsSource, id: string, c: ReviewComment): Promise<string> {
  if (c.text.trim() === "") {
    throw new WatsError("acp.work_refused", "the comment is empty: say what to change");
  }
  if (c.line !== undefined && c.file === undefined) {
    throw new WatsError("acp.work_refused", "a line needs its file: add --file PATH");
  }
  const w = await findWork(src, id);
  refuseBusy(w, "sent back");
  const harness = src.harnesses[w.harness];
  if (harness === undefined || !harness.enabled) {
    throw refused(
      w,
      `not sent: its harness ${w.harness || "(unknown)"} is not enabled in config.toml`,
    );
  }
  if (!src.checkoutNames().includes(w.checkout)) {
    throw refused(w, `not sent: agent.checkouts does not allow checkout ${w.checkout}`);
  }
  const blocked = src.blocked();
  if (blocked !== undefined) throw refused(w, `not sent: ${blocked}`);
  const callId = `send-${Date.now().toString(36)}-${
    Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0"))
      .join("")
  }`;
  // Its outcome is in the work's calls (`wats work show`) and the node's JSON lines.
  src.call(harness.name, { agent: w.agent, thread: w.thread, callId }, {
    task: reviewTask(w, c),
    checkout: w.checkout,
    work: w.work,
  }).catch(() => {});
  return `sent back: call ${callId} on work ${w.work} started with your comment as its task; ` +
    `\`wats work show ${w.id}\` shows how it ends`;
}

/** What the page's "New work" form asks for. */
export interface NewWork {
  /** `[harnesses.NAME]`; empty: the one enabled harness. */
  harness: string;
  checkout: string;
  work: string;
  task: string;
}

/**
 * Starts a new work with a person's task (the dashboard's "New work"): the
 * call the heartbeat agent's harness tool makes (src/mcp/harness_tools.ts),
 * as the agent's profile and outside any thread, under the same policy,
 * budget and halt; a work of that name that exists is refused (send it back
 * instead). Returns at once, naming the work's id.
 */
export async function newWork(src: WorkOpsSource, req: NewWork): Promise<string> {
  const task = req.task.trim();
  if (task === "") {
    throw new WatsError("acp.work_refused", "nothing was started: the task is empty");
  }
  const enabled = Object.values(src.harnesses).filter((h) => h.enabled).map((h) => h.name);
  const harness = req.harness !== "" ? req.harness : enabled.length === 1 ? enabled[0]! : "";
  if (!enabled.includes(harness)) {
    throw new WatsError(
      "acp.work_refused",
      `nothing was started: ${
        harness === "" ? "no harness was chosen" : `harness ${harness} is not enabled`
      }; ` +
        `choose one of: ${enabled.join(", ") || "(none enabled in config.toml)"}`,
    );
  }
  const co = src.checkouts[req.checkout];
  if (co === undefined || !src.checkoutNames().includes(req.checkout)) {
    throw new WatsError(
      "acp.work_refused",
      `nothing was started: checkout "${req.checkout}" is not one the agent may use; ` +
        `use one of: ${src.checkoutNames().join(", ") || "(none: add [checkouts.NAME])"}`,
    );
  }
  checkWorkName(req.work);
  const agent = src.agentProfile ?? "person";
  const place = workPlace(src.root, {
    harness,
    checkout: co.name,
    agent,
    thread: "_",
    work: req.work,
  });
  const id = workId(co.name, place.branch);
  const taken = await gitResult(
    ["rev-parse", "--verify", "--quiet", `refs/heads/${place.branch}`],
    co.path,
  );
  if (taken.code === 0 || src.busy(place.dir) || (await exists(place.dir))) {
    throw new WatsError(
      "acp.work_refused",
      `nothing was started: work ${req.work} exists (${id}); send it back from its page ` +
        "to continue it, or choose another name",
    );
  }
  const blocked = src.blocked();
  if (blocked !== undefined) {
    throw new WatsError("acp.work_refused", `nothing was started: ${blocked}`);
  }
  const callId = `new-${Date.now().toString(36)}-${
    Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0"))
      .join("")
  }`;
  // Its outcome is in the work's calls (`wats work show`) and the node's JSON lines.
  src.call(harness, { agent, thread: "_", callId }, { task, checkout: co.name, work: req.work })
    .catch(() => {});
  return `started: call ${callId} on the new work ${req.work} (checkout ${co.name}, coding agent ` +
    `${harness}) with your task; \`wats work show ${id}\` shows how it ends`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Discards the work: removes its worktree (with its changes), its branch
 * (with its commits), its state file and its record. Says what was removed.
 */
export async function discardWork(
  src: WorkOpsSource,
  id: string,
  shown?: string,
): Promise<string> {
  const w = await findWork(src, id);
  refuseBusy(w, "discarded");
  await refuseMoved(w, shown, "discarded");
  const { co } = w;
  const removed: string[] = [];
  try {
    await removeWork(co, { dir: w.worktree, branch: w.branch, stateFile: "" }, w.head);
  } catch (err) {
    throw refused(w, `not discarded: ${errorMessage(err)}`);
  }
  if (w.hasWorktree) removed.push(`worktree ${w.worktree}`);
  if (w.head !== undefined) removed.push(`branch ${w.branch} (was ${w.head.slice(0, 12)})`);
  await Deno.remove(`${w.worktree}.acp.json`).catch(() => {});
  removeRecord(w.worktree);
  return `discarded work ${w.work}: removed ${removed.join(" and ") || "its record"}`;
}

function oneLine(s: string): string {
  return s.length > 100 ? `${s.slice(0, 99)}…` : s;
}

function firstLine(s: string): string {
  return s.split("\n").find((l) => l.trim() !== "")?.trim() ?? "no message";
}
