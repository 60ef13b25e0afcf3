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
 * Run: deno run -A bench/relay_interest.ts [--agents 4,8,12] [--relay wats|node]
 */

import { parseArgs } from "node:util";
import { createIngest } from "../src/net/ingest.ts";
import { watchInterest } from "../src/net/interest_source.ts";
import { type Network, startNetwork } from "../src/net/network.ts";
import { serveRelay } from "../src/net/relay_server.ts";
import { deriveProfileKey } from "../src/identity/profile_key.ts";
import type { NostrEvent } from "../src/posts/post.ts";
import {
  openWs,
  publishAll,
  signed,
  tempStore,
  testLog,
  waitFor,
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

async function startRelay(): Promise<{ url: string; stop(): Promise<void> }> {
  if (values.relay === "node") {
    const r = await startNodeRelay();
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
  const askers = [0, 1, 2, 3].map((i) =>
    deriveProfileKey(new Uint8Array(32).fill(90 + i), "asker")
  );
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

async function measure(agents: number): Promise<void> {
  const relay = await startRelay();
  const me = deriveProfileKey(new Uint8Array(32).fill(40), "agent");
  const nodes: { mode: string; net: Network; count(): number; stop(): Promise<void> }[] = [];
  for (const mode of MODES) {
    const t = tempStore([relay.url]);
    t.store.recordProfile("agent", me.pubkey);
    // Nothing is stored before the network starts: `net` is set when this is called.
    const source = watchInterest(t.store, {
      caps: ["deno"],
      openAsks: mode === "open",
      haltAccept: [],
    }, (next) => net.setInterest(next));
    const net = await startNetwork({
      settings: { infra: [relay.url], listen: "", maxSkewMs: 600_000 },
      store: t.store,
      events: () => {},
      log: testLog,
      verifyWorkers: 0,
      ...(mode === "firehose" ? {} : { interest: source.current() }),
    });
    nodes.push({
      mode,
      net,
      count: () => t.store.count(),
      async stop() {
        source.stop();
        await net.close();
        t.cleanup();
      },
    });
  }
  try {
    const relayOf = (n: { net: Network }) => n.net.status().relays[0]!;
    await waitFor(() => nodes.every((n) => relayOf(n).caughtUp), "every node caught up");
    const before = nodes.map((n) => relayOf(n).bytesReceived);
    const { events, forMe } = stream(agents);
    const client = await openWs(relay.url);
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
    const base = relayOf(nodes[0]!).bytesReceived - before[0]!;
    for (const [i, n] of nodes.entries()) {
      const s = relayOf(n);
      const bytes = s.bytesReceived - before[i]!;
      console.log(
        `| ${agents} | ${values.relay} | ${n.mode} | ${n.count()} | ${bytes} | ${
          (bytes / base).toFixed(2)
        } | ${s.unasked} |`,
      );
    }
  } finally {
    for (const n of nodes) await n.stop();
    await relay.stop();
  }
}

console.log("| agents | relay | node | posts stored | bytes received | × firehose | unasked |");
console.log("| -----: | ----- | ---- | -----------: | -------------: | ---------: | ------: |");
for (const n of values.agents.split(",").map(Number)) await measure(n);
