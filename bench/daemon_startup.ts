/**
 * The daemon's start-to-ready time and its idle cost, each reported as a ratio
 * to a baseline measured in the same run (the machines are shared and noisy):
 *
 * - start-to-ready: `wats node` from spawn to its `started` JSON line, against
 *   `deno run` of a script that prints one line (the runtime's own start);
 * - idle: CPU time and RSS of a daemon left alone for --idle-seconds, against a
 *   bare Deno process that only waits, over the same window.
 *
 * Run: deno run -A bench/daemon_startup.ts [--starts 7] [--idle-seconds 60]
 * Linux only (reads /proc).
 */

import { parseArgs } from "node:util";
import { tempDataDir, watsCommand } from "../tests/support/cli.ts";
import { splitArgv } from "./argv.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    starts: { type: "string", default: "7" },
    "idle-seconds": { type: "string", default: "60" },
  },
});
const starts = Number(values.starts);
const idleSeconds = Number(values["idle-seconds"]);
const CLK_TCK = 100;

/** Spawns `cmd`, resolves with ms until a stdout line matching `ready`, and the live child. */
async function startUntil(cmd: string[], env: Record<string, string>, ready: RegExp) {
  const t0 = performance.now();
  const { command, args } = splitArgv(cmd);
  const child = new Deno.Command(command, {
    args,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  while (!ready.test(buf)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${cmd.join(" ")} ended before it was ready`);
    buf += value;
  }
  const ms = performance.now() - t0;
  // Keep draining so the child never blocks on a full pipe.
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  return { ms, child };
}

function cpuTicks(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]); // utime + stime
}

function rssKiB(pid: number): number {
  const m = Deno.readTextFileSync(`/proc/${pid}/status`).match(/VmRSS:\s+(\d+)/);
  return m ? Number(m[1]) : NaN;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s[Math.floor(s.length / 2)];
  if (m === undefined) throw new Error("error: no samples were taken; run at least one iteration");
  return m;
}

async function stop(child: Deno.ChildProcess) {
  try {
    child.kill("SIGTERM");
  } catch { /* gone */ }
  await child.status;
}

const baselineScript = await Deno.makeTempFile({ suffix: ".ts" });
await Deno.writeTextFile(
  baselineScript,
  `console.log("ready"); await new Promise((r) => Deno.addSignalListener("SIGTERM", () => r(0)));`,
);
const baselineCmd = [Deno.execPath(), "run", "--quiet", baselineScript];
const env = { ...Deno.env.toObject(), NO_COLOR: "1" };

const base: number[] = [];
const wats: number[] = [];
for (let i = 0; i < starts; i++) {
  const b = await startUntil(baselineCmd, env, /ready/);
  base.push(b.ms);
  await stop(b.child);
  const dir = tempDataDir();
  const w = await startUntil(
    [...watsCommand(), "--data-dir", dir, "node"],
    env,
    /"event":"started"/,
  );
  wats.push(w.ms);
  await stop(w.child);
  await Deno.remove(dir, { recursive: true });
}
console.log(`start-to-ready over ${starts} starts (median):`);
console.log(`  bare deno script   ${median(base).toFixed(0)} ms`);
console.log(`  wats node          ${median(wats).toFixed(0)} ms`);
console.log(`  ratio              ${(median(wats) / median(base)).toFixed(2)}x`);

const dir = tempDataDir();
const b = await startUntil(baselineCmd, env, /ready/);
const w = await startUntil([...watsCommand(), "--data-dir", dir, "node"], env, /"event":"started"/);
// Let start-up work settle before measuring idle.
await new Promise((r) => setTimeout(r, 2000));
const b0 = cpuTicks(b.child.pid), w0 = cpuTicks(w.child.pid);
await new Promise((r) => setTimeout(r, idleSeconds * 1000));
const bCpu = (cpuTicks(b.child.pid) - b0) / CLK_TCK, wCpu = (cpuTicks(w.child.pid) - w0) / CLK_TCK;
const bRss = rssKiB(b.child.pid), wRss = rssKiB(w.child.pid);
await stop(b.child);
await stop(w.child);
await Deno.remove(dir, { recursive: true });
await Deno.remove(baselineScript);
console.log(`idle over ${idleSeconds} s:`);
console.log(
  `  bare deno   cpu ${(bCpu * 1000).toFixed(0)} ms   rss ${(bRss / 1024).toFixed(1)} MiB`,
);
console.log(
  `  wats node   cpu ${(wCpu * 1000).toFixed(0)} ms   rss ${(wRss / 1024).toFixed(1)} MiB`,
);
console.log(`  cpu share   ${(wCpu / idleSeconds * 100).toFixed(3)} % of one core`);
console.log(`  rss ratio   ${(wRss / bRss).toFixed(2)}x`);
