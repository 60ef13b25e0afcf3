/**
 * What `sandbox.network = "model-only"` adds to starting an agent's process (issue 26, goal
 * <= +50 ms for a sandboxed `claude -p` start): the pinned `claude --version` in the sandbox
 * with the open network against the same behind the relay (`wats sandbox-relay`, from source
 * like the tests, or the binary given by `--wats`), interleaved (the machines are shared and
 * noisy). The relay's start is the whole difference: it starts the agent only once it listens.
 * The same pair with `true` for the agent shows the relay's start alone, without the agent's
 * own noise; each difference is also taken round by round (the median of the paired
 * differences), which the load of a shared machine moves less than two separate medians.
 * Last, a one-line `deno run` against `true`, both with the network open: Deno's own start,
 * the floor of any relay that is a Deno process.
 *
 * Run: deno run -A bench/sandbox_network.ts [--runs 15] [--wats /path/to/compiled/wats]
 */

import { parseArgs } from "node:util";
import { Sandboxer } from "../src/safety/sandboxer.ts";
import { modelSocketPath, SandboxNetwork } from "../src/safety/net_gate.ts";
import { cliCommand, cliProblem } from "../tests/support/clis.ts";
import { DENO_JSON, watsCommand } from "../tests/support/cli.ts";
import { AGENTS } from "../src/runner/runtimes/agents.ts";
import { RUNTIME_FACTS } from "../src/runner/runtimes/facts.ts";

type Command = { program: string; args: string[] };

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
    agent: RUNTIME_FACTS.claude.agent,
    writable: [`${root}/work`],
  };
  const base = {
    agents: AGENTS,
    mode: "required" as const,
    hide: [],
    dataDir: `${root}/data`,
    home,
    self,
  };
  const open = await new Sandboxer(base).prepare(target);
  const closed = await new Sandboxer({ ...base, network }).prepare(target);
  const run = async (w: Command) => {
    const t = performance.now();
    const out = await new Deno.Command(w.program, { args: w.args, stdout: "null", stderr: "piped" })
      .output();
    if (!out.success) {
      throw new Error(`${w.program} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
    }
    return performance.now() - t;
  };
  const load = () => Deno.loadavg().map((x) => x.toFixed(1)).join(" ");
  const loadBefore = load();
  // The floor's script runs once outside first: inside, Deno's cache is read-only.
  const floorScript = `${root}/floor.ts`;
  Deno.writeTextFileSync(floorScript, "0;\n");
  const floor = [Deno.execPath(), ["run", "--quiet", "--config", DENO_JSON, floorScript]] as const;
  await run({ program: floor[0], args: [...floor[1]] });
  const cases: Array<[string, Command, Command]> = [
    ["claude --version", open(program, args), closed(program, args)],
    ["true", open("true", []), closed("true", [])],
    ["deno run (one line) against true, both open", open("true", []), open(...floor)],
  ];
  const times = cases.map(() => ({
    open: [] as number[],
    closed: [] as number[],
    added: [] as number[],
  }));
  for (let i = 0; i <= RUNS; i++) {
    for (const [k, [, a, b]] of cases.entries()) {
      let o: number, m: number;
      if (i % 2) {
        o = await run(a);
        m = await run(b);
      } else {
        m = await run(b);
        o = await run(a);
      }
      // The first round warms caches and is not counted.
      if (i === 0) continue;
      times[k]!.open.push(o);
      times[k]!.closed.push(m);
      times[k]!.added.push(m - o);
    }
  }
  console.log(`runs: ${RUNS}; load average before ${loadBefore}, after ${load()}`);
  console.log(`relay: ${self.join(" ")}; goal: model-only adds <= 50 ms`);
  for (const [k, [name]] of cases.entries()) {
    const t = times[k]!;
    console.log(
      `${name}: ${ms(median(t.open))} against ${ms(median(t.closed))}; ` +
        `added ${ms(median(t.closed) - median(t.open))}, paired ${ms(median(t.added))}`,
    );
  }
} finally {
  await network.close();
  Deno.removeSync(root, { recursive: true });
}
