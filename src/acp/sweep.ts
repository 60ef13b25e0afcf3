/**
 * The sweep (issue 10, item 7): removes each work's folder, branch, session
 * file and record (src/acp/work_record.ts) once the work is in its checkout's
 * base — merged, squashed or cherry-picked all count — and never one that is
 * in use, or that has changes or untracked files. Each work's commits are
 * imported first (src/acp/work_import.ts), so "in the base" is judged on the
 * checkout's verified copy of its branch.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import type { CheckoutConfig } from "../config/acp_tables.ts";
import type { SweepReport } from "../contracts/coding_agents.ts";
import type { Sandboxer } from "../safety/sandboxer.ts";
import { git, headOf } from "./worktrees.ts";
import { importWork, removeWork, workStatus } from "./work_import.ts";
import { removeRecord } from "./work_record.ts";

/** One work folder the sweep found. */
export interface FoundWork {
  dir: string;
  checkout: string;
  /** `wats/<agent>/<thread>/<work>`, from the folder's place (src/acp/worktrees.ts). */
  branch: string;
}

/**
 * Lists the work folders under `root` (`<harness>/<checkout>/<agent>/<thread>/<work>`),
 * each with its branch, named by its place: nothing in the folder is asked.
 *
 * Requires `--allow-read` on `root`.
 */
export function findWorks(root: string): FoundWork[] {
  const out: FoundWork[] = [];
  const walk = (dir: string, depth: number, parts: string[]) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (!e.isDirectory) continue;
      const path = `${dir}/${e.name}`;
      if (depth < 4) {
        walk(path, depth + 1, [...parts, e.name]);
        continue;
      }
      // At depth 4, parts is [harness, checkout, agent, thread].
      const [, checkout, agent, thread] = parts;
      if (checkout === undefined) continue;
      out.push({ dir: path, checkout, branch: `wats/${agent}/${thread}/${e.name}` });
    }
  };
  walk(root, 0, []);
  return out;
}

/**
 * Why a work must stay, or undefined when it may go: its commits cannot be
 * imported, its repository holds something besides its branch (another
 * branch, a stash, a tag, a HEAD off the branch: none of it is imported, so
 * none of it could be in the base), its folder has changes or untracked files
 * against the imported branch, or its branch is not in the base.
 */
export async function keepReason(
  work: FoundWork,
  co: CheckoutConfig,
  sandbox?: Sandboxer,
): Promise<string | undefined> {
  const place = { dir: work.dir, branch: work.branch, stateFile: `${work.dir}.acp.json` };
  try {
    await importWork(co, place, sandbox);
  } catch (err) {
    return errorMessage(err);
  }
  const stray = strayRefs(work.dir, work.branch);
  if (stray !== undefined) return stray;
  const status = await workStatus(co, place);
  if (status.trim() !== "") return "it has changes or untracked files";
  if (!(await isInBase(co.path, `refs/heads/${work.branch}`, co.base))) {
    return "its work is not in the base";
  }
  return undefined;
}

/**
 * What the work repository holds besides its branch, said as a reason to
 * keep it, or undefined. Read as plain files, never through git (the
 * repository is the coding agent's): `.git/HEAD`, the files under
 * `.git/refs` (symlinks not followed) and `.git/packed-refs`.
 */
export function strayRefs(dir: string, branch: string): string | undefined {
  const gitDir = `${dir}/.git`;
  const kind = (p: string) => {
    try {
      const st = Deno.lstatSync(p);
      return st.isFile ? "file" : st.isDirectory ? "dir" : "other";
    } catch {
      return "none";
    }
  };
  if (kind(gitDir) !== "dir") {
    return "its .git is not a plain folder, so what it holds cannot be told: look at it, then discard the work";
  }
  const own = `refs/heads/${branch}`;
  const found: string[] = [];
  const head = kind(`${gitDir}/HEAD`) === "file" ? Deno.readTextFileSync(`${gitDir}/HEAD`) : "";
  if (head.trim() !== `ref: ${own}`) found.push("HEAD (not on its branch)");
  const walk = (rel: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(`${gitDir}/${rel}`)];
    } catch {
      return;
    }
    for (const e of entries) {
      const name = `${rel}/${e.name}`;
      if (e.isDirectory) walk(name);
      else if (name !== own) found.push(name);
    }
  };
  walk("refs");
  if (kind(`${gitDir}/packed-refs`) === "file") {
    for (const line of Deno.readTextFileSync(`${gitDir}/packed-refs`).split("\n")) {
      const ref = /^[0-9a-f]{40,64} (\S+)$/.exec(line)?.[1];
      if (ref !== undefined && ref !== own && !found.includes(ref)) found.push(ref);
    }
  }
  if (found.length === 0) return undefined;
  return `its repository holds ${found.slice(0, 5).join(", ")}${
    found.length > 5 ? ` and ${found.length - 5} more` : ""
  } besides its branch, which the base cannot have: look (\`git -C ${dir} log --all\`), then ` +
    "delete them or discard the work";
}

