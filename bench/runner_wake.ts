/**
 * Wake latency of the heartbeat runner (issue 4): from an actionable post
 * inserted into the store to the harness process spawned, against a bare
 * `new Deno.Command(program).spawn()` of the same program measured in the same
 * run, interleaved (the machines are shared and noisy).
 *
 * Each wake is a fresh thread (an `ask` from a key that is not the agent's) on a
 * real `Store` in a temp dir, heard by a real `Runner` through `Store.onInsert`
 * with `agent.every = 0` and the heartbeat off. The harness builds the Claude
 * harness's command (so the run writes its MCP config file as a daemon run does)
 * but runs `/bin/true`, and its parser reports success; the real
 * `spawnProcessGroup` is wrapped to note the time just after it returns. One run
 * at a time: each wake waits for the previous run to end.
 *
 * Two runners are measured, interleaved with the baseline:
 *
 * - `wake`: the runner as the brief sets it up (no `prepare`): the whole path
 *   from `insert` to the spawn is synchronous.
 * - `wake.daemon`: the same plus what the daemon adds before every run
 *   (src/node/agent_runner.ts): `prepare` lists the data dir, plans the access
 *   level and writes the validated deny-rules settings file; `onRunStart` mints
 *   a run token; the run in progress is recorded in agent/runner.json (after the
 *   spawn, so outside the latency; its cost is printed as a part) and `ps`
 *   tells the leader's start time.
 *
 * The store, transcripts, harness, file operations and `prepare` are wrapped
 * with timers, which split each wake into parts (printed as p50 per part).
 *
 * Run: deno run -A bench/runner_wake.ts [--wakes 200]
 */

import { parseArgs } from "node:util";
import { defaultSettings, type Settings } from "../src/config/schema.ts";
import { dataPaths } from "../src/config/paths.ts";
import { type InsertOptions, Store } from "../src/store/store.ts";
import { buildPost, type NostrEvent } from "../src/posts/post.ts";
import { deriveProfileKey } from "../src/identity/profile_key.ts";
import { Runner } from "../src/runner/scheduler.ts";
import type { RunnerOptions } from "../src/runner/runner_options.ts";
import { denoRunnerFs, type RunnerFs } from "../src/runner/execute.ts";
import { processStartTime } from "../src/runner/orphan.ts";
import { stateFileRecorder, writeRunnerState } from "../src/runner/state_file.ts";
import type { Harness, RunContext } from "../src/runner/harness.ts";
import { claudeHarness } from "../src/runner/runtimes/claude/harness.ts";
import { spawnProcessGroup } from "../src/runner/spawn.ts";
import type { RunningProcess } from "../src/runner/harness.ts";
import { Transcripts } from "../src/runner/transcripts.ts";
import { buildPrompt, readHeartbeatTemplate } from "../src/runner/prompt.ts";
import { type RunnerStore, systemClock, systemTimers } from "../src/runner/ports.ts";
import { planAccess } from "../src/safety/access.ts";
import {
  claudeSettings,
  listDataEntries,
  writeClaudeSettings,
} from "../src/safety/claude_settings.ts";
import { rotated } from "./cycle.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    wakes: { type: "string", default: "200" },
    program: { type: "string", default: "/bin/true" },
  },
});
const WAKES = Number(values.wakes);
const PROGRAM = values.program;
const WARMUP = 10;

// ------------------------------------------------------------- measuring

/** The name prefix of a part inside another part (not added to the sum). */
const SUB = "  · ";

/** Time spent in each part of the current wake, by part name. */
type Parts = Map<string, number>;

/** One instrumented runner and the samples it gave. */
interface Rig {
  name: string;
  store: Store;
  runner: Runner;
  root: string;
  /** Whole wakes, insert → spawn returned (ms). */
  samples: number[];
  /** Per part, one value per measured wake. */
  parts: Map<string, number[]>;
  /** The wake being measured: its parts and the resolver of its spawn time. */
  cur?: { parts: Parts; spawned: (t: number) => void };
}

