/**
 * A node's cost as its store grows (issue 33), at each size of --sizes, on one
 * store filled size after size:
 *
 * - ingest: CPU of this process (the node: relay endpoint, ingest with in-thread
 *   signature checks, the interest recomputed on each batch that brings a new ask)
 *   per post, while a client in another process publishes --ingest signed asks, over
 *   the CPU of one signature check measured on the same posts in the same run, just
 *   before and just after (the mean): the verify floor;
 * - search: p50 / p95 of `store.search` (what the MCP `search` runs) for common
 *   words, a page of 20;
 * - hostile REQs on the relay endpoint: milliseconds to EOSE for an unknown author,
 *   1000 unknown authors, a popular tag with a kind it never has, and a big limit
 *   (to its first EVENT);
 * - the interest computation, the runner's open-threads read and `status`'s count;
 * - with --catchup N (a size of --sizes): a fresh node with the default settings
 *   (`agent.open_asks` on) catching up from this store over the relay endpoint;
 *   how many of the 662 posts that concern it it stored.
 *
 * The node is a fresh one (one profile that has posted nothing: the case that made
 * the interest walk the whole table). Filler posts are well-formed but unsigned
 * (the store trusts what it is given; nothing sends them to a verifying node); the
 * posts that are published or caught up are signed.
 *
 * Run: deno run -A bench/store_scale.ts [--sizes 10000,100000,1000000]
 *        [--ingest 2000] [--catchup 100000]
 *
 * @module
 */

import process from "node:process";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { getLogger } from "@logtape/logtape";
import { initNostrWasm } from "nostr-wasm";
import { deriveProfileKey } from "../src/identity/profile_key.ts";
import { createIngest } from "../src/net/ingest.ts";
import { computeInterest, watchInterest } from "../src/net/interest_source.ts";
import { startNetwork } from "../src/net/network.ts";
import { serveRelay } from "../src/net/relay_server.ts";
import { WsClient } from "../src/net/ws_client.ts";
import { nostrKindOf, type WatsKind } from "../src/posts/kinds.ts";
import { buildPost, type NostrEvent, type PostDraft } from "../src/posts/post.ts";
import { verifyEvent } from "../src/posts/verify.ts";
import { Store } from "../src/store/store.ts";
import { cyclic } from "./cycle.ts";

const log = getLogger(["wats", "bench"]);
const { values } = parseArgs({
  args: Deno.args,
  options: {
    sizes: { type: "string", default: "10000,100000" },
    ingest: { type: "string", default: "2000" },
    catchup: { type: "string", default: "" },
  },
});
const SIZES = values.sizes.split(",").map(Number);
const INGEST = Number(values.ingest);
const CATCHUP = values.catchup === "" ? undefined : Number(values.catchup);
const VERIFY_HELPER = fileURLToPath(new URL("./verify_ingest.ts", import.meta.url));

