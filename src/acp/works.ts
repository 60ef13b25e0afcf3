/**
 * The coding agents' works as a person sees them (issue 19, docs/acp.md
 * "Works"): every worktree under the ACP root, and every branch
 * `wats/<agent>/<thread>/<work>` whose worktree is gone (`swept`), with the
 * state the ACP layer knows, newest first; and one work whole — its commits
 * not in the base, its diff against the merge base, its calls and its
 * session transcript. `wats work` and the dashboard show these
 * (src/contracts/works.ts); the daemon computes them here.
 *
 * Each work's commits are imported into its checkout first (hash-checked,
 * src/acp/work_import.ts); every git run then reads the checkout and its copy
 * of the work's branch, never the work folder's own repository, whose config
 * the coding agent writes (docs/decisions/work_repos.md).
 *
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import type { CheckoutConfig, HarnessConfig } from "../config/acp_tables.ts";
import { IN_DOUBT, type PermissionAsk } from "../contracts/coding_agents.ts";
import type {
  WorkCall,
  WorkCommit,
  WorkDetail,
  WorksPage,
  WorkState,
  WorkSummary,
} from "../contracts/works.ts";
import { WatsError } from "../errors.ts";
import { DIFF_CAPS, parseDiff } from "./diff.ts";
import type { Sandboxer } from "../safety/sandboxer.ts";
import { errorMessage } from "../error_message.ts";
import { findWorks, isInBase } from "./sweep.ts";
import { importWork, workChanges, workStatus } from "./work_import.ts";
import { lastStart, readCalls, readSession, recordFiles } from "./work_record.ts";
import { git, gitResult, workPlace } from "./worktrees.ts";
import { readWorkState } from "./work_state.ts";

/** What the works are read from: the layer's tables and its live state. */
export interface WorksSource {
  /** `<data>/worktrees`. */
  root: string;
  harnesses: Record<string, HarnessConfig>;
  checkouts: Record<string, CheckoutConfig>;
  /** True while a call runs on the work whose worktree is `dir` (src/acp/calls.ts). */
  busy(dir: string): boolean;
  /** The requests held for a person (the review queue): parked calls and calls in doubt. */
  held(): readonly PermissionAsk[];
  /** The coding agents' sandbox: a work's commits are imported through it. None: plainly. */
  sandbox?: Sandboxer;
}

/** A work as listed, with what the operations need that the view does not show. */
export interface FoundWork extends WorkSummary {
  co: CheckoutConfig;
  /** True when the work folder is there. */
  hasWorktree: boolean;
  /** Why the work's latest commits could not be imported (its branch is as last imported). */
  importError?: string;
}

/** How many works a page holds. */
export const WORKS_PAGE = 50;
/** How many commits `show` lists. */
const MAX_COMMITS = 500;

/** The branch of a work: `wats/<agent>/<thread>/<work>`. */
const BRANCH = /^wats\/([^/]+)\/([^/]+)\/([^/]+)$/;

/**
 * Every work of every checkout, newest first.
 *
 * Requires `--allow-read` on the root and the checkouts, and `--allow-run=git`.
 */
export async function allWorks(src: WorksSource): Promise<FoundWork[]> {
  const held = src.held();
  const out: FoundWork[] = [];
  const seen = new Set<string>();
  for (const f of findWorks(src.root)) {
    const co = src.checkouts[f.checkout];
    if (co === undefined) continue;
    const rel = f.dir.slice(src.root.length + 1).split("/");
    const [harness = "", , a = "", t = "", w = ""] = rel;
    const branch = f.branch;
    seen.add(`${co.name}\0${branch}`);
    let importError: string | undefined;
    await importWork(co, { dir: f.dir, branch, stateFile: `${f.dir}.acp.json` }, src.sandbox)
      .catch((err) => importError = errorMessage(err));
    const head = await headOf(co, branch);
    const at: WorkAt = { co, branch, dir: f.dir, head, hasWorktree: true };
    const state = await stateOf(src, at, held);
    const found = summary(at, { harness, agent: a, thread: t, work: w }, state);
    out.push(importError === undefined ? found : { ...found, importError });
  }
  for (const co of Object.values(src.checkouts)) {
    let refs: string;
    try {
      refs = await git(
        ["for-each-ref", "--format=%(refname:short)", "refs/heads/wats/"],
        co.path,
      );
    } catch {
      continue; // Not a repository any more: the daemon's start check says so.
    }
    for (const branch of refs.split("\n").filter((l) => l !== "")) {
      const m = BRANCH.exec(branch);
      if (m === null || seen.has(`${co.name}\0${branch}`)) continue;
      const [, a = "", t = "", w = ""] = m;
      const harness = Object.keys(src.harnesses).find((h) =>
        exists(recordFiles(`${src.root}/${h}/${co.name}/${a}/${t}/${w}`).calls)
      ) ?? Object.keys(src.harnesses)[0] ?? "";
      let dir: string;
      try {
        dir = workPlace(src.root, {
          harness: harness || "_",
          checkout: co.name,
          agent: a,
          thread: t,
          work: w,
        }).dir;
      } catch {
        continue; // Not a name wats gives: someone else's branch.
      }
      const head = await headOf(co, branch);
      const at: WorkAt = { co, branch, dir, head, hasWorktree: false };
      out.push(summary(at, { harness, agent: a, thread: t, work: w }, "swept"));
    }
  }
  return out.sort((x, y) => y.updatedAt - x.updatedAt || x.id.localeCompare(y.id));
}

