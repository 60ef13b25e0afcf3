import assert from "node:assert/strict";
import { readLines, spawnProcessGroup } from "../../src/runner/spawn.ts";

/** Live (non-zombie) processes in process group `pgid`. */
function liveInGroup(pgid: number): string[] {
  const out = new Deno.Command("ps", { args: ["-eo", "pid=,pgid=,stat=,args="] }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 3 && Number(f[1]) === pgid && !f[2]!.startsWith("Z"))
    .map((f) => f.join(" "));
}

/** Polls until the group is empty; returns what is left after the last try. */
async function groupGone(pgid: number): Promise<string[]> {
  let left = liveInGroup(pgid);
  for (let i = 0; i < 100 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    left = liveInGroup(pgid);
  }
  return left;
}

/** The pid of the spawned leader, read from its first output line. */
async function firstLine(
  lines: AsyncIterable<string>,
): Promise<{ line: string; rest: AsyncIterator<string> }> {
  const it = lines[Symbol.asyncIterator]();
  const r = await it.next();
  return { line: r.value as string, rest: it };
}

Deno.test({
  name: "kill ends the whole process tree of a run, background children included",
  ignore: Deno.build.os === "windows",
  async fn() {
    const p = spawnProcessGroup({
      program: "sh",
      args: ["-c", "echo $$; sleep 100 & sleep 100"],
      env: {},
      cwd: Deno.cwd(),
      stdin: "",
    });
    const { line } = await firstLine(p.lines);
    const pgid = Number(line);
    assert.ok(pgid > 0);
    // Wait until both sleeps exist, so the kill has a tree to reach.
    for (let i = 0; i < 100 && liveInGroup(pgid).length < 3; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(liveInGroup(pgid).length, 3, liveInGroup(pgid).join("\n"));
    p.kill();
    const st = await p.status;
    assert.equal(st.code, null);
    assert.equal(st.signal, "SIGTERM");
    assert.deepEqual(await groupGone(pgid), [], "a child survived");
  },
});

Deno.test({
  name: "kill follows up with SIGKILL when the tree ignores SIGTERM",
  ignore: Deno.build.os === "windows",
  async fn() {
    const p = spawnProcessGroup({
      program: "sh",
      args: ["-c", "trap '' TERM; echo $$; sleep 100 & sleep 100"],
      env: {},
      cwd: Deno.cwd(),
      stdin: "",
    }, { graceMs: 200 });
    const { line } = await firstLine(p.lines);
    const pgid = Number(line);
    for (let i = 0; i < 100 && liveInGroup(pgid).length < 3; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    p.kill();
    const st = await p.status;
    assert.equal(st.signal, "SIGKILL");
    assert.deepEqual(await groupGone(pgid), [], "a child survived");
  },
});

Deno.test("a spawned process gets its stdin, then EOF, and its stdout comes line by line", async () => {
  const p = spawnProcessGroup({
    program: "sh",
    args: ["-c", 'while read -r l; do echo "got:$l"; done; echo "eof $FOO"; echo oops >&2; exit 3'],
    env: { FOO: "bar" },
    cwd: Deno.cwd(),
    stdin: "one\ntwo\n",
  });
  const lines: string[] = [];
  for await (const l of p.lines) lines.push(l);
  assert.deepEqual(lines, ["got:one", "got:two", "eof bar"]);
  assert.deepEqual(await p.status, { code: 3, signal: null });
  // stderr is drained in the background; it has arrived once the pipe closed.
  for (let i = 0; i < 50 && p.stderrTail() === ""; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(p.stderrTail(), "oops\n");
});

Deno.test("a missing program is a harness error that says what to do", () => {
  assert.throws(
    () =>
      spawnProcessGroup({
        program: "wats-no-such-program",
        args: [],
        env: {},
        cwd: Deno.cwd(),
        stdin: "",
      }),
    /Cannot start wats-no-such-program: it is not on PATH/,
  );
});

Deno.test("readLines splits chunks into lines, keeping a last line without newline", async () => {
  const enc = new TextEncoder();
  const stream = ReadableStream.from([enc.encode("a\nb"), enc.encode("c\r\n\nd")]);
  const out: string[] = [];
  for await (const l of readLines(stream)) out.push(l);
  assert.deepEqual(out, ["a", "bc", "", "d"]);
});

Deno.test("a spawned run inherits nothing of the daemon's environment: it gets exactly what it is given", async () => {
  // The test process has HOME and PATH at least; the child must see only what the request holds.
  assert.ok(Deno.env.get("HOME") !== undefined);
  const p = spawnProcessGroup({
    program: "/usr/bin/env",
    args: [],
    env: { ONLY: "this" },
    cwd: "/",
    stdin: "",
  });
  const lines: string[] = [];
  for await (const l of p.lines) lines.push(l);
  await p.status;
  assert.deepEqual(lines, ["ONLY=this"]);
});
