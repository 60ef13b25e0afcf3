import assert from "node:assert/strict";
import { fitLine } from "../../src/node/works_control.ts";
import type { WorkDetail } from "../../src/contracts/works.ts";

function detail(transcript: number, diffLines: number): WorkDetail {
  return {
    id: "app~a~_~w",
    harness: "claude",
    checkout: "app",
    agent: "a",
    thread: "_",
    work: "w",
    branch: "wats/a/_/w",
    worktree: "/w",
    base: "main",
    state: "idle",
    updatedAt: 0,
    commits: [],
    diff: [{
      path: "f",
      status: "added",
      binary: false,
      additions: diffLines,
      deletions: 0,
      cut: false,
      hunks: [{
        header: "@@",
        lines: Array.from(
          { length: diffLines },
          (_, i) => ({ op: "+", text: "y".repeat(90), new: i }),
        ),
      }],
    }],
    diffCut: false,
    calls: [],
    transcript: Array.from({ length: transcript }, (_, i) => `{"i":${i},"t":"${"x".repeat(90)}"}`),
    mergeMode: "ff",
  };
}

Deno.test("a work's answer fits the socket's line: the oldest transcript goes first, then the diff's lines", () => {
  const small = detail(10, 10);
  assert.deepEqual(JSON.parse(fitLine(small, 100_000)), small);
  const trimmed = JSON.parse(fitLine(detail(1_000, 10), 20_000)) as WorkDetail;
  assert.ok(trimmed.transcript.length > 0 && trimmed.transcript.length < 1_000);
  assert.match(trimmed.transcript.at(-1)!, /"i":999/);
  assert.equal(trimmed.diffCut, false);
  const cut = JSON.parse(fitLine(detail(1_000, 1_000), 20_000)) as WorkDetail;
  assert.deepEqual(cut.transcript, []);
  assert.equal(cut.diffCut, true);
  assert.deepEqual(cut.diff.map((f) => [f.additions, f.hunks.length, f.cut]), [[1_000, 0, true]]);
});
