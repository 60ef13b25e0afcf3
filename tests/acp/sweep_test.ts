import assert from "node:assert/strict";
import { AcpLayer } from "../../src/acp/calls.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import { isInBase, sweep } from "../../src/acp/sweep.ts";
import { ensureWorktree, git, workPlace } from "../../src/acp/worktrees.ts";
import { importWork } from "../../src/acp/work_import.ts";
import type { CheckoutConfig } from "../../src/config/acp_tables.ts";

/** The names of a work of `bot` outside any thread, all but its work name. */
const botWork = { harness: "claude", checkout: "app", agent: "bot", thread: "_" };

const ID = ["-c", "user.email=t@example.org", "-c", "user.name=T"];

async function commit(dir: string, file: string, content: string, msg: string): Promise<void> {
  Deno.writeTextFileSync(`${dir}/${file}`, content);
  await git(["add", file], dir);
  await git([...ID, "commit", "-qm", msg], dir);
}

Deno.test("the sweep removes merged, squashed and cherry-picked work, and keeps the rest", async () => {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-sweep-" }));
  try {
    const repo = `${root}/repo`;
    Deno.mkdirSync(repo);
    await git(["init", "-q", "-b", "main"], repo);
    await commit(repo, "README.md", "hi\n", "first");
    const co: CheckoutConfig = { name: "app", path: repo, base: "main", fetch: false };
    const wts = `${root}/worktrees`;
    const work = async (name: string) => {
      const p = workPlace(wts, { ...botWork, work: name });
      await ensureWorktree(co, p);
      Deno.writeTextFileSync(p.stateFile, '{"harness":"claude","sessionId":"s"}\n');
      return p;
    };

    const merged = await work("merged");
    await commit(merged.dir, "m.txt", "m\n", "merged work");
    const squashed = await work("squashed");
    await commit(squashed.dir, "s1.txt", "1\n", "squash one");
    await commit(squashed.dir, "s2.txt", "2\n", "squash two");
    const picked = await work("picked");
    await commit(picked.dir, "p.txt", "p\n", "picked work");
    const open = await work("open");
    await commit(open.dir, "o.txt", "o\n", "not merged");
    const dirty = await work("dirty");
    Deno.writeTextFileSync(`${dirty.dir}/README.md`, "changed\n");
    const untracked = await work("untracked");
    Deno.writeTextFileSync(`${untracked.dir}/new.txt`, "new\n");
    const busy = await work("busy");
    const empty = await work("empty");
    for (const p of [merged, squashed, picked, open]) await importWork(co, p);

    await git([...ID, "merge", "-q", "--no-ff", "-m", "merge", merged.branch], repo);
    await git([...ID, "merge", "-q", "--squash", squashed.branch], repo);
    await git([...ID, "commit", "-qm", "squashed"], repo);
    const pickedSha = (await git(["rev-parse", picked.branch], repo)).trim();
    await git([...ID, "cherry-pick", pickedSha], repo);
    assert.equal(await isInBase(repo, open.branch, "main"), false);

    const report = await sweep(
      wts,
      { app: co },
      (dir) => dir === busy.dir ? "a call uses it" : undefined,
    );
    assert.deepEqual(report.removed.sort(), [empty.dir, merged.dir, picked.dir, squashed.dir]);
    assert.deepEqual(
      Object.fromEntries(report.kept.map((k) => [k.dir.split("/").at(-1), k.reason])),
      {
        busy: "a call uses it",
        dirty: "it has changes or untracked files",
        open: "its work is not in the base",
        untracked: "it has changes or untracked files",
      },
    );
    for (const gone of [merged, squashed, picked, empty]) {
      assert.throws(() => Deno.statSync(gone.dir));
      assert.throws(() => Deno.statSync(gone.stateFile));
    }
    const branches = (await git(["branch", "--format=%(refname:short)"], repo)).split("\n")
      .filter((b) => b !== "").sort();
    assert.deepEqual(
      branches,
      [
        "main",
        busy.branch,
        dirty.branch,
        open.branch,
        untracked.branch,
      ].sort(),
    );
    // What was kept is untouched.
    assert.equal(Deno.readTextFileSync(`${dirty.dir}/README.md`), "changed\n");
    assert.equal(Deno.readTextFileSync(`${untracked.dir}/new.txt`), "new\n");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("the layer's sweep keeps a work whose request waits in the review queue, after a restart too", async () => {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-sweep-" }));
  try {
    const repo = `${root}/repo`;
    Deno.mkdirSync(repo);
    await git(["init", "-q", "-b", "main"], repo);
    await commit(repo, "README.md", "hi\n", "first");
    const co: CheckoutConfig = { name: "app", path: repo, base: "main", fetch: false };
    const wts = `${root}/worktrees`;
    // Both are in the base (no commits of their own): a sweep would remove them.
    const waiting = workPlace(wts, { ...botWork, work: "waiting" });
    const idle = workPlace(wts, { ...botWork, work: "idle" });
    for (const p of [waiting, idle]) await ensureWorktree(co, p);
    // A new layer, as after a restart: none of its calls waits; the queue still holds one.
    const layer = new AcpLayer({
      worktrees: wts,
      harnesses: {},
      checkouts: { app: co },
      allowedCheckouts: [],
      policy: makePolicy([], [], root),
      env: {},
      held: () => [waiting.dir],
    });
    const report = await layer.sweep();
    assert.deepEqual(report.removed, [idle.dir]);
    assert.deepEqual(report.kept, [
      { dir: waiting.dir, reason: "a request of it waits for a person" },
    ]);
    assert.ok(Deno.statSync(waiting.dir).isDirectory);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("the sweep keeps a work with anything the base lacks: a patch equal but for whitespace, another branch, a stash, a detached HEAD", async () => {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-sweep-" }));
  try {
    const repo = `${root}/repo`;
    Deno.mkdirSync(repo);
    await git(["init", "-q", "-b", "main"], repo);
    await commit(repo, "f.py", "def f():\n  return 1\n", "first");
    const co: CheckoutConfig = { name: "app", path: repo, base: "main", fetch: false };
    const wts = `${root}/worktrees`;
    const work = async (name: string) => {
      const p = workPlace(wts, { ...botWork, work: name });
      await ensureWorktree(co, p);
      return p;
    };
    // Four spaces in the work, a tab in the base: git cherry calls these the same patch.
    const spaces = await work("spaces");
    await commit(spaces.dir, "f.py", "def f():\n    return 1\n", "indent with spaces");
    // Equal byte for byte, cherry-picked: in the base.
    const picked = await work("picked");
    await commit(picked.dir, "p.txt", "p\n", "picked");
    await importWork(co, picked);
    await git([...ID, "cherry-pick", (await git(["rev-parse", picked.branch], repo)).trim()], repo);
    await commit(repo, "f.py", "def f():\n\treturn 1\n", "indent with a tab");
    // The hole this closes: git's own patch ids call the two the same.
    await importWork(co, spaces);
    assert.match(await git(["cherry", "main", spaces.branch], repo), /^- [0-9a-f]+\n$/);
    // Nothing on its branch, but a commit elsewhere in its repository.
    const other = await work("other");
    await git(["checkout", "-q", "-b", "scratch"], other.dir);
    await commit(other.dir, "x.txt", "x\n", "on another branch");
    await git(["checkout", "-q", other.branch], other.dir);
    const stashed = await work("stashed");
    Deno.writeTextFileSync(`${stashed.dir}/f.py`, "stashed\n");
    await git([...ID, "stash", "-q"], stashed.dir);
    const detached = await work("detached");
    await git(["checkout", "-q", "--detach"], detached.dir);
    await git([...ID, "commit", "-q", "--allow-empty", "-m", "off the branch"], detached.dir);
    await git(["checkout", "-q", "--", "."], detached.dir);

    const report = await sweep(wts, { app: co }, () => undefined);
    assert.deepEqual(report.removed, [picked.dir]);
    const kept = Object.fromEntries(report.kept.map((k) => [k.dir.split("/").at(-1), k.reason]));
    assert.equal(kept.spaces, "its work is not in the base");
    assert.match(kept.other!, /^its repository holds refs\/heads\/scratch besides its branch/);
    assert.match(kept.stashed!, /^its repository holds refs\/stash besides its branch/);
    assert.match(kept.detached!, /^its repository holds HEAD \(not on its branch\)/);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