const dir = await Deno.makeTempDir({ prefix: "wats-store-scale-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
const NOW = Math.floor(Date.now() / 1000);
const nw = await initNostrWasm();

const me = deriveProfileKey(new Uint8Array(32).fill(7), "me");
const others = ["alice", "bob", "carol", "dave"].map((n) =>
  deriveProfileKey(new Uint8Array(32).fill(8), n)
);
const CAPS = ["deno"];

// ---- filler: threads of ten, fifty authors, common words --------------------------

const AUTHORS = Array.from({ length: 50 }, (_, i) => (i + 1).toString(16).padStart(64, "c"));
const WORDS = ["deploy", "build", "test", "relay", "store", "agent", "review", "docs"];
const FILLER_KINDS: WatsKind[] = ["answer", "claim", "progress", "note", "react"];
let fillerCount = 0;

function fillerText(i: number): string {
  return `post ${i}: the ${cyclic(WORDS, i)} of the ${cyclic(WORDS, i * 7 + 3)} needs a ` +
    `${cyclic(WORDS, i * 3 + 1)} before the release; see the thread for the details.`;
}

function filler(n: number): NostrEvent[] {
  const out: NostrEvent[] = [];
  const hexId = (k: number) => "f" + k.toString(16).padStart(63, "0");
  while (out.length < n) {
    const i = fillerCount++;
    const at = NOW - 40 * 86_400 + Math.floor(i / 4);
    const rootIndex = i - (i % 10);
    const author = cyclic(AUTHORS, i * 13);
    const tags: string[][] = i % 10 === 0
      ? []
      : [["e", hexId(rootIndex), "", "root"], ["p", cyclic(AUTHORS, rootIndex * 13)]];
    out.push({
      id: hexId(i),
      pubkey: author,
      created_at: at,
      kind: nostrKindOf(i % 10 === 0 ? "note" : cyclic(FILLER_KINDS, i)),
      tags,
      content: fillerText(i),
      sig: "0".repeat(128),
    });
  }
  return out;
}

function signed(
  who: (typeof others)[number],
  draft: Omit<PostDraft, "createdAt"> & { at: number },
) {
  return buildPost({ ...draft, createdAt: draft.at }, who.secret);
}

// ---- what concerns the node: 662 posts, signed ------------------------------------

/** Asks addressed to the node (20, 68 replies) and naming its cap (40, 524 replies), and 10 by it. */
function concerning(): NostrEvent[] {
  const out: NostrEvent[] = [];
  let at = NOW - 30 * 86_400;
  const thread = (ask: NostrEvent, replies: number) => {
    out.push(ask);
    for (let i = 0; i < replies; i++) {
      out.push(signed(cyclic(others, i + 1), {
        kind: i % 4 === 0 ? "claim" : "answer",
        text: `reply ${i} to ${ask.content}`,
        at: at++,
        root: ask.id,
        parent: ask.id,
        parentAuthor: ask.pubkey,
      }));
    }
  };
  for (let i = 0; i < 20; i++) {
    thread(
      signed(cyclic(others, i), {
        kind: "ask",
        text: `for me ${i}`,
        at: at++,
        mentions: [me.pubkey],
      }),
      i < 8 ? 4 : 3,
    );
  }
  for (let i = 0; i < 40; i++) {
    thread(
      signed(cyclic(others, i), { kind: "ask", text: `deno ${i}`, at: at++, caps: CAPS }),
      i < 4 ? 14 : 13,
    );
  }
  for (let i = 0; i < 10; i++) {
    out.push(buildPost({ kind: "note", text: `my note ${i}`, createdAt: at++ }, me.secret));
  }
  return out;
}

// ---- helpers -----------------------------------------------------------------------

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

function timed<T>(f: () => T): [T, number] {
  const t0 = performance.now();
  const r = f();
  return [r, performance.now() - t0];
}

/**
 * The median wall and CPU milliseconds of five runs of `f` after one to warm up
 * (statements prepared, pages cached). On a shared machine the wall time is
 * mostly waiting for a core; the CPU time is the query's own.
 */
function median(f: () => unknown): { wall: number; cpu: number } {
  f();
  const runs = Array.from({ length: 5 }, () => {
    const c0 = cpuMs();
    const [, wall] = timed(f);
    return { wall, cpu: cpuMs() - c0 };
  });
  return {
    wall: +quantile(runs.map((r) => r.wall), 0.5).toFixed(2),
    cpu: +quantile(runs.map((r) => r.cpu), 0.5).toFixed(2),
  };
}

/** Sends one REQ and resolves with ms to its first message and to its EOSE (or CLOSED). */
function reqTiming(url: string, filter: Record<string, unknown>) {
  return new Promise<{ first: number; end: number; events: number; closed?: string }>(
    (resolve, reject) => {
      const ws = new WsClient(url);
      let t0 = 0, first = 0, events = 0;
      ws.onopen = () => {
        t0 = performance.now();
        ws.send(JSON.stringify(["REQ", "h", filter]));
      };
      ws.onerror = (e) => reject(new Error(e.message));
      ws.onmessage = (e) => {
        const m = JSON.parse(e.data);
        if (first === 0) first = performance.now() - t0;
        if (m[0] === "EVENT") events++;
        if (m[0] === "EOSE" || m[0] === "CLOSED") {
          const end = performance.now() - t0;
          ws.close();
          resolve({ first, end, events, ...(m[0] === "CLOSED" ? { closed: m[2] } : {}) });
        }
      };
    },
  );
}

async function waitUntil(check: () => boolean, limitMs: number): Promise<boolean> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > limitMs) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

// ---- the run -----------------------------------------------------------------------

const store = Store.open(`${dir}/node.db`);
store.recordProfile("me", me.pubkey);
const settings = { caps: CAPS, openAsks: true, haltAccept: [] };
const concern = concerning();
let concernStored = false;
const results: Record<string, unknown>[] = [];

for (const size of SIZES) {
  // Fill to `size` (the concerning posts go in once, at the first size).
  const fillStart = performance.now();
  if (!concernStored) {
    store.insert(concern, { origin: "remote" });
    concernStored = true;
  }
  while (store.count() < size) {
    store.insert(filler(Math.min(2000, size - store.count())), { origin: "remote" });
  }
  const fillS = (performance.now() - fillStart) / 1000;

  // Queries of the node, one at a time.
  const interestMs = median(() => computeInterest(store, settings));
  // As src/node/agent_runner.ts reads them for src/runner/open_threads.ts.
  const openThreadsMs = median(() => {
    for (const e of store.query({ authors: [me.pubkey], limit: 50 })) {
      store.get(e.id);
      store.threadNewest(e.tags.find((t) => t[0] === "e")?.[1] ?? e.id, 1);
    }
  });
  const countMs = median(() => store.count());
  store.search(WORDS[0]!, { limit: 20, plain: true });
  const searchMs: number[] = [];
  const searchCpu: number[] = [];
  for (let i = 0; i < 24; i++) {
    // One word, then two (every word is required): common words, each in ~35% of posts.
    const query = i % 2 === 0 ? cyclic(WORDS, i) : `${cyclic(WORDS, i)} ${cyclic(WORDS, i + 3)}`;
    const c0 = cpuMs();
    searchMs.push(timed(() => store.search(query, { limit: 20, plain: true }))[1]);
    searchCpu.push(cpuMs() - c0);
  }

  // The node: its relay endpoint and ingest, the interest watched as the daemon does.
  const ingest = createIngest({ store, events: () => {}, log, now: Date.now, maxSkewMs: 600_000 });
  const server = await serveRelay({ hostname: "127.0.0.1", port: 0, store, ingest, log });
  const url = `ws://127.0.0.1:${server.port}`;
  let recomputed = 0;
  const source = watchInterest(store, settings, () => recomputed++);

  const hostile: Record<string, unknown> = {};
  const popular = cyclic(AUTHORS, 0);
  for (
    const [name, filter] of [
      ["unknown author", { authors: ["9".repeat(64)] }],
      ["1000 unknown authors", {
        authors: Array.from({ length: 1000 }, (_, i) => i.toString(16).padStart(64, "9")),
      }],
      ["popular #p, a kind it never has", { "#p": [popular], kinds: [nostrKindOf("halt")] }],
      ["limit 10000", { limit: 10_000 }],
    ] as const
  ) {
    await reqTiming(url, filter); // statements prepared, pages cached
    const r = await reqTiming(url, filter);
    hostile[name] = r.closed ? `refused in ${r.end.toFixed(1)} ms (${r.closed})` : {
      firstMs: +r.first.toFixed(1),
      eoseMs: +r.end.toFixed(1),
      events: r.events,
    };
  }

  // Ingest: signed asks (each batch brings a new one: the interest is recomputed).
  const posts: NostrEvent[] = [];
  const secrets = Array.from({ length: 8 }, () => nw.generateSecretKey());
  for (let i = 0; i < INGEST; i++) {
    const e = {
      kind: nostrKindOf("ask"),
      created_at: NOW - 60 + Math.floor(i * 60 / INGEST),
      tags: [["t", "cap:rust"]],
      content: `ingest ${size} ${i}: ${fillerText(i)}`,
    } as NostrEvent;
    nw.finalizeEvent(e, cyclic(secrets, i));
    posts.push(e);
  }
  // Warmed up first; the lower of two passes (the check's own cost, not a hiccup).
  for (const e of posts.slice(0, 200)) await verifyEvent({ ...e });
  const verifyPass = async () => {
    const c0 = cpuMs();
    for (const e of posts) await verifyEvent({ ...e });
    return (cpuMs() - c0) / posts.length;
  };
  const verifyBefore = Math.min(await verifyPass(), await verifyPass());
  const file = `${dir}/ingest-${size}.jsonl`;
  await Deno.writeTextFile(file, posts.map((e) => JSON.stringify(e)).join("\n") + "\n");
  const before = recomputed;
  const c1 = cpuMs();
  const client = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", VERIFY_HELPER, "--client", url, "--events", file],
    stderr: "inherit",
  }).output();
  const ingestCpu = (cpuMs() - c1) / posts.length;
  // Checked again right after: the floor is the mean of both, so a change of load
  // during the run weighs on both sides of the ratio.
  const verifyCpu = (verifyBefore + Math.min(await verifyPass(), await verifyPass())) / 2;
  const sent = JSON.parse(new TextDecoder().decode(client.stdout)) as { ms: number; bad: number };

  let catchUp: Record<string, unknown> | undefined;
  if (size === CATCHUP) catchUp = await catchUpFrom(url);

  source.stop();
  await server.close();
  const row = {
    size,
    fillS: +fillS.toFixed(1),
    verifyCpuMs: +verifyCpu.toFixed(3),
    ingestCpuMsPerPost: +ingestCpu.toFixed(3),
    ingestOverVerify: +(ingestCpu / verifyCpu).toFixed(2),
    ingestPostsPerS: Math.round(posts.length / (sent.ms / 1000)),
    refusedPosts: sent.bad,
    interestRecomputes: recomputed - before,
    searchP50Ms: +quantile(searchMs, 0.5).toFixed(1),
    searchP95Ms: +quantile(searchMs, 0.95).toFixed(1),
    searchCpuP95Ms: +quantile(searchCpu, 0.95).toFixed(1),
    interestMs,
    openThreadsMs,
    countMs,
    hostile,
    ...(catchUp ? { catchUp } : {}),
  };
  results.push(row);
  console.log(JSON.stringify(row));
}

