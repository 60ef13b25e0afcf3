/**
 * What a node downloads from its relay, by interest (issue 18 item 4): three nodes
 * connected to one relay (wats' endpoint on its own store, or with `--relay node` the
 * independent Node relay of the tests) receive the same stream of posts, and each
 * reports the bytes it received (`status().relays[].bytesReceived`, as on the wire)
 * and the posts it stored:
 *
 * - `firehose`: a node asking for every wats post, as before this change (the
 *   baseline of the same run);
 * - `open`: the node's interest with `agent.open_asks = true` (the default);
 * - `closed`: the same with `agent.open_asks = false`.
 *
 * The measured node is one of `--agents` agents (profiles) with one cap out of 8
 * (`deno`). The stream, from 4 askers outside the set: 100 asks (40 naming one cap of
 * the 8 at random, 30 addressed to one agent at random, 30 open), each followed by a
 * claim and an answer from another agent, and one note of chatter per ask; posts 1 s
 * apart (seeded: the same stream each run). The nodes run in this process
 * (`startNetwork` and `watchInterest`, as the daemon wires them).
 *
 * Each measurement runs twice in the same run (issue 31): the relay open to anyone
 * (`auth open`, the baseline) and members-only (`auth required`: wats' endpoint with
 * `net.auth = required`, or the Node relay with `--members`), where each node answers
 * the AUTH challenge with its key and the stream's publisher authenticates too. Then
 * a late joiner per mode connects to the relay holding the whole stream, and its
 * connect-to-caught-up time is measured (the median of 5 joins). The report gives
 * bytes and that time for `required` as ratios to `open`.
 *
 * Run: deno run -A bench/relay_interest.ts [--agents 4,8,12] [--relay wats|node]
 */

import { parseArgs } from "node:util";
import { createIngest } from "../src/net/ingest.ts";
import { watchInterest } from "../src/net/interest_source.ts";
import { type Network, startNetwork } from "../src/net/network.ts";
import { serveRelay } from "../src/net/relay_server.ts";
import { deriveProfileKey } from "../src/identity/profile_key.ts";
import { signAuth } from "../src/net/auth_event.ts";
import type { NostrEvent } from "../src/posts/post.ts";
import {
  openWs,
  publishAll,
  signed,
  tempStore,
  testLog,
  waitFor,
  type WsClient,
} from "../tests/net/net_support.ts";
import { startNodeRelay } from "../tests/net/node_relay.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    agents: { type: "string", default: "4,8,12" },
    relay: { type: "string", default: "wats" },
  },
});
const CAPS = ["deno", "rust", "go", "sql", "k8s", "css", "ml", "docs"];
const MODES = ["firehose", "open", "closed"] as const;
const AUTHS = ["open", "required"] as const;
type Auth = typeof AUTHS[number];
/** Late joins per mode for the catch-up time (its median). */
const JOINS = 5;
const ME = deriveProfileKey(new Uint8Array(32).fill(40), "agent");
const ASKERS = [0, 1, 2, 3].map((i) => deriveProfileKey(new Uint8Array(32).fill(90 + i), "asker"));
/** Every author of the stream, and the measured node: the members of a required relay. */
function members(agents: number): string[] {
  const others = Array.from(
    { length: agents },
    (_, n) => deriveProfileKey(new Uint8Array(32).fill(40 + n), "agent").pubkey,
  );
  return [...new Set([ME.pubkey, ...others, ...ASKERS.map((a) => a.pubkey)])];
}

/** mulberry32: the same stream on every run. */
function seeded(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s + 0x6D2B79F5) | 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

async function startRelay(
  auth: Auth,
  agents: number,
): Promise<{ url: string; stop(): Promise<void> }> {
  const required = auth === "required" ? members(agents) : undefined;
  if (values.relay === "node") {
    const r = await startNodeRelay(required ? { members: required } : {});
    return { url: r.url, stop: () => r.stop() };
  }
  const hub = tempStore();
  const ingest = createIngest({
    store: hub.store,
    events: () => {},
    log: testLog,
    now: Date.now,
    maxSkewMs: 600_000,
  });
  const server = await serveRelay({
    hostname: "127.0.0.1",
    port: 0,
    store: hub.store,
    ingest,
    log: testLog,
    ...(required ? { auth: { required: true, members: new Set(required) } } : {}),
  });
  return {
    url: `ws://127.0.0.1:${server.port}`,
    async stop() {
      await server.close();
      hub.cleanup();
    },
  };
}

