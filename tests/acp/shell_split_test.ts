import assert from "node:assert/strict";
import { commandOf, partText, splitCommand } from "../../src/acp/shell_split.ts";

function texts(command: string): string[] | null {
  return splitCommand(command)?.map(partText) ?? null;
}

Deno.test("a command is split where a shell would run another one", () => {
  const table: Array<[string, string[]]> = [
    ["git status", ["git status"]],
    ["git add -A && git commit -m 'fix bug'", ["git add -A", "git commit -m fix bug"]],
    ["make || echo failed; ls", ["make", "echo failed", "ls"]],
    ["cat a | grep b |& tee c", ["cat a", "grep b", "tee c"]],
    ["sleep 1 & echo started", ["sleep 1", "echo started"]],
    ["echo one\necho two", ["echo one", "echo two"]],
    ["(cd sub && make)", ["cd sub", "make"]],
    ["{ echo a; echo b; }", ["echo a", "echo b"]],
    ["if true; then echo y; else echo n; fi", ["true", "echo y", "echo n"]],
    ["while read l; do echo $l; done", ["read l", "echo $l"]],
    ["echo hi # rm -rf /", ["echo hi"]],
  ];
  for (const [command, want] of table) assert.deepEqual(texts(command), want, command);
});

Deno.test("substitutions are commands of their own; the outer command keeps a placeholder", () => {
  const table: Array<[string, string[]]> = [
    [
      'od -An -tx1 -v "$(printf %s /data/wats)/node.key"',
      ["printf %s /data/wats", "od -An -tx1 -v $(…)/node.key"],
    ],
    ["echo `cat /etc/passwd`", ["cat /etc/passwd", "echo $(…)"]],
    ['git commit -m "$(cat msg.txt)"', ["cat msg.txt", "git commit -m $(…)"]],
    ["diff <(ls a) >(wc -l)", ["ls a", "wc -l", "diff $(…) $(…)"]],
    ["echo $(echo $(id))", ["id", "echo $(…)", "echo $(…)"]],
    ["echo $((1 + 2))", ["echo $((1 + 2))"]],
    ["echo ${HOME}", ["echo ${HOME}"]],
  ];
  for (const [command, want] of table) assert.deepEqual(texts(command), want, command);
});

Deno.test("file redirections are parts of their own; descriptors and /dev/null are not", () => {
  const table: Array<[string, string[]]> = [
    ["git log > out.txt", ["git log", "> out.txt"]],
    ["make >> build.log 2>&1", ["make", ">> build.log"]],
    ["cat < /data/wats/node.key", ["cat", "< /data/wats/node.key"]],
    ["deno test 2>/dev/null", ["deno test"]],
    ["echo x >&2", ["echo x"]],
    ["cmd &> all.log", ["cmd", "> all.log"]],
    ["echo a>b", ["echo a", "> b"]],
    ["grep x <<< 'text'", ["grep x"]],
  ];
  for (const [command, want] of table) assert.deepEqual(texts(command), want, command);
});

Deno.test("quotes and backslashes are removed as a shell removes them", () => {
  assert.deepEqual(splitCommand(`echo 'a b' "c d" e\\ f "g\\"h" 'i\\j'`), [
    ["echo", "a b", "c d", "e f", 'g"h', "i\\j"],
  ]);
  // A quoted operator is text, not an operator.
  assert.deepEqual(texts("echo 'a && b' \"c; d\" e\\;f"), ["echo a && b c; d e;f"]);
});

Deno.test("what cannot be split with certainty is null", () => {
  for (
    const command of [
      "echo 'unclosed",
      'echo "unclosed',
      "echo $(unclosed",
      "echo `unclosed",
      "cat <<EOF\nsecret\nEOF",
      "echo ${x:-$(cat /data/wats/node.key)}",
      "echo >",
      "echo \\",
    ]
  ) {
    assert.equal(splitCommand(command), null, command);
  }
});

Deno.test("the command of a request: Claude's string, Codex's argv and shell script", () => {
  assert.equal(commandOf({ command: "git status", description: "x" }), "git status");
  assert.equal(commandOf({ command: ["bash", "-lc", "git status && ls"] }), "git status && ls");
  assert.equal(commandOf({ command: ["/bin/zsh", "-c", "ls"] }), "ls");
  assert.equal(commandOf({ command: ["git", "commit", "-m", "a b"] }), "git commit -m 'a b'");
  assert.equal(commandOf({ command: ["echo", "it's"] }), "echo 'it'\\''s'");
  assert.equal(commandOf({ file_path: "/x" }), undefined);
  assert.equal(commandOf(undefined), undefined);
  assert.equal(commandOf({ command: [1, 2] }), undefined);
});
