/**
 * Delivery under faults (issue 27's benchmark): does every ask reach a state its sender can see,
 * while the network misbehaves?
 *
 * The network, per version and size N: one independent relay (tests/support/node/relay under
 * Node, its events in a file so a restart keeps them), N agent nodes (`wats node --agent claude
 * --agent-profile helper --infra <relay>`, each `claude` the stand-in bench/delivery_agent.mjs:
 * the real runner, spawn, prompt and run record, acting through the run's real `wats mcp`), and
 * the asker's node (`--agent none`), whose profile `alice` posts every ask through a real `wats
 * mcp` and reads what became of it with the `thread` tool. Agent i has caps CAPS[i mod 4] and,
 * for even i, CAPS[i+1 mod 4]; its `agent.every` is `--every-ms` + i × `--step-ms`.
 *
 * The stream: `--asks` asks (30 % addressed to one agent, round robin; 40 % with one cap; 30 %
 * open), interleaved, one every `--interval-ms`. The faults, all at once:
 *
 * - the relay restarted (SIGTERM, then started again on the same port and file) every
 *   `--relay-every-s`, from the stream's start until the end of the run;
 * - agent node 1 SIGKILLed at 25 % and at 60 % of the stream and started again on its data dir
 *   `--down-s` later;
 * - `--fail-rate` of the runs fail before acting as a 529 ends a Claude Code run (`is_error`,
 *   exit 1, no tool call);
 * - the bridge slowed: the stand-in starts `wats mcp` `--bridge-delay-ms` late. Like Claude Code
 *   2.1.197 it makes its first model turn `--window-ms` after its start unless the run's
 *   environment has `MCP_CONNECTION_NONBLOCKING` false, and then has no wats tool (3 s: the
 *   real CLI's start → first model request beside three hogs, bench/wake_tools.ts, was 2.3–7.0 s,
 *   p50 2.9–3.5 s);
 * - `--hogs` CPU hogs (`yes > /dev/null`).
 *
 * After the stream the bench waits until every ask is answered where the asker sees it (plus
 * `--settle-s` for late duplicates), or until `agent.ask_timeout` (`--ask-timeout-s`, set on the
 * asker's node) + 30 s after the last ask, when every unanswered ask is past its timeout. Then it
 * reads each ask's thread through the asker's `wats mcp`.
 *
 * Counted:
 *
 * - **terminal at the sender**: the `thread` tool shows the ask answered, or (versions with ask
 *   states) `no taker` / held for review. The code before this session's changes (c388885) has no
 *   ask state: an ask without an answer in its thread tells the sender nothing.
 * - **silent losses**: asks not terminal at the sender.
 * - **duplicate wakes**: wakes of an agent for an ask it had answered in an earlier run (from the
 *   stand-ins' logs), over all wakes of asks.
 * - **reachable → answered**: from the moment the ask's target was reachable again (the relay up
 *   and its addressee — for a cap ask any agent with the cap, for an open ask any agent — started
 *   again; the ask's post time when nothing was down) to the asker's node storing the first
 *   answer (its `post_stored` line), p50 and p95 over the answered asks; split into the asks
 *   that went through a run failing before acting (which then waited for its retry) and the
 *   others, and by category.
 *
 * Baseline, in the same run: commit c388885 (`--baseline-commit`, or `--before DIR`) extracted
 * with `git archive`, its src/, deno.json and deno.lock, run the same way on the same faults.
 *
 * Run: deno run -A bench/delivery.ts [--nodes 4,8] [--asks 200] [--versions before,this]
 *      deno run -A bench/delivery.ts --nodes 4 --asks 40      (a quick run)
 *
 * @module
 */