/**
 * True when every change of `branch` is in `base`: the branch is merged, or
 * each of its commits has an equal patch in base (cherry-picked, rebased), or
 * its whole diff has one (squashed). Patches are compared byte for byte
 * (`git patch-id --verbatim`): git's own `cherry` ignores whitespace, so a
 * change of indentation would have counted as in the base.
 */
export async function isInBase(repo: string, branch: string, base: string): Promise<boolean> {
  const ahead = (await git(["rev-list", `${base}..${branch}`, "--"], repo)).trim();
  if (ahead === "") return true;
  const paths = (await git(
    ["log", "--no-renames", "--format=", "--name-only", `${base}..${branch}`, "--"],
    repo,
  )).split("\n").filter((l) => l !== "");
  if (paths.length === 0) return false;
  // Only base commits touching the work's paths can hold an equal patch; shown whole.
  const inBase = new Set(
    (await patchIds(repo, ["--full-diff", `${branch}..${base}`, "--", ...new Set(paths)])).keys(),
  );
  const merges = (await git(["rev-list", "--merges", `${base}..${branch}`, "--"], repo)).trim();
  if (merges === "") {
    const mine = await patchIds(repo, [`${base}..${branch}`, "--"]);
    // A commit with no patch (empty) adds nothing; every other one needs its equal in base.
    if ([...mine.keys()].every((id) => inBase.has(id))) return true;
  }
  // Squashed: one commit holding the branch's whole diff from where it forked.
  const fork = (await git(["merge-base", base, branch], repo)).trim();
  // A dangling object only: no ref points at it, and git's gc removes it.
  const squash = (await git(
    [
      "-c",
      "user.name=wats",
      "-c",
      "user.email=wats@localhost",
      "commit-tree",
      `${branch}^{tree}`,
      "-p",
      fork,
      "-m",
      "wats sweep: squash check",
    ],
    repo,
  )).trim();
  const whole = [...(await patchIds(repo, ["-1", squash, "--"])).keys()];
  return whole.length > 0 && whole.every((id) => inBase.has(id));
}

/**
 * The verbatim patch id of each non-merge commit `git log` lists for `args`
 * (patch id → commit). A commit with no patch has none.
 */
async function patchIds(repo: string, args: string[]): Promise<Map<string, string>> {
  const log = await git(
    [
      "log",
      "-p",
      "--no-merges",
      "--no-renames",
      "--no-color",
      "--no-ext-diff",
      "--no-textconv",
      "--format=commit %H",
      ...args,
    ],
    repo,
  );
  const child = new Deno.Command("git", {
    args: [
      "-c",
      "core.hooksPath=/dev/null",
      "-c",
      "core.fsmonitor=false",
      "patch-id",
      "--verbatim",
    ],
    cwd: repo,
    env: { GIT_TERMINAL_PROMPT: "0" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const [, out] = await Promise.all([
    (async () => {
      const w = child.stdin.getWriter();
      await w.write(new TextEncoder().encode(log));
      await w.close();
    })(),
    child.output(),
  ]);
  if (!out.success) {
    throw new Error(`git patch-id failed in ${repo}: ${new TextDecoder().decode(out.stderr)}`);
  }
  const ids = new Map<string, string>();
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const [id, commit] = line.split(" ");
    if (id && commit) ids.set(id, commit);
  }
  return ids;
}

/**
 * Sweeps the works under `root`. `busy(dir)` says why a work must stay
 * whatever its state (a call uses it, a request of it waits for a person), or
 * undefined. `sandbox` is the coding agents' (git reads a work folder only in it).
 */
export async function sweep(
  root: string,
  checkouts: Record<string, CheckoutConfig>,
  busy: (dir: string) => string | undefined,
  sandbox?: Sandboxer,
): Promise<SweepReport> {
  const report: SweepReport = { removed: [], kept: [] };
  for (const work of findWorks(root)) {
    const co = checkouts[work.checkout];
    if (co === undefined) {
      report.kept.push({ dir: work.dir, reason: `no [checkouts.${work.checkout}] any more` });
      continue;
    }
    const inUse = busy(work.dir);
    if (inUse !== undefined) {
      report.kept.push({ dir: work.dir, reason: inUse });
      continue;
    }
    let reason: string | undefined;
    let head: string | undefined;
    try {
      reason = await keepReason(work, co, sandbox);
      head = await headOf(co, work.branch);
    } catch (err) {
      reason = `git failed: ${errorMessage(err)}`;
    }
    if (reason !== undefined) {
      report.kept.push({ dir: work.dir, reason });
      continue;
    }
    // The branch goes only if it is still where the check saw it.
    await removeWork(co, { dir: work.dir, branch: work.branch, stateFile: "" }, head);
    await Deno.remove(`${work.dir}.acp.json`).catch(() => {});
    removeRecord(work.dir);
    report.removed.push(work.dir);
  }
  return report;
}
