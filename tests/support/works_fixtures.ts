/**
 * Works as the daemon would report them (src/contracts/works.ts), for the
 * dashboard's page, HTTP and browser tests and bench/ui_pages.ts: fixed data,
 * so a page's test does not need a coding agent to have worked.
 *
 * @module
 */

import type { DiffFile, DiffLine, WorkDetail, WorkSummary } from "../../src/contracts/works.ts";

export const THREAD = "c".repeat(64);

/** A work in `state` (idle unless said), with a small two-file diff, one commit and one call. */
export function sampleWork(over: Partial<WorkDetail> = {}): WorkDetail {
  return {
    id: "w1",
    harness: "claude-acp",
    checkout: "app",
    agent: "helper",
    thread: THREAD,
    work: "fix-logs",
    branch: "wats/helper/cccccccc/fix-logs",
    worktree: "/tmp/wats/worktrees/app/fix-logs",
    base: "main",
    head: "a".repeat(40),
    state: "idle",
    updatedAt: Date.parse("2026-12-01T10:00:00Z"),
    commits: [{
      sha: "a".repeat(40),
      subject: "rotate logs daily",
      author: "Coding Agent",
      at: Date.parse("2026-12-01T09:59:00Z") / 1000,
    }],
    diff: [
      {
        path: "src/logs.ts",
        status: "modified",
        binary: false,
        additions: 1,
        deletions: 1,
        cut: false,
        hunks: [{
          header: "@@ -1,3 +1,3 @@",
          lines: [
            { op: " ", text: "export const LOGS = {", old: 1, new: 1 },
            { op: "-", text: '  rotate: "weekly",', old: 2 },
            { op: "+", text: '  rotate: "daily",', new: 2 },
            { op: " ", text: "};", old: 3, new: 3 },
          ],
        }],
      },
      {
        path: "docs/logo.png",
        status: "added",
        binary: true,
        additions: 0,
        deletions: 0,
        cut: false,
        hunks: [],
      },
    ],
    diffCut: false,
    calls: [{
      id: "call-1",
      at: Date.parse("2026-12-01T09:58:00Z"),
      task: "make the logs rotate daily",
      message: "Done: logs rotate daily.",
      outcome: "ok",
      refused: ["execute: rm -rf / (refused by the rules)"],
    }],
    transcript: [],
    remote: "origin",
    mergeMode: "ff",
    mergeInto: "main",
    ...over,
  };
}

/** A file of `lines` added lines in hunks of 50 (a 5,000-line diff for the benchmark). */
export function bigFile(path: string, lines: number): DiffFile {
  const hunks = [];
  for (let start = 0; start < lines; start += 50) {
    const body: DiffLine[] = [];
    for (let i = start; i < Math.min(lines, start + 50); i++) {
      body.push({ op: "+", text: `  const value${i} = compute(${i}); // line ${i}`, new: i + 1 });
    }
    hunks.push({ header: `@@ -${start},0 +${start + 1},${body.length} @@`, lines: body });
  }
  return {
    path,
    status: "added",
    binary: false,
    additions: lines,
    deletions: 0,
    hunks,
    cut: false,
  };
}

/** The summary of a work, as the list shows it. */
export function summaryOf(w: WorkDetail): WorkSummary {
  const {
    commits: _c,
    diff: _d,
    diffCut: _x,
    calls: _k,
    transcript: _t,
    remote: _r,
    mergeMode: _m,
    ...s
  } = w;
  return s;
}
