/**
 * A data directory wats cannot create or write in is one `error: …` line that
 * says what to do, and exit code 1: no stack trace, no half-started command.
 */

import assert from "node:assert/strict";
import { runWats } from "../support/cli.ts";

function assertOneErrorLine(stderr: string, pattern: RegExp): void {
  const lines = stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one line, got:\n${stderr}`);
  assert.match(lines[0], /^error: /);
  assert.match(lines[0], pattern);
  assert.doesNotMatch(stderr, /\n\s+at /, "no stack trace");
}

for (const args of [[], ["node"], ["config", "set", "listen", "127.0.0.1:7447"]]) {
  Deno.test(`\`${["wats", ...args].join(" ")}\` with a data directory that cannot be created says so in one line`, async () => {
    const parent = await Deno.makeTempFile({ prefix: "wats-not-a-dir-" });
    const dir = `${parent}/data`;
    try {
      const r = await runWats(["--data-dir", dir, ...args]);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, "");
      assertOneErrorLine(
        r.stderr,
        new RegExp(
          `cannot create the data directory ${dir} \\(Not a directory\\).*--data-dir DIR or WATS_DATA_DIR`,
        ),
      );
    } finally {
      await Deno.remove(parent);
    }
  });
}

Deno.test({
  name: "`wats` with a data directory it cannot write in says so in one line, with the fix",
  // root writes in any folder: the case cannot arise for root.
  ignore: Deno.uid() === 0,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "wats-data-" });
    await Deno.chmod(dir, 0o500);
    try {
      const r = await runWats(["--data-dir", dir]);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, "");
      assertOneErrorLine(
        r.stderr,
        new RegExp(
          `cannot write in the data directory ${dir} \\(Permission denied\\): ` +
            `make it writable \\(chmod u\\+rwx ${dir}\\)`,
        ),
      );
    } finally {
      await Deno.chmod(dir, 0o700);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
