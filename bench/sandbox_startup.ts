/**
 * What the OS sandbox adds to starting an agent's process (issue 21, goal
 * <= +50 ms for a `claude -p` workspace run): the probe `Sandboxer.prepare`
 * runs before each run (`stat` under bubblewrap), and the pinned `claude
 * --version` started sandboxed against unsandboxed, interleaved (the machines
 * are shared and noisy).
 *
 * Needs bubblewrap and the pinned Claude Code (`deno run -A tests/support/prepare.ts`).
 *
 * Run: deno run -A bench/sandbox_startup.ts [--runs 21]
 */

import { parseArgs } from "node:util";
import { Sandboxer } from "../src/safety/sandboxer.ts";
import { cliCommand, cliProblem } from "../tests/support/clis.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { runs: { type: "string", default: "21" } },
});
const RUNS = Number(values.runs);
const problem = cliProblem("claude");
if (problem !== null) {
  console.error(`error: ${problem}`);
  Deno.exit(1);
}
const [program, ...args] = [...cliCommand("claude"), "--version"];
function median(xs: number[]): number {
  const m = [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  if (m === undefined) throw new Error("error: no samples were taken; run at least one iteration");
  return m;
}
const ms = (x: number) => `${x.toFixed(1)} ms`;

const root = Deno.realPathSync(
  Deno.makeTempDirSync({ dir: "/var/tmp", prefix: "wats-bench-sbx-" }),
);
try {
  const home = `${root}/home`;
  Deno.mkdirSync(`${home}/.claude`, { recursive: true });
  Deno.mkdirSync(`${root}/data`);
  Deno.mkdirSync(`${root}/work`);
  const sandbox = new Sandboxer({ mode: "required", hide: [], dataDir: `${root}/data`, home });
  const run = async (p: string, a: readonly string[]) => {
    const t = performance.now();
    const out = await new Deno.Command(p, { args: [...a], stdout: "null", stderr: "null" })
      .output();
    if (!out.success) throw new Error(`${p} exited ${out.code}`);
    return performance.now() - t;
  };
  const probe: number[] = [];
  const plain: number[] = [];
  const boxed: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const t = performance.now();
    const wrap = await sandbox.prepare({
      what: "bench",
      cwd: `${root}/work`,
      env: {},
      kind: "claude",
      writable: [`${root}/work`],
    });
    const p = performance.now() - t;
    const w = wrap(program, args);
    let a: number, b: number;
    if (i % 2) {
      a = await run(program, args);
      b = await run(w.program, w.args);
    } else {
      b = await run(w.program, w.args);
      a = await run(program, args);
    }
    // The first round warms caches and is not counted.
    if (i === 0) continue;
    probe.push(p);
    plain.push(a);
    boxed.push(b);
  }
  const added = median(probe) + median(boxed) - median(plain);
  console.log(`runs: ${RUNS}`);
  console.log(`probe before a run: median ${ms(median(probe))}`);
  console.log(`claude --version unsandboxed: median ${ms(median(plain))}`);
  console.log(`claude --version sandboxed: median ${ms(median(boxed))}`);
  console.log(`start-up added (probe + sandboxed - unsandboxed): ${ms(added)} (goal <= 50 ms)`);
} finally {
  Deno.removeSync(root, { recursive: true });
}
