/**
 * What the heartbeat runner adds around one Claude Code run (issue 4): a
 * scripted run through the runner of a real daemon (`wats node --agent claude`)
 * against the same `claude -p …` command run directly, with the same mock model
 * and the same flags, measured in the same run and interleaved (the machines are
 * shared and noisy).
 *
 * - runner: an `ask` posted by another profile through `wats mcp` wakes the
 *   agent (`agent.every = 0`); wall time from just before the `ask` call to the
 *   daemon's `run_ended` line. The daemon's own `duration_ms` (prepare, spawn,
 *   CLI, transcript) and the wake (ask → `run_started` line) are printed too.
 * - direct: `claude` with the arguments the runner builds (`claudeArgs`: the
 *   generated MCP config with `wats mcp --profile helper` against the same
 *   daemon, the locked access flags, a validated deny-rules `--settings` file
 *   generated as the daemon does), the same HEARTBEAT prompt on stdin, the same
 *   HOME, environment and working directory; wall time from spawn to exit.
 *
 * The mock answers every request with plain text, so a run is one model call
 * (no tool call). Both paths start `wats mcp`, which the CLI waits for.
 *
 * Needs the pinned Claude CLI (`deno run -A tests/support/prepare.ts`).
 *
 * Run: deno run -A bench/runner_overhead.ts [--runs 5]
 *
 * With `--agent codex` it measures Codex instead (bench/runner_overhead_codex.ts): the same
 * comparison against `codex exec` run directly, and the lock's cost at daemon start.
 */

import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { denoDir, startWats, tempDataDir, watsCommand } from "../tests/support/cli.ts";
import { cliProblem, CLIS_DIR } from "../tests/support/clis.ts";
import { startMockAnthropic, text } from "../tests/support/mock_anthropic.ts";
import { parseEvents } from "../tests/support/claude.ts";
import { dataPaths } from "../src/config/paths.ts";
import { defaultSettings } from "../src/config/schema.ts";
import { claudeHarness } from "../src/runner/runtimes/claude/harness.ts";
import { planAccess } from "../src/safety/access.ts";
import {
  claudeSettings,
  listDataEntries,
  writeClaudeSettings,
} from "../src/safety/claude_settings.ts";
import { directRunContext } from "./direct_run.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "5" },
    agent: { type: "string", default: "claude" },
    starts: { type: "string", default: "3" },
  },
});
const RUNS = Number(values.runs);

if (values.agent === "codex") {
  const { codexOverhead } = await import("./runner_overhead_codex.ts");
  await codexOverhead(RUNS, Number(values.starts));
  Deno.exit(0);
}

const problem = cliProblem("claude");
if (problem !== null) {
  console.error(`error: ${problem}`);
  Deno.exit(1);
}

const mock = startMockAnthropic({ default: text("Nothing needs me right now.") });
const CLAUDE = `${CLIS_DIR}/node_modules/.bin/claude`;
const env: Record<string, string> = {
  PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
  ANTHROPIC_BASE_URL: mock.url,
  ANTHROPIC_API_KEY: "test-key",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  WATS_AGENT_EVERY: "0",
  WATS_AGENT_HEARTBEAT: "0",
  WATS_AGENT_MAX_RUNS_PER_HOUR: "1000",
  WATS_AGENT_MAX_RUNS_PER_DAY: "1000",
  // The asker is another profile of the same node.
  WATS_AGENT_IGNORE_LOCAL: "false",
};
const dir = tempDataDir();
const paths = dataPaths(dir);
const node = startWats(
  ["--data-dir", dir, "node", "--agent", "claude", "--agent-profile", "helper"],
  { env },
);
const scratch = await Deno.makeTempDir({ prefix: "wats-bench-overhead-" });
let alice: Client | undefined;

/** The environment the daemon's `claude` inherits (as tests/support/cli.ts builds the daemon's). */
function daemonEnv(): Record<string, string> {
  const dropped =
    /^(WATS_.*|XDG_.*|CLAUDE_.*|CLAUDECODE|CODEX_.*|ANTHROPIC_.*|OPENAI_.*|IS_SANDBOX|NO_COLOR)$/;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) if (!dropped.test(k)) out[k] = v;
  return { ...out, HOME: node.home, DENO_DIR: denoDir(), NO_COLOR: "1", ...env };
}

