import assert from "node:assert/strict";
import { type RequestShape, sameRequest } from "../../src/acp/carried.ts";

const WT = "/d/worktrees/claude/app/alice/_/notes";

const WRITE: RequestShape = {
  kind: "edit",
  locations: [`${WT}/notes.txt`],
  rawInput: { file_path: `${WT}/notes.txt`, content: "later\n" },
};

const BASH: RequestShape = {
  kind: "execute",
  locations: [],
  rawInput: { command: "git push origin HEAD", description: "push the branch" },
};

Deno.test("a decision carries to the same request made again: kind, locations and arguments", () => {
  // As it comes back from the review queue's JSON, and as the agent sends it again.
  const held = JSON.parse(JSON.stringify(WRITE));
  assert.equal(sameRequest(held, WRITE), true);
  assert.equal(
    sameRequest(held, {
      ...WRITE,
      rawInput: { content: "later\n", file_path: `${WT}/notes.txt`, extra: undefined },
    }),
    true,
  );
  // Claude words the explanation of a command anew: it does not make another command.
  assert.equal(
    sameRequest(BASH, {
      ...BASH,
      rawInput: { command: "git push origin HEAD", description: "Push it" },
    }),
    true,
  );
  // Locations are compared as a set.
  const two = { kind: "edit", locations: ["/a", "/b"] };
  assert.equal(sameRequest(two, { kind: "edit", locations: ["/b", "/a", "/a"] }), true);
});

Deno.test("a decision does not carry to another request of the same kind", () => {
  // Another file.
  assert.equal(
    sameRequest(WRITE, {
      kind: "edit",
      locations: [`${WT}/other.txt`],
      rawInput: { file_path: `${WT}/other.txt`, content: "later\n" },
    }),
    false,
  );
  // The same file with other content than the person saw.
  assert.equal(
    sameRequest(WRITE, { ...WRITE, rawInput: { file_path: `${WT}/notes.txt`, content: "x" } }),
    false,
  );
  // The same path but one more location.
  assert.equal(
    sameRequest(WRITE, { ...WRITE, locations: [`${WT}/notes.txt`, "/etc/passwd"] }),
    false,
  );
  // Another command; the same command with an argument more; no arguments at all.
  assert.equal(
    sameRequest(BASH, { ...BASH, rawInput: { command: "rm -rf /", description: "push" } }),
    false,
  );
  assert.equal(
    sameRequest(BASH, {
      ...BASH,
      rawInput: { command: "git push origin HEAD", description: "x", run_in_background: true },
    }),
    false,
  );
  assert.equal(sameRequest(BASH, { kind: "execute", locations: [] }), false);
  // Codex's command is an array with a cwd: both must match.
  const codex = { kind: "execute", locations: [], rawInput: { command: ["ls"], cwd: WT } };
  assert.equal(sameRequest(codex, { ...codex, rawInput: { command: ["ls"], cwd: "/" } }), false);
  // Another kind on the same path.
  assert.equal(sameRequest(WRITE, { ...WRITE, kind: "delete" }), false);
});

Deno.test("a held request without arguments matches by kind and locations; one naming nothing matches none", () => {
  const read = { kind: "read", locations: ["/srv/docs/a.md"] };
  assert.equal(
    sameRequest(read, { kind: "read", locations: ["/srv/docs/a.md"], rawInput: { limit: 5 } }),
    true,
  );
  assert.equal(sameRequest(read, { kind: "read", locations: ["/srv/docs/b.md"] }), false);
  const nothing = { kind: "other", locations: [] };
  assert.equal(sameRequest(nothing, { kind: "other", locations: [] }), false);
  assert.equal(
    sameRequest({ ...nothing, rawInput: null }, { kind: "other", locations: [] }),
    false,
  );
});
