import assert from "node:assert/strict";
import {
  agentPaths,
  checkCheckout,
  checkWorkName,
  commitsSince,
  ensureWorktree,
  git,
  headOf,
  segment,
  workPlace,
  WorktreeError,
} from "../../src/acp/worktrees.ts";
import { importWork } from "../../src/acp/work_import.ts";
import type { CheckoutConfig } from "../../src/config/acp_tables.ts";

/** A repository with one commit on main, and a bare "origin" it was cloned from. */
async function repo(): Promise<{ root: string; co: CheckoutConfig; origin: string }> {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-wt-" }));
  const origin = `${root}/origin`;
  Deno.mkdirSync(origin);
  await git(["init", "--quiet", "-b", "main"], origin);
  await git(["config", "user.email", "t@example.org"], origin);
  await git(["config", "user.name", "T"], origin);
  Deno.writeTextFileSync(`${origin}/README.md`, "hello\n");
  await git(["add", "README.md"], origin);
  await git(["commit", "--quiet", "-m", "first"], origin);
  await git(["clone", "--quiet", origin, `${root}/checkout`], root);
  const path = `${root}/checkout`;
  await git(["config", "user.email", "t@example.org"], path);
  await git(["config", "user.name", "T"], path);
  return { root, origin, co: { name: "app", path, base: "origin/main", fetch: true } };
}

