/**
 * What the OS sandbox adds to starting an agent's process (issue 21, goal
 * <= +50 ms for a `claude -p` workspace run): the probe `Sandboxer.prepare`
 * runs before each run (`stat` under bubblewrap), and the pinned `claude
 * --version` started sandboxed against unsandboxed, interleaved (the machines
 * are shared and noisy).
 *
 * Needs bubblewrap and the pinned Claude Code (`deno run -A tests/support/prepare.ts`).
 *
 * `--old <dir>` also times the sandbox of another copy of wats's src (`git archive <rev> src |
 * tar -x -C <dir>`) in the same rounds, for an old-against-new line.
 *
 * Run: deno run -A bench/sandbox_startup.ts [--runs 21] [--old /tmp/wats-old]
 */

import { parseArgs } from "node:util";
import { Sandboxer } from "../src/safety/sandboxer.ts";
import { cliCommand, cliProblem } from "../tests/support/clis.ts";
import { AGENTS } from "../src/runner/runtimes/agents.ts";
import { RUNTIME_FACTS } from "../src/runner/runtimes/facts.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { runs: { type: "string", default: "21" }, old: { type: "string" } },
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
  const options = {
    agents: AGENTS,
    mode: "required" as const,
    hide: [],
    dataDir: `${root}/data`,
    home,
  };
  const sandbox = new Sandboxer(options);
  const Old: typeof Sandboxer | undefined = values.old
    ? (await import(`file://${values.old}/src/safety/sandboxer.ts`)).Sandboxer
    : undefined;
  const old = Old ? new Old(options) : undefined;
  // The person's PATH, as the daemon passes it: its home toolchains are bound back.
  const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home };
  const run = async (p: string, a: readonly string[]) => {
    const t = performance.now();
    const out = await new Deno.Command(p, { args: [...a], stdout: "null", stderr: "null" })
      .output();
    if (!out.success) throw new Error(`${p} exited ${out.code}`);
    return performance.now() - t;
  };
  const target = {
    what: "bench",
    cwd: `${root}/work`,
    env,
    agent: RUNTIME_FACTS.claude.agent,
    writable: [`${root}/work`],
  };
  /** One sandboxed start: the probe, then the wrapped program. */
  const start = async (s: Pick<Sandboxer, "prepare">) => {
    const t = performance.now();
    const wrap = await s.prepare(target);
    const p = performance.now() - t;
    const w = wrap(program, args);
    return { probe: p, run: await run(w.program, w.args) };
  };
  const probe: number[] = [], plain: number[] = [], boxed: number[] = [];
  const oldProbe: number[] = [], oldBoxed: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    // Interleaved, the order turning each round.
    const order = [
      async () => plain.push(await run(program, args)),
      async () => {
        const r = await start(sandbox);
        probe.push(r.probe), boxed.push(r.run);
      },
      ...(old
        ? [async () => {
          const r = await start(old);
          oldProbe.push(r.probe), oldBoxed.push(r.run);
        }]
        : []),
    ];
    for (let k = 0; k < order.length; k++) await order[(k + i) % order.length]!();
    // The first round warms caches and is not counted.
    if (i === 0) { for (const xs of [probe, plain, boxed, oldProbe, oldBoxed]) xs.length = 0; }
  }
  const added = median(probe) + median(boxed) - median(plain);
  console.log(`runs: ${RUNS}`);
  console.log(`claude --version unsandboxed: median ${ms(median(plain))}`);
  console.log(`probe before a run: median ${ms(median(probe))}`);
  console.log(`claude --version sandboxed: median ${ms(median(boxed))}`);
  console.log(`start-up added (probe + sandboxed - unsandboxed): ${ms(added)}`);
  if (old) {
    const oldAdded = median(oldProbe) + median(oldBoxed) - median(plain);
    console.log(`old probe: median ${ms(median(oldProbe))}`);
    console.log(`old claude --version sandboxed: median ${ms(median(oldBoxed))}`);
    console.log(`old start-up added: ${ms(oldAdded)}`);
    console.log(`new over old: ${ms(added - oldAdded)} (goal <= 50 ms)`);
  }
} finally {
  Deno.removeSync(root, { recursive: true });
}
