import assert from "node:assert/strict";
import { actingOn, lossNotice, renderWork, renderWorksTable } from "../../src/cli/work.ts";
import type { WorkDetail } from "../../src/contracts/works.ts";

const NOW = 1_800_000_000_000;

function detail(over: Partial<WorkDetail> = {}): WorkDetail {
  return {
    id: "app~bot~_~fix",
    harness: "claude",
    checkout: "app",
    agent: "bot",
    thread: "_",
    work: "fix",
    branch: "wats/bot/_/fix",
    worktree: "/w/claude/app/bot/_/fix",
    base: "main",
    head: "a".repeat(40),
    state: "idle",
    updatedAt: NOW - 90_000,
    commits: [{ sha: "b".repeat(40), subject: "Fix \x1b]52;c;cGF3bmVk\x07it", author: "A", at: 1 }],
    diff: [{
      path: "x.ts",
      status: "modified",
      binary: false,
      additions: 1,
      deletions: 1,
      cut: false,
      hunks: [{
        header: "@@ -1 +1 @@",
        lines: [{ op: "-", text: "old", old: 1 }, { op: "+", text: "new\x1b[2K", new: 1 }],
      }],
    }, {
      path: "logo.png",
      status: "added",
      binary: true,
      additions: 0,
      deletions: 0,
      cut: false,
      hunks: [],
    }],
    diffCut: false,
    calls: [{
      id: "c1",
      at: NOW - 60_000,
      task: "fix it\nplease",
      outcome: "ok",
      refused: ["claude/execute: denied"],
    }],
    transcript: [],
    mergeMode: "ff",
    ...over,
  };
}

Deno.test("wats work show prints the agent's text inert, colors the diff only on a terminal", () => {
  const plain = renderWork(detail(), false, NOW);
  assert.ok(!plain.includes("\x1b"), plain);
  assert.match(plain, /Fix \\x1b\]52;c;cGF3bmVk\\x07it/);
  assert.match(plain, /^-old\n\+new\\x1b\[2K$/m);
  assert.match(plain, /--- added logo\.png \(\+0 -0\)\n {2}\(binary file: not shown\)/);
  assert.match(plain, /c1 ok, 1m ago: fix it\n {4}refused: claude\/execute: denied/);
  assert.match(plain, /session transcript: none kept/);
  const color = renderWork(detail(), true, NOW);
  assert.ok(color.includes("\x1b[31m-old\x1b[0m\n\x1b[32m+new\\x1b[2K\x1b[0m"), color);
  assert.doesNotMatch(plain, /^spend/m, "an answer without the figure prints none");
  const spent = renderWork(detail({ spentUsd: 0.0123 }), false, NOW);
  assert.match(spent, /^spend {5}\$0\.012 this month \(its calls\)$/m);
  const cut = renderWork(detail({ diffCut: true }), false, NOW);
  assert.match(cut, /the diff is cut: see all of it with `git diff main\.\.\.wats\/bot\/_\/fix`/);
});

Deno.test("wats work list is a table; discard says what is lost", () => {
  const table = renderWorksTable([detail()], NOW);
  assert.equal(
    table,
    "STATE  ID             HEAD          UPDATED    HARNESS  BRANCH\n" +
      "idle   app~bot~_~fix  aaaaaaaaaaaa  1m30s ago  claude   wats/bot/_/fix",
  );
  assert.match(lossNotice(detail()), /1 commit\(s\) that main does not have:\n {2}b{12} Fix \\x1b/);
  assert.match(lossNotice(detail({ commits: [] })), /no commit that main does not have\./);
});

Deno.test("without --head, the CLI names the head it is about to act on and what it holds", () => {
  const line = actingOn("merging", detail());
  assert.match(
    line,
    /^merging work fix at aaaaaaaaaaaa \(1 commit\(s\) not in main: Fix .*it\); bound to it with --head$/,
  );
  assert.ok(!line.includes("\x1b") && !line.includes("\x07"), "the subject is made one safe line");
});
