/**
 * Wakes per ask and relay bytes per node as the network grows (issue 18): N
 * real daemons (`wats node --agent claude`, own data dirs and HOMEs) on one
 * independent relay (tests/support/node/relay, under Node), each through a
 * WebSocket tap (tests/support/relay_tap.ts) that counts the bytes the relay
 * sends that node. Each runner's `claude` is the stand-in agent
 * bench/network_wakes_agent.mjs: the real runner, spawn and prompt, and an
 * agent that logs each wake and claims, then answers, every ask it is woken
 * for through the run's real `wats mcp`.
 *
 * The stream: `--asks` asks (default 100: 30 addressed, 40 with caps, 30 open)
 * signed by a poster key that is no node's and published straight to the
 * relay, so that the same events reach both code versions (the old `ask` tool
 * has no `to`). Addressed asks carry a `p` tag of one agent, round robin; cap
 * asks one `t` tag `cap:NAME` from a set of four, where agent i has caps
 * CAPS[i mod 4] and, for even i, CAPS[i+1 mod 4]. Each category is one phase:
 * its asks are published at once, then the bench waits until the network is
 * quiet (every ask woke an agent, no run in progress, no run event and no
 * message through any tap for a margin, the slowest debounce passed). The debounces are staggered, agent i's
 * `agent.every` = `--every-ms` + i × `--step-ms`: the first agent's claims
 * reach the others while their wakes still wait.
 *
 * Baseline, in the same run and on the same stream: the code before issue 18
 * (`--before DIR`, or commit 029137c extracted with `git archive` into a temp
 * dir). For each N both versions run, one after the other, each on a fresh
 * relay.
 *
 * Beside it (issue 31): this tree with the relay members-only (`auth required`: the
 * wats endpoint with `net.auth = required`, `net.members` = every node's person and
 * agent keys and the poster's, `net.trust_forwarded` for the taps' X-Forwarded-Host;
 * or the Node relay with `--members`), each node answering the AUTH challenge and the
 * publisher authenticating too. Node keys are written before the relay starts, so its
 * members are known. The goals compare it to this tree open: wakes per ask the same,
 * bytes per node ≤ 1.05×, and the time from a node's start to its relay's first EOSE
 * after its subscriptions (read at its tap) ≤ 1.2×.
 *
 * Reports, per version and N: wakes per ask by category (a wake of an ask = one
 * run whose prompt listed it), bytes per node received from the relay by
 * category, and the issue's goals, pass or fail.
 *
 * Run: deno run -A bench/network_wakes.ts [--n 4,8,12] [--asks 100] [--before DIR]
 *      [--versions before,open,required]
 *      deno run -A bench/network_wakes.ts --n 4 --asks 20     (a quick check)
 */

import { parseArgs } from "node:util";
import { decode as nip19Decode } from "nostr-tools/nip19";
import { getPublicKey } from "nostr-tools/pure";
import { buildPost, type NostrEvent } from "../src/posts/post.ts";
import { denoDir } from "../tests/support/cli.ts";
import { type RelayTap, startRelayTap } from "../tests/support/relay_tap.ts";
import { startNodeRelay } from "../tests/net/node_relay.ts";
import { nostrKindOf } from "../src/posts/kinds.ts";
import { deriveProfileKey } from "../src/identity/profile_key.ts";
import { signAuth } from "../src/net/auth_event.ts";
import {
  baselineDir,
  CAPS,
  capsOf,
  type Category,
  pct as pctOf,
  readLines,
  sleep,
  standInBin,
  THIS_TREE,
  type Version,
  watsArgs,
} from "./swarm_rig.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    n: { type: "string", default: "4,8,12" },
    asks: { type: "string", default: "100" },
    before: { type: "string" },
    "baseline-commit": { type: "string", default: "029137c" },
    "every-ms": { type: "string", default: "1000" },
    "step-ms": { type: "string", default: "3000" },
    "margin-ms": { type: "string", default: "3000" },
    "phase-timeout-s": { type: "string", default: "180" },
    relay: { type: "string", default: "wats" },
    versions: { type: "string", default: "before,open,required" },
  },
});
const SIZES = values.n.split(",").map(Number);
const ASKS = Number(values.asks);
const EVERY_MS = Number(values["every-ms"]);
const STEP_MS = Number(values["step-ms"]);
const MARGIN_MS = Number(values["margin-ms"]);
const PHASE_TIMEOUT_MS = Number(values["phase-timeout-s"]) * 1000;
const RELAY = values.relay;
if (RELAY !== "wats" && RELAY !== "node") {
  throw new Error(`error: --relay takes wats or node, not ${RELAY}`);
}
// From 3 agents on every cap of the set has one (capsOf): no cap ask waits for nobody.
if (SIZES.some((n) => !Number.isInteger(n) || n < 3) || !(ASKS >= 3)) {
  throw new Error("error: --n takes node counts ≥ 3 (e.g. 4,8,12) and --asks a number ≥ 3");
}
const AGENT = new URL("./network_wakes_agent.mjs", import.meta.url);

