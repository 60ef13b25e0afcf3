/**
 * Tests of the helpers that run wats as a subprocess: exit codes, stdout and
 * stderr come back separately, stdin reaches the program, and a long-running
 * process can be read line by line and stopped.
 *
 * @module
 */

import assert from "node:assert/strict";
import { runWats, startIsolated, startWats, tempDataDir, watsCommand } from "./cli.ts";

Deno.test("wats --help prints usage on stdout and exits 0", async () => {
  const r = await runWats(["--help"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Usage:/m);
  assert.match(r.stdout, /wats mcp/);
  assert.equal(r.stderr, "");
  assert.equal(r.timedOut, false);
});

Deno.test("an unknown wats command exits 2 with an error on stderr and nothing on stdout", async () => {
  const dataDir = tempDataDir();
  try {
    const r = await runWats(["frobnicate"], { dataDir });
    assert.equal(r.code, 2, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^error: .*frobnicate/m);
  } finally {
    Deno.removeSync(dataDir, { recursive: true });
  }
});

Deno.test("wats runs from source with the launcher's flags and the project's config", () => {
  const cmd = watsCommand();
  assert.equal(cmd[1], "run");
  assert.ok(cmd.includes("--allow-read") && cmd.includes("--allow-run"));
  assert.ok(!cmd.includes("--allow-all") && !cmd.includes("-A"));
  assert.match(cmd[cmd.indexOf("--config") + 1]!, /\/deno\.json$/);
  assert.match(cmd[cmd.length - 1]!, /\/main\.ts$/);
});

Deno.test("startWats reads stdout line by line and reports the exit of a finished process", async () => {
  const w = startWats(["--help"]);
  try {
    const line = await w.waitForLine((l) => l.startsWith("Usage:"));
    assert.equal(line, "Usage:");
    const rest: string[] = [];
    for await (const l of w.lines()) rest.push(l);
    assert.ok(rest.some((l) => l.includes("wats mcp")), rest.join("\n"));
    assert.equal(await w.nextLine(), null);
  } finally {
    const r = await w.stop();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Usage:$/m);
  }
});

Deno.test("a started process gets stdin, is stopped by the given signal and reports its exit code", async () => {
  const script = `
    const dec = new TextDecoder();
    for await (const chunk of Deno.stdin.readable) {
      console.log("got " + dec.decode(chunk).trim());
      break;
    }
    Deno.addSignalListener("SIGINT", () => { console.error("interrupted"); Deno.exit(7); });
    console.log("ready");
    setInterval(() => {}, 1000);
  `;
  const p = startIsolated([Deno.execPath(), "eval", script]);
  try {
    await p.write("hello\n");
    assert.equal(await p.waitForLine((l) => l.startsWith("got")), "got hello");
    await p.waitForLine((l) => l === "ready");
  } finally {
    const r = await p.stop("SIGINT");
    assert.equal(r.code, 7);
    assert.equal(r.stdout, "got hello\nready\n");
    assert.equal(r.stderr, "interrupted\n");
    assert.equal(r.timedOut, false);
  }
});

Deno.test("waitForLine fails with the output so far when the process ends without a match", async () => {
  const p = startIsolated([
    Deno.execPath(),
    "eval",
    `console.log("only line"); console.error("why")`,
  ]);
  try {
    await assert.rejects(
      p.waitForLine((l) => l === "never"),
      /stdout closed before a matching line; stdout:\nonly line\n/,
    );
  } finally {
    assert.equal((await p.stop()).code, 0);
  }
});