function add(rig: Rig, part: string, ms: number): void {
  if (!rig.cur) return;
  rig.cur.parts.set(part, (rig.cur.parts.get(part) ?? 0) + ms);
}

/** Wraps `fn` so its time counts toward `part` of the current wake. */
function timed<A extends unknown[], R>(rig: Rig, part: string, fn: (...a: A) => R): (...a: A) => R {
  return (...a: A) => {
    const t = performance.now();
    try {
      return fn(...a);
    } finally {
      add(rig, part, performance.now() - t);
    }
  };
}

function timedAsync<A extends unknown[], R>(
  rig: Rig,
  part: string,
  fn: (...a: A) => Promise<R>,
): (...a: A) => Promise<R> {
  return async (...a: A) => {
    const t = performance.now();
    try {
      return await fn(...a);
    } finally {
      add(rig, part, performance.now() - t);
    }
  };
}

const SETTINGS: Settings = {
  ...defaultSettings(),
  "agent.profile": "helper",
  "agent.every": 0,
  "agent.heartbeat": 0,
  // One run per wake, hundreds of them: no cap may skip or pause one.
  "agent.max_runs_per_hour": 1e9,
  "agent.max_runs_per_day": 1e9,
  "agent.max_usd_per_day": 1e6,
  "agent.max_usd_per_month": 1e6,
  "agent.wakes_per_author_per_hour": 1e9,
};

const secret = crypto.getRandomValues(new Uint8Array(32));
const agent = deriveProfileKey(secret, "helper");
const asker = deriveProfileKey(secret, "bob");
const template = readHeartbeatTemplate();
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

