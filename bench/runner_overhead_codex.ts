/**
 * The Codex part of bench/runner_overhead.ts (`--agent codex`, issue 9), both measured against a
 * baseline in the same run:
 *
 * 1. Start cost of the lock: `wats node --agent codex` from spawn to its `started` line on a
 *    fresh data dir (catalog from `codex debug models --bundled`, feature probe, self-check run)
 *    and restarted on the same data dir (catalog and passed self-check reused), against
 *    `wats node --agent none`. Interleaved. The self-check's own `duration_ms` is printed too.
 * 2. One scripted run through the runner (ask → `run_ended`) against the same `codex exec`
 *    command run directly (`codexArgs` with the daemon's catalog, features, model and provider,
 *    its `wats mcp` on the same daemon), same mock, same HOME and CODEX_HOME. Interleaved.
 *
 * The mock answers every request with plain text: one model call a run, no tool call. The model
 * is `gpt-6.2-sol`, a code-mode slug in Codex's catalog, so the lock is on the measured path.
 *
 * Needs the pinned Codex CLI (`deno run -A tests/support/prepare.ts`).
 *
 * Run: deno run -A bench/runner_overhead.ts --agent codex [--runs 5] [--starts 3]
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  denoDir,
  type RunningWats,
  startWats,
  tempDataDir,
  watsCommand,
} from "../tests/support/cli.ts";
import { cliProblem, CLIS_DIR } from "../tests/support/clis.ts";
import { startMockOpenAI, text } from "../tests/support/mock_openai.ts";
import { dataPaths } from "../src/config/paths.ts";
import { defaultSettings } from "../src/config/schema.ts";
import { codexArgs } from "../src/runner/runtimes/codex/harness.ts";
import { ensureCodexCatalog } from "../src/runner/runtimes/codex/catalog.ts";
import { codexFeatureProbe, lockdownDisables } from "../src/runner/runtimes/codex/features.ts";
import { codexStateDir, readSelfCheck } from "../src/runner/runtimes/codex/lock.ts";
import { providerOf } from "../src/runner/runtimes/codex/prepare.ts";
import type { CommandRunner } from "../src/runner/spawn.ts";
import { directRunContext } from "./direct_run.ts";
import { runSystemPrompt } from "../src/prompts.ts";

const MODEL = "gpt-6.2-sol";
/** The daemon finds `codex` on its PATH; the bench runs the same file. */
const CODEX = `${CLIS_DIR}/node_modules/.bin/codex`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  const [lo, hi] = [s[m - 1], s[m]];
  if (hi === undefined) throw new Error("error: no samples were taken; run at least one iteration");
  return s.length % 2 || lo === undefined ? hi : (lo + hi) / 2;
}

const f = (ms: number) => (ms / 1000).toFixed(3);

