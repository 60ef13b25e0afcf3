/**
 * What the ACP runtime of the heartbeat agent (`agent.runtime = "acp"` on
 * claude-agent-acp, docs/acp.md "The heartbeat agent over ACP") adds around one
 * run, and what it costs or saves against the `claude -p` runtime. Three paths,
 * measured in the same run and interleaved (the machines are shared and noisy),
 * all against the same mock model, which answers with plain text (the prompt
 * takes one model call, no tool call):
 *
 * - runner (acp): a real daemon (`wats node --agent acp --agent-harness claude`)
 *   on the pinned claude-agent-acp; an `ask` posted by another profile through
 *   `wats mcp` wakes the agent (`agent.every = 0`); wall time from just before
 *   the `ask` call to the daemon's `run_ended` line. Its `duration_ms` is
 *   printed too.
 * - direct (bare ACP client): the same wake prompt (read from the mock's record
 *   of the latest ACP runner run) sent by a bare `@agentclientprotocol/sdk`
 *   client: spawn the same agent with the environment the runtime gives it,
 *   initialize, `session/new` in the same cwd with the same wats MCP server
 *   (`wats mcp --profile helper` against the same daemon) and the same `_meta`
 *   (`heartbeatMeta` over which `FORCED_META` is merged), the asking mode when
 *   the session is not in it, prompt, stop; wall time from spawn to exit, split
 *   by step.
 * - runner (claude -p): the same ask answered by a second daemon with
 *   `agent.runtime = claude` (bench/runner_overhead.ts measures that runner
 *   against `claude -p` run directly).
 *
 * Model calls are counted per run, and among them claude-agent-acp's own
 * request for a session title (it names each new session with a model call).
 * The bare client's `wats mcp` has no run token: it is a plain `helper` session,
 * which offers a few more tools than a run's (as in runner_overhead.ts).
 *
 * Needs the pinned Claude CLI and claude-agent-acp
 * (`deno run -A tests/support/prepare.ts`).
 *
 * Run: deno run -A bench/runner_overhead_acp.ts [--runs 5]
 */

import { parseArgs } from "node:util";
import { startBareAcp } from "./bare_acp.ts";
import * as acp from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  denoDir,
  type RunningWats,
  startWats,
  tempDataDir,
  watsCommand,
} from "../tests/support/cli.ts";
import { cliCommand, cliProblem, CLIS_DIR } from "../tests/support/clis.ts";
import {
  hasTool,
  type MessagesRequest,
  startMockAnthropic,
  text,
} from "../tests/support/mock_anthropic.ts";
import { deepMerge, FORCED_META } from "../src/acp/client.ts";
import { makePolicy } from "../src/acp/policy.ts";
import { filterEnv } from "../src/cli/context.ts";
import type { HarnessConfig } from "../src/config/acp_tables.ts";
import { dataPaths } from "../src/config/paths.ts";
import { defaultSettings } from "../src/config/schema.ts";
import { heartbeatMeta, watsServer } from "../src/runner/runtimes/acp/harness.ts";
import { directRunContext } from "./direct_run.ts";
import { rotated } from "./cycle.ts";
import { splitArgv } from "./argv.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { runs: { type: "string", default: "5" } },
});
const RUNS = Number(values.runs);

for (const cli of ["claude", "claude-acp"] as const) {
  const problem = cliProblem(cli);
  if (problem !== null) {
    console.error(`error: ${problem}`);
    Deno.exit(1);
  }
}
const ACP_AGENT = splitArgv(cliCommand("claude-acp"));
const REPLY = "Nothing needs me right now.";
/** How HEARTBEAT.md, and so every wake prompt, begins. */
const PROMPT_START = "You are part of WeAreTheSwarm";

const mock = startMockAnthropic({ default: text(REPLY) });
const settingsEnv: Record<string, string> = {
  WATS_AGENT_EVERY: "0",
  WATS_AGENT_HEARTBEAT: "0",
  WATS_AGENT_MAX_RUNS_PER_HOUR: "1000",
  WATS_AGENT_MAX_RUNS_PER_DAY: "1000",
  // The asker is another profile of the same node.
  WATS_AGENT_IGNORE_LOCAL: "false",
};