function stream(agents: number): { events: NostrEvent[]; forMe: number } {
  const r = seeded(7);
  const pick = (n: number) => deriveProfileKey(new Uint8Array(32).fill(40 + n), "agent");
  const askers = ASKERS;
  const me = pick(0).pubkey;
  const t0 = Math.floor(Date.now() / 1000) - 500;
  const events: NostrEvent[] = [];
  let forMe = 0;
  for (let i = 0; i < 100; i++) {
    const by = askers[r(4)]!;
    const at = t0 + 4 * i;
    const text = `question ${i} ${"x".repeat(300)}`;
    let ask: NostrEvent;
    if (i < 40) {
      const cap = CAPS[r(Math.min(agents, CAPS.length))]!;
      if (cap === "deno") forMe++;
      ask = signed(by, "ask", text, { title: `cap ${i}`, caps: [cap], createdAt: at });
    } else if (i < 70) {
      const to = pick(r(agents)).pubkey;
      if (to === me) forMe++;
      ask = signed(by, "ask", text, { title: `to ${i}`, mentions: [to], createdAt: at });
    } else {
      ask = signed(by, "ask", text, { title: `open ${i}`, createdAt: at });
    }
    const claimer = pick(1 + r(agents - 1));
    const reply = { root: ask.id, parent: ask.id, parentAuthor: by.pubkey };
    events.push(
      ask,
      signed(claimer, "claim", `mine ${i}`, { ...reply, createdAt: at + 1 }),
      signed(claimer, "answer", `answer ${i} ${"y".repeat(400)}`, { ...reply, createdAt: at + 2 }),
      signed(pick(1 + r(agents - 1)), "note", `chatter ${i} ${"z".repeat(200)}`, {
        createdAt: at + 3,
      }),
    );
  }
  return { events, forMe };
}

/** A client of `url`, authenticated as an asker when the relay asks (a required relay). */
async function publisher(url: string, auth: Auth): Promise<WsClient> {
  const ws = await openWs(url);
  if (auth === "open") return ws;
  const [, challenge] = await ws.next((m) => m[0] === "AUTH", "the challenge");
  const e = signAuth({
    secret: ASKERS[0]!.secret,
    relayUrl: url,
    challenge: challenge as string,
    now: Date.now(),
  });
  ws.send(["AUTH", e]);
  const ok = await ws.next((m) => m[0] === "OK" && m[1] === e.id, "the AUTH's OK");
  if (ok[2] !== true) throw new Error(`error: the relay refused the publisher's AUTH: ${ok[3]}`);
  return ws;
}

/** A node of `mode` on `url`, with the measured agent's key (its AUTH key too). */
async function startNode(url: string, mode: typeof MODES[number]) {
  const t = tempStore([url]);
  t.store.recordProfile("agent", ME.pubkey);
  const startedAt = performance.now();
  // Nothing is stored before the network starts: `net` is set when this is called.
  const source = watchInterest(t.store, {
    caps: ["deno"],
    openAsks: mode === "open",
    haltAccept: [],
  }, (next) => net.setInterest(next));
  const net = await startNetwork({
    settings: { infra: [url], listen: "", maxSkewMs: 600_000 },
    store: t.store,
    events: () => {},
    log: testLog,
    verifyWorkers: 0,
    authKey: ME,
    ...(mode === "firehose" ? {} : { interest: source.current() }),
  });
  return {
    mode,
    net,
    startedAt,
    count: () => t.store.count(),
    async stop() {
      source.stop();
      await net.close();
      t.cleanup();
    },
  };
}

interface Row {
  mode: string;
  stored: number;
  bytes: number;
  unasked: number;
  /** Median ms from starting a late joiner to its caught-up, the relay holding the stream. */
  catchUpMs: number;
  /** Bytes a late joiner received to catch up. */
  catchUpBytes: number;
}

const relayOf = (n: { net: Network }) => n.net.status().relays[0]!;

