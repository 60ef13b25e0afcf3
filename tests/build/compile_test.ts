/**
 * `deno task compile` must embed every worker module: a Worker's module is
 * loaded by URL at run time, so one missing from the binary fails only when
 * that command runs. The runtime base cannot be downloaded here, so the compile
 * uses this deno as DENORT_BIN (DESIGN §1): it completes and lists the embedded
 * files, though that output does not run standalone.
 */

import { ok } from "node:assert/strict";

const root = new URL("../../", import.meta.url).pathname;

Deno.test({
  name: "deno task compile embeds every worker module",
  sanitizeResources: false,
  async fn() {
    const cfg = JSON.parse(await Deno.readTextFile(`${root}deno.json`));
    const args = (cfg.tasks.compile as string).split(/\s+/).slice(1);
    const out = await Deno.makeTempDir({ prefix: "wats-compile-" });
    const outIdx = args.indexOf("--output");
    args[outIdx + 1] = `${out}/wats`;
    const r = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: root,
      env: { DENORT_BIN: Deno.execPath(), NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
    ok(r.success, `compile failed:\n${text}`);
    // The listing folds large folders (`workers/*`), so look for each module's
    // name in the binary's embedded file system instead.
    const binary = new TextDecoder("latin1").decode(await Deno.readFile(`${out}/wats`));
    await Deno.remove(out, { recursive: true });
    const workers = [...Deno.readDirSync(`${root}src/workers`)].map((e) => e.name).filter((n) =>
      n.endsWith("_worker.ts")
    );
    ok(workers.length >= 8, `found only ${workers.length} worker modules`);
    for (const w of [...workers, "main.ts", "HEARTBEAT.md"]) {
      ok(binary.includes(w), `${w} is not embedded in the compiled binary`);
    }
    ok(!binary.includes("no_such_module_worker.ts"), "the check can fail");
  },
});
