import assert from "node:assert/strict";
import {
  checkCheckout,
  checkWorkName,
  commitsSince,
  ensureWorktree,
  git,
  gitIn,
  headOf,
  segment,
  workPlace,
  WorktreeError,
} from "../../src/acp/worktrees.ts";
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

Deno.test("a work gets its own worktree and branch cut from the fetched base", async () => {
  const { root, co, origin } = await repo();
  try {
    // The origin moves on after the clone: fetch = true must cut from the new tip.
    Deno.writeTextFileSync(`${origin}/NEW.md`, "new\n");
    await git(["add", "NEW.md"], origin);
    await git(["commit", "--quiet", "-m", "second"], origin);
    const originTip = (await git(["rev-parse", "HEAD"], origin)).trim();

    const place = workPlace(
      `${root}/data/worktrees`,
      "claude",
      "app",
      "bob-agent",
      "_",
      "fix-login",
    );
    assert.equal(place.branch, "wats/bob-agent/_/fix-login");
    assert.equal(place.dir, `${root}/data/worktrees/claude/app/bob-agent/_/fix-login`);
    assert.deepEqual(await ensureWorktree(co, place), { created: true });
    assert.equal(await headOf(co, place.dir), originTip);
    assert.equal((await git(["branch", "--show-current"], place.dir)).trim(), place.branch);
    assert.deepEqual(await commitsSince(co, place.dir, co.base), []);

    await git(["config", "user.email", "t@example.org"], place.dir);
    await git(["config", "user.name", "T"], place.dir);
    Deno.writeTextFileSync(`${place.dir}/fix.txt`, "fixed\n");
    await git(["add", "fix.txt"], place.dir);
    await git(["commit", "--quiet", "-m", "Fix the login redirect"], place.dir);
    const head = await headOf(co, place.dir);
    assert.deepEqual(await commitsSince(co, place.dir, co.base), [
      { sha: head, subject: "Fix the login redirect" },
    ]);

    // Same work again: found, not recreated.
    assert.deepEqual(await ensureWorktree(co, place), { created: false });
    assert.equal(await headOf(co, place.dir), head);

    // Its folder removed (a sweep, a crash): re-added on the same branch.
    await git(["worktree", "remove", "--force", place.dir], co.path);
    assert.deepEqual(await ensureWorktree(co, place), { created: false });
    assert.equal(await headOf(co, place.dir), head);
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
    const place = workPlace(`${root}/wt`, "claude", "app", "a", "t1", "w");
    await ensureWorktree({ ...co, fetch: false }, place);
    assert.equal(await headOf(co, place.dir), localTip);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("hooks of the checkout do not run when a worktree is cut", async () => {
  const { root, co } = await repo();
  try {
    const marker = `${root}/hook-ran`;
    Deno.writeTextFileSync(`${co.path}/.git/hooks/post-checkout`, `#!/bin/sh\ntouch ${marker}\n`);
    Deno.chmodSync(`${co.path}/.git/hooks/post-checkout`, 0o755);
    await ensureWorktree(co, workPlace(`${root}/wt`, "claude", "app", "a", "_", "w"));
    assert.throws(() => Deno.statSync(marker));
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("git in a worktree ignores a .git file the coding agent rewrote to a config of its own", async () => {
  const { root, co } = await repo();
  try {
    const place = workPlace(`${root}/wt`, "claude", "app", "a", "_", "w");
    await ensureWorktree(co, place);
    const head = await headOf(co, place.dir);
    // The agent makes its own git dir in the worktree, with an fsmonitor hook and
    // an alias-free config that runs a program, and points .git at it.
    const marker = `${root}/pwned`;
    const evil = `${place.dir}/evil`;
    await git(["init", "-q", "--bare", evil], root);
    Deno.writeTextFileSync(`${evil}/hook.sh`, `#!/bin/sh\ntouch ${marker}\n`);
    Deno.chmodSync(`${evil}/hook.sh`, 0o755);
    Deno.writeTextFileSync(
      `${evil}/config`,
      `[core]\n\tbare = false\n\tfsmonitor = ${evil}/hook.sh\n\tsshCommand = ${evil}/hook.sh\n`,
    );
    Deno.writeTextFileSync(`${place.dir}/.git`, `gitdir: ${evil}\n`);

    assert.equal(await headOf(co, place.dir), head);
    assert.deepEqual(await commitsSince(co, place.dir, co.base), []);
    assert.throws(() => Deno.statSync(marker), "a program of the agent ran");
    // A worktree the checkout does not know is refused outright.
    await assert.rejects(
      () => headOf(co, `${root}/elsewhere`),
      /elsewhere is not a worktree of checkout app/,
    );
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("git in a worktree ignores a commondir the sandboxed agent rewrote in its admin dir (it may write there to commit)", async () => {
  const { root, co } = await repo();
  try {
    const place = workPlace(`${root}/wt`, "claude", "app", "a", "_", "w");
    await ensureWorktree(co, place);
    const admin = (await git(["rev-parse", "--path-format=absolute", "--git-dir"], place.dir))
      .trim();
    // A copy of the real git dir whose config adds a clean filter that runs a program,
    // the worktree's files asking for it, and the admin dir's commondir pointed at the copy.
    const marker = `${root}/pwned`;
    const evil = `${root}/evil-common`;
    await new Deno.Command("cp", { args: ["-r", `${co.path}/.git`, evil] }).output();
    Deno.writeTextFileSync(`${root}/hook.sh`, `#!/bin/sh\ntouch ${marker}\ncat\n`);
    Deno.chmodSync(`${root}/hook.sh`, 0o755);
    Deno.writeTextFileSync(
      `${evil}/config`,
      Deno.readTextFileSync(`${evil}/config`) + `[filter "x"]\n\tclean = ${root}/hook.sh\n`,
    );
    Deno.writeTextFileSync(`${place.dir}/.gitattributes`, "* filter=x\n");
    // Same size as before: git must read (and so clean) the file to tell it changed.
    Deno.writeTextFileSync(`${place.dir}/README.md`, "HELLO\n");
    Deno.writeTextFileSync(`${admin}/commondir`, `${evil}\n`);

    await gitIn(co, place.dir, ["status", "--porcelain", "--untracked-files=all"]);
    assert.deepEqual(await commitsSince(co, place.dir, co.base), []);
    assert.throws(() => Deno.statSync(marker), "a program of the agent ran");
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