/** Runs the Codex benchmark; prints two tables. */
export async function codexOverhead(runs: number, starts: number): Promise<void> {
  const problem = cliProblem("codex");
  if (problem !== null) throw new Error(problem);
  const mock = startMockOpenAI({ default: text("Nothing needs me right now.") });
  const home = await Deno.makeTempDir({ prefix: "wats-bench-codex-home-" });
  await Deno.mkdir(`${home}/.codex`);
  const env: Record<string, string> = {
    PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
    CODEX_HOME: `${home}/.codex`,
    WATS_AGENT_EVERY: "0",
    WATS_AGENT_HEARTBEAT: "0",
    WATS_AGENT_MAX_RUNS_PER_HOUR: "1000",
    WATS_AGENT_MAX_RUNS_PER_DAY: "1000",
    WATS_AGENT_IGNORE_LOCAL: "false",
    WATS_AGENT_CODEX_MODEL: MODEL,
    WATS_AGENT_CODEX_BASE_URL: `${mock.url}/v1`,
  };
  const dirs: string[] = [];
  const start = async (agent: string, dir?: string) => {
    const d = dir ?? tempDataDir();
    if (dir === undefined) dirs.push(d);
    const t0 = performance.now();
    const node = startWats(
      ["--data-dir", d, "node", "--agent", agent, "--agent-profile", "helper"],
      {
        env,
        home,
      },
    );
    await node.waitForLine((l) => l.includes('"event":"started"'), 180_000);
    return { ms: performance.now() - t0, node, dir: d };
  };
  let node: RunningWats | undefined;
  let alice: Client | undefined;
  try {
    // ---- 1. start cost ----------------------------------------------------------------
    const none: number[] = [], fresh: number[] = [], again: number[] = [], check: number[] = [];
    for (let i = 0; i <= starts; i++) {
      const a = await start("none");
      await a.node.stop();
      const b = await start("codex");
      await b.node.stop();
      const c = await start("codex", b.dir);
      await c.node.stop();
      if (i === 0) continue; // warm-up: disk caches, Codex's first start in this HOME
      none.push(a.ms);
      fresh.push(b.ms);
      again.push(c.ms);
      check.push(readSelfCheck(codexStateDir(dataPaths(b.dir).agentDir))?.duration_ms ?? NaN);
    }
    console.log(`Codex lock, start cost: ${starts} starts per path (+1 warm-up each)`);
    console.log("");
    console.log(`| ${"path".padEnd(52)} | median s | min s | max s |`);
    console.log(`| ${"-".repeat(52)} | -------- | ----- | ----- |`);
    const row = (name: string, xs: number[]) =>
      console.log(
        `| ${name.padEnd(52)} | ${f(median(xs))} | ${f(Math.min(...xs))} | ${f(Math.max(...xs))} |`,
      );
    row("wats node --agent none (baseline)", none);
    row("--agent codex, fresh data dir (catalog, self-check)", fresh);
    row("  of which the self-check run (duration_ms)", check);
    row("--agent codex, restart (catalog and check reused)", again);
    console.log("");
    console.log(
      `ratio fresh / none: ${(median(fresh) / median(none)).toFixed(2)}x (+${
        (median(fresh) - median(none)).toFixed(0)
      } ms); restart / none: ${(median(again) / median(none)).toFixed(2)}x (+${
        (median(again) - median(none)).toFixed(0)
      } ms)`,
    );
    console.log("");

    // ---- 2. one run: runner vs codex exec directly ---------------------------------------
    const started = await start("codex");
    node = started.node;
    const dir = started.dir;
    const paths = dataPaths(dir);
    const [cmd, ...rest] = watsCommand();
    alice = new Client({ name: "bench-alice", version: "1" });
    await alice.connect(
      new StdioClientTransport({
        command: cmd,
        args: [...rest, "--data-dir", dir, "mcp", "--profile", "alice"],
        env: { HOME: home, PATH: Deno.env.get("PATH") ?? "", DENO_DIR: denoDir(), NO_COLOR: "1" },
        stderr: "pipe",
      }),
    );
    const daemonEnv = (): Record<string, string> => {
      const dropped =
        /^(WATS_.*|XDG_.*|CLAUDE_.*|CLAUDECODE|CODEX_.*|ANTHROPIC_.*|OPENAI_.*|IS_SANDBOX|NO_COLOR)$/;
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(Deno.env.toObject())) if (!dropped.test(k)) out[k] = v;
      return { ...out, HOME: home, DENO_DIR: denoDir(), NO_COLOR: "1", ...env };
    };
    // The command the daemon builds: its catalog (already made), features, model, provider.
    const run: CommandRunner = async (program, args) => {
      const bin = program === "codex" ? CODEX : program;
      const out = await new Deno.Command(bin, { args, env: daemonEnv(), clearEnv: true })
        .output();
      const dec = new TextDecoder();
      return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
    };
    const catalog = await ensureCodexCatalog({
      run,
      program: "codex",
      dir: codexStateDir(paths.agentDir),
    });
    if (catalog.created) throw new Error("the daemon should have made the catalog");
    const settings = defaultSettings();
    const provider = providerOf({
      "agent.codex_model": MODEL,
      "agent.codex_base_url": `${mock.url}/v1`,
      "agent.codex_env_key": "",
    });
    const options = {
      program: "codex",
      catalog: catalog.path,
      disable: lockdownDisables(await codexFeatureProbe(run)("codex")),
      model: MODEL,
      ...(provider ? { provider } : {}),
    };

    let askNo = 0;
    let lastAsk = "0".repeat(64);
    const viaRunner = async () => {
      askNo++;
      const calls = mock.responses().length;
      const t0 = performance.now();
      const r = await alice!.callTool({
        name: "ask",
        arguments: { title: `Question ${askNo}`, text: "logrotate or journald?" },
      });
      const out = (r.content as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");
      lastAsk = out.match(/\b[0-9a-f]{64}\b/)?.[0] ?? lastAsk;
      const ended = JSON.parse(
        await node!.waitForLine((l) => l.includes('"event":"run_ended"'), 120_000),
      );
      const wallMs = performance.now() - t0;
      if (ended.status !== "ok") throw new Error(`the run failed: ${JSON.stringify(ended)}`);
      return {
        wallMs,
        durationMs: ended.duration_ms as number,
        calls: mock.responses().length - calls,
      };
    };
    const direct = async (n: number) => {
      const ctx = directRunContext({
        runId: `direct-${n}`,
        askId: lastAsk,
        settings,
        paths,
        configDir: `${paths.agentDir}/run-config`,
      });
      const calls = mock.responses().length;
      const t0 = performance.now();
      const child = new Deno.Command(CODEX, {
        args: codexArgs(ctx, options),
        cwd: ctx.cwd,
        env: { ...daemonEnv(), RUST_BACKTRACE: "0" },
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const w = child.stdin.getWriter();
      // What the harness sends on stdin: the run's system prompt, then the wake prompt.
      await w.write(new TextEncoder().encode(`${runSystemPrompt()}\n${ctx.prompt}`));
      await w.close();
      const out = await child.output();
      const wallMs = performance.now() - t0;
      const stdout = new TextDecoder().decode(out.stdout);
      if (out.code !== 0 || !stdout.includes('"turn.completed"')) {
        throw new Error(
          `the direct run failed (code ${out.code}): ${stdout}\n${
            new TextDecoder().decode(out.stderr)
          }`,
        );
      }
      return { wallMs, durationMs: wallMs, calls: mock.responses().length - calls };
    };

    await viaRunner();
    await direct(0);
    const runner: { wallMs: number; durationMs: number; calls: number }[] = [];
    const plain: { wallMs: number; durationMs: number; calls: number }[] = [];
    for (let i = 1; i <= runs; i++) {
      if (i % 2) {
        runner.push(await viaRunner());
        plain.push(await direct(i));
      } else {
        plain.push(await direct(i));
        runner.push(await viaRunner());
      }
    }
    console.log(`Codex runner overhead: ${runs} runs per path (+1 warm-up each), model ${MODEL}`);
    console.log("");
    console.log(
      "| path                                   | median s | min s | max s | model calls per run |",
    );
    console.log(
      "| -------------------------------------- | -------- | ----- | ----- | ------------------- |",
    );
    const row2 = (name: string, xs: number[], calls: number[]) =>
      console.log(
        `| ${name.padEnd(38)} | ${f(median(xs))} | ${f(Math.min(...xs))} | ${
          f(Math.max(...xs))
        } | ${[...new Set(calls)].join(", ")} |`,
      );
    row2("codex exec directly (baseline)", plain.map((s) => s.wallMs), plain.map((s) => s.calls));
    row2(
      "through the runner: ask → run_ended",
      runner.map((s) => s.wallMs),
      runner.map((s) => s.calls),
    );
    row2("  of which the run (duration_ms)", runner.map((s) => s.durationMs), []);
    const rw = median(runner.map((s) => s.wallMs)), dw = median(plain.map((s) => s.wallMs));
    console.log("");
    console.log(
      `ratio runner / direct (medians): ${(rw / dw).toFixed(2)}x, difference ${
        (rw - dw).toFixed(0)
      } ms`,
    );
  } finally {
    await alice?.close().catch(() => {});
    await node?.stop();
    await mock.close();
    for (const d of dirs) await Deno.remove(d, { recursive: true }).catch(() => {});
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}
