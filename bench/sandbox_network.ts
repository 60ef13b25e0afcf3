/**
 * What `sandbox.network = "model-only"` adds to starting an agent's process (issue 26, goal
 * <= +50 ms for a sandboxed `claude -p` start): the pinned `claude --version` in the sandbox
 * with the open network against the same behind the relay (`wats sandbox-relay`, from source
 * like the tests, or the binary given by `--wats`), interleaved (the machines are shared and
 * noisy). The relay's start is the whole difference: it starts the agent only once it listens.
 *
 * Run: deno run -A bench/sandbox_network.ts [--runs 15] [--wats /path/to/compiled/wats]
 */

import { parseArgs } from "node:util";
import { Sandboxer } from "../src/safety/sandboxer.ts";
import { modelSocketPath, SandboxNetwork } from "../src/safety/net_gate.ts";
import { cliCommand, cliProblem } from "../tests/support/clis.ts";
import { watsCommand } from "../tests/support/cli.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { runs: { type: "string", default: "15" }, wats: { type: "string" } },
});
const RUNS = Number(values.runs);
const problem = cliProblem("claude");
if (problem !== null) {
  console.error(`error: ${problem}`);
  Deno.exit(1);
}
const self = values.wats ? [values.wats] : watsCommand();
const [program, ...args] = [...cliCommand("claude"), "--version"];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

const root = Deno.realPathSync(
  Deno.makeTempDirSync({ dir: "/var/tmp", prefix: "wats-bench-net-" }),
);
const network = new SandboxNetwork({
  network: "model-only",
  mode: "required",
  socket: modelSocketPath(root),
  hosts: [],
  self,
});
try {
  const home = `${root}/home`;
  Deno.mkdirSync(`${home}/.claude`, { recursive: true });
  Deno.mkdirSync(`${root}/data`);
  Deno.mkdirSync(`${root}/work`);
  const target = {
    what: "bench",
    cwd: `${root}/work`,
    env: {},
    kind: "claude" as const,
    writable: [`${root}/work`],
  };
  const base = { mode: "required" as const, hide: [], dataDir: `${root}/data`, home, self };
  const open = await new Sandboxer(base).prepare(target);
  const closed = await new Sandboxer({ ...base, network }).prepare(target);
  const run = async (w: { program: string; args: string[] }) => {
    const t = performance.now();
    const out = await new Deno.Command(w.program, { args: w.args, stdout: "null", stderr: "piped" })
      .output();
    if (!out.success) {
      throw new Error(`${w.program} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
    }
    return performance.now() - t;
  };
  const a: number[] = [], b: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    let o: number, m: number;
    if (i % 2) {
      o = await run(open(program, args));
      m = await run(closed(program, args));
    } else {
      m = await run(closed(program, args));
      o = await run(open(program, args));
    }
    // The first round warms caches and is not counted.
    if (i === 0) continue;
    a.push(o);
    b.push(m);
  }
  console.log(`runs: ${RUNS}; relay: ${self.join(" ")}`);
  console.log(`claude --version sandboxed, network open: median ${ms(median(a))}`);
  console.log(`claude --version sandboxed, model-only:   median ${ms(median(b))}`);
  console.log(`start-up added by model-only: ${ms(median(b) - median(a))} (goal <= 50 ms)`);
} finally {
  await network.close();
  Deno.removeSync(root, { recursive: true });
}