async function makeRig(name: string, daemonLike: boolean): Promise<Rig> {
  const root = await Deno.makeTempDir({ prefix: `wats-bench-wake-${name}-` });
  const paths = dataPaths(`${root}/data`);
  await Deno.mkdir(paths.agentDir, { recursive: true });
  const store = Store.open(paths.store);
  const rig = { name, store, root, samples: [], parts: new Map() } as unknown as Rig;

  // A listener registered before the runner's: the end of the SQLite insert.
  let insertStart = 0;
  store.onInsert(() =>
    add(rig, "store insert (SQLite, to onInsert)", performance.now() - insertStart)
  );
  const insert = store.insert.bind(store);
  store.insert = (events: readonly NostrEvent[], opts: InsertOptions) => {
    insertStart = performance.now();
    return insert(events, opts);
  };

  const s: RunnerStore = {
    get: timed(rig, "store reads/writes (runner)", (id: string) => store.get(id)),
    threadNewest: timed(
      rig,
      "store reads/writes (runner)",
      (r: string, l: number) => store.threadNewest(r, l),
    ),
    maxSeq: timed(rig, "store reads/writes (runner)", () => store.maxSeq()),
    getMeta: timed(rig, "store reads/writes (runner)", (k: string) => store.getMeta(k)),
    setMeta: timed(
      rig,
      "store reads/writes (runner)",
      (k: string, v: string) => store.setMeta(k, v),
    ),
  };
  const t = new Transcripts({ runsDir: paths.runsDir, runsIndex: paths.runsIndex });
  const transcripts: RunnerOptions["records"]["transcripts"] = {
    begin: timed(rig, "transcript begin (mkdir, open, header)", (h) => t.begin(h)),
    index: () => t.index(),
    recoverInterrupted: (n) => t.recoverInterrupted(n),
    prune: (n, r) => t.prune(n, r),
    spend: (n) => t.spend(n),
    appendAfterEnd: (id, line) => t.appendAfterEnd(id, line),
  };
  const claude = claudeHarness({ program: PROGRAM });
  const harness: Harness = {
    name: "bench",
    command: timed(
      rig,
      "harness command (args, MCP config text)",
      (ctx: RunContext) => claude.command(ctx),
    ),
    parser: () => ({ push: () => [], finish: () => ({ ok: true }) }),
  };
  const fs: RunnerFs = {
    mkdir: timed(rig, "files (mkdir, MCP config write)", denoRunnerFs.mkdir),
    emptyDir: timed(rig, "files (mkdir, MCP config write)", denoRunnerFs.emptyDir),
    writeFile: timed(rig, "files (mkdir, MCP config write)", denoRunnerFs.writeFile),
    remove: denoRunnerFs.remove,
  };
  const spawn = (req: Parameters<typeof spawnProcessGroup>[0]): RunningProcess => {
    const t0 = performance.now();
    const p = spawnProcessGroup(req);
    const t1 = performance.now();
    add(rig, "spawnProcessGroup", t1 - t0);
    rig.cur?.spawned(t1);
    return p;
  };
  const configDir = `${paths.agentDir}/run-config`;
  const opts: RunnerOptions = {
    world: { clock: systemClock, timers: systemTimers, log: quiet },
    records: { store: s, transcripts },
    settings: SETTINGS,
    agent: {
      agentKey: agent.pubkey,
      user: "alice",
      localAuthors: () => new Set([agent.pubkey]),
      template,
    },
    launch: {
      harness,
      spawn,
      paths: { dataDir: paths.dataDir, runDir: paths.runDir, configDir },
      selfCommand: { command: "wats", args: [] },
      fs,
    },
  };
  if (daemonLike) {
    // As src/node/agent_runner.ts does before every run.
    opts.launch.prepare = timedAsync(
      rig,
      "prepare (list data dir, deny rules, settings write)",
      async () => {
        const dataEntries = await timedAsync(rig, `${SUB}listDataEntries`, listDataEntries)(
          paths.dataDir,
          paths.runDir,
        );
        const p = timed(rig, `${SUB}planAccess + claudeSettings`, planAccess)({
          access: SETTINGS["agent.access"],
          workdir: SETTINGS["agent.workdir"],
          tools: SETTINGS["agent.tools"],
          paths,
          home: root,
          userCwd: root,
          dataEntries,
        });
        if (p.problems.length > 0) throw new Error(p.problems.join("; "));
        const settingsFile = `${configDir}/claude-settings.json`;
        const settings = timed(rig, `${SUB}planAccess + claudeSettings`, claudeSettings)(
          p.denyRules,
        );
        await timedAsync(
          rig,
          `${SUB}writeClaudeSettings (validate, write, rename)`,
          writeClaudeSettings,
        )(
          settingsFile,
          settings,
        );
        return {
          settingsFile,
          access: { args: p.claudeArgs, allowedTools: p.allowedTools },
          cwd: p.cwd,
        };
      },
    );
    opts.hooks = {
      onRunStart: () =>
        Array.from(
          crypto.getRandomValues(new Uint8Array(32)),
          (b) => b.toString(16).padStart(2, "0"),
        ).join(""),
    };
    await Deno.mkdir(configDir, { recursive: true });
    // The run in progress recorded in agent/runner.json, with its ps start time.
    writeRunnerState(paths.agentDir, {
      runtime: "claude",
      limits: { usdPerDay: 2, usdPerMonth: 20, runsPerDay: 48 },
      started_at: new Date().toISOString(),
    });
    const recorder = stateFileRecorder(paths.agentDir);
    opts.launch.recorder = {
      started: timed(rig, "run record (after the spawn)", recorder.started),
      alive: recorder.alive,
      ended: timed(rig, "run record (after the spawn)", recorder.ended),
    };
    opts.launch.identify = processStartTime;
  }
  rig.runner = new Runner(opts);
  store.onInsert((posts) => rig.runner.onPosts(posts));
  rig.runner.start();
  return rig;
}

