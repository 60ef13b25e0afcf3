import assert from "node:assert/strict";
import {
  discardWork,
  mergeWork,
  pushWork,
  sendWork,
  type WorkOpsSource,
} from "../../src/acp/work_ops.ts";
import { listWorks, showWork, workId } from "../../src/acp/works.ts";
import { noteCall } from "../../src/acp/work_record.ts";
import { sweep } from "../../src/acp/sweep.ts";
import { ensureWorktree, git, workPlace } from "../../src/acp/worktrees.ts";
import { importWork } from "../../src/acp/work_import.ts";
import type { CheckoutConfig } from "../../src/config/acp_tables.ts";
import type { PermissionAsk } from "../../src/contracts/coding_agents.ts";

/** The names of a work of `bot` outside any thread, all but its work name. */
const botWork = { harness: "claude", checkout: "app", agent: "bot", thread: "_" };

const ID = ["-c", "user.email=t@example.org", "-c", "user.name=T"];

async function commit(dir: string, file: string, content: string, msg: string): Promise<void> {
  Deno.writeTextFileSync(`${dir}/${file}`, content);
  await git(["add", file], dir);
  await git([...ID, "commit", "-qm", msg], dir);
}

interface Fixture {
  root: string;
  repo: string;
  co: CheckoutConfig;
  src: WorkOpsSource;
  busy: Set<string>;
  held: PermissionAsk[];
  /** Cuts a work, commits `file` on it and imports the commit into the checkout. */
  work(name: string, file: string, content: string): Promise<{ dir: string; id: string }>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function fixture(merge: "ff" | "merge" = "ff"): Promise<Fixture> {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-workops-" }));
  const repo = `${root}/repo`;
  Deno.mkdirSync(repo);
  await git(["init", "-q", "-b", "main"], repo);
  await git(["config", "user.email", "t@example.org"], repo);
  await git(["config", "user.name", "T"], repo);
  await commit(repo, "README.md", "one\ntwo\nthree\n", "first");
  const co: CheckoutConfig = { name: "app", path: repo, base: "main", fetch: false, merge };
  const wts = `${root}/worktrees`;
  const busy = new Set<string>();
  const held: PermissionAsk[] = [];
  const src: WorkOpsSource = {
    root: wts,
    harnesses: {
      claude: {
        name: "claude",
        command: "x",
        args: [],
        env: {},
        meta: {},
        context: [],
        idle: 0,
        enabled: true,
      },
    },
    checkouts: { app: co },
    busy: (dir) => busy.has(dir),
    held: () => held,
    call: () => Promise.reject(new Error("no calls in this test")),
    blocked: () => undefined,
    checkoutNames: () => ["app"],
    sweep: () => sweep(wts, { app: co }, (dir) => busy.has(dir) ? "busy" : undefined),
  };
  return {
    root,
    repo,
    co,
    src,
    busy,
    held,
    work: async (name, file, content) => {
      const p = workPlace(wts, { ...botWork, work: name });
      await ensureWorktree(co, p);
      await commit(p.dir, file, content, `work ${name}`);
      await importWork(co, p);
      return { dir: p.dir, id: workId("app", p.branch) };
    },
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

/** Everything a refused operation must leave as it was. */
async function snapshot(repo: string): Promise<string> {
  return [
    await git(["status", "--porcelain", "--untracked-files=all"], repo),
    await git(["for-each-ref", "--format=%(refname) %(objectname)"], repo),
    await git(["rev-parse", "HEAD"], repo),
    Deno.readTextFileSync(`${repo}/README.md`),
  ].join("\n");
}

Deno.test("works: list shows each work with its state, show its commits and diff against the base", async () => {
  await using f = await fixture();
  const a = await f.work("alpha", "a.txt", "alpha\n");
  noteCall(a.dir, { id: "c1", at: Date.now(), task: "add a.txt", agent: "bot", thread: "_" });
  noteCall(a.dir, { id: "c1", at: Date.now(), outcome: "ok", message: "added", refused: ["x"] });
  const b = await f.work("beta", "b.txt", "beta\n");
  f.busy.add(b.dir);

  const page = await listWorks(f.src, 0);
  const byWork = Object.fromEntries(page.works.map((w) => [w.work, w]));
  assert.equal(byWork.alpha?.state, "idle");
  assert.equal(byWork.beta?.state, "running");
  assert.equal(byWork.alpha?.branch, "wats/bot/_/alpha");
  assert.equal(byWork.alpha?.harness, "claude");
  assert.equal(page.next, undefined);

  const d = await showWork(f.src, a.id);
  assert.deepEqual(d.commits.map((c) => c.subject), ["work alpha"]);
  assert.deepEqual(d.diff.map((x) => [x.path, x.status, x.additions]), [["a.txt", "added", 1]]);
  assert.deepEqual(d.calls, [{
    id: "c1",
    at: d.calls[0]!.at,
    task: "add a.txt",
    outcome: "ok",
    message: "added",
    refused: ["x"],
  }]);
  assert.equal(d.mergeMode, "ff");
  assert.equal(d.remote, undefined);
});

Deno.test("works: merged by hand reads merged; a branch whose worktree is gone, swept", async () => {
  await using f = await fixture();
  const m = await f.work("landed", "l.txt", "l\n");
  await git([...ID, "merge", "-q", "--no-ff", "-m", "by hand", "wats/bot/_/landed"], f.repo);
  assert.equal((await listWorks(f.src, 0)).works[0]?.state, "merged");
  await Deno.remove(m.dir, { recursive: true });
  await git(["branch", "-D", "wats/bot/_/landed"], f.repo);
  const a = await f.work("gone", "g.txt", "g\n");
  await Deno.remove(a.dir, { recursive: true });
  const [w] = (await listWorks(f.src, 0)).works;
  assert.equal(w?.state, "swept");
  assert.equal(w?.id, a.id);
  assert.ok(w?.head);
});

Deno.test("merge fast-forwards the base, then the sweep removes the worktree", async () => {
  await using f = await fixture();
  const a = await f.work("ff", "f.txt", "f\n");
  const head = (await git(["rev-parse", "wats/bot/_/ff"], f.repo)).trim();
  const msg = await mergeWork(f.src, a.id);
  assert.match(msg, /^fast-forwarded main: .*the sweep removed its worktree/);
  assert.equal((await git(["rev-parse", "main"], f.repo)).trim(), head);
  // main is checked out in the checkout: its working tree moved with it.
  assert.equal(Deno.readTextFileSync(`${f.repo}/f.txt`), "f\n");
  assert.equal(await git(["status", "--porcelain"], f.repo), "");
  await assert.rejects(Deno.stat(a.dir));
});

Deno.test("merge mode makes a merge commit, also when the base moved", async () => {
  await using f = await fixture("merge");
  const a = await f.work("mc", "m.txt", "m\n");
  await commit(f.repo, "other.txt", "o\n", "base moved");
  const msg = await mergeWork(f.src, a.id);
  assert.match(msg, /^merged with commit [0-9a-f]{12} into main/);
  const parents = (await git(["log", "-1", "--format=%P", "main"], f.repo)).trim().split(" ");
  assert.equal(parents.length, 2);
  assert.equal(Deno.readTextFileSync(`${f.repo}/m.txt`), "m\n");
  assert.equal(await git(["status", "--porcelain"], f.repo), "");
});

Deno.test("a merge that landed says so even when the sweep after it fails", async () => {
  await using f = await fixture();
  const a = await f.work("truth", "t.txt", "t\n");
  const head = (await git(["rev-parse", "wats/bot/_/truth"], f.repo)).trim();
  f.src.sweep = () => Promise.reject(new Error("could not remove the folder"));
  const msg = await mergeWork(f.src, a.id);
  assert.match(
    msg,
    /^fast-forwarded main: work truth .* is in the base; the cleanup afterwards failed \(could not remove the folder\): `wats agent sweep` tries again$/,
  );
  assert.equal((await git(["rev-parse", "main"], f.repo)).trim(), head);
});

Deno.test("merge into a base checked out nowhere moves only its ref", async () => {
  await using f = await fixture();
  await git(["checkout", "-q", "-b", "elsewhere"], f.repo);
  const a = await f.work("ref", "r.txt", "r\n");
  const head = (await git(["rev-parse", "wats/bot/_/ref"], f.repo)).trim();
  const elsewhere = (await git(["rev-parse", "elsewhere"], f.repo)).trim();
  await mergeWork(f.src, a.id);
  assert.equal((await git(["rev-parse", "main"], f.repo)).trim(), head);
  assert.equal((await git(["rev-parse", "HEAD"], f.repo)).trim(), elsewhere);
  await assert.rejects(Deno.stat(`${f.repo}/r.txt`));
});

Deno.test("merge refuses a dirty checkout, a moved base and a conflict, leaving the checkout as it was", async (t) => {
  await t.step("dirty checkout", async () => {
    await using f = await fixture();
    const a = await f.work("dirty", "d.txt", "d\n");
    Deno.writeTextFileSync(`${f.repo}/README.md`, "changed by the person\n");
    const before = await snapshot(f.repo);
    await assert.rejects(mergeWork(f.src, a.id), /uncommitted changes; commit or stash them/);
    assert.equal(await snapshot(f.repo), before);
    await Deno.stat(a.dir);
  });
  await t.step("base moved (ff mode)", async () => {
    await using f = await fixture();
    const a = await f.work("moved", "mv.txt", "mv\n");
    await commit(f.repo, "other.txt", "o\n", "base moved");
    const before = await snapshot(f.repo);
    await assert.rejects(mergeWork(f.src, a.id), /cannot fast-forward; rebase the work on main/);
    assert.equal(await snapshot(f.repo), before);
  });
  await t.step("conflict (merge mode)", async () => {
    await using f = await fixture("merge");
    const a = await f.work("conflict", "README.md", "one\nTWO by the agent\nthree\n");
    await commit(f.repo, "README.md", "one\nTWO by the person\nthree\n", "person edit");
    const before = await snapshot(f.repo);
    await assert.rejects(mergeWork(f.src, a.id), /conflicts with main in README\.md/);
    assert.equal(await snapshot(f.repo), before);
  });
  await t.step("a call running on it", async () => {
    await using f = await fixture();
    const a = await f.work("busy", "b.txt", "b\n");
    f.busy.add(a.dir);
    const before = await snapshot(f.repo);
    await assert.rejects(mergeWork(f.src, a.id), /a call is running on it/);
    assert.equal(await snapshot(f.repo), before);
  });
});

Deno.test("push sends the branch to the checkout's remote; none: it says what to set", async () => {
  await using f = await fixture();
  const a = await f.work("pushed", "p.txt", "p\n");
  await assert.rejects(pushWork(f.src, a.id, false), /has no remote; add one with `git -C/);
  const bare = `${f.root}/remote.git`;
  await git(["init", "-q", "--bare", bare], f.root);
  await git(["remote", "add", "origin", bare], f.repo);
  assert.equal(await pushWork(f.src, a.id, false), "pushed wats/bot/_/pushed to origin");
  assert.equal(
    (await git(["rev-parse", "refs/heads/wats/bot/_/pushed"], bare)).trim(),
    (await git(["rev-parse", "wats/bot/_/pushed"], f.repo)).trim(),
  );
});

Deno.test("push with a draft PR runs gh with the work's title and calls, when gh is logged in", async () => {
  await using f = await fixture();
  const a = await f.work("pr", "p.txt", "p\n");
  noteCall(a.dir, { id: "c1", at: 1, task: "make p.txt", agent: "bot", thread: "_" });
  const bare = `${f.root}/remote.git`;
  await git(["init", "-q", "--bare", bare], f.root);
  await git(["remote", "add", "origin", bare], f.repo);
  const ran: string[][] = [];
  f.src.gh = (args) => {
    ran.push(args);
    return Promise.resolve({ code: 0, stdout: "https://example.org/pr/1\n", stderr: "" });
  };
  const msg = await pushWork(f.src, a.id, true);
  assert.match(msg, /draft pull request: https:\/\/example\.org\/pr\/1$/);
  assert.deepEqual(ran[0], ["auth", "status"]);
  assert.deepEqual(ran[1]?.slice(0, 5), ["pr", "create", "--draft", "--title", "pr"]);
  assert.match(ran[1]?.[6] ?? "", /- make p\.txt \(running\)/);
  assert.deepEqual(ran[1]?.slice(7), ["--head", "wats/bot/_/pr", "--base", "main"]);
  f.src.gh = () => Promise.resolve({ code: 1, stdout: "", stderr: "not logged in" });
  assert.match(await pushWork(f.src, a.id, true), /no draft pull request: .*gh auth login/);
});

Deno.test("discard removes the worktree, branch and record; refused while a call runs", async () => {
  await using f = await fixture();
  const a = await f.work("bin", "x.txt", "x\n");
  noteCall(a.dir, { id: "c1", at: 1, task: "t", agent: "bot", thread: "_" });
  f.busy.add(a.dir);
  await assert.rejects(discardWork(f.src, a.id), /not discarded: a call is running on it/);
  await Deno.stat(a.dir);
  f.busy.clear();
  Deno.writeTextFileSync(`${a.dir}/uncommitted.txt`, "lost\n");
  assert.match(await discardWork(f.src, a.id), /removed worktree .* and branch wats\/bot\/_\/bin/);
  await assert.rejects(Deno.stat(a.dir));
  await assert.rejects(Deno.stat(`${a.dir}.calls.jsonl`));
  assert.equal(await git(["branch", "--list", "wats/*"], f.repo), "");
  assert.deepEqual((await listWorks(f.src, 0)).works, []);
});

Deno.test("send back starts a call on the same work with the comment as its task, within the budget", async () => {
  await using f = await fixture();
  const thread = "ab".repeat(32);
  const a = await f.work("review", "r.txt", "r\n");
  noteCall(a.dir, { id: "c1", at: 1, task: "first", agent: "bot", thread, harness: "claude" });
  noteCall(a.dir, { id: "c1", at: 2, outcome: "ok" });
  const calls: Parameters<WorkOpsSource["call"]>[] = [];
  f.src.call = (...args) => {
    calls.push(args);
    return new Promise(() => {});
  };
  let blocked: string | undefined = "the daily budget of $1.00 is reached";
  f.src.blocked = () => blocked;
  await assert.rejects(sendWork(f.src, a.id, { text: "x" }), /not sent: the daily budget/);
  blocked = undefined;
  await assert.rejects(sendWork(f.src, a.id, { text: "  " }), /the comment is empty/);
  await assert.rejects(sendWork(f.src, a.id, { text: "x", line: 3 }), /a line needs its file/);
  f.busy.add(a.dir);
  await assert.rejects(sendWork(f.src, a.id, { text: "x" }), /not sent back: a call is running/);
  f.busy.clear();
  assert.equal(calls.length, 0);

  const msg = await sendWork(f.src, a.id, { text: "use a constant", file: "r.txt", line: 1 });
  assert.match(msg, /^sent back: call send-\S+ on work review started/);
  const [harness, origin, args] = calls[0]!;
  assert.equal(harness, "claude");
  assert.deepEqual([origin.agent, origin.thread], ["bot", thread]);
  assert.deepEqual([args.checkout, args.work], ["app", "review"]);
  assert.match(args.task, /comment on r\.txt:1:\n\n---\nuse a constant\n---/);
});

Deno.test("merge, push and discard bound to a head refuse, changing nothing, once the work moved past it", async () => {
  await using f = await fixture();
  const bare = `${f.root}/remote.git`;
  await git(["init", "-q", "--bare", bare], f.root);
  await git(["remote", "add", "origin", bare], f.repo);
  const a = await f.work("alpha", "a.txt", "alpha\n");
  const shown = (await git(["rev-parse", "wats/bot/_/alpha"], f.repo)).trim();
  // The agent commits after the person looked; the operation itself imports it.
  await commit(a.dir, "b.txt", "more\n", "Add b after the look");
  const before = await snapshot(f.repo);
  for (
    const [what, op] of [
      ["merged", () => mergeWork(f.src, a.id, shown)],
      ["pushed", () => pushWork(f.src, a.id, false, shown)],
      ["discarded", () => discardWork(f.src, a.id, shown)],
    ] as const
  ) {
    await assert.rejects(op, (e: Error & { code?: string }) => {
      assert.equal(e.code, "acp.work_moved");
      assert.match(
        e.message,
        new RegExp(
          `^work alpha: not ${what}: it changed since you were shown head ${
            shown.slice(0, 12)
          }: its head is now [0-9a-f]{12}, with 1 new commit\\(s\\): [0-9a-f]{12} Add b after the look; nothing was changed`,
        ),
      );
      return true;
    });
  }
  // The import moved only the work's own branch: nothing else of the checkout changed.
  const now = (await git(["rev-parse", "wats/bot/_/alpha"], f.repo)).trim();
  assert.notEqual(now, shown);
  assert.equal(
    await snapshot(f.repo),
    before.replace(`refs/heads/wats/bot/_/alpha ${shown}`, `refs/heads/wats/bot/_/alpha ${now}`),
  );
  assert.equal((await git(["for-each-ref", "refs/heads/"], bare)).trim(), "");
  Deno.statSync(a.dir);

  // Bound to the head it is at (a 12-digit prefix, as the CLI prints it): it lands exactly that.
  assert.match(await pushWork(f.src, a.id, false, now.slice(0, 12)), /^pushed wats\/bot\/_\/alpha/);
  assert.equal((await git(["rev-parse", "refs/heads/wats/bot/_/alpha"], bare)).trim(), now);
  assert.match(await mergeWork(f.src, a.id, now), /^fast-forwarded main/);
  assert.equal((await git(["rev-parse", "main"], f.repo)).trim(), now);
});

Deno.test("a bound head that the branch no longer contains is told as a rewrite; a malformed one is refused", async () => {
  await using f = await fixture();
  const a = await f.work("alpha", "a.txt", "alpha\n");
  const shown = (await git(["rev-parse", "wats/bot/_/alpha"], f.repo)).trim();
  await git([...ID, "commit", "-q", "--amend", "-m", "rewritten"], a.dir);
  await assert.rejects(
    () => mergeWork(f.src, a.id, shown),
    /not merged: it changed since you were shown head [0-9a-f]{12}: its branch was rewritten: its head is now [0-9a-f]{12}, which does not contain/,
  );
  await assert.rejects(
    () => discardWork(f.src, a.id, "HEAD~1"),
    /not discarded: the head must be a commit id of 12 to 64 hex digits/,
  );
  Deno.statSync(a.dir);
});

Deno.test("a merge names every other work its sweep removed, each already in the base", async () => {
  await using f = await fixture();
  const a = await f.work("alpha", "a.txt", "alpha\n");
  // The same patch on another work: once alpha is merged, it is in the base too.
  const twin = await f.work("twin", "a.txt", "alpha\n");
  const other = await f.work("other", "o.txt", "o\n");
  const msg = await mergeWork(f.src, a.id);
  assert.match(
    msg,
    new RegExp(
      `the sweep removed its worktree ${a.dir}; it also removed 1 other work\\(s\\) whose commits were all in their base already \\(merged, squashed or with equal patches\\): ${twin.dir}$`,
    ),
  );
  assert.throws(() => Deno.statSync(twin.dir));
  Deno.statSync(other.dir);
});

Deno.test("a work whose commit never happened reads idle with its uncommitted changes, never merged; merge refuses it", async () => {
  await using f = await fixture();
  const p = workPlace(`${f.root}/worktrees`, { ...botWork, work: "said" });
  await ensureWorktree(f.co, p);
  // The coding agent wrote a file and said "committed", but its commit was refused.
  Deno.writeTextFileSync(`${p.dir}/notes.txt`, "written\n");
  Deno.writeTextFileSync(`${p.dir}/README.md`, "one\ntwo\nthree\nfour\n");
  const id = workId("app", p.branch);
  const d = await showWork(f.src, id);
  assert.equal(d.state, "idle");
  assert.deepEqual(d.commits, []);
  assert.equal(d.mergeInto, "main");
  assert.deepEqual(
    d.uncommitted?.diff.map((x) => [x.path, x.status, x.additions, x.deletions]),
    [["README.md", "modified", 1, 0], ["notes.txt", "added", 1, 0]],
  );
  const before = await snapshot(f.repo);
  await assert.rejects(
    () => mergeWork(f.src, id, d.head),
    /not merged: it has no commit that main does not have, only uncommitted changes in its worktree/,
  );
  assert.equal(await snapshot(f.repo), before);
  // Nothing written into the checkout for the untracked file, and the folder is as it was.
  assert.equal(Deno.readTextFileSync(`${p.dir}/notes.txt`), "written\n");
  assert.equal((await git(["status", "--porcelain"], p.dir)).trim(), "M README.md\n?? notes.txt");

  // A work with commits and leftovers: the merge lands the commits and says what stays behind.
  const a = await f.work("alpha", "a.txt", "alpha\n");
  Deno.writeTextFileSync(`${a.dir}/left.txt`, "left\n");
  assert.match(
    await mergeWork(f.src, a.id),
    /is in the base; 1 uncommitted change\(s\) in its worktree stay behind, not in the commits/,
  );
});

Deno.test("a base that is a remote branch names no branch to merge into", async () => {
  await using f = await fixture();
  await git(["update-ref", "refs/remotes/origin/main", "main"], f.repo);
  f.co.base = "origin/main";
  const a = await f.work("alpha", "a.txt", "alpha\n");
  const d = await showWork(f.src, a.id);
  assert.equal(d.mergeInto, undefined);
  await assert.rejects(() => mergeWork(f.src, a.id), /is not a local branch; push the work/);
});