// ------------------------------------------------------------- the stream

const CATEGORIES: Category[] = ["addressed", "cap", "open"];

/** One ask of the stream, before it is signed for a network of N agents. */
interface AskSpec {
  category: Category;
  no: number;
  /** Addressed: the index of the agent it is for. */
  to?: number;
  /** Cap asks: the cap it asks for. */
  cap?: string;
}

/** The stream's asks by category: 30 % addressed, 40 % caps, the rest open. */
function streamSpec(total: number): Record<Category, AskSpec[]> {
  const addressed = Math.round(total * 0.3);
  const cap = Math.round(total * 0.4);
  const open = total - addressed - cap;
  let no = 0;
  return {
    addressed: Array.from({ length: addressed }, (_, i) => ({
      category: "addressed",
      no: ++no,
      to: i,
    })),
    cap: Array.from({ length: cap }, (_, i) => ({
      category: "cap",
      no: ++no,
      cap: CAPS[i % CAPS.length],
    })),
    open: Array.from({ length: open }, () => ({ category: "open", no: ++no })),
  };
}

const poster = crypto.getRandomValues(new Uint8Array(32));

/** Signs `spec` for a network whose agents' hex keys are `agents`. */
function signAsk(spec: AskSpec, agents: string[]): NostrEvent {
  return buildPost({
    kind: "ask",
    title: `Question ${spec.no} (${spec.category})`,
    text: `Which log rotation should host ${spec.no} use? (${crypto.randomUUID()})`,
    ...(spec.cap ? { caps: [spec.cap] } : {}),
    ...(spec.to !== undefined ? { mentions: [agents[spec.to % agents.length]!] } : {}),
    createdAt: Math.floor(Date.now() / 1000),
  }, poster);
}

/** A socket to the relay, authenticated as the poster when the relay is members-only. */
async function connect(relayUrl: string, auth: boolean): Promise<WebSocket> {
  const ws = new WebSocket(relayUrl);
  if (!auth) {
    await new Promise((ok, fail) => (ws.onopen = ok, ws.onerror = fail));
    return ws;
  }
  await new Promise<void>((resolve, reject) => {
    ws.onerror = reject;
    let sent: string | undefined;
    ws.onmessage = (m) => {
      const msg = JSON.parse(String(m.data));
      if (msg[0] === "AUTH" && sent === undefined) {
        const e = signAuth({ secret: poster, relayUrl, challenge: msg[1], now: Date.now() });
        sent = e.id;
        ws.send(JSON.stringify(["AUTH", e]));
      } else if (msg[0] === "OK" && msg[1] === sent) {
        if (msg[2] === true) resolve();
        else reject(new Error(`error: the relay refused the poster's AUTH: ${msg[3]}`));
      }
    };
  });
  return ws;
}