let askNo = 0;
function nextAsk(): NostrEvent {
  askNo++;
  return buildPost({
    kind: "ask",
    title: `Question ${askNo}`,
    text: `Which log rotation should host ${askNo} use?`,
    createdAt: Math.floor(Date.now() / 1000),
  }, asker.secret);
}

/** One wake: insert a fresh ask, resolve with ms until spawn returned, wait for the run's end. */
async function wake(rig: Rig, record: boolean): Promise<void> {
  const post = nextAsk(); // signed before the clock starts
  let spawnedAt = 0;
  const spawned = new Promise<void>((r) => {
    rig.cur = { parts: new Map(), spawned: (t) => (spawnedAt = t, r()) };
  });
  const t0 = performance.now();
  rig.store.insert([post], { origin: "remote" });
  await spawned;
  const parts = rig.cur!.parts;
  rig.cur = undefined;
  await rig.runner.whenIdle();
  const last = rig.runner.status().lastRun;
  if (last?.status !== "ok") {
    throw new Error(`${rig.name}: run did not end ok: ${JSON.stringify(last)}`);
  }
  if (!record) return;
  const total = spawnedAt - t0;
  rig.samples.push(total);
  let known = 0;
  for (const [k, v] of parts) {
    if (!k.startsWith(SUB)) known += v;
    const list = rig.parts.get(k) ?? [];
    list.push(v);
    rig.parts.set(k, list);
  }
  const rest = rig.parts.get("runner's own work (rest)") ?? [];
  rest.push(total - known);
  rig.parts.set("runner's own work (rest)", rest);
}

const bare: number[] = [];
async function bareSpawn(record: boolean): Promise<void> {
  const t0 = performance.now();
  const child = new Deno.Command(PROGRAM).spawn();
  const t1 = performance.now();
  await child.status;
  if (record) bare.push(t1 - t0);
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const v = s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
  if (v === undefined) throw new Error("error: no samples were taken; run at least one iteration");
  return v;
}

// ------------------------------------------------------------------- run

const plain = await makeRig("wake", false);
const daemon = await makeRig("wake.daemon", true);
const steps: ((record: boolean) => Promise<void>)[] = [
  bareSpawn,
  (r) => wake(plain, r),
  (r) => wake(daemon, r),
];
const started = performance.now();
for (let i = 0; i < WARMUP + WAKES; i++) {
  // Rotate the order so no path always runs right after another.
  for (const step of rotated(steps, i)) await step(i >= WARMUP);
}
const seconds = (performance.now() - started) / 1000;

// Diagnostics outside the wakes: the prompt alone, and a spawn with the runner's options.
const piped = { stdin: "piped", stdout: "piped", stderr: "piped" } as const;
const promptMs: number[] = [];
for (let i = 0; i < 200; i++) {
  const t0 = performance.now();
  buildPrompt(template, {
    agentProfile: "helper",
    user: "alice",
    about: "",
    reasons: ["ask from bob"],
    cursor: i,
    events: [{
      id: "f".repeat(64),
      kind: "ask",
      author: asker.pubkey,
      thread: "f".repeat(64),
      reason: "ask",
    }],
    feedback: [],
    rejections: [],
  });
  promptMs.push(performance.now() - t0);
}