/** The live part: three nodes on a fresh relay while the stream is published; the relay is kept. */
async function measure(agents: number, auth: Auth) {
  const relay = await startRelay(auth, agents);
  const nodes: Awaited<ReturnType<typeof startNode>>[] = [];
  for (const mode of MODES) nodes.push(await startNode(relay.url, mode));
  const rows: Row[] = [];
  const { events, forMe } = stream(agents);
  try {
    await waitFor(() => nodes.every((n) => relayOf(n).caughtUp), "every node caught up");
    const before = nodes.map((n) => relayOf(n).bytesReceived);
    const client = await publisher(relay.url, auth);
    for (let i = 0; i < events.length; i += 50) await publishAll(client, events.slice(i, i + 50));
    await client.close();
    // Each node holds what it asked for: all, all but notes, the asks for it and their threads.
    const want = [events.length, 300, 3 * forMe];
    await waitFor(
      () => nodes.every((n, i) => n.count() >= want[i]!),
      () => `every node to store its posts: ${nodes.map((n) => n.count()).join(", ")} of ${want}`,
      300_000,
    );
    for (const n of nodes) await n.net.ingest.settle();
    for (const [i, n] of nodes.entries()) {
      const s = relayOf(n);
      rows.push({
        mode: n.mode,
        stored: n.count(),
        bytes: s.bytesReceived - before[i]!,
        unasked: s.unasked,
        catchUpMs: 0,
        catchUpBytes: 0,
      });
    }
  } finally {
    for (const n of nodes) await n.stop();
  }
  return { rows, relay, want: [events.length, 300, 3 * forMe] };
}

/**
 * Late joiners: a node of each mode connects to each relay (holding the stream) until
 * caught up, `JOINS` times, open and required interleaved so that a busy machine slows
 * both alike; each row gets the median time.
 */
async function lateJoins(
  measured: Map<Auth, Awaited<ReturnType<typeof measure>>>,
): Promise<void> {
  const times = new Map<string, number[]>();
  for (let j = 0; j < JOINS; j++) {
    for (const [auth, m] of measured) {
      for (const [i, mode] of MODES.entries()) {
        const late = await startNode(m.relay.url, mode);
        try {
          await waitFor(
            () => relayOf(late).caughtUp && late.count() >= m.want[i]!,
            "a late joiner",
          );
          const key = `${auth}|${mode}`;
          times.set(key, [...times.get(key) ?? [], performance.now() - late.startedAt]);
          m.rows[i]!.catchUpBytes = relayOf(late).bytesReceived;
        } finally {
          await late.stop();
        }
      }
    }
  }
  for (const [auth, m] of measured) {
    for (const r of m.rows) {
      const ts = times.get(`${auth}|${r.mode}`)!.sort((a, b) => a - b);
      r.catchUpMs = ts[Math.floor(ts.length / 2)]!;
    }
  }
}

console.log(
  "| agents | relay | auth | node | posts stored | bytes received | × firehose | × open | " +
    "unasked | catch-up ms | × open | catch-up bytes | × open |",
);
console.log(
  "| -----: | ----- | ---- | ---- | -----------: | -------------: | ---------: | -----: | " +
    "------: | ----------: | -----: | -------------: | -----: |",
);
const goals: string[] = [];
for (const n of values.agents.split(",").map(Number)) {
  const measured = new Map<Auth, Awaited<ReturnType<typeof measure>>>();
  try {
    for (const auth of AUTHS) measured.set(auth, await measure(n, auth));
    await lateJoins(measured);
  } finally {
    for (const m of measured.values()) await m.relay.stop();
  }
  const byAuth = new Map([...measured].map(([auth, m]) => [auth, m.rows]));
  for (const auth of AUTHS) {
    const rows = byAuth.get(auth)!;
    const base = rows[0]!.bytes;
    for (const [i, r] of rows.entries()) {
      const open = byAuth.get("open")![i]!;
      console.log(
        `| ${n} | ${values.relay} | ${auth} | ${r.mode} | ${r.stored} | ${r.bytes} | ${
          (r.bytes / base).toFixed(2)
        } | ${(r.bytes / open.bytes).toFixed(3)} | ${r.unasked} | ${r.catchUpMs.toFixed(0)} | ${
          (r.catchUpMs / open.catchUpMs).toFixed(2)
        } | ${r.catchUpBytes} | ${(r.catchUpBytes / open.catchUpBytes).toFixed(3)} |`,
      );
      if (auth === "required") {
        const bytes = r.bytes / open.bytes;
        const time = r.catchUpMs / open.catchUpMs;
        goals.push(
          `  ${n} agents, ${r.mode}: bytes ≤ 1.05× open: ${bytes <= 1.05 ? "pass" : "FAIL"} (${
            bytes.toFixed(3)
          }×); connect-to-caught-up ≤ 1.2× open: ${time <= 1.2 ? "pass" : "FAIL"} (${
            time.toFixed(2)
          }×)`,
        );
      }
    }
  }
}
console.log("");
console.log("goals, auth required against open (issue 31):");
for (const g of goals) console.log(g);