/** Publishes `events` to `relayUrl` and resolves once the relay said OK to each. */
async function publish(relayUrl: string, events: NostrEvent[], auth: boolean): Promise<void> {
  const ws = await connect(relayUrl, auth);
  const pending = new Set(events.map((e) => e.id));
  const done = new Promise<void>((resolve, reject) => {
    ws.onmessage = (m) => {
      const [type, id, ok, why] = JSON.parse(String(m.data));
      if (type !== "OK") return;
      if (!ok) reject(new Error(`error: the relay refused ${id}: ${why}`));
      pending.delete(id);
      if (pending.size === 0) resolve();
    };
  });
  for (const e of events) ws.send(JSON.stringify(["EVENT", e]));
  await done;
  ws.close();
}

/**
 * Watches the relay for claims: the first time a claim of each ask (its `e`
 * tags) arrived. How long the first claim takes says which debounces it can
 * beat: an agent whose `agent.every` ends before it arrives runs anyway.
 */
async function watchClaims(
  relayUrl: string,
  auth: boolean,
): Promise<{ first: Map<string, number>; close(): void }> {
  const first = new Map<string, number>();
  const ws = await connect(relayUrl, auth);
  ws.onmessage = (m) => {
    const msg = JSON.parse(String(m.data));
    if (msg[0] !== "EVENT") return;
    const tags = (msg[2]?.tags ?? []) as string[][];
    for (const t of tags) {
      if (t[0] === "e" && t[1] && !first.has(t[1])) first.set(t[1], Date.now());
    }
  };
  ws.send(JSON.stringify(["REQ", "claims", { kinds: [nostrKindOf("claim")], limit: 0 }]));
  return { first, close: () => ws.close() };
}

// -------------------------------------------------------------- the nodes

interface Node {
  index: number;
  dir: string;
  child: Deno.ChildProcess;
  tap: RelayTap;
  /** The agent profile's hex key. */
  agent: string;
  lines: string[];
  waiters: (() => void)[];
  runsStarted: number;
  runsEnded: number;
  /** Runs that did not end ok (the stand-in's tool calls failed), with the first one's line. */
  runsFailed: number;
  firstFailure?: string;
  lastRunEventAt: number;
  /** When the node was started (ms since the epoch). */
  startedAt: number;
}

/** A code version, and whether its relay is members-only and its nodes authenticate (issue 31). */
interface NetVersion extends Version {
  auth?: boolean;
}

/** The person profile of a node of an auth version (its members need the name). */
const PERSON = "person";

function configToml(i: number, v: NetVersion): string {
  return [
    ...(v.auth ? [`profile = "${PERSON}"`] : []),
    "[agent]",
    `every = "${EVERY_MS + i * STEP_MS}ms"`,
    `heartbeat = "0"`,
    `caps = ${JSON.stringify(capsOf(i))}`,
    // Hundreds of runs and asks from one author in minutes: no cap may skip a wake.
    "max_runs_per_hour = 100000",
    "max_runs_per_day = 100000",
    "max_usd_per_day = 1000",
    "max_usd_per_month = 10000",
    "",
  ].join("\n");
}

/** The relay of one network: a URL and a way to stop it. */
interface Relay {
  url: string;
  stop(): Promise<void>;
}

/**
 * `wats`: this tree's `wats node --agent none --listen` endpoint, which applies
 * every filter to live events too. `node`: the independent relay of the tests
 * (@nostr-relay/core), which sends a connection each live event once per
 * subscription and ignores tag filters on live events: its bytes say what
 * such a relay costs, not what a node asked for.
 */
async function startRelay(members?: string[]): Promise<Relay> {
  if (RELAY === "node") return await startNodeRelay(members ? { members } : {});
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-netwakes-relay-" }));
  if (members) {
    Deno.writeTextFileSync(
      `${dir}/config.toml`,
      [
        'net.auth = "required"',
        `net.members = ${JSON.stringify(members)}`,
        "net.trust_forwarded = true",
        "",
      ].join("\n"),
    );
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...watsArgs(THIS_TREE),
      "--data-dir",
      dir,
      "node",
      "--agent",
      "none",
      "--listen",
      `127.0.0.1:${port}`,
    ],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir, DENO_DIR: denoDir() },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes('"event":"started"')) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`error: the relay node did not start; see ${dir}`);
    text += value;
  }
  // Keep reading, so a full pipe never blocks the relay.
  (async () => {
    while (!(await lines.read()).done) { /* drain */ }
  })().catch(() => {});
  return {
    url: `ws://127.0.0.1:${port}`,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** A node's data dir with its node key written, and the keys of its profiles (hex). */
function nodeDir(i: number): { dir: string; keys: string[] } {
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: `wats-netwakes-${i}-` }));
  const secret = crypto.getRandomValues(new Uint8Array(32));
  Deno.writeFileSync(`${dir}/node.key`, secret, { mode: 0o600 });
  return { dir, keys: [PERSON, "helper"].map((n) => deriveProfileKey(secret, n).pubkey) };
}