import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { denoDir } from "../tests/support/cli.ts";
import { type NodeRelay, startNodeRelay } from "../tests/net/node_relay.ts";
import {
  baselineDir,
  CAPS,
  capsOf,
  type Category,
  cpuHogs,
  pct,
  readLines,
  readStream,
  sleep,
  standInBin,
  THIS_TREE,
  type Version as RigVersion,
  watsArgs,
} from "./swarm_rig.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    nodes: { type: "string", default: "4,8" },
    asks: { type: "string", default: "200" },
    versions: { type: "string", default: "before,this" },
    before: { type: "string" },
    "baseline-commit": { type: "string", default: "c388885" },
    "interval-ms": { type: "string", default: "500" },
    "relay-every-s": { type: "string", default: "30" },
    "down-s": { type: "string", default: "10" },
    "fail-rate": { type: "string", default: "0.1" },
    "bridge-delay-ms": { type: "string", default: "2000" },
    "window-ms": { type: "string", default: "3000" },
    hogs: { type: "string", default: "2" },
    "every-ms": { type: "string", default: "1000" },
    "step-ms": { type: "string", default: "2000" },
    "ask-timeout-s": { type: "string", default: "180" },
    "settle-s": { type: "string", default: "20" },
  },
});
const SIZES = values.nodes.split(",").map(Number);
const ASKS = Number(values.asks);
const INTERVAL_MS = Number(values["interval-ms"]);
const RELAY_EVERY_MS = Number(values["relay-every-s"]) * 1000;
const DOWN_MS = Number(values["down-s"]) * 1000;
const FAIL_RATE = Number(values["fail-rate"]);
const BRIDGE_DELAY_MS = Number(values["bridge-delay-ms"]);
const WINDOW_MS = Number(values["window-ms"]);
const HOGS = Number(values.hogs);
const EVERY_MS = Number(values["every-ms"]);
const STEP_MS = Number(values["step-ms"]);
const ASK_TIMEOUT_MS = Number(values["ask-timeout-s"]) * 1000;
const SETTLE_MS = Number(values["settle-s"]) * 1000;
const VERSIONS = values.versions.split(",");
if (SIZES.some((n) => !Number.isInteger(n) || n < 3) || !(ASKS >= 3)) {
  throw new Error("error: --nodes takes node counts ≥ 3 (e.g. 4,8) and --asks a number ≥ 3");
}
if (VERSIONS.some((v) => v !== "before" && v !== "this")) {
  throw new Error(`error: --versions takes before and/or this, not ${values.versions}`);
}
const AGENT = new URL("./delivery_agent.mjs", import.meta.url);

// ------------------------------------------------------------ the stream

interface AskSpec {
  no: number;
  category: Category;
  /** Addressed: the agent it is for. */
  to?: number;
  cap?: string;
}

/** `total` asks, the categories interleaved (30 % addressed, 40 % cap, the rest open). */
function stream(total: number): AskSpec[] {
  const out: AskSpec[] = [];
  let addressed = 0, cap = 0;
  for (let no = 1; no <= total; no++) {
    // Spread each category evenly over the stream: the i-th ask takes the category furthest
    // behind its share.
    const wantAddressed = Math.round(no * 0.3) - addressed;
    const wantCap = Math.round(no * 0.4) - cap;
    if (wantAddressed > 0 && wantAddressed >= wantCap) {
      out.push({ no, category: "addressed", to: addressed++ });
    } else if (wantCap > 0) out.push({ no, category: "cap", cap: CAPS[cap++ % CAPS.length] });
    else out.push({ no, category: "open" });
  }
  return out;
}

// ------------------------------------------------------------- processes

interface Version extends RigVersion {
  /** Whether its nodes know `agent.ask_timeout` (ask states). */
  askStates: boolean;
}

/** A daemon the bench may kill and start again on the same data dir. */
interface Daemon {
  name: string;
  dir: string;
  args: string[];
  env: Record<string, string>;
  child?: Deno.ChildProcess;
  /** Every stdout line of every start, with the time it came. */
  lines: { at: number; line: string }[];
  /** Every stderr (log) line of every start, with the time it came. */
  logs: { at: number; line: string }[];
  /** The hex key of its agent profile, once started. */
  agentKey?: string;
  npub?: string;
}

