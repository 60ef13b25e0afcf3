/**
 * One wording for each kind of command-line mistake, whatever the command (issue 20): each is one
 * `error:` line on stderr, nothing on stdout, exit 2 for a usage mistake and 1 for a bad data
 * directory or config file. Every message is asserted whole.
 */

import assert from "node:assert/strict";
import { runWats, tempDataDir } from "../support/cli.ts";

/** Runs `wats args` and checks stdout, stderr and the exit code, each on its own. */
async function said(args: string[], stderr: string, code: number): Promise<void> {
  const r = await runWats(args);
  assert.equal(r.stdout, "", `stdout of wats ${args.join(" ")}`);
  assert.equal(r.stderr, `${stderr}\n`, `stderr of wats ${args.join(" ")}`);
  assert.equal(r.code, code, `exit code of wats ${args.join(" ")}`);
}

Deno.test("--data-dir without a value says it needs one, wherever it stands", async () => {
  const want = "error: --data-dir needs a value (see wats --help)";
  await said(["--data-dir"], want, 2);
  await said(["status", "--data-dir"], want, 2);
  await said(["--data-dir="], want, 2);
});

Deno.test("an unknown flag is worded the same for the daemon and for every command", async () => {
  const dir = tempDataDir();
  const cases: [string[], string][] = [
    [[], "wats"],
    [["status"], "wats status"],
    [["config", "list"], "wats config list"],
    [["config", "get", "agent.runtime"], "wats config get"],
    [["agent", "logs"], "wats agent logs"],
    [["agent", "runs"], "wats agent runs"],
    [["mcp"], "wats mcp"],
    [["setup", "claude"], "wats setup"],
    [["service", "install"], "wats service install"],
    [["ui"], "wats ui"],
    [["resume"], "wats resume"],
  ];
  for (const [words, command] of cases) {
    await said(
      ["--data-dir", dir, ...words, "--bogus"],
      `error: unknown flag --bogus for ${command} (see ${command} --help)`,
      2,
    );
  }
});

Deno.test("a flag without its value, and an argument a command does not take, are worded once each", async () => {
  const dir = tempDataDir();
  await said(
    ["--data-dir", dir, "--profile"],
    "error: --profile needs a value (see wats --help)",
    2,
  );
  await said(
    ["--data-dir", dir, "mcp", "--profile"],
    "error: --profile needs a value (see wats mcp --help)",
    2,
  );
  await said(
    ["--data-dir", dir, "agent", "logs", "--run"],
    "error: --run needs a value (see wats agent logs --help)",
    2,
  );
  await said(
    ["--data-dir", dir, "status", "now"],
    'error: unexpected argument "now" for wats status (see wats status --help)',
    2,
  );
  await said(
    ["--data-dir", dir, "mcp", "serve"],
    'error: unexpected argument "serve" for wats mcp (see wats mcp --help)',
    2,
  );
});

Deno.test("a data directory that is a file is named, for the daemon and for a command that only reads", async () => {
  const file = await Deno.makeTempFile({ prefix: "wats-file-" });
  try {
    const want = `error: the data directory ${file} is not a directory: ` +
      "choose another with --data-dir DIR or WATS_DATA_DIR";
    await said(["--data-dir", file], want, 1);
    await said(["--data-dir", file, "status"], want, 1);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("a config.toml syntax error says to fix the line, not to run a command that fails the same way", async () => {
  const dir = tempDataDir();
  await Deno.writeTextFile(`${dir}/config.toml`, "[agent\nmax_turns = 4\n");
  const want = `error: ${dir}/config.toml:1: not valid TOML (illegal character in key); ` +
    "fix or remove the line in an editor, then run the command again";
  await said(["--data-dir", dir], want, 1);
  await said(["--data-dir", dir, "config", "list"], want, 1);
});