async function startNode(
  v: NetVersion,
  i: number,
  ctx: { relay: Relay; bin: string; dir: string },
): Promise<Node> {
  const { relay, bin, dir } = ctx;
  Deno.writeTextFileSync(`${dir}/config.toml`, configToml(i, v));
  const startedAt = Date.now();
  const tap = startRelayTap(relay.url);
  const child = new Deno.Command(Deno.execPath(), {
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
      tap.url,
    ],
    env: {
      PATH: `${bin}:${Deno.env.get("PATH")}`,
      NO_COLOR: "1",
      HOME: dir,
      DENO_DIR: denoDir(),
    },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const node: Node = {
    index: i,
    dir,
    child,
    tap,
    agent: "",
    lines: [],
    waiters: [],
    runsStarted: 0,
    runsEnded: 0,
    runsFailed: 0,
    lastRunEventAt: 0,
    startedAt,
  };
  readLines(child, (line) => {
    node.lines.push(line);
    if (line.includes('"event":"run_started"')) {
      node.runsStarted++;
      node.lastRunEventAt = Date.now();
    } else if (line.includes('"event":"run_ended"')) {
      node.runsEnded++;
      node.lastRunEventAt = Date.now();
      if (!line.includes('"status":"ok"')) {
        node.runsFailed++;
        node.firstFailure ??= line;
      }
    }
    for (const w of node.waiters.splice(0)) w();
  }).finally(() => {
    for (const w of node.waiters.splice(0)) w();
  }).catch(() => {});
  const started = await waitLine(node, (l) => l.includes('"event":"started"'));
  const npub = JSON.parse(started).profiles.helper as string;
  node.agent = nip19Decode(npub).data as string;
  return node;
}

async function waitLine(node: Node, match: (l: string) => boolean): Promise<string> {
  const deadline = Date.now() + 180_000;
  for (let i = 0;; i++) {
    while (i >= node.lines.length) {
      if (Date.now() > deadline) {
        throw new Error(`error: node ${node.index} printed no such line in 180 s; see ${node.dir}`);
      }
      await new Promise<void>((r) => {
        node.waiters.push(r);
        setTimeout(r, 1000);
      });
    }
    if (match(node.lines[i]!)) return node.lines[i]!;
  }
}

async function stopNode(n: Node): Promise<void> {
  try {
    n.child.kill("SIGTERM");
  } catch { /* gone */ }
  await n.child.status;
  await n.tap.close();
  await Deno.remove(n.dir, { recursive: true }).catch(() => {});
}

/** The asks each wake listed, from the stand-in's log: ask id → number of wakes. */
function wakesByAsk(nodes: Node[]): Map<string, { wakes: number; by: Set<number> }> {
  const out = new Map<string, { wakes: number; by: Set<number> }>();
  for (const n of nodes) {
    let text = "";
    try {
      text = Deno.readTextFileSync(`${n.dir}/bench-wakes.jsonl`);
    } catch { /* no wake yet */ }
    for (const line of text.split("\n").filter((l) => l.trim())) {
      const wake = JSON.parse(line) as { events: { id: string; kind: string }[] };
      for (const e of wake.events) {
        const w = out.get(e.id) ?? { wakes: 0, by: new Set<number>() };
        w.wakes++;
        w.by.add(n.index);
        out.set(e.id, w);
      }
    }
  }
  return out;
}

/** Waits until every ask of `ids` woke an agent and the network is quiet; false on timeout. */
async function quiet(nodes: Node[], ids: string[], postedAt: number): Promise<boolean> {
  const slowest = EVERY_MS + (nodes.length - 1) * STEP_MS;
  for (;;) {
    const now = Date.now();
    const woken = wakesByAsk(nodes);
    const allWoke = ids.every((id) => woken.has(id));
    const running = nodes.some((n) => n.runsStarted > n.runsEnded);
    // The runs' posts leave through outboxes and the relay after the run: the
    // phase's bytes are in only when no message has moved for the margin too.
    const last = Math.max(...nodes.map((n) => Math.max(n.lastRunEventAt, n.tap.lastActivity())));
    if (allWoke && !running && now - postedAt > slowest + MARGIN_MS && now - last > MARGIN_MS) {
      return true;
    }
    // Routed code may leave an ask unwoken (no agent matches, or a bug): after
    // the timeout the phase ends and the report names how many.
    // A run that hangs past twice the timeout ends the wait too.
    if (now - postedAt > PHASE_TIMEOUT_MS && (!running || now - postedAt > 2 * PHASE_TIMEOUT_MS)) {
      return false;
    }
    await sleep(250);
  }
}

// ------------------------------------------------------------------- a run

interface PhaseResult {
  asks: number;
  /** Wakes per ask (0 for an ask nothing woke for). */
  wakes: number[];
  /** Per cap ask: wakes ≤ matching agents. */
  withinMatching: boolean[];
  /** Addressed asks woken only by their addressee. */
  onlyAddressee: boolean[];
  bytesPerNode: number[];
  /** Per ask with a claim: ms from publishing the phase to the first claim at the relay. */
  claimMs: number[];
  timedOut: boolean;
  seconds: number;
}

async function runNetwork(v: NetVersion, n: number, bin: string) {
  const dirs = Array.from({ length: n }, (_, i) => nodeDir(i));
  const members = [...dirs.flatMap((d) => d.keys), getPublicKey(poster)];
  const relay = await startRelay(v.auth ? members : undefined);
  const nodes: Node[] = [];
  const caughtUpMs: number[] = [];
  try {
    const t0 = Date.now();
    for (let i = 0; i < n; i++) {
      nodes.push(await startNode(v, i, { relay, bin, dir: dirs[i]!.dir }));
    }
    // Caught up: each node's relay answered a catch-up page (the first EOSE its tap
    // passed down, after the REQs the node sent once authenticated when it had to).
    for (const node of nodes) {
      while (!((node.tap.downByType().EOSE ?? 0) > 0)) await sleep(20);
      caughtUpMs.push(Date.now() - node.startedAt);
    }
    // The runners' start (announces, first registration) settles before the stream.
    await sleep(MARGIN_MS);
    console.error(
      `  ${v.name} N=${n}: ${n} nodes up in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    );
    const agents = nodes.map((x) => x.agent);
    const spec = streamSpec(ASKS);
    const claims = await watchClaims(relay.url, v.auth ?? false);
    const results = {} as Record<Category, PhaseResult>;
    for (const category of CATEGORIES) {
      const asks = spec[category].map((s) => ({ s, e: signAsk(s, agents) }));
      for (const node of nodes) node.tap.resetCounts();
      const postedAt = Date.now();
      await publish(relay.url, asks.map((a) => a.e), v.auth ?? false);
      const ok = await quiet(nodes, asks.map((a) => a.e.id), postedAt);
      const woken = wakesByAsk(nodes);
      results[category] = {
        asks: asks.length,
        wakes: asks.map((a) => woken.get(a.e.id)?.wakes ?? 0),
        withinMatching: asks.filter((a) => a.s.cap).map((a) =>
          (woken.get(a.e.id)?.wakes ?? 0) <=
            nodes.filter((x) => capsOf(x.index).includes(a.s.cap!)).length
        ),
        onlyAddressee: asks.filter((a) => a.s.to !== undefined).map((a) => {
          const by = woken.get(a.e.id)?.by ?? new Set();
          return by.size === 1 && by.has(a.s.to! % n);
        }),
        bytesPerNode: nodes.map((x) => x.tap.bytesDown()),
        claimMs: asks.flatMap((a) => {
          const at = claims.first.get(a.e.id);
          return at === undefined ? [] : [at - postedAt];
        }),
        timedOut: !ok,
        seconds: (Date.now() - postedAt) / 1000,
      };
      const r = results[category];
      // Messages the relay sent each node, by type (mean per node): where the bytes went.
      const types: Record<string, number> = {};
      for (const x of nodes) {
        for (const [k, c] of Object.entries(x.tap.downByType())) types[k] = (types[k] ?? 0) + c;
      }
      console.error(
        `  ${v.name} N=${n} ${category}: ${asks.length} asks, ${sum(r.wakes)} wakes, ${
          r.seconds.toFixed(0)
        } s${ok ? "" : " (timed out)"}; first claim p50 ${
          (pctOf(r.claimMs, 0.5) / 1000).toFixed(1)
        } s, max ${(Math.max(0, ...r.claimMs) / 1000).toFixed(1)} s; messages down per node: ${
          Object.entries(types).map(([k, c]) => `${k} ${(c / n).toFixed(0)}`).join(", ")
        }`,
      );
    }
    claims.close();
    const failed = nodes.filter((x) => x.runsFailed > 0);
    if (failed.length > 0) {
      console.error(
        `  ${v.name} N=${n}: ${sum(failed.map((x) => x.runsFailed))} runs did not end ok; first: ${
          failed[0]!.firstFailure
        }`,
      );
    }
    return { ...results, caughtUpMs };
  } finally {
    await Promise.all(nodes.map(stopNode));
    await relay.stop();
    for (const d of dirs) await Deno.remove(d.dir, { recursive: true }).catch(() => {});
  }
}

// ------------------------------------------------------------------ report

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const mean = (xs: number[]) => xs.length ? sum(xs) / xs.length : 0;

await using binDir = standInBin(AGENT, "wats-netwakes-bin-");
const bin = binDir.path;
const wanted = new Set(values.versions.split(","));
const before = wanted.has("before")
  ? await baselineDir({
    ...(values.before ? { before: values.before } : {}),
    commit: values["baseline-commit"]!,
    prefix: "wats-netwakes-before-",
  })
  : undefined;
const versions: NetVersion[] = [
  ...(before
    ? [{ name: "before", main: `${before.dir}/main.ts`, config: `${before.dir}/deno.json` }]
    : []),
  ...(wanted.has("open") ? [THIS_TREE] : []),
  ...(wanted.has("required") ? [{ ...THIS_TREE, name: "auth req.", auth: true }] : []),
];
const started = performance.now();
const all = new Map<string, Record<Category, PhaseResult> & { caughtUpMs: number[] }>();
try {
  for (const n of SIZES) {
    for (const v of versions) all.set(`${v.name}|${n}`, await runNetwork(v, n, bin));
  }
} finally {
  if (before?.owned) await Deno.remove(before.dir, { recursive: true }).catch(() => {});
}
const seconds = (performance.now() - started) / 1000;

console.log(
  `network wakes: ${ASKS} asks per network (${
    CATEGORIES.map((c) => `${streamSpec(ASKS)[c].length} ${c}`).join(", ")
  }), N = ${SIZES.join(", ")}, agent.every ${EVERY_MS} ms + i × ${STEP_MS} ms, ${
    seconds.toFixed(0)
  } s`,
);
console.log("");
console.log(
  "| version   | N  | wakes/ask addressed | wakes/ask cap | wakes/ask open | wakes/ask all | " +
    "KB/node addressed | KB/node cap | KB/node open |",
);
console.log(
  "| --------- | -- | ------------------- | ------------- | -------------- | ------------- | " +
    "----------------- | ----------- | ------------ |",
);
const kb = (r: PhaseResult) => (mean(r.bytesPerNode) / 1024).toFixed(1);
for (const n of SIZES) {
  for (const v of versions) {
    const r = all.get(`${v.name}|${n}`)!;
    const allWakes = CATEGORIES.flatMap((c) => r[c].wakes);
    console.log(
      `| ${v.name.padEnd(9)} | ${String(n).padEnd(2)} | ${
        mean(r.addressed.wakes).toFixed(2).padEnd(19)
      } | ${mean(r.cap.wakes).toFixed(2).padEnd(13)} | ${
        mean(r.open.wakes).toFixed(2).padEnd(14)
      } | ${mean(allWakes).toFixed(2).padEnd(13)} | ${kb(r.addressed).padEnd(17)} | ${
        kb(r.cap).padEnd(11)
      } | ${kb(r.open).padEnd(12)} |`,
    );
    const unwoken = CATEGORIES.reduce((a, c) => a + r[c].wakes.filter((w) => w === 0).length, 0);
    const late = CATEGORIES.filter((c) => r[c].timedOut);
    if (unwoken > 0 || late.length > 0) {
      console.log(
        `  ${v.name} N=${n}: ${unwoken} asks woke no agent${
          late.length ? `; phases timed out: ${late.join(", ")}` : ""
        }`,
      );
    }
  }
}
console.log("");
const mark = (ok: boolean) => ok ? "pass" : "FAIL";
for (const v of versions) {
  console.log(`goals, ${v.name}:`);
  for (const n of SIZES) {
    const r = all.get(`${v.name}|${n}`)!;
    const allWakes = CATEGORIES.flatMap((c) => r[c].wakes);
    const addressedOne = r.addressed.wakes.every((w) => w === 1) && r.addressed.onlyAddressee.every(
      Boolean,
    );
    console.log(
      `  N=${n}: addressed asks 1.0 wake, by the addressee: ${mark(addressedOne)} (${
        mean(r.addressed.wakes).toFixed(2)
      }); cap asks ≤ matching agents: ${mark(r.cap.withinMatching.every(Boolean))} (${
        r.cap.withinMatching.filter((x) => !x).length
      } over); ≤ 1.2 wakes per ask in all: ${mark(mean(allWakes) <= 1.2)} (${
        mean(allWakes).toFixed(2)
      })`,
    );
  }
  if (SIZES.length >= 2) {
    const lo = Math.min(...SIZES);
    const hi = Math.max(...SIZES);
    for (const c of ["addressed", "cap"] as const) {
      const a = mean(all.get(`${v.name}|${lo}`)![c].bytesPerNode);
      const b = mean(all.get(`${v.name}|${hi}`)![c].bytesPerNode);
      // Flat: the node at N=hi downloads at most 1.5× what it does at N=lo.
      console.log(
        `  relay bytes per node flat in N for ${c} asks (N=${hi} ≤ 1.5 × N=${lo}): ${
          mark(b <= 1.5 * a)
        } (${(b / a).toFixed(2)}x)`,
      );
    }
  } else console.log("  relay bytes per node flat in N: needs two sizes (--n 4,8)");
}

if (wanted.has("open") && wanted.has("required")) {
  console.log("goals, auth required against this tree open (issue 31):");
  for (const n of SIZES) {
    const open = all.get(`this tree|${n}`)!;
    const req = all.get(`auth req.|${n}`)!;
    const wakes = (r: Record<Category, PhaseResult>) => mean(CATEGORIES.flatMap((c) => r[c].wakes));
    const bytes = (r: Record<Category, PhaseResult>) =>
      mean(CATEGORIES.map((c) => mean(r[c].bytesPerNode)));
    const median = (xs: number[]) => pctOf(xs, 0.5);
    const b = bytes(req) / bytes(open);
    const t = median(req.caughtUpMs) / median(open.caughtUpMs);
    console.log(
      `  N=${n}: wakes per ask unchanged: ${mark(wakes(req) === wakes(open))} (${
        wakes(req).toFixed(2)
      } vs ${wakes(open).toFixed(2)}); bytes per node ≤ 1.05× open: ${mark(b <= 1.05)} (${
        b.toFixed(3)
      }×); start to caught up ≤ 1.2× open: ${mark(t <= 1.2)} (${
        (median(req.caughtUpMs) / 1000).toFixed(1)
      } s vs ${(median(open.caughtUpMs) / 1000).toFixed(1)} s, ${t.toFixed(2)}×)`,
    );
  }
}
