/**
 * `deno task compile` must embed everything the launcher loads at run time: a
 * Worker's module is loaded by URL, so one missing from the binary fails only
 * when that command runs. The runtime base cannot be downloaded here, so the
 * compile uses this deno as DENORT_BIN (docs/getting-started.md, "Building the binary"): it completes and writes the
 * embedded file system, though that output does not run standalone. What must
 * be embedded comes from the code (tests/build/embedded.ts), not from a list.
 */

import assert from "node:assert/strict";
import { workerModules } from "../../src/cli/route.ts";
import {
  compileMetadata,
  embeddedFiles,
  missingFiles,
  requiredFiles,
  ROOT,
  runtimeFiles,
} from "./embedded.ts";
import { LAUNCHER_FLAGS } from "../../src/cli/permissions.ts";
import { VERIFY_WORKER_URL } from "../../src/net/verify_worker_url.ts";

/** deno.json's compile task as arguments to `deno`, writing to `output`. */
function compileArgs(output: string): string[] {
  const cfg = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`));
  const args = (cfg.tasks.compile as string).split(/\s+/).slice(1);
  args[args.indexOf("--output") + 1] = output;
  return args;
}

/**
 * The local modules a worker loads at run time: its static imports, followed
 * from the entry, leaving out type-only imports (the compile drops those).
 */
async function runtimeGraph(entry: string): Promise<string[]> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", `${ROOT}${entry}`],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(r.success, new TextDecoder().decode(r.stderr));
  const info = JSON.parse(new TextDecoder().decode(r.stdout)) as {
    roots: string[];
    modules: Array<{ specifier: string; dependencies?: Array<{ code?: { specifier: string } }> }>;
  };
  const deps = new Map(info.modules.map((m) => [m.specifier, m.dependencies ?? []]));
  const root = `file://${ROOT}`;
  const seen = new Set<string>();
  const todo = [...info.roots];
  while (todo.length > 0) {
    const s = todo.pop()!;
    if (seen.has(s) || !s.startsWith(root)) continue;
    seen.add(s);
    for (const d of deps.get(s) ?? []) if (d.code) todo.push(d.code.specifier);
  }
  return [...seen].map((s) => s.slice(root.length));
}

Deno.test({
  name: "deno task compile embeds the entry, every worker module and its imports, and HEARTBEAT.md",
  sanitizeResources: false,
  async fn() {
    const out = await Deno.makeTempDir({ prefix: "wats-compile-" });
    try {
      const r = await new Deno.Command(Deno.execPath(), {
        args: compileArgs(`${out}/wats`),
        cwd: ROOT,
        env: { DENORT_BIN: Deno.execPath(), NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
      assert.ok(r.success, `compile failed:\n${text}`);
      const binary = await Deno.readFile(`${out}/wats`);
      const embedded = embeddedFiles(binary);

      // Workers get their own permissions only with worker-options (deno.json's
      // "unstable"); the binary holds the launcher's flags, no FFI and no prompts.
      const meta = compileMetadata(binary);
      assert.ok(meta.unstable_config.features.includes("worker-options"));
      for (const flag of LAUNCHER_FLAGS.filter((f) => f.startsWith("--allow-"))) {
        const kind = flag.replace("--allow-", "allow_");
        assert.deepEqual(meta.permissions[kind], [], `${flag} granted in full`);
      }
      assert.equal(meta.permissions.allow_ffi, null, "no FFI");
      // A prompt would freeze the binary at a terminal (LAUNCHER_FLAGS).
      assert.equal(meta.permissions.prompt, false, "compiled with --no-prompt");

      const required = requiredFiles();
      assert.ok(required.includes("HEARTBEAT.md"));
      assert.ok(required.includes("src/workers/help_worker.ts"));
      assert.deepEqual(missingFiles(embedded, required), [], "not embedded in the binary");

      const graphs = new Set<string>();
      for (const w of workerModules()) {
        for (const m of await runtimeGraph(`src/workers/${w}`)) graphs.add(m);
      }
      const verifyWorker = VERIFY_WORKER_URL.pathname.slice(ROOT.length);
      for (const m of await runtimeGraph(verifyWorker)) graphs.add(m);
      // main.ts imports the launcher by URL (the relay's start skips it): its graph too.
      for (const m of await runtimeGraph("main.ts")) graphs.add(m);
      assert.ok(required.includes("src/cli/launcher.ts"), "main.ts opens the launcher by URL");
      for (const m of await runtimeGraph("src/cli/launcher.ts")) graphs.add(m);
      assert.deepEqual(missingFiles(embedded, [...graphs]), [], "imports not embedded");
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});

Deno.test("the embedded check names a worker module the compile left out", () => {
  const required = requiredFiles();
  const without = required.filter((f) => f !== "src/workers/service_worker.ts");
  assert.deepEqual(missingFiles(without, required), ["src/workers/service_worker.ts"]);
});

Deno.test("every worker of the route table is a module in the folder the launcher loads from", () => {
  // Folders opened by URL: the workers', and the dashboard's assets (whose
  // files are each named by URL too, so the embedded check covers them).
  const dir = runtimeFiles().filter((f) => f.endsWith("/"));
  assert.deepEqual(dir, ["src/ui/assets/", "src/workers/"]);
  for (const w of workerModules()) {
    assert.ok(Deno.statSync(`${ROOT}src/workers/${w}`).isFile, `${w} is in the route table`);
  }
  const onDisk = [...Deno.readDirSync(`${ROOT}src/workers`)].map((e) => e.name).sort();
  assert.deepEqual(onDisk, [...workerModules()].sort(), "a worker module no command routes to");
  // The one worker the daemon starts itself lives with the network it serves,
  // and the binary carries it as a file of its own (the embedded check above).
  assert.ok(
    runtimeFiles().includes(VERIFY_WORKER_URL.pathname.slice(ROOT.length)),
    "the verify worker is opened by URL",
  );
});

Deno.test("the release workflow compiles with exactly deno.json's compile flags", () => {
  const yml = Deno.readTextFileSync(`${ROOT}.github/workflows/release.yml`);
  const line = yml.split("\n").map((l) => l.trim()).find((l) => l.startsWith("deno compile "));
  assert.ok(line !== undefined, "release.yml has no `deno compile` line");
  const words = line.replace(/\\$/, "").split(/\s+/);
  const drop = (args: string[], flag: string) => {
    const i = args.indexOf(flag);
    return i === -1 ? args : [...args.slice(0, i), ...args.slice(i + 2)];
  };
  const release = drop(drop(words.slice(2), "--target"), "--output");
  const task = drop(compileArgs("x").slice(1), "--output");
  assert.deepEqual(release, task);
});