// ---- the ACP daemon ---------------------------------------------------------
const acpDir = tempDataDir();
const acpPaths = dataPaths(acpDir);
const acpHome = Deno.makeTempDirSync({ prefix: "wats-bench-acp-home-" });
const harnessEnv: Record<string, string> = {
  ANTHROPIC_BASE_URL: mock.url,
  ANTHROPIC_API_KEY: "test-key",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  CLAUDE_CONFIG_DIR: `${acpHome}/.claude`,
  // `wats mcp` runs from source here: it needs this process's Deno cache.
  DENO_DIR: denoDir(),
};
/** `[harnesses.claude]` as the daemon reads it from the config.toml below. */
const harness: HarnessConfig = {
  name: "claude",
  command: ACP_AGENT.command,
  args: ACP_AGENT.args,
  env: harnessEnv,
  meta: {},
  context: [],
  idle: 10 * 60_000,
  // The runtime's own harness only: no coding-agent tool, so both daemons offer the same tools.
  enabled: false,
};
Deno.writeTextFileSync(
  `${acpDir}/config.toml`,
  [
    "[harnesses.claude]",
    `command = ${JSON.stringify(ACP_AGENT.command)}`,
    `args = ${JSON.stringify(ACP_AGENT.args)}`,
    `env = { ${
      Object.entries(harnessEnv).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(", ")
    } }`,
    "enabled = false",
    "",
  ].join("\n"),
);
const acpNode = startWats(
  [
    ...["--data-dir", acpDir, "node", "--agent", "acp"],
    ...["--agent-harness", "claude", "--agent-profile", "helper"],
  ],
  { env: settingsEnv, home: acpHome },
);

// ---- the claude -p daemon ---------------------------------------------------
const claudeDir = tempDataDir();
const claudeNode = startWats(
  ["--data-dir", claudeDir, "node", "--agent", "claude", "--agent-profile", "helper"],
  {
    env: {
      ...settingsEnv,
      PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: "test-key",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
  },
);

/**
 * The environment the runtime starts the agent with: the daemon's (its process
 * environment as tests/support/cli.ts builds it, filtered by the launcher for
 * the Worker), without `WATS_*`, plus the harness's `env`, without `IS_SANDBOX`
 * (src/acp/client.ts).
 */
function agentEnv(): Record<string, string> {
  const dropped =
    /^(WATS_.*|XDG_.*|CLAUDE_.*|CLAUDECODE|CODEX_.*|ANTHROPIC_.*|OPENAI_.*|IS_SANDBOX|NO_COLOR)$/;
  const daemon: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) if (!dropped.test(k)) daemon[k] = v;
  Object.assign(daemon, { HOME: acpHome, DENO_DIR: denoDir(), NO_COLOR: "1" }, settingsEnv);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(filterEnv(daemon))) if (!k.startsWith("WATS_")) out[k] = v;
  Object.assign(out, harness.env);
  delete out.IS_SANDBOX;
  return out;
}

async function connectAlice(dir: string, home: string): Promise<Client> {
  const [cmd, ...rest] = watsCommand();
  const c = new Client({ name: "bench-alice", version: "1" });
  await c.connect(
    new StdioClientTransport({
      command: cmd,
      args: [...rest, "--data-dir", dir, "mcp", "--profile", "alice"],
      env: { HOME: home, PATH: Deno.env.get("PATH") ?? "", DENO_DIR: denoDir(), NO_COLOR: "1" },
      stderr: "pipe",
    }),
  );
  return c;
}

interface Sample {
  wallMs: number;
  durationMs?: number;
  modelCalls: number;
  /** The bare client's steps: spawn + initialize, session/new (+ mode), prompt, stop. */
  steps?: [number, number, number, number];
}

/** claude-agent-acp names each new session with a model call of its own (system prompt below). */
const TITLE_SYSTEM = "You are naming a coding session";
const titleRequests = (reqs: { body?: MessagesRequest }[]) =>
  reqs.filter((r) => JSON.stringify(r.body?.system ?? "").includes(TITLE_SYSTEM)).length;
let titles = { acp: 0, direct: 0, claude: 0 };
let modeSets = 0;

let askNo = 0;
let lastAsk = "0".repeat(64);
/** The wake prompt of the latest ACP runner run, as the model received it. */
let lastPrompt: string | undefined;

/** The wake prompt in a request: the text block that starts like HEARTBEAT.md. */
function wakePrompt(req: MessagesRequest): string | undefined {
  for (const m of req.messages) {
    if (m.role !== "user" || typeof m.content === "string") continue;
    for (const b of m.content) if (b.text?.startsWith(PROMPT_START)) return b.text;
  }
  return undefined;
}