// Which of spawnProcessGroup's options cost what: the same program spawned
// with one more of them at a time (interleaved), then spawnProcessGroup itself.
const variants: [string, () => { status: Promise<unknown> }][] = [
  ["bare (defaults)", () => new Deno.Command(PROGRAM).spawn()],
  ["+ stdio piped", () => new Deno.Command(PROGRAM, piped).spawn()],
  ["+ detached (setsid)", () => new Deno.Command(PROGRAM, { ...piped, detached: true }).spawn()],
  [
    "+ cwd, env {}",
    () => new Deno.Command(PROGRAM, { ...piped, detached: true, cwd: plain.root, env: {} }).spawn(),
  ],
  [
    "spawnProcessGroup",
    () => spawnProcessGroup({ program: PROGRAM, args: [], env: {}, cwd: plain.root, stdin: "" }),
  ],
  // A group of its own without `detached`: setsid(1) (util-linux) is not a
  // group leader when spawned, so it calls setsid() and execs the program in
  // the same pid. Its spawn returns after setsid's exec, before the program's:
  // compare the "to exit" column too.
  [
    "setsid(1), not detached",
    () => new Deno.Command("setsid", { args: [PROGRAM], ...piped }).spawn(),
  ],
];
const variantMs = new Map<string, number[]>(variants.map(([k]) => [k, []]));
const variantExitMs = new Map<string, number[]>(variants.map(([k]) => [k, []]));
for (let i = 0; i < Math.min(WAKES, 100) + WARMUP; i++) {
  for (const [name, start] of rotated(variants, i)) {
    const t0 = performance.now();
    const child = start();
    const ms = performance.now() - t0;
    await child.status;
    const exitMs = performance.now() - t0;
    if (i >= WARMUP) {
      variantMs.get(name)!.push(ms);
      variantExitMs.get(name)!.push(exitMs);
    }
  }
}

for (const rig of [plain, daemon]) {
  await rig.runner.stop();
  rig.store.close();
  await Deno.remove(rig.root, { recursive: true });
}

// ---------------------------------------------------------------- report

const f = (ms: number) => ms.toFixed(3);
console.log(
  `runner wake latency: ${WAKES} wakes per path (+${WARMUP} warm-up), ${PROGRAM}, ${
    seconds.toFixed(1)
  } s`,
);
console.log("");
console.log("| path                        | p50 ms | p99 ms |");
console.log("| --------------------------- | ------ | ------ |");
console.log(`| bare spawn (baseline)       | ${f(pct(bare, 50))} | ${f(pct(bare, 99))} |`);
console.log(
  `| wake (runner)               | ${f(pct(plain.samples, 50))} | ${f(pct(plain.samples, 99))} |`,
);
console.log(
  `| wake.daemon (+ prepare)     | ${f(pct(daemon.samples, 50))} | ${f(pct(daemon.samples, 99))} |`,
);
console.log("");
for (const rig of [plain, daemon]) {
  for (const p of [50, 99]) {
    const limit = 1.5 * pct(bare, p) + 5;
    const v = pct(rig.samples, p);
    console.log(
      `goal ${rig.name} p${p} ≤ 1.5 × bare p${p} + 5 ms = ${f(limit)} ms: ${f(v)} ms, ` +
        `${v <= limit ? "met" : "NOT met"} (${(v / pct(bare, p)).toFixed(2)}x bare)`,
    );
  }
}
console.log("");
console.log(
  "where a wake's time goes (p50 of each part; parts' p50s need not add up to the total's):",
);
for (const rig of [plain, daemon]) {
  console.log(`  ${rig.name}`);
  const line = (k: string, v: number[]) =>
    console.log(`    ${k.padEnd(54)} ${f(pct(v, 50))}  (p99 ${f(pct(v, 99))})`);
  for (const [k, v] of rig.parts) {
    if (k.startsWith(SUB)) continue;
    line(k, v);
    // The parts inside prepare, under it.
    if (k.startsWith("prepare")) {
      for (const [sk, sv] of rig.parts) if (sk.startsWith(SUB)) line(sk, sv);
    }
  }
}
console.log(`  buildPrompt alone (HEARTBEAT.md, one event)             ${f(pct(promptMs, 50))}`);
console.log("");
console.log("spawn options, one added at a time (p50 / p99 ms):");
console.log(`  ${"".padEnd(24)} spawn call        to exit`);
for (const [k, v] of variantMs) {
  const e = variantExitMs.get(k)!;
  console.log(
    `  ${k.padEnd(24)} ${f(pct(v, 50))} / ${f(pct(v, 99))}  ${f(pct(e, 50))} / ${f(pct(e, 99))}`,
  );
}