/** Starts `d` and resolves at its `started` line; a start refused right after a SIGKILL is retried. */
async function start(d: Daemon): Promise<void> {
  for (let attempt = 0;; attempt++) {
    const child = new Deno.Command(Deno.execPath(), {
      args: d.args,
      env: d.env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    d.child = child;
    const from = d.lines.length;
    let started: string | undefined;
    const startedP = new Promise<string | undefined>((resolve) => {
      readLines(child, (line, at) => {
        d.lines.push({ at, line });
        if (started === undefined && line.includes('"event":"started"')) {
          started = line;
          resolve(line);
        }
      }).then(() => resolve(undefined), () => resolve(undefined));
    });
    const fromLog = d.logs.length;
    const stderr = readStream(child.stderr, (line, at) => d.logs.push({ at, line }));
    const line = await startedP;
    if (line !== undefined) {
      const profiles = JSON.parse(line).profiles as Record<string, string> | undefined;
      if (profiles?.helper) {
        d.npub = profiles.helper;
        const { decode } = await import("nostr-tools/nip19");
        d.agentKey = decode(profiles.helper).data as string;
      }
      return;
    }
    await child.status;
    await stderr;
    const why = d.logs.slice(fromLog).map((l) => l.line).join("\n");
    if (attempt >= 40) {
      throw new Error(`error: ${d.name} did not start (lines from ${from}): ${why.slice(-2000)}`);
    }
    await sleep(500);
  }
}

async function kill(d: Daemon, signal: Deno.Signal): Promise<void> {
  try {
    d.child?.kill(signal);
  } catch { /* gone */ }
  await d.child?.status;
}

function configToml(i: number): string {
  return [
    "[agent]",
    `every = "${EVERY_MS + i * STEP_MS}ms"`,
    `heartbeat = "0"`,
    `caps = ${JSON.stringify(capsOf(i))}`,
    // Hundreds of runs in minutes, all from one asker: no cap may skip a wake.
    "max_runs_per_hour = 100000",
    "max_runs_per_day = 100000",
    "max_usd_per_day = 1000",
    "max_usd_per_month = 10000",
    "",
  ].join("\n");
}

function baseEnv(home: string, extraPath = ""): Record<string, string> {
  return {
    PATH: `${extraPath}${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    HOME: home,
    NO_COLOR: "1",
    DENO_DIR: denoDir(),
    ...(Deno.env.get("TMPDIR") ? { TMPDIR: Deno.env.get("TMPDIR")! } : {}),
  };
}

/** An MCP client through the version's own `wats mcp --profile alice` on the asker's node. */
async function askerClient(v: Version, asker: Daemon): Promise<Client> {
  const client = new Client({ name: "delivery-bench", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: Deno.execPath(),
      args: [...watsArgs(v), "--data-dir", asker.dir, "mcp", "--profile", "alice"],
      env: asker.env,
      stderr: "ignore",
    }),
  );
  return client;
}

async function tool(client: Client, name: string, args: Record<string, unknown>) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const text = (r.content as { text?: string }[]).map((c) => c.text ?? "").join("\n");
  return { ok: !r.isError, text };
}

// ------------------------------------------------------------ one network

/** A time span a part of the network was down. */
interface Outage {
  what: "relay" | number;
  from: number;
  to: number;
}

interface Wake {
  node: number;
  at: number;
  run: string;
  asks: string[];
}

interface Result {
  version: string;
  n: number;
  asks: number;
  posted: number;
  /** Phase at the sender per ask: answered, no_taker, held, or what else it showed. */
  phases: Record<string, number>;
  terminal: number;
  answeredAtAgents: number;
  wakesOfAsks: number;
  duplicateWakes: number;
  /** Asks answered more than once by the same agent. */
  twiceBySame: number;
  runs: number;
  runs529: number;
  runsNoTools: number;
  /** Runs the runner marked as ended before acting (`retry` in `run_ended`), and give-ups. */
  retryRuns: number;
  gaveUp: number;
  latencies: number[];
  outageLatencies: number[];
  /** Answered asks that went through a run failing before acting first, and the others. */
  afterFailure: number[];
  clean: number[];
  byCategory: Record<Category, number[]>;
  /** Where an answered ask's time went, at the agent that answered first (ms each). */
  path: Phases;
  /** After each relay restart, per node: relay up → its next connection, → caught up (ms). */
  reconnect: { down: number[]; connected: number[]; caughtUp: number[] };
  relayRestarts: number;
  kills: number;
  seconds: number;
}

async function runNetwork(v: Version, n: number, bin: string): Promise<Result> {
  const t0 = Date.now();
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-delivery-" }));
  const db = `${root}/relay.db`;
  let relay: NodeRelay = await startNodeRelay({ db });
  const port = relay.port;
  const relayUrl = relay.url;
  const outages: Outage[] = [];
  const agents: Daemon[] = [];
  let asker: Daemon | undefined;
  let client: Client | undefined;
  let faultsOn = true;
  const faultTasks: Promise<void>[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const dir = `${root}/node-${i}`;
      Deno.mkdirSync(dir);
      Deno.writeTextFileSync(`${dir}/config.toml`, configToml(i));
      Deno.writeTextFileSync(
        `${dir}/bench-agent.json`,
        JSON.stringify({
          failRate: FAIL_RATE,
          bridgeDelayMs: BRIDGE_DELAY_MS,
          windowMs: WINDOW_MS,
        }),
      );
      agents.push({
        name: `node ${i}`,
        dir,
        args: [
          ...watsArgs(v),
          "--data-dir",
          dir,
          "node",
          "--agent",
          "claude",
          "--agent-profile",
          "helper",
          "--infra",
          relayUrl,
        ],
        env: baseEnv(dir, `${bin}:`),
        lines: [],
        logs: [],
      });
    }
    const askerDir = `${root}/asker`;
    Deno.mkdirSync(askerDir);
    if (v.askStates) {
      Deno.writeTextFileSync(
        `${askerDir}/config.toml`,
        `[agent]\nask_timeout = "${ASK_TIMEOUT_MS}ms"\n`,
      );
    }
    asker = {
      name: "asker",
      dir: askerDir,
      args: [
        ...watsArgs(v),
        "--data-dir",
        askerDir,
        "node",
        "--agent",
        "none",
        "--infra",
        relayUrl,
      ],
      env: baseEnv(askerDir),
      lines: [],
      logs: [],
    };
    await Promise.all([asker, ...agents].map(start));
    client = await askerClient(v, asker);
    // The agents' presence reaches the asker (a routed ask names who it reaches) before the stream.
    await sleep(5000);
    console.error(
      `  ${v.name} N=${n}: ${n} agent nodes and the asker up in ${
        ((Date.now() - t0) / 1000).toFixed(0)
      } s`,
    );

    const specs = stream(ASKS);
    const streamMs = ASKS * INTERVAL_MS;
    const streamStart = Date.now();
    // The relay restarts every RELAY_EVERY_MS until the run ends.
    faultTasks.push((async () => {
      while (faultsOn) {
        const until = Date.now() + RELAY_EVERY_MS;
        while (faultsOn && Date.now() < until) await sleep(250);
        if (!faultsOn) return;
        const from = Date.now();
        await relay.stop();
        relay = await startNodeRelay({ port, db });
        outages.push({ what: "relay", from, to: Date.now() });
      }
    })());
    // Agent node 1 SIGKILLed twice, each time started again DOWN_MS later.
    faultTasks.push((async () => {
      for (const at of [0.25, 0.6]) {
        const when = streamStart + streamMs * at;
        while (faultsOn && Date.now() < when) await sleep(100);
        if (!faultsOn) return;
        const victim = agents[1]!;
        const from = Date.now();
        await kill(victim, "SIGKILL");
        await sleep(DOWN_MS);
        await start(victim);
        outages.push({ what: 1, from, to: Date.now() });
      }
    })());

    const posted: { spec: AskSpec; id: string; at: number }[] = [];
    let postFailures = 0;
    for (const spec of specs) {
      const due = streamStart + (spec.no - 1) * INTERVAL_MS;
      if (Date.now() < due) await sleep(due - Date.now());
      const args: Record<string, unknown> = {
        title: `Question ${spec.no} (${spec.category})`,
        text: `Which log rotation should host ${spec.no} use? (${crypto.randomUUID()})`,
      };
      if (spec.cap) args.caps = [spec.cap];
      if (spec.to !== undefined) args.to = [agents[spec.to % n]!.npub];
      const at = Date.now();
      const r = await tool(client, "ask", args);
      const id = /\b[0-9a-f]{64}\b/.exec(r.text)?.[0];
      if (!r.ok || !id) {
        postFailures++;
        console.error(`  ${v.name} N=${n}: ask ${spec.no} not posted: ${r.text.slice(0, 200)}`);
        continue;
      }
      posted.push({ spec, id, at });
    }
    const lastPost = Date.now();
    console.error(
      `  ${v.name} N=${n}: ${posted.length} asks posted in ${
        ((lastPost - streamStart) / 1000).toFixed(0)
      } s`,
    );

    // Until every ask is answered where the asker sees it, or all are past agent.ask_timeout.
    const deadline = lastPost + ASK_TIMEOUT_MS + 30_000;
    let allAt: number | undefined;
    for (;;) {
      const seen = answeredAtSender(asker, agents);
      const all = posted.every((p) => seen.has(p.id));
      if (all) allAt ??= Date.now();
      if (allAt !== undefined && Date.now() - allAt >= SETTLE_MS) break;
      if (Date.now() > deadline) break;
      await sleep(1000);
    }
    faultsOn = false;
    await Promise.all(faultTasks);
    // Runs in progress at the end finish before the logs are read.
    await sleep(3000);

    // What the sender sees, ask by ask.
    const phases: Record<string, number> = {};
    let terminal = 0;
    const answersByAsk = answerIds(agents);
    for (const p of posted) {
      const r = await tool(client, "thread", { id: p.id });
      const phase = phaseOf(r.text, answersByAsk.get(p.id) ?? new Set(), v.askStates);
      phases[phase] = (phases[phase] ?? 0) + 1;
      if (phase === "answered" || phase === "no_taker" || phase === "held") terminal++;
    }

    // Wakes, duplicates, runs.
    const wakes = wakesOf(agents);
    const answeredBy = new Map<string, number>(); // `${node}|${ask}` → first answer time
    let twiceBySame = 0;
    for (const [i, a] of agents.entries()) {
      for (const e of logOf(a)) {
        if (e.step !== "answer") continue;
        const k = `${i}|${e.ask}`;
        if (answeredBy.has(k)) twiceBySame++;
        else answeredBy.set(k, e.at as number);
      }
    }
    const askIds = new Set(posted.map((p) => p.id));
    let wakesOfAsks = 0, duplicateWakes = 0;
    for (const w of wakes) {
      for (const ask of w.asks) {
        if (!askIds.has(ask)) continue;
        wakesOfAsks++;
        const first = answeredBy.get(`${w.node}|${ask}`);
        if (first !== undefined && first < w.at) duplicateWakes++;
      }
    }
    const steps = agents.flatMap(logOf);
    const runEnds = agents.flatMap((a) =>
      a.lines.filter((l) => l.line.includes('"event":"run_ended"')).map((l) =>
        JSON.parse(l.line) as { retry?: { gave_up?: number } }
      )
    );
    const seen = answeredAtSender(asker, agents);
    const latencies: number[] = [];
    const outageLatencies: number[] = [];
    const afterFailure: number[] = [];
    const clean: number[] = [];
    const byCategory: Record<Category, number[]> = { addressed: [], cap: [], open: [] };
    const failedRuns = new Set(
      agents.flatMap((a, node) =>
        logOf(a).filter((e) => e.step === "failed").map((e) => `${node}|${e.run}`)
      ),
    );
    for (const p of posted) {
      const answeredAt = seen.get(p.id);
      if (answeredAt === undefined) continue;
      const targets = p.spec.to !== undefined
        ? [p.spec.to % n]
        : p.spec.cap
        ? agents.map((_, i) => i).filter((i) => capsOf(i).includes(p.spec.cap!))
        : agents.map((_, i) => i);
      const from = reachableFrom(p.at, targets, outages);
      latencies.push(answeredAt - from);
      if (from > p.at) outageLatencies.push(answeredAt - from);
      // Went through a run that failed before acting (a 529, no tools), then waited for its retry.
      const retried = wakes.some((w) =>
        w.at < answeredAt && w.asks.includes(p.id) && failedRuns.has(`${w.node}|${w.run}`)
      );
      (retried ? afterFailure : clean).push(answeredAt - from);
      byCategory[p.spec.category].push(answeredAt - from);
    }
    return {
      version: v.name,
      n,
      asks: specs.length,
      posted: posted.length,
      phases: { ...phases, ...(postFailures ? { "not posted": postFailures } : {}) },
      terminal,
      answeredAtAgents: new Set(steps.filter((e) => e.step === "answer").map((e) => e.ask)).size,
      wakesOfAsks,
      duplicateWakes,
      twiceBySame,
      runs: steps.filter((e) => e.step === "wake").length,
      runs529: steps.filter((e) => e.step === "failed" && e.why === "529").length,
      runsNoTools: steps.filter((e) => e.step === "failed" && e.why === "no tools").length,
      retryRuns: runEnds.filter((e) => e.retry !== undefined).length,
      gaveUp: runEnds.reduce((a, e) => a + (e.retry?.gave_up ?? 0), 0),
      latencies,
      outageLatencies,
      afterFailure,
      clean,
      byCategory,
      path: phasesOf(posted, agents, seen),
      reconnect: reconnectsOf(outages, [...agents, asker]),
      relayRestarts: outages.filter((o) => o.what === "relay").length,
      kills: outages.filter((o) => o.what !== "relay").length,
      seconds: (Date.now() - t0) / 1000,
    };
  } finally {
    faultsOn = false;
    await Promise.all(faultTasks).catch(() => {});
    await client?.close().catch(() => {});
    await Promise.all([...agents, ...(asker ? [asker] : [])].map((d) => kill(d, "SIGTERM")));
    await relay.stop();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

/**
 * How each node came back after each relay restart (from its log lines): how long the relay was
 * down, and from the relay up again to the node's next "connected to relay" and "caught up".
 */
function reconnectsOf(outages: Outage[], daemons: Daemon[]): Result["reconnect"] {
  const out: Result["reconnect"] = { down: [], connected: [], caughtUp: [] };
  for (const o of outages.filter((o) => o.what === "relay")) {
    out.down.push(o.to - o.from);
    for (const d of daemons) {
      const next = (text: string) => d.logs.find((l) => l.at > o.from && l.line.includes(text));
      const connected = next("connected to relay");
      const caughtUp = next("caught up with relay");
      if (connected) out.connected.push(Math.max(0, connected.at - o.to));
      if (caughtUp) out.caughtUp.push(Math.max(0, caughtUp.at - o.to));
    }
  }
  return out;
}

/** The first time from `at` on when the relay is up and one of `targets` is up. */
function reachableFrom(at: number, targets: number[], outages: Outage[]): number {
  let t = at;
  for (let changed = true; changed;) {
    changed = false;
    const relayDown = outages.find((o) => o.what === "relay" && o.from <= t && t < o.to);
    if (relayDown) {
      t = relayDown.to;
      changed = true;
    }
    const downs = targets.map((i) => outages.find((o) => o.what === i && o.from <= t && t < o.to));
    if (downs.every((d) => d !== undefined)) {
      t = Math.min(...downs.map((d) => d!.to));
      changed = true;
    }
  }
  return t;
}

type Step = { run: string; at: number; step: string; [k: string]: unknown };

/**
 * An answered ask's path through the agent that answered it first: posted → stored on that
 * agent's node (the relay) → its first wake (debounce, the run in progress) → the wake that
 * answered (retries after runs that could not act) → the answer → stored at the asker.
 */
interface Phases {
  toAgent: number[];
  queued: number[];
  retried: number[];
  inRun: number[];
  back: number[];
}

function phasesOf(
  posted: { id: string; at: number }[],
  agents: Daemon[],
  seen: Map<string, number>,
): Phases {
  const out: Phases = { toAgent: [], queued: [], retried: [], inRun: [], back: [] };
  const logs = agents.map(logOf);
  for (const p of posted) {
    const answeredAt = seen.get(p.id);
    if (answeredAt === undefined) continue;
    let first: { node: number; step: Step } | undefined;
    for (const [node, log] of logs.entries()) {
      const s = log.find((e) => e.step === "answer" && e.ask === p.id);
      if (s && (first === undefined || s.at < first.step.at)) first = { node, step: s };
    }
    if (first === undefined) continue;
    const stored = agents[first.node]!.lines.find((l) =>
      l.line.includes('"event":"post_stored"') && l.line.includes(p.id)
    )?.at;
    const wakes = logs[first.node]!.filter((e) =>
      e.step === "wake" && e.at <= first.step.at &&
      (e.events as { id: string }[]).some((x) => x.id === p.id)
    );
    if (stored === undefined || wakes.length === 0) continue;
    out.toAgent.push(stored - p.at);
    out.queued.push(wakes[0]!.at - stored);
    out.retried.push(wakes.at(-1)!.at - wakes[0]!.at);
    out.inRun.push(first.step.at - wakes.at(-1)!.at);
    out.back.push(answeredAt - first.step.at);
  }
  return out;
}

function logOf(d: Daemon): Step[] {
  let text = "";
  try {
    text = Deno.readTextFileSync(`${d.dir}/bench-wakes.jsonl`);
  } catch { /* no wake yet */ }
  return text.split("\n").filter((l) => l.trim()).flatMap((l) => {
    try {
      return [JSON.parse(l) as Step];
    } catch {
      return []; // a line cut by a SIGKILL
    }
  });
}

function wakesOf(agents: Daemon[]): Wake[] {
  return agents.flatMap((a, node) =>
    logOf(a).filter((e) => e.step === "wake").map((e) => ({
      node,
      at: e.at,
      run: e.run,
      asks: (e.events as { id: string; kind: string }[]).filter((x) => x.kind === "ask").map((x) =>
        x.id
      ),
    }))
  );
}

/** Answer post id → the ask it answers, from the stand-ins' logs. */
function answerIds(agents: Daemon[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const a of agents) {
    for (const e of logOf(a)) {
      if (e.step !== "answer" || typeof e.id !== "string") continue;
      const set = out.get(e.ask as string) ?? new Set<string>();
      set.add(e.id);
      out.set(e.ask as string, set);
    }
  }
  return out;
}

/** Ask id → when the asker's node first stored an answer to it (its `post_stored` line). */
function answeredAtSender(asker: Daemon, agents: Daemon[]): Map<string, number> {
  const askOf = new Map<string, string>();
  for (const [ask, ids] of answerIds(agents)) for (const id of ids) askOf.set(id, ask);
  const out = new Map<string, number>();
  for (const { at, line } of asker.lines) {
    if (!line.includes('"event":"post_stored"') || !line.includes('"kind":"answer"')) continue;
    const id = /"id":"([0-9a-f]{64})"/.exec(line)?.[1];
    const ask = id ? askOf.get(id) : undefined;
    if (ask && !out.has(ask)) out.set(ask, at);
  }
  return out;
}

/** The phase the `thread` tool shows the sender. */
function phaseOf(text: string, answers: Set<string>, askStates: boolean): string {
  if (askStates) {
    const m = /State of ask [0-9a-f]{64}: ([^\n]*)/.exec(text);
    if (!m) return "no state shown";
    const s = m[1]!;
    if (s.startsWith("answered")) return "answered";
    if (s.startsWith("no taker")) return "no_taker";
    if (s.startsWith("an answer to it is held")) return "held";
    if (s.startsWith("claimed")) return "claimed";
    if (s.startsWith("none will wake")) return "unroutable";
    return "waiting";
  }
  // No ask state: the sender knows only what the thread holds.
  return [...answers].some((id) => text.includes(id)) ? "answered" : "no answer in the thread";
}

// ---------------------------------------------------------------- report

await using bin = standInBin(AGENT, "wats-delivery-bin-");
const before = VERSIONS.includes("before")
  ? await baselineDir({
    ...(values.before ? { before: values.before } : {}),
    commit: values["baseline-commit"]!,
    prefix: "wats-delivery-before-",
  })
  : undefined;
const versions: Version[] = VERSIONS.map((name) =>
  name === "before"
    ? {
      name: `before (${values.before ?? values["baseline-commit"]})`,
      main: `${before!.dir}/main.ts`,
      config: `${before!.dir}/deno.json`,
      askStates: false,
    }
    : { ...THIS_TREE, askStates: true }
);
const started = performance.now();
const results: Result[] = [];
try {
  await using _hogs = cpuHogs(HOGS);
  for (const n of SIZES) {
    for (const v of versions) {
      const r = await runNetwork(v, n, bin.path);
      results.push(r);
      // Said as each network ends: a long run read before its table.
      console.error(
        `  ${r.version} N=${n}: ${r.terminal}/${r.asks} terminal, reachable → answered p50 / p95 ${
          (pct(r.latencies, 0.5) / 1000).toFixed(1)
        } / ${(pct(r.latencies, 0.95) / 1000).toFixed(1)} s`,
      );
    }
  }
} finally {
  if (before?.owned) await Deno.remove(before.dir, { recursive: true }).catch(() => {});
}

console.log(
  `delivery under faults: ${ASKS} asks (one every ${INTERVAL_MS} ms), relay restart every ${
    RELAY_EVERY_MS / 1000
  } s, node 1 SIGKILLed twice (${DOWN_MS / 1000} s down), ${
    FAIL_RATE * 100
  } % of runs failing as a 529, bridge +${BRIDGE_DELAY_MS} ms (first turn at ${WINDOW_MS} ms unless told to wait), ${HOGS} CPU hogs; agent.ask_timeout ${
    ASK_TIMEOUT_MS / 1000
  } s at the asker; ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
console.log("");
console.log(
  "| version | N | terminal at the sender | silent losses | sender's view | answered at agents | " +
    "runs (529 / no tools; marked could not act, events given up) | duplicate wakes | reachable → answered p50 / p95 s (after an outage: p95, n) | " +
    "relay restarts, kills | s |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
const mark = (ok: boolean) => ok ? "pass" : "FAIL";
for (const r of results) {
  const view = Object.entries(r.phases).map(([k, c]) => `${c} ${k}`).join(", ");
  const dupPct = r.wakesOfAsks ? (100 * r.duplicateWakes / r.wakesOfAsks) : 0;
  console.log(
    `| ${r.version} | ${r.n} | ${r.terminal}/${r.asks} | ${
      r.asks - r.terminal
    } | ${view} | ${r.answeredAtAgents}/${r.asks} | ` +
      `${r.runs} (${r.runs529} / ${r.runsNoTools}; ${r.retryRuns}, ${r.gaveUp}) | ${r.duplicateWakes}/${r.wakesOfAsks} (${
        dupPct.toFixed(1)
      } %)${r.twiceBySame ? `, ${r.twiceBySame} answered twice by one agent` : ""} | ${
        (pct(r.latencies, 0.5) / 1000).toFixed(1)
      } / ${(pct(r.latencies, 0.95) / 1000).toFixed(1)} (${
        (pct(r.outageLatencies, 0.95) / 1000).toFixed(1)
      }, ${r.outageLatencies.length}) | ${r.relayRestarts}, ${r.kills} | ${r.seconds.toFixed(0)} |`,
  );
}
console.log("");
console.log(
  "reachable → answered, p50 / p95 s (n): asks that went through a run failing before acting " +
    "(waited for its retry) and the others; by category",
);
const p5095 = (xs: number[]) =>
  `${(pct(xs, 0.5) / 1000).toFixed(1)} / ${(pct(xs, 0.95) / 1000).toFixed(1)} (${xs.length})`;
for (const r of results) {
  console.log(
    `  ${r.version} N=${r.n}: after a failed run ${p5095(r.afterFailure)}; others ${
      p5095(r.clean)
    }; addressed ${p5095(r.byCategory.addressed)}, cap ${p5095(r.byCategory.cap)}, open ${
      p5095(r.byCategory.open)
    }`,
  );
}
console.log("");
console.log(
  "where an answered ask's time went, p50 / p95 s (n), at the agent that answered it first: " +
    "posted → stored there (relay); → its first wake (debounce, the run in progress); " +
    "→ the wake that answered (retries); → answered; → stored at the asker",
);
for (const r of results) {
  const f = r.path;
  console.log(
    `  ${r.version} N=${r.n}: to agent ${p5095(f.toAgent)}; queued ${p5095(f.queued)}; ` +
      `retried ${p5095(f.retried)}; in run ${p5095(f.inRun)}; back ${p5095(f.back)}`,
  );
}
console.log("");
console.log(
  "relay restarts, p50 / p95 s (n): how long the relay was down; from up again to each node's " +
    "next connection; to its catch-up done",
);
for (const r of results) {
  const c = r.reconnect;
  console.log(
    `  ${r.version} N=${r.n}: down ${p5095(c.down)}; connected ${p5095(c.connected)}; ` +
      `caught up ${p5095(c.caughtUp)}`,
  );
}
console.log("");
for (const r of results) {
  const dupPct = r.wakesOfAsks ? (100 * r.duplicateWakes / r.wakesOfAsks) : 0;
  const p95 = pct(r.latencies, 0.95) / 1000;
  console.log(
    `goals, ${r.version} N=${r.n}: 100 % terminal at the sender ${
      mark(r.terminal === r.asks)
    }; 0 silent losses ${mark(r.terminal === r.asks)}; ≤ 2 % duplicate wakes ${
      mark(dupPct <= 2)
    } (${dupPct.toFixed(1)} %); p95 reachable → answered ≤ 30 s ${
      mark(p95 <= 30 && r.latencies.length === r.asks)
    } (${p95.toFixed(1)} s over ${r.latencies.length} answered)`,
  );
}