/** One page of the works, newest first. */
export async function listWorks(src: WorksSource, page: number): Promise<WorksPage> {
  const all = await allWorks(src);
  const works = all.slice(page * WORKS_PAGE, (page + 1) * WORKS_PAGE)
    .map(({ co: _co, hasWorktree: _has, ...view }) => view);
  return (page + 1) * WORKS_PAGE < all.length ? { works, next: page + 1 } : { works };
}

/** The work with id `id`; throws `acp.no_work` saying where to find ids. */
export async function findWork(src: WorksSource, id: string): Promise<FoundWork> {
  const w = (await allWorks(src)).find((x) => x.id === id);
  if (w === undefined) {
    throw new WatsError(
      "acp.no_work",
      `no work ${JSON.stringify(id)}: \`wats work list\` shows the works and their ids`,
    );
  }
  return w;
}

/** One work whole: commits, diff, calls and transcript. */
export async function showWork(src: WorksSource, id: string): Promise<WorkDetail> {
  const w = await findWork(src, id);
  const { co, hasWorktree: _has, ...view } = w;
  let commits: WorkCommit[] = [];
  let diff: WorkDetail["diff"] = [];
  let diffCut = false;
  if (w.head !== undefined) {
    commits = await commitsOf(co, w.branch);
    const text = await git(
      [
        "diff",
        "-M",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "-p",
        `${co.base}...refs/heads/${w.branch}`,
        "--",
      ],
      co.path,
    );
    const parsed = parseDiff(text, DIFF_CAPS);
    diff = parsed.files;
    diffCut = parsed.cut;
  }
  const into = await baseBranch(co);
  const uncommitted = w.hasWorktree ? await uncommittedOf(co, w) : undefined;
  return {
    ...view,
    commits,
    diff,
    diffCut,
    calls: liveCalls(readCalls(w.worktree), w.state),
    transcript: readSession(w.worktree),
    ...(await remoteOf(co).then((r) => r === undefined ? {} : { remote: r })),
    mergeMode: co.merge ?? "ff",
    ...(into !== undefined ? { mergeInto: into } : {}),
    ...(uncommitted !== undefined ? { uncommitted } : {}),
  };
}

/** The work folder's uncommitted changes as a parsed diff, or undefined when it has none. */
async function uncommittedOf(
  co: CheckoutConfig,
  w: FoundWork,
): Promise<WorkDetail["uncommitted"]> {
  const place = { dir: w.worktree, branch: w.branch, stateFile: `${w.worktree}.acp.json` };
  if (w.head === undefined) return undefined;
  try {
    const parsed = parseDiff(await workChanges(co, place), DIFF_CAPS);
    return parsed.files.length === 0 ? undefined : { diff: parsed.files, cut: parsed.cut };
  } catch {
    return undefined; // The folder went meanwhile: nothing to show.
  }
}

/**
 * The local branch a checkout's base names, which `merge` moves: the base
 * itself when it is a local branch, the branch checked out when it is
 * `HEAD`; undefined for a remote branch or a detached HEAD.
 */
