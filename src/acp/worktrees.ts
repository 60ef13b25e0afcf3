/**
 * One git worktree and branch per piece of work (issue 10, item 3): the
 * worktree lives under `<data>/worktrees/<harness>/<checkout>/<agent>/<thread>/<work>`
 * and its branch `wats/<agent>/<thread>/<work>` is cut from the checkout's base
 * (fetched first when the checkout says so). A later call with the same work
 * finds both and continues.
 *
 * Git runs with hooks off (`core.hooksPath=/dev/null`): cutting a worktree
 * must not run code from the repository.
 *
 * @module
 */

import { WatsError } from "../errors.ts";
import type { CheckoutConfig } from "../config/acp_tables.ts";
import type { Commit } from "../contracts/coding_agents.ts";

/** A work's place: its worktree folder and branch. */
export interface WorkPlace {
  dir: string;
  branch: string;
  /** A file beside the worktree (not in it) where the ACP session id is kept. */
  stateFile: string;
}

/** A git command failed, or a name cannot be used. */
export class WorktreeError extends WatsError {}

/** A work name: it becomes a folder and a branch component. */
const WORK = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Checks a `work` argument; throws a `WorktreeError` saying what is allowed. */
export function checkWorkName(work: string): string {
  if (!WORK.test(work) || work.includes("..") || work.endsWith(".lock")) {
    throw new WorktreeError(
      "acp.bad_work",
      `work "${work}" is not a usable name: use letters, digits, ".", "_" or "-" ` +
        '(up to 64, starting with a letter or digit), such as "fix-login"',
    );
  }
  return work;
}

/** An agent profile or thread id as a path and branch component. */
export function segment(s: string): string {
  const t = s.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[.-]+/, "").replace(/\.+$/, "")
    .replace(/\.\.+/g, ".").replace(/\.lock$/, "-lock").slice(0, 64);
  return t === "" ? "_" : t;
}

/** Where a work lives. `thread` is the thread's root id, or `_` for work outside any one thread. */
export function workPlace(
  root: string,
  harness: string,
  checkout: string,
  agent: string,
  thread: string,
  work: string,
): WorkPlace {
  const a = segment(agent);
  // A thread is its root post's id: its first 12 hex digits keep paths and branches short.
  const t = segment(/^[0-9a-f]{64}$/.test(thread) ? thread.slice(0, 12) : thread);
  const w = checkWorkName(work);
  const dir = `${root}/${harness}/${checkout}/${a}/${t}/${w}`;
  return { dir, branch: `wats/${a}/${t}/${w}`, stateFile: `${dir}.acp.json` };
}