/** A fresh node with the default settings catching up from the endpoint at `url`. */
async function catchUpFrom(url: string): Promise<Record<string, unknown>> {
  const b = Store.open(`${dir}/fresh.db`, { relays: [url] });
  b.recordProfile("me", me.pubkey);
  const src = watchInterest(b, settings, (next) => net.setInterest(next));
  const t0 = performance.now();
  const net = await startNetwork({
    settings: { infra: [url], listen: "", maxSkewMs: 600_000 },
    store: b,
    events: () => {},
    log,
    verifyWorkers: 0,
    interest: src.current(),
  });
  const got = () => concern.filter((e) => b.has(e.id)).length;
  const all = await waitUntil(
    () => net.status().relays[0]?.caughtUp === true && got() === concern.length,
    300_000,
  );
  const seconds = (performance.now() - t0) / 1000;
  const out = {
    concerning: `${got()} of ${concern.length}`,
    stored: b.count(),
    seconds: +seconds.toFixed(1),
    complete: all,
  };
  src.stop();
  await net.close();
  b.close();
  return out;
}

const base = results[0];
console.log(
  "\nsize      ingest/verify  vs first size  search p95 (cpu)  unknown-author REQ  interest cpu  open threads cpu",
);
for (const r of results) {
  const h = (r.hostile as Record<string, { eoseMs?: number }>)["unknown author"];
  const flat = base ? (r.ingestOverVerify as number) / (base.ingestOverVerify as number) : 1;
  const cells = [
    r.size,
    r.ingestOverVerify,
    flat.toFixed(2),
    `${r.searchP95Ms} (${r.searchCpuP95Ms})`,
    h?.eoseMs,
    (r.interestMs as { cpu: number }).cpu,
    (r.openThreadsMs as { cpu: number }).cpu,
  ];
  const widths = [9, 14, 14, 17, 19, 13, 0];
  console.log(cells.map((c, i) => String(c).padEnd(widths[i]!)).join(" "));
}
store.close();