/** One run through a daemon's runner: `ask` → `run_ended`. */
async function viaRunner(node: RunningWats, alice: Client, acpRun: boolean): Promise<Sample> {
  askNo++;
  const calls = mock.messages().length;
  const t0 = performance.now();
  const r = await alice.callTool({
    name: "ask",
    arguments: { title: `Question ${askNo}`, text: "logrotate or journald?" },
  });
  const out = (r.content as Array<{ text?: string }>).map((c) => c.text ?? "").join("\n");
  if (r.isError) throw new Error(`ask failed: ${out}`);
  const ended = JSON.parse(
    await node.waitForLine((l) => l.includes('"event":"run_ended"'), 120_000),
  );
  const wallMs = performance.now() - t0;
  if (ended.status !== "ok") throw new Error(`the run failed: ${JSON.stringify(ended)}`);
  const requests = mock.messages().slice(calls);
  if (acpRun) {
    lastAsk = out.match(/\b[0-9a-f]{64}\b/)?.[0] ?? lastAsk;
    const woken = requests.find((m) => hasTool("mcp__wats__post")(m.body!));
    lastPrompt = woken && wakePrompt(woken.body!);
    if (lastPrompt === undefined) throw new Error("no wake prompt in the ACP run's requests");
  }
  titles[acpRun ? "acp" : "claude"] += titleRequests(requests);
  return { wallMs, durationMs: ended.duration_ms, modelCalls: requests.length };
}

/** The same prompt from a bare ACP client to the same agent, with what the runtime sends. */
async function direct(n: number): Promise<Sample> {
  const settings = defaultSettings();
  const ctx = directRunContext({
    runId: `direct-${n}`,
    askId: lastAsk,
    settings,
    paths: acpPaths,
    configDir: `${acpPaths.agentDir}/run-config`,
  });
  const _meta = deepMerge(
    heartbeatMeta({
      harness,
      env: {},
      agentDir: acpPaths.agentDir,
      tools: "locked",
      policy: makePolicy([], [], acpDir),
    }, ctx),
    FORCED_META,
  );
  const mcpServers = [watsServer(ctx)];
  const calls = mock.messages().length;
  const t0 = performance.now();
  const bareAcp = startBareAcp({
    command: harness.command,
    args: harness.args,
    cwd: ctx.cwd,
    env: agentEnv(),
  });
  const conn = bareAcp.conn;
  await conn.agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "bare", version: "0" },
  });
  const tInitialized = performance.now();
  const s = await conn.agent.request("session/new", { cwd: ctx.cwd, mcpServers, _meta });
  // As the runtime does: the asking mode, when the session is not in it already.
  if (s.modes?.currentModeId !== "default") {
    await conn.agent.request("session/set_mode", { sessionId: s.sessionId, modeId: "default" });
    modeSets++;
  }
  const tSession = performance.now();
  await conn.agent.request("session/prompt", {
    sessionId: s.sessionId,
    prompt: [{ type: "text", text: lastPrompt! }],
  });
  const tPrompted = performance.now();
  await bareAcp.stop();
  const wallMs = performance.now() - t0;
  const steps: Sample["steps"] = [
    tInitialized - t0,
    tSession - tInitialized,
    tPrompted - tSession,
    t0 + wallMs - tPrompted,
  ];
  const message = bareAcp.message();
  const stderr = bareAcp.stderr();
  const requests = mock.messages().slice(calls);
  if (message.trim() !== REPLY) throw new Error(`unexpected message: ${message}\n${stderr}`);
  if (!requests.some((m) => hasTool("mcp__wats__post")(m.body!))) {
    throw new Error(
      `the model was not offered the wats tools: wats mcp did not connect\n${stderr}`,
    );
  }
  titles.direct += titleRequests(requests);
  return { wallMs, modelCalls: requests.length, steps };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  const [lo, hi] = [s[m - 1], s[m]];
  if (hi === undefined) throw new Error("error: no samples were taken; run at least one iteration");
  return s.length % 2 || lo === undefined ? hi : (lo + hi) / 2;
}

