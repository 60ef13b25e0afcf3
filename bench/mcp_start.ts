/**
 * `wats mcp`'s start (issue 27 item 1): from spawn to the answer to MCP `initialize`,
 * against a running daemon, on an idle machine and beside two CPU hogs (`yes >
 * /dev/null`, twice), each as a ratio to baselines measured in the same run, interleaved
 * so load changes hit each alike:
 *
 * - `deno.empty`  — `deno run` of an empty file, to its exit: the runtime's own start;
 * - `deno.worker` — `deno run` of a file that starts one Worker of an empty module and
 *   exits when it answers: what the launcher's Worker per command costs at least;
 * - `wats.help`   — `wats --help`: the launcher and one small Worker (no socket);
 * - `wats.mcp`    — `wats mcp` until its `initialize` answer: launcher, the bridge's
 *   Worker, its settings, the socket hello, the daemon's answer.
 *
 * Run: deno run -A bench/mcp_start.ts [--samples 9]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { startWats, tempDataDir, watsCommand } from "../tests/support/cli.ts";
import { splitArgv } from "./argv.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { samples: { type: "string", default: "9" } },
});
const samples = Number(values.samples);

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "bench", version: "0" },
  },
}) + "\n";

/** Spawns `cmd`, writes `input`, resolves with ms until stdout matches `ready` (or exit when no `ready`). */
async function timeUntil(
  cmd: readonly string[],
  env: Record<string, string>,
  input: string | undefined,
  ready: RegExp | undefined,
): Promise<number> {
  const t0 = performance.now();
  const { command, args } = splitArgv(cmd);
  const child = new Deno.Command(command, {
    args,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  if (input !== undefined) await writer.write(new TextEncoder().encode(input));
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let ms: number | undefined;
  for (;;) {
    if (ready !== undefined && ready.test(buf)) {
      ms = performance.now() - t0;
      break;
    }
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
  }
  await writer.close().catch(() => {});
  if (ms === undefined) {
    await child.status;
    if (ready !== undefined) throw new Error(`${cmd.join(" ")} ended before it answered: ${buf}`);
    return performance.now() - t0;
  }
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  await child.status;
  return ms;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const v = s[Math.min(s.length - 1, Math.floor(q * s.length))];
  if (v === undefined) throw new Error("error: no samples were taken; run at least one");
  return v;
}

const dir = await Deno.makeTempDir({ prefix: "wats-mcp-start-" });
const empty = `${dir}/empty.ts`;
Deno.writeTextFileSync(empty, "");
const workerMod = `${dir}/worker_mod.ts`;
Deno.writeTextFileSync(workerMod, "self.postMessage(1);\n");
const withWorker = `${dir}/with_worker.ts`;
Deno.writeTextFileSync(
  withWorker,
  `const w = new Worker(new URL("./worker_mod.ts", import.meta.url), { type: "module" });\n` +
    `w.onmessage = () => { w.terminate(); };\n`,
);

const dataDir = tempDataDir();
const env = { ...Deno.env.toObject(), HOME: dir, WATS_DATA_DIR: dataDir };
const node = startWats(["--data-dir", dataDir, "node", "--agent", "none"], { env: { HOME: dir } });
await node.waitForLine((l) => l.includes('"event":"started"'), 120_000);

const deno = Deno.execPath();
const paths: Record<string, () => Promise<number>> = {
  "deno.empty": () => timeUntil([deno, "run", "--quiet", empty], env, undefined, undefined),
  "deno.worker": () =>
    timeUntil([deno, "run", "--quiet", "-A", withWorker], env, undefined, undefined),
  "wats.help": () => timeUntil([...watsCommand(), "--help"], env, undefined, undefined),
  "wats.mcp": () =>
    timeUntil([...watsCommand(), "--data-dir", dataDir, "mcp"], env, INITIALIZE, /"id":1\b/),
};

async function measure(label: string): Promise<void> {
  const times: Record<string, number[]> = {};
  for (const name of Object.keys(paths)) await paths[name]!(); // warm the cache
  for (let i = 0; i < samples; i++) {
    for (const [name, run] of Object.entries(paths)) (times[name] ??= []).push(await run());
  }
  const base = quantile(times["deno.empty"]!, 0.5);
  console.log(`\n${label} (${samples} samples each; ratio = median / deno.empty's median)`);
  for (const [name, xs] of Object.entries(times)) {
    const med = quantile(xs, 0.5);
    console.log(
      `  ${name.padEnd(12)} median ${med.toFixed(0).padStart(5)} ms  p90 ${
        quantile(xs, 0.9).toFixed(0).padStart(5)
      } ms  ratio ${(med / base).toFixed(2)}`,
    );
  }
}

try {
  await measure("idle");
  const hogs = [0, 1].map(() =>
    new Deno.Command("yes", { stdout: "null", stderr: "null", stdin: "null" }).spawn()
  );
  try {
    await measure("beside two CPU hogs (yes > /dev/null, twice)");
  } finally {
    for (const h of hogs) {
      h.kill("SIGKILL");
      await h.status;
    }
  }
} finally {
  await node.stop();
  Deno.removeSync(dataDir, { recursive: true });
  Deno.removeSync(dir, { recursive: true });
}
