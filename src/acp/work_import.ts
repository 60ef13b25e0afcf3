/**
 * The hash-checked import of a work's commits into its checkout
 * (docs/decisions/work_repos.md): `git fetch` run in the checkout with
 * `transfer.fsckObjects` and hooks off, whose upload-pack runs inside the
 * coding agent's kind of sandbox, so the work repository's config (the
 * agent's) is only ever read in there. The checkout's `refs/heads/wats/…`
 * branch is then the daemon's verified copy, which every other git command on
 * a work reads. Also the other git runs that must read a work repository
 * and a work's removal; the sweep's view of a work folder's uncommitted
 * changes, asked of git in the checkout with the folder as a mere work tree.
 *
 * @module
 */

import type { CheckoutConfig } from "../config/acp_tables.ts";
import { forgetPrivateHomes } from "../safety/sandbox_home.ts";
import type { Sandboxer } from "../safety/sandboxer.ts";
import {
  commonDir,
  dataDirOfWork,
  ensureWorktree,
  git,
  gitResult,
  legacyAdmin,
  removeTree,
  type WorkPlace,
  WorktreeError,
} from "./worktrees.ts";

/** How long a git run on a work may take before it is killed (a hostile config can hang it). */
const WORK_GIT_TIMEOUT_MS = 300_000;

/** What the last import of each work saw of its refs (lstat only): unchanged, no import. */
const imported = new Map<string, string>();

/** What an import did. */
export interface ImportResult {
  /** False when the refs had not changed since the last import. */
  ran: boolean;
}

/**
 * Brings the work's branch into the checkout, hash-checked: `git fetch` in the
 * checkout with `transfer.fsckObjects` (index-pack recomputes every object's
 * hash and checks it is well formed and complete), hooks off, no tags, no
 * FETCH_HEAD, and the work's upload-pack run inside the sandbox. Only
 * `refs/heads/<branch>` of the checkout moves (forced: it is the work's).
 * Skipped when the work's ref files have not changed since the last import.
 * An older version's work is recreated first.
 *
 * Rejects with a `WorktreeError` (code `acp.git`) with git's reason when the
 * import is refused (a corrupt or forged object, no such branch in the work).
 */
export function importWork(
  co: CheckoutConfig,
  place: WorkPlace,
  sandbox?: Sandboxer,
): Promise<ImportResult> {
  // One at a time per work: two fetches would race for the branch's lock.
  const before = running.get(place.dir) ?? Promise.resolve();
  const run = before.catch(() => {}).then(() => importNow(co, place, sandbox));
  running.set(place.dir, run);
  const forget = () => {
    if (running.get(place.dir) === run) running.delete(place.dir);
  };
  run.then(forget, forget);
  return run;
}

/** The tail of each work's imports. */
const running = new Map<string, Promise<unknown>>();

async function importNow(
  co: CheckoutConfig,
  place: WorkPlace,
  sandbox: Sandboxer | undefined,
): Promise<ImportResult> {
  const common = await commonDir(co);
  if (legacyAdmin(common, place.dir) !== undefined) {
    await ensureWorktree(co, place);
    return { ran: false };
  }
  if (!isDir(place.dir)) return { ran: false };
  const seen = refSignature(place.dir, place.branch);
  if (imported.get(place.dir) === seen) return { ran: false };
  const ref = `refs/heads/${place.branch}`;
  const uploadPack = await workGit(sandbox, common, place.dir, [
    // Inside the sandbox this is the agent's own config; outside (sandbox off) no program of it.
    "-c",
    "core.alternateRefsCommand=true",
    // A local copy: searching for deltas costs time and saves nothing worth it.
    "-c",
    "pack.window=0",
    "upload-pack",
  ]);
  const r = await gitResult(
    [
      "-c",
      "transfer.fsckObjects=true",
      "-c",
      "fetch.fsckObjects=true",
      "-c",
      "protocol.file.allow=always",
      "-c",
      "fetch.recurseSubmodules=false",
      "fetch",
      "--quiet",
      "--no-tags",
      "--no-prune",
      "--no-write-fetch-head",
      "--no-auto-gc",
      "--no-recurse-submodules",
      `--upload-pack=exec ${uploadPack.map(shellQuote).join(" ")}`,
      place.dir,
      `+${ref}:${ref}`,
    ],
    co.path,
    // glibc hands freed heap back after each object's zlib stream and faults it in again:
    // measured, that churn was three quarters of the import's time (bench/work_import.ts).
    { MALLOC_TOP_PAD_: String(16 << 20) },
    AbortSignal.timeout(WORK_GIT_TIMEOUT_MS),
  );
  if (r.code !== 0) {
    throw new WorktreeError(
      "acp.git",
      `the commits of work ${place.branch} were not brought into checkout ${co.name}: ` +
        `${r.stderr.trim().split("\n").slice(-3).join(" ") || `git fetch exited ${r.code}`}; ` +
        "the checkout keeps the branch as it was",
    );
  }
  imported.set(place.dir, seen);
  return { ran: true };
}