Deno.test("a work is a repository of its own on a branch cut from the fetched base, borrowing the checkout's objects", async () => {
  const { root, co, origin } = await repo();
  try {
    // The origin moves on after the clone: fetch = true must cut from the new tip.
    Deno.writeTextFileSync(`${origin}/NEW.md`, "new\n");
    await git(["add", "NEW.md"], origin);
    await git(["commit", "--quiet", "-m", "second"], origin);
    const originTip = (await git(["rev-parse", "HEAD"], origin)).trim();

    const place = workPlace(`${root}/data/worktrees`, {
      harness: "claude",
      checkout: "app",
      agent: "bob-agent",
      thread: "_",
      work: "fix-login",
    });
    assert.equal(place.branch, "wats/bob-agent/_/fix-login");
    assert.equal(place.dir, `${root}/data/worktrees/claude/app/bob-agent/_/fix-login`);
    assert.deepEqual(await ensureWorktree(co, place), { created: true });
    // Its own git dir, whose objects come from the checkout's store: nothing copied.
    assert.ok(Deno.lstatSync(`${place.dir}/.git`).isDirectory);
    assert.equal(
      Deno.readTextFileSync(`${place.dir}/.git/objects/info/alternates`),
      `${co.path}/.git/objects\n`,
    );
    const own = [...Deno.readDirSync(`${place.dir}/.git/objects`)].map((e) => e.name).sort();
    assert.deepEqual(own, ["info", "pack"]);
    assert.deepEqual([...Deno.readDirSync(`${place.dir}/.git/objects/pack`)], []);
    // The checkout does not know it as a worktree; it holds the branch, at the base.
    assert.equal(
      (await git(["worktree", "list", "--porcelain"], co.path)).match(/^worktree /gm)?.length,
      1,
    );
    assert.equal(await headOf(co, place.branch), originTip);
    assert.equal((await git(["branch", "--show-current"], place.dir)).trim(), place.branch);
    assert.equal((await git(["rev-parse", "HEAD"], place.dir)).trim(), originTip);
    assert.equal(Deno.readTextFileSync(`${place.dir}/NEW.md`), "new\n");
    assert.deepEqual(await commitsSince(co, place.branch, co.base), []);
    // The checkout's identity came along, so the agent's commits read as before.
    assert.equal((await git(["config", "user.email"], place.dir)).trim(), "t@example.org");

    Deno.writeTextFileSync(`${place.dir}/fix.txt`, "fixed\n");
    await git(["add", "fix.txt"], place.dir);
    await git(["commit", "--quiet", "-m", "Fix the login redirect"], place.dir);
    const head = (await git(["rev-parse", "HEAD"], place.dir)).trim();
    // The checkout's copy moves only with an import.
    assert.equal(await headOf(co, place.branch), originTip);
    assert.deepEqual(await importWork(co, place), { ran: true });
    assert.equal(await headOf(co, place.branch), head);
    assert.deepEqual(await commitsSince(co, place.branch, co.base), [
      { sha: head, subject: "Fix the login redirect" },
    ]);
    // Nothing changed since: no second fetch.
    assert.deepEqual(await importWork(co, place), { ran: false });

    // Same work again: found, not recreated.
    assert.deepEqual(await ensureWorktree(co, place), { created: false });
    // Its folder removed (a crash, by hand): made again from the checkout's branch.
    Deno.removeSync(place.dir, { recursive: true });
    assert.deepEqual(await ensureWorktree(co, place), { created: false });
    assert.equal((await git(["rev-parse", "HEAD"], place.dir)).trim(), head);
    assert.equal(Deno.readTextFileSync(`${place.dir}/fix.txt`), "fixed\n");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("without fetch, the branch is cut from the local base", async () => {
  const { root, co, origin } = await repo();
  try {
    const localTip = (await git(["rev-parse", "HEAD"], co.path)).trim();
    Deno.writeTextFileSync(`${origin}/NEW.md`, "new\n");
    await git(["add", "NEW.md"], origin);
    await git(["commit", "--quiet", "-m", "second"], origin);
    const place = workPlace(`${root}/wt`, {
      harness: "claude",
      checkout: "app",
      agent: "a",
      thread: "t1",
      work: "w",
    });
    await ensureWorktree({ ...co, fetch: false }, place);
    assert.equal(await headOf(co, place.branch), localTip);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("hooks of the checkout do not run when a work is cut", async () => {
  const { root, co } = await repo();
  try {
    const marker = `${root}/hook-ran`;
    for (const hook of ["post-checkout", "reference-transaction"]) {
      Deno.writeTextFileSync(`${co.path}/.git/hooks/${hook}`, `#!/bin/sh\ntouch ${marker}\n`);
      Deno.chmodSync(`${co.path}/.git/hooks/${hook}`, 0o755);
    }
    await ensureWorktree(
      co,
      workPlace(`${root}/wt`, {
        harness: "claude",
        checkout: "app",
        agent: "a",
        thread: "_",
        work: "w",
      }),
    );
    assert.throws(() => Deno.statSync(marker));
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("the agent's sandbox paths come from the checkout, whatever the work folder's .git says", async () => {
  const { root, co } = await repo();
  try {
    const place = workPlace(`${root}/wt`, {
      harness: "claude",
      checkout: "app",
      agent: "a",
      thread: "_",
      work: "w",
    });
    await ensureWorktree(co, place);
    const want = { readable: [`${co.path}/.git`], writable: [place.dir] };
    assert.deepEqual(await agentPaths(co, place.dir), want);
    // The agent points its .git at the checkout's git dir, as the attack of issue 26 did.
    Deno.renameSync(`${place.dir}/.git`, `${place.dir}/.git-mine`);
    Deno.writeTextFileSync(`${place.dir}/.git`, `gitdir: ${co.path}/.git\n`);
    assert.deepEqual(await agentPaths(co, place.dir), want);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("a work made by an older wats (a git worktree of the checkout) becomes a work repository at first touch, keeping its commits and, as changes, its uncommitted files", async () => {
  const { root, co } = await repo();
  try {
    const place = workPlace(`${root}/wt`, {
      harness: "claude",
      checkout: "app",
      agent: "a",
      thread: "_",
      work: "old",
    });
    Deno.mkdirSync(place.dir.slice(0, place.dir.lastIndexOf("/")), { recursive: true });
    await git(["worktree", "add", "--quiet", "-b", place.branch, place.dir, "HEAD"], co.path);
    Deno.writeTextFileSync(`${place.dir}/done.txt`, "done\n");
    await git(["add", "done.txt"], place.dir);
    await git(["commit", "--quiet", "-m", "Old work"], place.dir);
    const head = (await git(["rev-parse", "HEAD"], place.dir)).trim();
    Deno.writeTextFileSync(`${place.dir}/uncommitted.txt`, "kept\n");
    Deno.writeTextFileSync(`${place.dir}/done.txt`, "done, then edited\n");

    // The listing, a merge or a call all import first: that is the first touch.
    assert.deepEqual(await importWork(co, place), { ran: false });
    assert.ok(Deno.lstatSync(`${place.dir}/.git`).isDirectory);
    assert.equal((await git(["rev-parse", "HEAD"], place.dir)).trim(), head);
    // Nothing the person or the agent had not committed is lost: it is a change of the new repo.
    assert.equal(Deno.readTextFileSync(`${place.dir}/done.txt`), "done, then edited\n");
    assert.equal(Deno.readTextFileSync(`${place.dir}/uncommitted.txt`), "kept\n");
    assert.equal(
      await git(["status", "--porcelain"], place.dir),
      " M done.txt\n?? uncommitted.txt\n",
    );
    assert.equal(await headOf(co, place.branch), head);
    // The checkout no longer registers it.
    const list = await git(["worktree", "list", "--porcelain"], co.path);
    assert.doesNotMatch(list, /old/);
    assert.throws(() => Deno.statSync(`${co.path}/.git/worktrees/old`));
    assert.equal(await git(["fsck", "--strict", "--no-progress"], co.path), "");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("a checkout must be a repository with a commit", async () => {
  const { root, co } = await repo();
  try {
    await checkCheckout(co);
    const empty = `${root}/empty`;
    Deno.mkdirSync(empty);
    await git(["init", "--quiet"], empty);
    await assert.rejects(
      () => checkCheckout({ ...co, name: "e", path: empty }),
      /checkout e: .*empty is not a git repository with at least one commit/,
    );
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("work names and path segments cannot escape their folder", () => {
  for (const bad of ["../x", "a/b", "", ".hidden", "x.lock", "a..b", "-rf", "a b"]) {
    assert.throws(() => checkWorkName(bad), WorktreeError, bad);
  }
  assert.equal(checkWorkName("fix-login.2"), "fix-login.2");
  assert.equal(segment("../../etc"), "etc");
  assert.equal(segment(""), "_");
  assert.equal(segment("bob agent"), "bob-agent");
  assert.equal(segment("x.lock"), "x-lock");
});
