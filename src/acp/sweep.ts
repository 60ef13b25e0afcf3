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
 * imported, its folder has changes or untracked files against the imported
 * branch, or its branch is not in the base.
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
  const status = await workStatus(co, place);
  if (status.trim() !== "") return "it has changes or untracked files";
  if (!(await isInBase(co.path, `refs/heads/${work.branch}`, co.base))) {
    return "its work is not in the base";
  }
  return undefined;
}

/**
 * True when every change of `branch` is in `base`: the branch is merged, or
 * each of its commits has an equal patch in base (cherry-picked, rebased), or
 * its whole diff has one (squashed).
 */
export async function isInBase(repo: string, branch: string, base: string): Promise<boolean> {
  const ahead = (await git(["rev-list", `${base}..${branch}`, "--"], repo)).trim();
  if (ahead === "") return true;
  if (allEquivalent(await git(["cherry", base, branch], repo))) return true;
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
  return allEquivalent(await git(["cherry", base, squash], repo));
}

/** `git cherry` output where every line starts with `-` (an equal patch is upstream). */
function allEquivalent(cherry: string): boolean {
  const lines = cherry.split("\n").filter((l) => l.trim() !== "");
  return lines.length > 0 && lines.every((l) => l.startsWith("-"));
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
