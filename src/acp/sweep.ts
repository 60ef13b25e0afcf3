/**
 * The sweep (issue 10, item 7): removes each work's worktree, branch, session
 * file and record (src/acp/work_record.ts) once the work is in its checkout's
 * base — merged, squashed or cherry-picked all count — and never one that is
 * in use, or that has changes or untracked files.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import type { CheckoutConfig } from "../config/acp_tables.ts";
import type { SweepReport } from "../contracts/coding_agents.ts";
import { git, gitIn, pinnedCommonDir } from "./worktrees.ts";
import { removeRecord } from "./work_record.ts";

/** One worktree the sweep found. */
export interface FoundWork {
  dir: string;
  checkout: string;
  branch: string;
}

/**
 * Lists the works under `root` (`<harness>/<checkout>/<agent>/<thread>/<work>`),
 * each with the branch its worktree has checked out (empty when its checkout is
 * not configured any more, or git does not know it as a worktree).
 *
 * Requires `--allow-read` on `root` and the checkouts, and `--allow-run=git`.
 */
export async function findWorks(
  root: string,
  checkouts: Record<string, CheckoutConfig>,
): Promise<FoundWork[]> {
  const out: FoundWork[] = [];
  const walk = async (dir: string, depth: number, parts: string[]) => {
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
        await walk(path, depth + 1, [...parts, e.name]);
        continue;
      }
      // At depth 4, parts is [harness, checkout, agent, thread].
      const checkout = parts[1];
      if (checkout === undefined) continue;
      const co = checkouts[checkout];
      let branch = "";
      if (co !== undefined) {
        try {
          branch = (await gitIn(co, path, ["symbolic-ref", "--quiet", "--short", "HEAD"])).trim();
        } catch {
          // Not a worktree of that checkout, or detached: reported as kept.
        }
      }
      out.push({ dir: path, checkout, branch });
    }
  };
  await walk(root, 0, []);
  return out;
}

/** Why a work must stay, or undefined when it may go. */
export async function keepReason(work: FoundWork, co: CheckoutConfig): Promise<string | undefined> {
  const status = await gitIn(co, work.dir, ["status", "--porcelain", "--untracked-files=all"]);
  if (status.trim() !== "") return "it has changes or untracked files";
  if (!(await isInBase(co.path, work.branch, co.base))) return "its work is not in the base";
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
 * Sweeps the worktrees under `root`. `busy(dir)` says why a work must stay
 * whatever its state (a call uses it, a request of it waits for a person), or
 * undefined.
 */
export async function sweep(
  root: string,
  checkouts: Record<string, CheckoutConfig>,
  busy: (dir: string) => string | undefined,
): Promise<SweepReport> {
  const report: SweepReport = { removed: [], kept: [] };
  for (const work of await findWorks(root, checkouts)) {
    const co = checkouts[work.checkout];
    if (co === undefined) {
      report.kept.push({ dir: work.dir, reason: `no [checkouts.${work.checkout}] any more` });
      continue;
    }
    if (work.branch === "") {
      report.kept.push({ dir: work.dir, reason: "git knows it as no worktree on a branch" });
      continue;
    }
    const inUse = busy(work.dir);
    if (inUse !== undefined) {
      report.kept.push({ dir: work.dir, reason: inUse });
      continue;
    }
    let reason: string | undefined;
    try {
      reason = await keepReason(work, co);
    } catch (err) {
      reason = `git failed: ${errorMessage(err)}`;
    }
    if (reason !== undefined) {
      report.kept.push({ dir: work.dir, reason });
      continue;
    }
    // Without --force: git itself refuses a worktree that changed since the check (with the
    // checkout's own common dir: its check runs a git in the admin dir the agent may write).
    await git(["worktree", "remove", work.dir], co.path, await pinnedCommonDir(co));
    await git(["branch", "-D", work.branch], co.path);
    await Deno.remove(`${work.dir}.acp.json`).catch(() => {});
    removeRecord(work.dir);
    report.removed.push(work.dir);
  }
  return report;
}
