import assert from "node:assert/strict";
import { parseDiff, unquote } from "../../src/acp/diff.ts";
import { git } from "../../src/acp/worktrees.ts";

const ID = ["-c", "user.email=t@example.org", "-c", "user.name=T"];

/** The real `git diff` of a change, as the works read it. */
async function diffOf(before: Record<string, string | Uint8Array>, after: typeof before) {
  const repo = Deno.makeTempDirSync({ prefix: "wats-diff-" });
  try {
    await git(["init", "-q", "-b", "main"], repo);
    const write = (files: typeof before) => {
      for (const [p, c] of Object.entries(files)) {
        Deno.mkdirSync(`${repo}/${p}`.replace(/\/[^/]+$/, ""), { recursive: true });
        if (typeof c === "string") Deno.writeTextFileSync(`${repo}/${p}`, c);
        else Deno.writeFileSync(`${repo}/${p}`, c);
      }
    };
    write(before);
    await git(["add", "-A"], repo);
    await git([...ID, "commit", "-qm", "a", "--allow-empty"], repo);
    for (const p of Object.keys(before)) if (!(p in after)) Deno.removeSync(`${repo}/${p}`);
    write(after);
    await git(["add", "-A"], repo);
    await git([...ID, "commit", "-qm", "b"], repo);
    return await git(["diff", "-M", "--no-color", "--no-ext-diff", "-p", "HEAD~1", "HEAD"], repo);
  } finally {
    Deno.removeSync(repo, { recursive: true });
  }
}

Deno.test("diff: added, deleted and modified files with their line numbers", async () => {
  const { files, cut } = parseDiff(
    await diffOf({ "gone.txt": "bye\n", "m.txt": "a\nb\nc\n" }, {
      "m.txt": "a\nB\nc\n",
      "new.txt": "hello\nworld\n",
    }),
  );
  assert.equal(cut, false);
  const by = Object.fromEntries(files.map((f) => [f.path, f]));
  assert.equal(by["gone.txt"]?.status, "deleted");
  assert.equal(by["gone.txt"]?.deletions, 1);
  assert.equal(by["new.txt"]?.status, "added");
  assert.equal(by["new.txt"]?.additions, 2);
  const m = by["m.txt"]!;
  assert.equal(m.status, "modified");
  assert.deepEqual([m.additions, m.deletions], [1, 1]);
  assert.deepEqual(m.hunks[0]?.lines, [
    { op: " ", text: "a", old: 1, new: 1 },
    { op: "-", text: "b", old: 2 },
    { op: "+", text: "B", new: 2 },
    { op: " ", text: "c", old: 3, new: 3 },
  ]);
});

Deno.test("diff: a rename keeps its old path, a binary file is named, odd paths are unquoted", async () => {
  const body = Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join("");
  const { files } = parseDiff(
    await diffOf({ "old name.txt": body }, {
      "new name.txt": body.replace("line 3", "line three"),
      "img.bin": new Uint8Array([0, 1, 2, 0, 255]),
      "déjà vu.txt": "x\n",
    }),
  );
  const by = Object.fromEntries(files.map((f) => [f.path, f]));
  assert.equal(by["new name.txt"]?.status, "renamed");
  assert.equal(by["new name.txt"]?.oldPath, "old name.txt");
  assert.equal(by["img.bin"]?.binary, true);
  assert.deepEqual(by["img.bin"]?.hunks, []);
  assert.equal(by["déjà vu.txt"]?.status, "added");
  assert.equal(unquote('"d\\303\\251j\\303\\240 \\"q\\".txt"'), 'déjà "q".txt');
});

Deno.test("diff: a missing newline at the end adds no line", async () => {
  const { files } = parseDiff(await diffOf({ "n.txt": "a\nb" }, { "n.txt": "a\nc" }));
  const f = files[0]!;
  assert.deepEqual([f.additions, f.deletions], [1, 1]);
  assert.deepEqual(f.hunks[0]?.lines.map((l) => l.op + l.text), [" a", "-b", "+c"]);
});

Deno.test("diff: past the caps, lines are counted but not kept, and the diff says it is cut", async () => {
  const big = Array.from({ length: 50 }, (_, i) => `${i}\n`).join("");
  const text = await diffOf({}, { "a.txt": big, "b.txt": big, "c.txt": big });
  const caps = { total: 70, perFile: 40, files: 2, chars: 1_000, lineChars: 100 };
  const { files, cut } = parseDiff(text, caps);
  assert.equal(cut, true);
  assert.deepEqual(files.map((f) => f.path), ["a.txt", "b.txt"]);
  assert.deepEqual(files.map((f) => f.additions), [50, 50]);
  assert.deepEqual(files.map((f) => f.cut), [true, true]);
  // a.txt: its hunk header and 39 lines (40 per file); b.txt: the 30 left of 70.
  assert.equal(files[0]!.hunks[0]!.lines.length, 39);
  assert.equal(files[1]!.hunks.flatMap((h) => h.lines).length, 29);
  assert.equal(parseDiff(text).cut, false);
});

Deno.test("diff: a very long line is clipped and its file reads as cut; text past the budget is left out", async () => {
  const caps = { total: 100, perFile: 100, files: 10, chars: 50, lineChars: 20 };
  const text = await diffOf({}, { "a.min.js": "x".repeat(500) + "\n", "z.txt": "a\nb\nc\n" });
  const { files, cut } = parseDiff(text, caps);
  assert.equal(cut, true);
  const min = files.find((f) => f.path === "a.min.js")!;
  assert.equal(min.cut, true);
  assert.equal(min.hunks[0]!.lines[0]!.text, "x".repeat(19) + "…");
  assert.equal(min.additions, 1);
  const b = files.find((f) => f.path === "z.txt")!;
  assert.equal(b.additions, 3);
  assert.ok(b.hunks.flatMap((h) => h.lines).length < 3);
});
