/**
 * The heartbeat runner's idle cost (issue 4): a real daemon with the runner on
 * (`wats node --agent claude`, heartbeat off by default) and no posts for
 * --seconds, against the same daemon with `--agent none` over the same window
 * (both run at once, so a burst of load from other work hits both alike).
 *
 * Checks that the idle runner started no harness run (no `agent/runs.jsonl`, no
 * `run_started` line, no request to the mock model it would have used), and
 * reports each daemon's CPU time (utime + stime of the daemon process, all its
 * threads, from /proc/<pid>/stat) and RSS, and their ratios.
 *
 * Needs the pinned Claude CLI (`deno run -A tests/support/prepare.ts`): the
 * runner registers wats in Claude Code at start. Linux only (reads /proc).
 *
 * Run: deno run -A bench/runner_idle.ts [--seconds 60] [--heartbeat 0]
 */

import { parseArgs } from "node:util";
import { type RunningWats, startWats, tempDataDir } from "../tests/support/cli.ts";
import { cliProblem, CLIS_DIR } from "../tests/support/clis.ts";
import { startMockAnthropic } from "../tests/support/mock_anthropic.ts";
import { dataPaths } from "../src/config/paths.ts";
import { RUNNER_STATE_FILE } from "../src/runner/state_file.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seconds: { type: "string", default: "60" },
    heartbeat: { type: "string", default: "0" },
    settle: { type: "string", default: "3" },
  },
});
const SECONDS = Number(values.seconds);
const SETTLE_S = Number(values.settle);
const CLK_TCK = 100;

const problem = cliProblem("claude");
if (problem !== null) {
  console.error(`error: ${problem}`);
  Deno.exit(1);
}

function cpuTicks(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]); // utime + stime, all threads
}

function statusKiB(pid: number, field: string): number {
  const m = Deno.readTextFileSync(`/proc/${pid}/status`).match(new RegExp(`${field}:\\s+(\\d+)`));
  return m ? Number(m[1]) : NaN;
}

/** Child processes of `pid` (from every thread's `children` list). */
function children(pid: number): number[] {
  const out: number[] = [];
  for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
    const c = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/children`).trim();
    if (c !== "") out.push(...c.split(/\s+/).map(Number));
  }
  return out;
}

const mock = startMockAnthropic();
const env = {
  PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
  // Were a run to start, it would reach this mock (counted below), never the network.
  ANTHROPIC_BASE_URL: mock.url,
  ANTHROPIC_API_KEY: "test-key",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  WATS_AGENT_HEARTBEAT: values.heartbeat,
};

interface Node {
  name: string;
  dir: string;
  wats: RunningWats;
  pid: number;
}

async function start(name: string, agent: string): Promise<Node> {
  const dir = tempDataDir();
  const wats = startWats(["--data-dir", dir, "node", "--agent", agent], { env });
  await wats.waitForLine((l) => l.includes('"event":"started"'), 90_000);
  return { name, dir, wats, pid: wats.process.pid };
}

const nodes: Node[] = [];
try {
  nodes.push(await start("--agent none (baseline)", "none"));
  const agentNode = await start("--agent claude", "claude");
  nodes.push(agentNode);
  // Start-up work (registration in Claude Code, the first GC) settles first.
  await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
  const before = nodes.map((n) => ({ n, ticks: cpuTicks(n.pid), kids: children(n.pid).length }));
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const wall = (performance.now() - t0) / 1000;
  const rows = before.map(({ n, ticks, kids }) => ({
    n,
    cpu: (cpuTicks(n.pid) - ticks) / CLK_TCK,
    rss: statusKiB(n.pid, "VmRSS"),
    hwm: statusKiB(n.pid, "VmHWM"),
    kidsBefore: kids,
    kidsAfter: children(n.pid).length,
    runStarted: n.wats.stdoutLines.filter((l) => l.includes('"event":"run_started"')).length,
  }));
  const [base, agent] = rows;
  if (base === undefined || agent === undefined) throw new Error("error: a daemon went unmeasured");

  const paths = dataPaths(agentNode.dir);
  let indexExists = true;
  try {
    Deno.statSync(paths.runsIndex);
  } catch {
    indexExists = false;
  }
  const modelCalls = mock.messages().length;
  // The runner writes its state file as it starts: proof it is on, not skipped.
  const runnerOn = (() => {
    try {
      return Deno.statSync(`${paths.agentDir}/${RUNNER_STATE_FILE}`).isFile;
    } catch {
      return false;
    }
  })();
  if (!runnerOn) {
    console.error(`error: the --agent claude daemon has no runner:\n${agentNode.wats.stderr()}`);
    Deno.exitCode = 1;
  }

  console.log(
    `runner idle: ${wall.toFixed(1)} s window after ${SETTLE_S} s settling, no posts, ` +
      `agent.heartbeat = ${values.heartbeat}`,
  );
  console.log("");
  console.log(
    "| daemon                  | CPU ms | % of a core | RSS MiB | peak RSS MiB | children |",
  );
  console.log(
    "| ----------------------- | ------ | ----------- | ------- | ------------ | -------- |",
  );
  for (const r of rows) {
    console.log(
      `| ${r.n.name.padEnd(23)} | ${(r.cpu * 1000).toFixed(0).padStart(6)} | ${
        (r.cpu / wall * 100).toFixed(3).padStart(11)
      } | ${(r.rss / 1024).toFixed(1).padStart(7)} | ${
        (r.hwm / 1024).toFixed(1).padStart(12)
      } | ${r.kidsBefore} → ${r.kidsAfter} |`,
    );
  }
  console.log("");
  const cpuRatio = base.cpu > 0
    ? `${(agent.cpu / base.cpu).toFixed(2)}x`
    : "n/a (baseline used 0 ticks)";
  console.log(
    `ratio claude / none: CPU ${cpuRatio}, RSS ${(agent.rss / base.rss).toFixed(2)}x, ` +
      `extra RSS ${((agent.rss - base.rss) / 1024).toFixed(1)} MiB`,
  );
  console.log("");
  const ok = runnerOn && !indexExists && agent.runStarted === 0 && modelCalls === 0;
  console.log(
    `runner on, zero harness runs: ${ok ? "yes" : "NO"} (state file ${
      runnerOn ? "written" : "missing"
    }, agent/runs.jsonl ${
      indexExists ? "exists" : "absent"
    }, run_started lines ${agent.runStarted}, model requests ${modelCalls})`,
  );
  if (!ok) Deno.exitCode = 1;
} finally {
  for (const n of nodes) {
    await n.wats.stop();
    await Deno.remove(n.dir, { recursive: true }).catch(() => {});
  }
  await mock.close();
}