/** Runs git and returns its stdout; throws a `WorktreeError` with git's message. */
export async function git(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<string> {
  const out = await gitResult(args, cwd, env);
  if (out.code !== 0) {
    throw new WorktreeError(
      "acp.git",
      `git ${args.join(" ")} failed in ${cwd}: ${out.stderr.trim() || `exit ${out.code}`}`,
    );
  }
  return out.stdout;
}

/**
 * Runs git like {@linkcode git} and returns its exit code and output, for the
 * commands whose non-zero exit is an answer (`git merge-tree`: conflicts).
 */
export async function gitResult(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("git", {
    args: ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", ...args],
    cwd,
    env: { GIT_TERMINAL_PROMPT: "0", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * Checks that a checkout is a git repository with at least one commit and
 * that its base resolves. Throws a `WorktreeError` saying which.
 */
export async function checkCheckout(co: CheckoutConfig): Promise<void> {
  try {
    await git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], co.path);
  } catch (err) {
    throw new WorktreeError(
      "acp.bad_checkout",
      `checkout ${co.name}: ${co.path} is not a git repository with at least one commit; ` +
        "fix [checkouts." + co.name + "] path in config.toml",
      { cause: err },
    );
  }
}

/**
 * What a commit in the worktree needs of its repository's git dir, for the
 * sandbox (docs/decisions/sandbox.md): the git dir to read, and writable in it
 * only the worktree's admin dir (HEAD, index, its logs), the objects, and the
 * folder of the work's branch ref and of its reflog. Never `config` or `hooks`.
 */
export async function commitPaths(
  worktree: string,
  branch: string,
): Promise<{ readable: string[]; writable: string[] }> {
  const [gitDir, common] = (await git(
    ["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"],
    worktree,
  )).trim().split("\n");
  if (gitDir === undefined || common === undefined) {
    throw new Error(
      `git rev-parse printed no git dir for ${worktree}: check that it is a git worktree`,
    );
  }
  const refDir = branch.slice(0, branch.lastIndexOf("/"));
  return {
    readable: [common],
    writable: [
      gitDir,
      `${common}/objects`,
      `${common}/refs/heads/${refDir}`,
      `${common}/logs/refs/heads/${refDir}`,
    ],
  };
}

/** True when the folder is a worktree of some repository. */
async function isWorktree(dir: string): Promise<boolean> {
  try {
    await Deno.stat(`${dir}/.git`);
    return true;
  } catch {
    return false;
  }
}

async function branchExists(repo: string, branch: string): Promise<boolean> {
  try {
    await git(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`], repo);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure the work's worktree exists: reuses it, re-adds it on its
 * existing branch, or fetches (when the checkout says so) and cuts a new
 * branch from the base. Returns whether it was created now.
 *
 * Requires `--allow-run=git`, read and write on the worktrees root and the checkout.
 */
export async function ensureWorktree(
  co: CheckoutConfig,
  place: WorkPlace,
): Promise<{ created: boolean }> {
  if (await isWorktree(place.dir)) return { created: false };
  await Deno.mkdir(place.dir.replace(/\/[^/]+$/, ""), { recursive: true });
  if (await branchExists(co.path, place.branch)) {
    await git(["worktree", "add", "--quiet", place.dir, place.branch], co.path);
    return { created: false };
  }
  if (co.fetch) await git(["fetch", "--quiet"], co.path);
  const base = (await git(["rev-parse", "--verify", `${co.base}^{commit}`], co.path)).trim();
  await git(["worktree", "add", "--quiet", "-b", place.branch, place.dir, base], co.path);
  return { created: true };
}

/**
 * Runs git in a work's worktree with the git dir its checkout registered for
 * it, never the one the worktree's `.git` file names, and with the checkout's
 * own common dir, never the one the admin dir's `commondir` names: the coding
 * agent can rewrite either (it writes the admin dir to commit, inside its
 * sandbox) and point it at a config of its own (`core.fsmonitor`, filters),
 * which would run its programs as the daemon, outside the sandbox.
 */
export async function gitIn(co: CheckoutConfig, dir: string, args: string[]): Promise<string> {
  const { admin, common } = await adminDir(co, dir);
  return await git(["--git-dir", admin, "--work-tree", dir, ...args], dir, {
    GIT_COMMON_DIR: common,
  });
}

/**
 * The environment that pins git to the checkout's own common dir (config,
 * objects, refs): what a git run inside a worktree's admin dir (`git worktree
 * remove` checks the worktree with one) must use, whatever `commondir` says.
 */
export async function pinnedCommonDir(co: CheckoutConfig): Promise<{ GIT_COMMON_DIR: string }> {
  const common = (await git(["rev-parse", "--path-format=absolute", "--git-common-dir"], co.path))
    .trim();
  return { GIT_COMMON_DIR: common };
}

/** `<checkout's git dir>/worktrees/<id>`: the folder whose `gitdir` file names `<dir>/.git`. */
async function adminDir(
  co: CheckoutConfig,
  dir: string,
): Promise<{ admin: string; common: string }> {
  const common = (await pinnedCommonDir(co)).GIT_COMMON_DIR;
  const want = realOr(dir);
  try {
    for (const e of Deno.readDirSync(`${common}/worktrees`)) {
      const admin = `${common}/worktrees/${e.name}`;
      let gitdir: string;
      try {
        gitdir = Deno.readTextFileSync(`${admin}/gitdir`).trim();
      } catch {
        continue;
      }
      if (realOr(gitdir.replace(/\/\.git$/, "")) === want) return { admin, common };
    }
  } catch {
    // No worktrees folder: the checkout has none.
  }
  throw new WorktreeError(
    "acp.no_worktree",
    `${dir} is not a worktree of checkout ${co.name} (${co.path})`,
  );
}

function realOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** The worktree's HEAD commit. */
export async function headOf(co: CheckoutConfig, dir: string): Promise<string> {
  return (await gitIn(co, dir, ["rev-parse", "HEAD"])).trim();
}

/** The commits on the work's branch that are not in the base, newest first. */
export async function commitsSince(
  co: CheckoutConfig,
  dir: string,
  base: string,
): Promise<Commit[]> {
  const out = await gitIn(co, dir, ["log", "--format=%H%x1f%s", `${base}..HEAD`, "--"]);
  return out.split("\n").filter((l) => l !== "").map((l) => {
    // The format always prints the separator; a subject can still be empty.
    const [sha = "", subject = ""] = l.split("\x1f");
    return { sha, subject };
  });
}
