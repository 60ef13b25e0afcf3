/**
 * Tests of the pinned-CLI lookup: a missing program fails in CI and is skipped
 * (with a reason) locally; an installed one at its pinned version is found.
 *
 * @module
 */

import assert from "node:assert/strict";
import { cliCommand, cliProblem, PINNED_CLIS, pinSpecs, requireCli } from "./clis.ts";

Deno.test("requireCli throws in CI and returns null locally when the program is missing", () => {
  const dir = Deno.makeTempDirSync();
  try {
    assert.throws(
      () => requireCli("claude", { dir, ci: true }),
      /CI needs claude: .* is not installed/,
    );
    assert.equal(requireCli("claude", { dir, ci: false }), null);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("requireCli rejects an installed version that is not the pinned one", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const pkgDir = `${dir}/node_modules/${PINNED_CLIS.inspector.pkg}`;
    Deno.mkdirSync(`${pkgDir}/build`, { recursive: true });
    Deno.writeTextFileSync(`${pkgDir}/package.json`, JSON.stringify({ version: "0.0.1" }));
    Deno.writeTextFileSync(`${pkgDir}/${PINNED_CLIS.inspector.bin}`, "");
    assert.match(cliProblem("inspector", dir)!, /0\.0\.1 is installed but 1\.0\.3 is pinned/);
    Deno.writeTextFileSync(`${pkgDir}/package.json`, JSON.stringify({ version: "1.0.3" }));
    assert.equal(cliProblem("inspector", dir), null);
    assert.deepEqual(requireCli("inspector", { dir, ci: true }), [
      "node",
      `${pkgDir}/build/index.js`,
    ]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("native programs run directly and JS programs under node", () => {
  assert.equal(cliCommand("claude", "/x").length, 1);
  assert.equal(cliCommand("inspector", "/x")[0], "node");
});

Deno.test("the pin list uses exact versions", () => {
  for (const spec of pinSpecs()) assert.match(spec, /^@?[^@]+@\d+\.\d+\.\d+$/, spec);
});
