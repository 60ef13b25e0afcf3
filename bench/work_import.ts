/**
 * The import of a work's commits into its checkout (issue 26, benchmarks;
 * docs/decisions/work_repos.md): `importWork`, the hash-checked `git fetch`
 * whose upload-pack runs in the work's sandbox, of one commit adding 1,000
 * files, against a plain `git merge --ff-only` of the same commit in the
 * checkout (what landing it cost when the work shared the checkout's objects).
 * Interleaved in the same run, each import on a fresh work with fresh
 * contents (the machines are shared and noisy). Goal: import <= 1.5x merge.
 *
 * The import runs sandboxed (bubblewrap) when `bwrap` works here, and plainly too.
 *
 * Run: deno run -A bench/work_import.ts [--runs 7] [--files 1000]
 */

import { parseArgs } from "node:util";
import { importWork } from "../src/acp/work_import.ts";
import { ensureWorktree, git, workPlace } from "../src/acp/worktrees.ts";
import type { CheckoutConfig } from "../src/config/acp_tables.ts";
import { Sandboxer } from "../src/safety/sandboxer.ts";
import { AGENTS } from "../src/runner/runtimes/agents.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { runs: { type: "string", default: "7" }, files: { type: "string", default: "1000" } },
});
const RUNS = Number(values.runs);
const FILES = Number(values.files);

function median(xs: number[]): number {
  const m = [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  if (m === undefined) throw new Error("error: no samples were taken; run at least one iteration");
  return m;
}

/** Wall-clock ms and the CPU ms (user + system) of the child processes it waited for. */
async function timed(f: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const c = childCpu();
  const t = performance.now();
  await f();
  return { wall: performance.now() - t, cpu: childCpu() - c };
}

/** This process's waited-for children's CPU time, in ms (`cutime` + `cstime` of /proc/self/stat). */
function childCpu(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 16 and 17 of stat(5), counted from after the command name (field 3 is index 0).
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

const ID = ["-c", "user.email=b@example.org", "-c", "user.name=B"];
Deno.mkdirSync("/var/tmp", { recursive: true });
// Under /var/tmp: the sandbox's /tmp is private.
const root = Deno.realPathSync(
  Deno.makeTempDirSync({ prefix: "wats-bench-import-", dir: "/var/tmp" }),
);
try {
  const repo = `${root}/repo`;
  Deno.mkdirSync(repo);
  await git(["init", "-q", "-b", "main"], repo);
  Deno.writeTextFileSync(`${repo}/README.md`, "bench\n");
  await git(["add", "README.md"], repo);
  await git([...ID, "commit", "-qm", "base"], repo);
  const base = (await git(["rev-parse", "HEAD"], repo)).trim();
  const co: CheckoutConfig = { name: "app", path: repo, base: "main", fetch: false };
  const probe = new Deno.Command("bwrap", { args: ["--ro-bind", "/", "/", "true"] });
  const hasBwrap = await probe.output().then((o) => o.success).catch(() => false);
  const sandbox = hasBwrap
    ? new Sandboxer({
      agents: AGENTS,
      mode: "required",
      hide: [],
      dataDir: `${root}/data`,
      home: `${root}/home`,
    })
    : undefined;

  // The old design's checkout: works were its git worktrees, their objects written loose into it.
  const old = `${root}/old`;
  await git(["clone", "-q", repo, old], root);

  let n = 0;
  /** One commit of FILES new files (fresh contents each time) in `dir`, as an agent makes it. */
  const commitFiles = async (dir: string) => {
    for (let i = 0; i < FILES; i++) {
      const sub = `${dir}/d${Math.floor(i / 100)}`;
      if (i % 100 === 0) Deno.mkdirSync(sub, { recursive: true });
      Deno.writeTextFileSync(`${sub}/f${i}.txt`, `work ${n} file ${i}\n`.repeat(20));
    }
    await git(["add", "-A"], dir);
    await git([...ID, "commit", "-qm", `${FILES} files`], dir);
  };
  /** A fresh work with one such commit; returns its place. */
  const work = async () => {
    const place = workPlace(`${root}/data/worktrees`, {
      harness: "claude",
      checkout: "app",
      agent: "bot",
      thread: "_",
      work: `w${++n}`,
    });
    await ensureWorktree(co, place);
    await commitFiles(place.dir);
    return place;
  };
  /** The same commit made in a git worktree of the old checkout; returns its branch. */
  const oldWork = async () => {
    const wt = `${root}/old-wt-${n}`;
    await git(["worktree", "add", "-q", "-b", `w${n}`, wt, base], old);
    await commitFiles(wt);
    await git(["worktree", "remove", "--force", wt], old);
    return `w${n}`;
  };

  const sandboxed: { wall: number; cpu: number }[] = [];
  const plain: { wall: number; cpu: number }[] = [];
  const merge: { wall: number; cpu: number }[] = [];
  const oldMerge: { wall: number; cpu: number }[] = [];
  for (let r = 0; r < RUNS; r++) {
    if (sandbox !== undefined) {
      const p = await work();
      sandboxed.push(await timed(() => importWork(co, p, sandbox)));
    }
    const p = await work();
    plain.push(await timed(() => importWork(co, p)));
    // The same commit, its objects now in the checkout: the fast-forward alone.
    merge.push(
      await timed(() => git(["merge", "--ff-only", "--quiet", `refs/heads/${p.branch}`], repo)),
    );
    await git(["reset", "--hard", "--quiet", base], repo);
    const b = await oldWork();
    oldMerge.push(await timed(() => git(["merge", "--ff-only", "--quiet", b], old)));
    await git(["reset", "--hard", "--quiet", base], old);
  }
  const wall = (xs: { wall: number }[]) => median(xs.map((x) => x.wall));
  const cpu = (xs: { cpu: number }[]) => median(xs.map((x) => x.cpu));
  const stat = (xs: { wall: number; cpu: number }[]) =>
    `${wall(xs).toFixed(0)} ms wall, ${cpu(xs).toFixed(0)} ms CPU, medians of ${xs.length}`;
  const ratio = (xs: { wall: number; cpu: number }[], to: { wall: number; cpu: number }[]) =>
    `${(wall(xs) / wall(to)).toFixed(2)}x wall, ${(cpu(xs) / cpu(to)).toFixed(2)}x CPU`;
  const line = (what: string, xs: { wall: number; cpu: number }[]) =>
    `${what}: ${stat(xs)}; ${ratio(xs, oldMerge)} the loose merge, ${
      ratio(xs, merge)
    } the packed merge`;
  console.log(`import of one commit adding ${FILES} files, against git merge --ff-only of it`);
  console.log(`git merge --ff-only, objects loose (as old worktrees left them): ${stat(oldMerge)}`);
  console.log(`git merge --ff-only, objects packed (as the import leaves them): ${stat(merge)}`);
  if (sandboxed.length > 0) console.log(line("import, upload-pack in bubblewrap", sandboxed));
  else console.log("import, upload-pack in bubblewrap: not measured (bwrap does not run here)");
  console.log(line("import, sandbox off", plain));
} finally {
  Deno.removeSync(root, { recursive: true });
}
