/**
 * `wats --version` (issue 12): the version from deno.json (the one source, so
 * src/version.ts cannot drift from it), the Deno it runs on, and the git commit
 * the release build stamps into src/build_info.ts.
 */

import assert from "node:assert/strict";
import { VERSION, versionText } from "../../src/version.ts";
import { runWats } from "../support/cli.ts";
import { ROOT } from "./embedded.ts";

Deno.test("the version has one source: deno.json", () => {
  const cfg = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`));
  assert.match(cfg.version, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  assert.equal(VERSION, cfg.version);
  const source = Deno.readTextFileSync(`${ROOT}src/version.ts`);
  assert.doesNotMatch(source, /["'`]\d+\.\d+\.\d+/, "src/version.ts spells a version itself");
});

Deno.test("`wats --version` prints the version, the Deno it runs on and that no commit is stamped", async () => {
  const r = await runWats(["--version"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.equal(
    r.stdout,
    `wats ${VERSION}\ndeno ${Deno.version.deno}\ncommit none (source checkout: see git rev-parse HEAD)\n`,
  );
});

Deno.test("a stamped build names its commit", () => {
  const sha = "0123456789abcdef0123456789abcdef01234567";
  assert.equal(versionText(sha, "2.9.6"), `wats ${VERSION}\ndeno 2.9.6\ncommit ${sha}\n`);
});