export async function baseBranch(co: CheckoutConfig): Promise<string | undefined> {
  if (co.base === "HEAD") {
    const r = await gitResult(["symbolic-ref", "--quiet", "--short", "HEAD"], co.path);
    return r.code === 0 ? r.stdout.trim() : undefined;
  }
  const name = co.base.replace(/^refs\/heads\//, "");
  const r = await gitResult(["rev-parse", "--verify", "--quiet", `refs/heads/${name}`], co.path);
  return r.code === 0 ? name : undefined;
}

/**
 * The remote `push` uses: the base's own remote (`origin/main`), the local
 * base branch's upstream, the checkout's only remote, or `origin`; undefined
 * when the checkout has no remote.
 */
export async function remoteOf(co: CheckoutConfig): Promise<string | undefined> {
  const remotes = (await git(["remote"], co.path)).split("\n").filter((r) => r !== "");
  if (remotes.length === 0) return undefined;
  const first = co.base.replace(/^refs\/remotes\//, "").split("/")[0] ?? "";
  if (co.base.includes("/") && remotes.includes(first)) return first;
  const local = await baseBranch(co);
  if (local !== undefined) {
    const up = await gitResult(["config", "--get", `branch.${local}.remote`], co.path);
    if (up.code === 0 && remotes.includes(up.stdout.trim())) return up.stdout.trim();
  }
  if (remotes.length === 1) return remotes[0];
  return remotes.includes("origin") ? "origin" : undefined;
}

/** A stable, URL-safe id: readable when short enough, else a hash of the same. */
export function workId(checkout: string, branch: string): string {
  const readable = `${checkout}~${branch.replace(/^wats\//, "").replaceAll("/", "~")}`;
  if (readable.length <= 200 && /^[A-Za-z0-9._~-]+$/.test(readable)) return readable;
  return `h~${bytesToHex(sha256(new TextEncoder().encode(readable))).slice(0, 40)}`;
}

/** One work's branch in its checkout, its head, and its worktree's place (whether there or not). */
interface WorkAt {
  co: CheckoutConfig;
  branch: string;
  dir: string;
  head: { sha: string; at: number } | undefined;
  hasWorktree: boolean;
}

/** A work's names as its path gives them: what its start record does not say. */
interface WorkNames {
  harness: string;
  agent: string;
  thread: string;
  work: string;
}

function summary(
  { co, branch, dir, head, hasWorktree }: WorkAt,
  names: WorkNames,
  state: WorkState,
): FoundWork {
  const start = lastStart(dir);
  const calls = readCalls(dir);
  const lastCall = calls.at(-1)?.at ?? 0;
  return {
    id: workId(co.name, branch),
    harness: start?.harness ?? names.harness,
    checkout: co.name,
    agent: start?.agent ?? names.agent,
    thread: start?.thread ?? names.thread,
    work: names.work,
    branch,
    worktree: dir,
    base: co.base,
    ...(head !== undefined ? { head: head.sha } : {}),
    state,
    updatedAt: Math.max((head?.at ?? 0) * 1000, lastCall, mtimeOf(dir)),
    co,
    hasWorktree,
  };
}

/** Where a work is now: the layer's live state first, then whether the base has it. */
async function stateOf(
  src: WorksSource,
  { co, dir, branch, head, hasWorktree }: WorkAt,
  held: readonly PermissionAsk[],
): Promise<WorkState> {
  const asks = held.filter((a) => a.worktree === dir);
  if (asks.some((a) => a.kind === IN_DOUBT)) return "in doubt";
  if (asks.length > 0) return "parked";
  if (src.busy(dir)) return "running";
  if (readWorkState(`${dir}.acp.json`).budgetStop !== undefined) return "stopped: budget";
  if (head === undefined) return "idle";
  try {
    if (!(await inBaseCached(co, branch, head.sha))) return "idle";
    // A branch with nothing new is in the base; a worktree with changes is not merged for that.
    if (hasWorktree && (await workStatus(co, { dir, branch, stateFile: "" })).trim() !== "") {
      return "idle";
    }
    return "merged";
  } catch {
    return "idle";
  }
}

/**
 * Whether the base has the work, remembered per (branch head, base head):
 * the test writes a throwaway commit object (src/acp/sweep.ts), and the
 * dashboard lists the works every few seconds.
 */
const inBaseSeen = new Map<string, boolean>();

async function inBaseCached(co: CheckoutConfig, branch: string, head: string): Promise<boolean> {
  const base = (await git(["rev-parse", "--verify", `${co.base}^{commit}`], co.path)).trim();
  const key = `${co.path}\0${head}\0${base}`;
  const known = inBaseSeen.get(key);
  if (known !== undefined) return known;
  const answer = await isInBase(co.path, `refs/heads/${branch}`, co.base);
  // Bounded: past 1,000 pairs it starts again.
  if (inBaseSeen.size >= 1_000) inBaseSeen.clear();
  inBaseSeen.set(key, answer);
  return answer;
}

/** A call noted as started but never ended is running only while the layer runs one. */
function liveCalls(calls: WorkCall[], state: WorkState): WorkCall[] {
  const live = state === "running" || state === "parked";
  return calls.map((c, i) =>
    c.outcome === "running" && !(live && i === calls.length - 1)
      ? { ...c, outcome: state === "in doubt" && i === calls.length - 1 ? "in doubt" : "cut off" }
      : c
  );
}

async function headOf(
  co: CheckoutConfig,
  branch: string,
): Promise<{ sha: string; at: number } | undefined> {
  const r = await gitResult(
    ["log", "-1", "--format=%H %ct", `refs/heads/${branch}`, "--"],
    co.path,
  );
  const [sha, at] = r.stdout.trim().split(" ");
  return r.code === 0 && sha ? { sha, at: Number(at) || 0 } : undefined;
}

async function commitsOf(co: CheckoutConfig, branch: string): Promise<WorkCommit[]> {
  const out = await git(
    [
      "log",
      `--max-count=${MAX_COMMITS}`,
      "--format=%H%x1f%s%x1f%an%x1f%ct",
      `${co.base}..refs/heads/${branch}`,
      "--",
    ],
    co.path,
  );
  return out.split("\n").filter((l) => l !== "").map((l) => {
    const [sha = "", subject = "", author = "", at = "0"] = l.split("\x1f");
    return { sha, subject, author, at: Number(at) };
  });
}

function mtimeOf(path: string): number {
  try {
    return Deno.statSync(path).mtime?.getTime() ?? 0;
  } catch {
    return 0;
  }
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
