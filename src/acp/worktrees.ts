/**
 * One work folder and branch per piece of work (issue 10, item 3; issue 26):
 * the folder lives under `<data>/worktrees/<harness>/<checkout>/<agent>/<thread>/<work>`
 * and is a git repository of its own (docs/decisions/work_repos.md) whose
 * objects' alternate is the checkout's object store; its branch
 * `wats/<agent>/<thread>/<work>` is cut from the checkout's base (fetched
 * first when the checkout says so) and also kept in the checkout, as the
 * daemon's verified copy (src/acp/work_import.ts). A later call with the same
 * work finds both and continues; a folder that is gone is made again from the
 * branch.
 *
 * Every git run here has hooks and fsmonitor off and never prompts, and runs
 * in the checkout (or in a work folder only while the daemon makes it, before
 * any agent saw it): nothing the coding agent writes steers it.
 *
 * @module
 */

import { WatsError } from "../errors.ts";
import type { CheckoutConfig } from "../config/acp_tables.ts";
import type { Commit } from "../contracts/coding_agents.ts";

/** A work's place: its folder (a repository of its own) and branch. */
export interface WorkPlace {
  dir: string;
  branch: string;
  /** A file beside the work folder (not in it) where the ACP session id is kept. */
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

/** What names a work: the path of its folder under the worktrees root, and its branch. */
export interface WorkKey {
  harness: string;
  checkout: string;
  /** The agent profile the work is for. */
  agent: string;
  /** The thread's root id, or `_` for work outside any one thread. */
  thread: string;
  /** The work's name ({@linkcode checkWorkName}). */
  work: string;
}

/** Where a work lives under the worktrees `root`. */
export function workPlace(root: string, key: WorkKey): WorkPlace {
  const { harness, checkout, agent, thread, work } = key;
  const a = segment(agent);
  // A thread is its root post's id: its first 12 hex digits keep paths and branches short.
  const t = segment(/^[0-9a-f]{64}$/.test(thread) ? thread.slice(0, 12) : thread);
  const w = checkWorkName(work);
  const dir = `${root}/${harness}/${checkout}/${a}/${t}/${w}`;
  return { dir, branch: `wats/${a}/${t}/${w}`, stateFile: `${dir}.acp.json` };
}

/**
 * The data dir a work folder made by `workPlace` under `<data>/worktrees` belongs to, or
 * undefined for a folder laid out otherwise.
 */
export function dataDirOfWork(dir: string): string | undefined {
  const parts = dir.split("/");
  // <data>/worktrees/<harness>/<checkout>/<agent>/<thread>/<work>
  if (parts.length < 7 || parts[parts.length - 6] !== "worktrees") return undefined;
  return parts.slice(0, -6).join("/") || undefined;
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
  signal?: AbortSignal,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("git", {
    args: ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", ...args],
    cwd,
    env: { GIT_TERMINAL_PROMPT: "0", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal,
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
 * The checkout's common git dir (config, objects, refs), asked of git in the
 * checkout's configured path: never of anything under a work folder.
 */
export async function commonDir(co: CheckoutConfig): Promise<string> {
  const known = commons.get(co.path);
  if (known !== undefined) return known;
  const dir = (await git(["rev-parse", "--path-format=absolute", "--git-common-dir"], co.path))
    .trim();
  commons.set(co.path, dir);
  return dir;
}

/** Each checkout's common dir by its configured path: it does not move while the daemon runs. */
const commons = new Map<string, string>();

/**
 * What the coding agent's sandbox gets for a work: its folder writable, the
 * checkout's git dir readable (its objects are the work's alternate). Taken
 * from wats's own records, never from a file in the work folder.
 */
export async function agentPaths(
  co: CheckoutConfig,
  dir: string,
): Promise<{ readable: string[]; writable: string[] }> {
  return { readable: [await commonDir(co)], writable: [dir] };
}

/**
 * Makes sure the work's repository exists: reuses its folder, recreates it
 * from the checkout's branch (the folder is gone, or was an older version's
 * git worktree), or cuts the branch from the base (fetched first when the
 * checkout says so). Returns whether the work is new.
 *
 * Requires `--allow-run=git`, read and write on the worktrees root and the checkout.
 */
export async function ensureWorktree(
  co: CheckoutConfig,
  place: WorkPlace,
): Promise<{ created: boolean }> {
  const common = await commonDir(co);
  if (await convertLegacy(co, common, place)) return { created: false };
  if (isDir(place.dir)) return { created: false };
  const ref = `refs/heads/${place.branch}`;
  let created = false;
  let tip = await refValue(co.path, ref);
  if (tip === undefined) {
    if (co.fetch) await git(["fetch", "--quiet"], co.path);
    tip = (await git(["rev-parse", "--verify", `${co.base}^{commit}`], co.path)).trim();
    // "" as the old value: created only if no one made it meanwhile.
    await git(["update-ref", "-m", "wats: work cut from " + co.base, ref, tip, ""], co.path);
    created = true;
  }
  await makeRepo({ co, common }, place, tip);
  return { created };
}

/**
 * `git init` of the work folder, its alternate (the checkout's `common` git dir), its identity,
 * its branch checked out at `tip`. `keep`: the folder already holds the work's files (an older
 * version's worktree): they stay, as changes against `tip`, and a failure removes only the
 * repository made here.
 */
async function makeRepo(
  from: { co: CheckoutConfig; common: string },
  place: WorkPlace,
  tip: string,
  { keep = false } = {},
): Promise<void> {
  const { co, common } = from;
  const parent = place.dir.slice(0, place.dir.lastIndexOf("/"));
  await Deno.mkdir(parent, { recursive: true });
  const format = (await git(["rev-parse", "--show-object-format"], co.path)).trim();
  try {
    // No template: no sample hooks. The folder is new, so these runs read only what they wrote.
    await git(
      [
        "init",
        "--quiet",
        "--template=",
        `--object-format=${format}`,
        "-b",
        place.branch,
        place.dir,
      ],
      parent,
    );
    Deno.mkdirSync(`${place.dir}/.git/objects/info`, { recursive: true });
    Deno.writeTextFileSync(`${place.dir}/.git/objects/info/alternates`, `${common}/objects\n`);
    // The checkout's own identity, when it has one, so the agent's commits read as before.
    for (const key of ["user.name", "user.email"]) {
      const v = await gitResult(["config", "--get", key], co.path);
      if (v.code === 0) await git(["config", key, v.stdout.trim()], place.dir);
    }
    await git(["update-ref", `refs/heads/${place.branch}`, tip], place.dir);
    await git(["reset", "--quiet", keep ? "--mixed" : "--hard", tip], place.dir);
  } catch (err) {
    await removeTree(keep ? `${place.dir}/.git` : place.dir);
    throw err;
  }
}

/**
 * Turns an older version's work (a git worktree registered in the checkout) into a work
 * repository in place: its registration and its `.git` file go, a repository of its own is made
 * in the folder at the checkout's copy of its branch, and the files it holds stay — what was not
 * committed is still there, as uncommitted changes. Known from the checkout's own records
 * (`<common>/worktrees/*\/gitdir`), never from the folder's `.git` file. True when it converted.
 */
async function convertLegacy(
  co: CheckoutConfig,
  common: string,
  place: WorkPlace,
): Promise<boolean> {
  const admin = legacyAdmin(common, place.dir);
  if (admin === undefined) return false;
  const tip = await refValue(co.path, `refs/heads/${place.branch}`);
  if (tip === undefined) {
    // No branch left to continue: nothing is changed, the folder stays the person's.
    throw new WorktreeError(
      "acp.no_worktree",
      `${place.dir} is a worktree of checkout ${co.name} whose branch ${place.branch} is gone: ` +
        "move the folder away (or `git worktree remove` it) to start the work again",
    );
  }
  // The folder's `.git` file goes first: git then counts the checkout's admin dir as stale and
  // prunes it itself (the daemon may run git there, not write its files).
  await removeTree(`${place.dir}/.git`);
  await git(["worktree", "prune"], co.path);
  await makeRepo({ co, common }, place, tip, { keep: true });
  return true;
}

/** The checkout's admin dir of a git worktree at `dir`, if the checkout registers one. */
export function legacyAdmin(common: string, dir: string): string | undefined {
  const want = realOr(dir);
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(`${common}/worktrees`)];
  } catch {
    return undefined;
  }
  for (const e of entries) {
    const admin = `${common}/worktrees/${e.name}`;
    try {
      const gitdir = Deno.readTextFileSync(`${admin}/gitdir`).trim();
      if (realOr(gitdir.replace(/\/\.git$/, "")) === want) return admin;
    } catch {
      // Not a worktree's admin dir.
    }
  }
  return undefined;
}

/**
 * Removes a folder the coding agent wrote, whatever modes it set (a folder
 * made unwritable would stop a plain recursive remove); never follows a link.
 */
export async function removeTree(path: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch {
    return;
  }
  try {
    await Deno.remove(path, { recursive: info.isDirectory });
    return;
  } catch (err) {
    if (!info.isDirectory) throw err;
  }
  const open = async (d: string) => {
    await Deno.chmod(d, 0o700);
    for await (const e of Deno.readDir(d)) if (e.isDirectory) await open(`${d}/${e.name}`);
  };
  await open(path);
  await Deno.remove(path, { recursive: true });
}

async function refValue(repo: string, ref: string): Promise<string | undefined> {
  const r = await gitResult(["rev-parse", "--verify", "--quiet", ref], repo);
  return r.code === 0 ? r.stdout.trim() : undefined;
}

function isDir(path: string): boolean {
  try {
    return Deno.lstatSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** The head of the work's branch as the checkout holds it (its last import). */
export async function headOf(co: CheckoutConfig, branch: string): Promise<string> {
  return (await git(["rev-parse", "--verify", `refs/heads/${branch}^{commit}`], co.path)).trim();
}

/** The commits on the checkout's copy of the work's branch that are not in the base, newest first. */
export async function commitsSince(
  co: CheckoutConfig,
  branch: string,
  base: string,
): Promise<Commit[]> {
  const out = await git(
    ["log", "--format=%H%x1f%s", `${base}..refs/heads/${branch}`, "--"],
    co.path,
  );
  return out.split("\n").filter((l) => l !== "").map((l) => {
    // The format always prints the separator; a subject can still be empty.
    const [sha = "", subject = ""] = l.split("\x1f");
    return { sha, subject };
  });
}

function realOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}