/**
 * The work folder's changes and untracked files against the checkout's copy
 * of its branch, as `<status> <path>` lines: empty when it holds nothing
 * uncommitted. Git runs in the checkout (its config, hooks off) with the
 * folder only as a work tree and an index of its own beside the folder, so
 * neither the work repository's config nor its index is read.
 */
export async function workStatus(co: CheckoutConfig, place: WorkPlace): Promise<string> {
  const index = `${place.dir}.index`;
  const common = await commonDir(co);
  const env = { GIT_INDEX_FILE: index };
  const inCheckout = (args: string[]) =>
    git(["--git-dir", common, "--work-tree", place.dir, ...args], co.path, env);
  try {
    await inCheckout(["read-tree", `refs/heads/${place.branch}`]);
    // Exit 1 lists files that need an update: the diff below names them.
    await gitResult(
      ["--git-dir", common, "--work-tree", place.dir, "update-index", "-q", "--refresh"],
      co.path,
      env,
    );
    const changed = await inCheckout(["diff-files", "--name-status"]);
    const untracked = await inCheckout(["ls-files", "--others", "--exclude-standard"]);
    return changed + untracked.split("\n").filter((l) => l !== "").map((l) => `?? ${l}\n`)
      .join("");
  } finally {
    await Deno.remove(index).catch(() => {});
  }
}

/**
 * The work folder's uncommitted changes against the checkout's copy of its
 * branch, as a patch (`git diff`: changed and deleted files, and untracked
 * ones as added, git's ignore rules applied), asked of git in the checkout
 * as {@linkcode workStatus} asks: the folder only as a work tree, an index of
 * its own beside it, no external diff or textconv. What a person sees of a
 * work whose coding agent said "committed" but whose commit never happened.
 */
export async function workChanges(co: CheckoutConfig, place: WorkPlace): Promise<string> {
  const index = `${place.dir}.changes.index`;
  const common = await commonDir(co);
  const env = { GIT_INDEX_FILE: index };
  const inCheckout = (args: string[]) =>
    git(["--git-dir", common, "--work-tree", place.dir, ...args], co.path, env);
  try {
    await inCheckout(["read-tree", `refs/heads/${place.branch}`]);
    // Untracked files as intent-to-add: shown as new files, no object written for them.
    await inCheckout(["add", "--all", "--intent-to-add", "--", "."]);
    return await inCheckout(
      ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "-p", "--"],
    );
  } finally {
    await Deno.remove(index).catch(() => {});
  }
}

/**
 * A git command line that runs in the work folder as its repository (the
 * import's upload-pack): inside a sandbox where the folder and the checkout's
 * git dir are read-only and nothing is writable, or plainly when there is no
 * sandbox (`sandbox.mode = off`: the agent itself runs unsandboxed then), with
 * every program its config could name overridden.
 */
async function workGit(
  sandbox: Sandboxer | undefined,
  common: string,
  dir: string,
  args: string[],
): Promise<string[]> {
  const argv = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", ...args];
  if (sandbox === undefined) return ["git", ...argv];
  const wrap = await sandbox.prepare({
    what: `git in work ${dir}`,
    cwd: dir,
    env: {},
    readable: [common, dir],
    writable: [],
    offline: true,
  });
  const w = wrap("git", argv);
  return [w.program, ...w.args];
}

/**
 * Removes a work: its folder, the private homes its agents and its import's git had (they may
 * hold the person's login), and the checkout's branch (only if it still points at `head`, when
 * given). Forgets its import.
 */
export async function removeWork(
  co: CheckoutConfig,
  place: WorkPlace,
  head: string | undefined,
): Promise<void> {
  await removeTree(place.dir);
  imported.delete(place.dir);
  const dataDir = dataDirOfWork(place.dir);
  if (dataDir !== undefined) forgetPrivateHomes(dataDir, place.dir);
  if (head !== undefined) {
    await git(["update-ref", "-d", `refs/heads/${place.branch}`, head], co.path);
  }
}

/**
 * The work's ref files as lstat sees them: what changes when a commit moves
 * its branch. Cheap (four lstat calls, nothing read), so a call can look
 * after each of the coding agent's tool calls.
 */
export function refSignature(dir: string, branch: string): string {
  return [".git", ".git/HEAD", ".git/packed-refs", `.git/refs/heads/${branch}`].map((p) => {
    try {
      const s = Deno.lstatSync(`${dir}/${p}`);
      return `${s.ino}:${s.size}:${s.mtime?.getTime()}:${s.isFile}`;
    } catch {
      return "-";
    }
  }).join("|");
}

function isDir(path: string): boolean {
  try {
    return Deno.lstatSync(path).isDirectory;
  } catch {
    return false;
  }
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}
