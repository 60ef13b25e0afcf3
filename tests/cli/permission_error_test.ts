/**
 * Permission errors are one `error:` line naming the missing grant and what to
 * do (issue 20 §2): from the launcher started without its flags, and from a
 * command's Worker stepping outside its set, whether the command throws or a
 * timer does. Never Deno's stack trace, never a prompt.
 */

import assert from "node:assert/strict";
import { DENO_JSON, MAIN_TS, tempDataDir } from "../support/cli.ts";
import { LAUNCHER_FLAGS } from "../../src/cli/permissions.ts";
import { permissionErrorLine } from "../../src/cli/permission_error.ts";

const LAUNCHER_ADVICE = "start wats with `deno task wats` or the compiled `wats`, or run " +
  `main.ts with deno.json's flags (${LAUNCHER_FLAGS.join(" ")})`;

async function deno(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    env: { NO_COLOR: "1", WATS_DATA_DIR: tempDataDir() },
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

function mainWith(flags: string[], command: string[]): Promise<{ code: number; stderr: string }> {
  return deno([
    "run",
    "--quiet",
    "--no-prompt",
    ...flags,
    "--config",
    DENO_JSON,
    MAIN_TS,
    ...command,
  ]);
}

Deno.test("main.ts run without any permission flag says which grant it lacks and how to start wats", async () => {
  // Read comes first: main.ts imports the launcher by URL (the sandbox relay's start skips it).
  const r = await mainWith([], ["status"]);
  assert.equal(r.stderr, `error: wats lacks read permission: ${LAUNCHER_ADVICE}\n`);
  assert.equal(r.code, 1);
});

Deno.test("main.ts run with too few flags to grant a command's Worker its set says so in one line", async () => {
  const r = await mainWith(["--allow-env", "--allow-read", "--allow-write"], ["status"]);
  assert.equal(
    r.stderr,
    `error: wats lacks the permissions its commands need: ${LAUNCHER_ADVICE}\n`,
  );
  assert.equal(r.code, 1);
});

/** Runs tests/cli/denied_worker.ts as the launcher runs a command, with the `help` set (nothing). */
function deniedCommand(how: "sync" | "timer", verbose = false) {
  const launcher = new URL("../../src/cli/launcher.ts", import.meta.url).href;
  const paths = new URL("../../src/config/paths.ts", import.meta.url).href;
  const worker = new URL("./denied_worker.ts", import.meta.url).href;
  const code = `
    import { runWorker } from "${launcher}";
    import { dataPaths } from "${paths}";
    const p = dataPaths(Deno.makeTempDirSync());
    const init = { argv: ["${how}"], words: ["help"], paths: p, env: {}, cwd: "/", os: "linux",
      user: "u", self: [], stdinIsTerminal: false, stdoutIsTerminal: false, verbose: ${verbose} };
    Deno.exit(await runWorker("help", init, { paths: p, self: [] }, "${worker}"));`;
  return deno(["eval", "--quiet", "--no-prompt", "--config", DENO_JSON, "--ext=ts", code]);
}

const COMMAND_LINE = `error: wats lacks run permission for "git": this command is not granted it ` +
  `(docs/permissions.md lists each command's grants): report it as a bug, with the output of ` +
  `the same command with --verbose\n`;

Deno.test("a command that steps outside its grant ends with one error line naming the grant", async () => {
  const r = await deniedCommand("sync");
  assert.equal(r.stderr, COMMAND_LINE);
  assert.equal(r.code, 1);
});

Deno.test("a timer of a command that steps outside its grant ends the command with the same one line", async () => {
  const r = await deniedCommand("timer");
  assert.equal(r.stderr, COMMAND_LINE);
  assert.equal(r.code, 1);
});

Deno.test("with --verbose, the permission error line is followed by where it happened", async () => {
  const r = await deniedCommand("timer", true);
  assert.ok(r.stderr.startsWith(COMMAND_LINE), r.stderr);
  assert.match(r.stderr, /denied_worker\.ts:\d+/);
});

Deno.test("the OS refusing a path is one line naming the path, and other errors are not permission errors", () => {
  // The message as Deno words an OS error (compare `No such file or directory (os error 2): …`).
  const denied = new Deno.errors.PermissionDenied(
    "Permission denied (os error 13): readfile '/srv/x'",
  );
  assert.equal(
    permissionErrorLine(denied, "command"),
    "error: the system denied access (readfile '/srv/x'): check the owner and mode of that " +
      "path (ls -l), or run wats as the user who owns it",
  );
  assert.equal(permissionErrorLine(new Deno.errors.NotFound("gone"), "command"), undefined);
  assert.equal(permissionErrorLine(new Error("Requires nothing"), "launcher"), undefined);
});
