import assert from "node:assert/strict";
import {
  MAX_CALLS,
  MAX_SESSION_BYTES,
  noteCall,
  noteSession,
  readCalls,
  readSession,
  recordFiles,
} from "../../src/acp/work_record.ts";
import { ghPrArgs, prBody, reviewTask } from "../../src/acp/work_ops.ts";

Deno.test("a work's calls file keeps the newest calls, start and end merged", () => {
  const dir = `${Deno.makeTempDirSync({ prefix: "wats-rec-" })}/w`;
  try {
    for (let i = 0; i < MAX_CALLS + 3; i++) {
      noteCall(dir, { id: `c${i}`, at: i, task: `task ${i}` });
      noteCall(dir, { id: `c${i}`, at: i + 1, outcome: "ok", message: `did ${i}`, refused: [] });
    }
    noteCall(dir, { id: "last", at: 9, task: "still going" });
    const calls = readCalls(dir);
    assert.equal(calls.length, MAX_CALLS);
    assert.equal(calls[0]?.id, "c4");
    assert.deepEqual(calls.at(-2), {
      id: `c${MAX_CALLS + 2}`,
      at: MAX_CALLS + 2,
      task: `task ${MAX_CALLS + 2}`,
      outcome: "ok",
      message: `did ${MAX_CALLS + 2}`,
      refused: [],
    });
    assert.equal(calls.at(-1)?.outcome, "running");
  } finally {
    Deno.removeSync(dir.replace(/\/w$/, ""), { recursive: true });
  }
});

Deno.test("a work's session transcript stops at its cap with one line saying so", () => {
  const dir = `${Deno.makeTempDirSync({ prefix: "wats-rec-" })}/w`;
  try {
    const big = "x".repeat(64 * 1024);
    for (let i = 0; i < MAX_SESSION_BYTES / big.length + 5; i++) noteSession(dir, { i, big });
    const size = Deno.statSync(recordFiles(dir).session).size;
    assert.ok(size <= MAX_SESSION_BYTES + 100, `${size}`);
    const lines = readSession(dir, 10_000);
    assert.equal(lines.filter((l) => l.includes("wats_cut")).length, 1);
    assert.match(lines.at(-1)!, /the work's transcript is full/);
    // Read back within a character budget: the newest entries.
    const newest = readSession(dir, 10_000, 200_000);
    assert.ok(newest.join("").length <= 200_000);
    assert.equal(newest.at(-1), lines.at(-1));
    assert.ok(newest.length > 1 && newest.length < lines.length, `${newest.length}`);
  } finally {
    Deno.removeSync(dir.replace(/\/w$/, ""), { recursive: true });
  }
});

Deno.test("gh's command line and the review task say what the person gave", () => {
  assert.deepEqual(
    ghPrArgs({ work: "fix-login", branch: "wats/a/_/fix-login", base: "main", body: "B" }),
    [
      "pr",
      "create",
      "--draft",
      "--title",
      "fix-login",
      "--body",
      "B",
      "--head",
      "wats/a/_/fix-login",
      "--base",
      "main",
    ],
  );
  assert.equal(
    prBody([{ task: "Fix login\nmore", outcome: "ok", message: "Done.\nDetails" }]),
    "Made by a coding agent through wats. Its calls:\n\n- Fix login (ok)\n  Done.",
  );
  assert.match(
    reviewTask({ branch: "wats/a/_/w" }, { text: "rename x", file: "src/a.ts", line: 3 }),
    /comment on src\/a\.ts:3:\n\n---\nrename x\n---\n\nAddress the comment/,
  );
  assert.match(reviewTask({ branch: "b" }, { text: "t" }), /with this comment:\n/);
});