async function callTool(name: string, args: Record<string, unknown>): Promise<string> {
  const r = await alice!.callTool({ name, arguments: args });
  const out = (r.content as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");
  if (r.isError) throw new Error(`${name} failed: ${out}`);
  return out;
}

interface Sample {
  wallMs: number;
  wakeMs?: number;
  durationMs?: number;
  modelCalls: number;
}

let askNo = 0;
let lastAsk = "0".repeat(64);

/** One run through the daemon's runner. */
async function viaRunner(): Promise<Sample> {
  askNo++;
  const calls = mock.messages().length;
  const t0 = performance.now();
  const out = await callTool("ask", { title: `Question ${askNo}`, text: "logrotate or journald?" });
  lastAsk = out.match(/\b[0-9a-f]{64}\b/)?.[0] ?? lastAsk;
  await node.waitForLine((l) => l.includes('"event":"run_started"'), 120_000);
  const wakeMs = performance.now() - t0;
  const ended = JSON.parse(
    await node.waitForLine((l) => l.includes('"event":"run_ended"'), 120_000),
  );
  const wallMs = performance.now() - t0;
  if (ended.status !== "ok") throw new Error(`the run failed: ${JSON.stringify(ended)}`);
  return {
    wallMs,
    wakeMs,
    durationMs: ended.duration_ms,
    modelCalls: mock.messages().length - calls,
  };
}

/** The same command, run directly. */
async function direct(n: number): Promise<Sample> {
  const settings = defaultSettings();
  const ctx = directRunContext({
    runId: `direct-${n}`,
    askId: lastAsk,
    settings,
    paths,
    configDir: scratch,
  });
  // What the daemon's prepare does before a run (src/node/agent_runner.ts).
  const plan = planAccess({
    access: settings["agent.access"],
    workdir: settings["agent.workdir"],
    tools: settings["agent.tools"],
    paths,
    home: node.home,
    userCwd: Deno.cwd(),
    dataEntries: await listDataEntries(paths.dataDir, paths.runDir),
  });
  const settingsFile = `${scratch}/claude-settings.json`;
  await writeClaudeSettings(settingsFile, claudeSettings(plan.denyRules));
  const full = {
    ...ctx,
    settingsFile,
    access: { args: plan.claudeArgs, allowedTools: plan.allowedTools },
    cwd: plan.cwd,
  };
  // Exactly the harness's command and files (MCP config, system prompt), run by hand.
  const cmd = claudeHarness({ program: CLAUDE }).command(full);
  for (const f of cmd.files) Deno.writeTextFileSync(f.path, f.text, { mode: f.mode });
  const calls = mock.messages().length;
  const t0 = performance.now();
  const child = new Deno.Command(cmd.program, {
    args: cmd.args,
    cwd: cmd.cwd,
    env: daemonEnv(),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(cmd.stdin));
  await w.close();
  const out = await child.output();
  const wallMs = performance.now() - t0;
  for (const f of cmd.files) Deno.removeSync(f.path);
  const events = parseEvents(new TextDecoder().decode(out.stdout));
  const result = events.find((e) => e.type === "result");
  const init = events.find((e) => e.type === "system" && e.subtype === "init");
  const servers = (init?.mcp_servers ?? []) as { name: string; status: string }[];
  if (
    result?.is_error !== false ||
    !servers.some((s) => s.name === "wats" && s.status === "connected")
  ) {
    throw new Error(
      `the direct run failed (code ${out.code}): ${JSON.stringify(result)} servers ${
        JSON.stringify(servers)
      }\n${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return { wallMs, modelCalls: mock.messages().length - calls };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  const [lo, hi] = [s[m - 1], s[m]];
  if (hi === undefined) throw new Error("error: no samples were taken; run at least one iteration");
  return s.length % 2 || lo === undefined ? hi : (lo + hi) / 2;
}

try {
  await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
  const [cmd, ...rest] = watsCommand();
  alice = new Client({ name: "bench-alice", version: "1" });
  await alice.connect(
    new StdioClientTransport({
      command: cmd,
      args: [...rest, "--data-dir", dir, "mcp", "--profile", "alice"],
      env: {
        HOME: node.home,
        PATH: Deno.env.get("PATH") ?? "",
        DENO_DIR: denoDir(),
        NO_COLOR: "1",
      },
      stderr: "pipe",
    }),
  );
  // One of each first: disk caches, the CLI's first start in this HOME.
  await viaRunner();
  await direct(0);
  const runner: Sample[] = [];
  const plain: Sample[] = [];
  const started = performance.now();
  for (let i = 1; i <= RUNS; i++) {
    if (i % 2) {
      runner.push(await viaRunner());
      plain.push(await direct(i));
    } else {
      plain.push(await direct(i));
      runner.push(await viaRunner());
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const f = (ms: number) => (ms / 1000).toFixed(3);
  const rw = median(runner.map((s) => s.wallMs));
  const dw = median(plain.map((s) => s.wallMs));
  console.log(`runner overhead: ${RUNS} runs per path (+1 warm-up each), ${seconds.toFixed(0)} s`);
  console.log("");
  console.log(
    "| path                                   | median s | min s | max s | model calls per run |",
  );
  console.log(
    "| -------------------------------------- | -------- | ----- | ----- | ------------------- |",
  );
  const row = (name: string, xs: number[], calls: number[]) =>
    console.log(
      `| ${name.padEnd(38)} | ${f(median(xs))} | ${f(Math.min(...xs))} | ${f(Math.max(...xs))} | ${
        [...new Set(calls)].join(", ")
      } |`,
    );
  row("claude -p directly (baseline)", plain.map((s) => s.wallMs), plain.map((s) => s.modelCalls));
  row(
    "through the runner: ask → run_ended",
    runner.map((s) => s.wallMs),
    runner.map((s) => s.modelCalls),
  );
  row("  of which ask → run_started", runner.map((s) => s.wakeMs!), []);
  row("  of which the run (duration_ms)", runner.map((s) => s.durationMs!), []);
  console.log("");
  console.log(
    `ratio runner / direct (medians): ${(rw / dw).toFixed(2)}x, difference ${
      (rw - dw).toFixed(0)
    } ms`,
  );
  console.log(
    `per pair (runner − direct, ms): ${
      runner.map((s, i) => (s.wallMs - plain[i]!.wallMs).toFixed(0)).join(", ")
    }`,
  );
} finally {
  await alice?.close().catch(() => {});
  await node.stop();
  await mock.close();
  await Deno.remove(scratch, { recursive: true }).catch(() => {});
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