let aliceAcp: Client | undefined;
let aliceClaude: Client | undefined;
try {
  await acpNode.waitForLine((l) => l.includes('"event":"started"'), 120_000);
  await claudeNode.waitForLine((l) => l.includes('"event":"started"'), 120_000);
  aliceAcp = await connectAlice(acpDir, acpHome);
  aliceClaude = await connectAlice(claudeDir, claudeNode.home);
  const paths = {
    acp: () => viaRunner(acpNode, aliceAcp!, true),
    direct: (i: number) => direct(i),
    claude: () => viaRunner(claudeNode, aliceClaude!, false),
  };
  // One of each first: disk caches, each agent's first start in its HOME. The ACP runner's
  // run comes first: it gives the direct client its prompt.
  await paths.acp();
  await paths.direct(0);
  await paths.claude();
  const samples: Record<keyof typeof paths, Sample[]> = { acp: [], direct: [], claude: [] };
  const order: (keyof typeof paths)[] = ["acp", "direct", "claude"];
  titles = { acp: 0, direct: 0, claude: 0 };
  modeSets = 0;
  const started = performance.now();
  for (let i = 1; i <= RUNS; i++) {
    // Each path takes each place in a round in turn.
    for (const p of rotated(order, i)) {
      samples[p].push(await paths[p](i));
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const f = (ms: number) => (ms / 1000).toFixed(3);
  const wall = (p: keyof typeof paths) => samples[p].map((s) => s.wallMs);
  console.log(
    `runner overhead, ACP runtime: ${RUNS} runs per path (+1 warm-up each), ${
      seconds.toFixed(0)
    } s`,
  );
  console.log("");
  console.log(
    "| path                                         | median s | min s | max s | model calls per run |",
  );
  console.log(
    "| -------------------------------------------- | -------- | ----- | ----- | ------------------- |",
  );
  const row = (name: string, xs: number[], calls: number[]) =>
    console.log(
      `| ${name.padEnd(44)} | ${f(median(xs)).padEnd(8)} | ${f(Math.min(...xs))} | ${
        f(Math.max(...xs))
      } | ${[...new Set(calls)].join(", ").padEnd(19)} |`,
    );
  const calls = (p: keyof typeof paths) => samples[p].map((s) => s.modelCalls);
  row("bare ACP client (baseline)", wall("direct"), calls("direct"));
  const step = (k: 0 | 1 | 2 | 3) => samples.direct.map((s) => s.steps![k]);
  row("· spawn → initialize answered", step(0), []);
  row("· session/new with wats mcp (+ mode)", step(1), []);
  row("· session/prompt (the model call)", step(2), []);
  row("· stop: stdin closed → exit", step(3), []);
  row("runner (acp): ask → run_ended", wall("acp"), calls("acp"));
  row("· the run (duration_ms)", samples.acp.map((s) => s.durationMs!), []);
  row("runner (claude -p): ask → run_ended", wall("claude"), calls("claude"));
  row("· the run (duration_ms)", samples.claude.map((s) => s.durationMs!), []);
  console.log("");
  const [a, d, c] = [median(wall("acp")), median(wall("direct")), median(wall("claude"))];
  console.log(
    `ratio acp runner / bare ACP client (medians): ${(a / d).toFixed(2)}x (goal ≤ 1.1x), ` +
      `difference ${(a - d).toFixed(0)} ms`,
  );
  console.log(
    `ratio acp runner / claude -p runner (medians): ${(a / c).toFixed(2)}x, difference ${
      (a - c).toFixed(0)
    } ms`,
  );
  console.log(
    `session-title requests (claude-agent-acp names each new session): acp runner ${titles.acp}, ` +
      `bare client ${titles.direct}, claude -p runner ${titles.claude}; ` +
      `the bare client set the mode in ${modeSets} of ${RUNS} sessions`,
  );
  const pairs = (p: keyof typeof paths) =>
    samples.acp.map((s, i) => (s.wallMs - samples[p][i]!.wallMs).toFixed(0)).join(", ");
  console.log(`per round (acp runner − bare client, ms): ${pairs("direct")}`);
  console.log(`per round (acp runner − claude -p runner, ms): ${pairs("claude")}`);
} finally {
  await aliceAcp?.close().catch(() => {});
  await aliceClaude?.close().catch(() => {});
  await acpNode.stop();
  await claudeNode.stop();
  await mock.close();
  for (const d of [acpDir, claudeDir, acpHome, claudeNode.home]) {
    await Deno.remove(d, { recursive: true }).catch(() => {});
  }
}
