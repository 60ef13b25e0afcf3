/**
 * Ingest throughput with signatures checked by the verify pool (one permission-less
 * worker per core) against checking them on the ingest's own thread, in the same
 * run, for both ways events come in:
 *
 * - endpoint: a client in another process publishes --posts events to the relay
 *   endpoint (`serveRelay` + ingest in this process) and waits for every `OK`;
 * - catch-up: a relay sync in this process catches up --posts events from a relay
 *   endpoint served by another process (a fresh store each time), until all are stored.
 *
 * Also the single-thread signature check rate (`verifyEvent`, nostr-wasm) as the
 * reference the issue compared with.
 *
 * Run: deno run -A bench/verify_ingest.ts [--posts 10000] [--rounds 2]
 */

import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { getLogger } from "@logtape/logtape";
import { deriveProfileKey } from "../src/identity/profile_key.ts";
import { createIngest } from "../src/net/ingest.ts";
import { serveRelay } from "../src/net/relay_server.ts";
import { startRelaySync } from "../src/net/relay_sync.ts";
import { createVerifyPool, type VerifyPool } from "../src/net/verify_pool.ts";
import { WsClient } from "../src/net/ws_client.ts";
import { type NostrEvent, signPost } from "../src/posts/post.ts";
import { verifyEvent } from "../src/posts/verify.ts";
import { Store } from "../src/store/store.ts";
import { cyclic } from "./cycle.ts";

const SELF = fileURLToPath(import.meta.url);
const log = getLogger(["wats", "bench"]);
const { values } = parseArgs({
  args: Deno.args,
  options: {
    posts: { type: "string", default: "10000" },
    rounds: { type: "string", default: "2" },
    client: { type: "string" },
    serve: { type: "string" },
    events: { type: "string" },
  },
});

// ---- helper processes -------------------------------------------------------

if (values.client) {
  // Publish every event of --events to --client, wait for every OK, print ms.
  const events = (await Deno.readTextFile(values.events!)).trim().split("\n");
  const ws = new WsClient(values.client);
  await new Promise<void>((r) => ws.onopen = r);
  let oks = 0;
  let bad = 0;
  const done = Promise.withResolvers<void>();
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m[0] !== "OK") return;
    if (m[2] !== true) bad++;
    if (++oks === events.length) done.resolve();
  };
  const t0 = performance.now();
  // At most 500 unanswered, as a relay sync's outbox would have a few hundred.
  let sent = 0;
  while (sent < events.length) {
    while (sent - oks < 500 && sent < events.length) ws.send(`["EVENT",${events[sent++]}]`);
    await new Promise((r) => setTimeout(r, 1));
  }
  await done.promise;
  console.log(JSON.stringify({ ms: performance.now() - t0, bad }));
  ws.close();
  Deno.exit(0);
}

if (values.serve) {
  // Serve the store at --serve as a relay endpoint; print the port; run until killed.
  const store = Store.open(values.serve);
  const ingest = createIngest({
    store,
    events: () => {},
    log,
    now: Date.now,
    maxSkewMs: 600_000,
  });
  const server = await serveRelay({
    hostname: "127.0.0.1",
    port: 0,
    store,
    ingest,
    log,
    maxLimit: 1000,
  });
  console.log(server.port);
  await new Promise(() => {});
}

// ---- the bench ----------------------------------------------------------------

const posts = Number(values.posts);
const rounds = Number(values.rounds);
const dir = await Deno.makeTempDir({ prefix: "wats-verify-bench-" });
const keys = ["alice", "bob", "carol"].map((n) => deriveProfileKey(new Uint8Array(32).fill(5), n));
const now = Math.floor(Date.now() / 1000);
const events: NostrEvent[] = [];
for (let i = 0; i < posts; i++) {
  events.push(
    await signPost({
      kind: "note",
      text: `post ${i}: ${"a wats post of a realistic length. ".repeat(6)}`,
      createdAt: now - 3600 + Math.floor(i * 3600 / posts),
    }, cyclic(keys, i).secret),
  );
}
const eventsFile = `${dir}/events.jsonl`;
await Deno.writeTextFile(eventsFile, events.map((e) => JSON.stringify(e)).join("\n") + "\n");
const sourceStore = `${dir}/source.db`;
{
  const s = Store.open(sourceStore);
  for (let i = 0; i < events.length; i += 500) {
    s.insert(events.slice(i, i + 500), { origin: "remote" });
  }
  s.close();
}

/** Single-thread signature checks per second. */
async function verifyRate(): Promise<number> {
  const t0 = performance.now();
  for (const e of events) await verifyEvent({ ...e });
  return posts / ((performance.now() - t0) / 1000);
}

function helper(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", SELF, ...args],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
}

async function firstLine(child: Deno.ChildProcess): Promise<string> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  while (!buf.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
  }
  reader.releaseLock();
  return buf.trim();
}

let n = 0;
function freshIngest(pool: VerifyPool | undefined) {
  const store = Store.open(`${dir}/target-${n++}.db`);
  const ingest = createIngest({
    store,
    events: () => {},
    log,
    now: Date.now,
    maxSkewMs: 600_000,
    verify: pool?.verify,
  });
  return { store, ingest };
}

/** Events per second through the endpoint. */
async function endpoint(pool: VerifyPool | undefined): Promise<number> {
  const { store, ingest } = freshIngest(pool);
  const server = await serveRelay({ hostname: "127.0.0.1", port: 0, store, ingest, log });
  const client = helper(["--client", `ws://127.0.0.1:${server.port}`, "--events", eventsFile]);
  const r = JSON.parse(await firstLine(client));
  await client.status;
  await server.close();
  await ingest.settle();
  if (r.bad !== 0 || store.count() !== posts) throw new Error(`endpoint: ${JSON.stringify(r)}`);
  store.close();
  return posts / (r.ms / 1000);
}

/** Seconds for a relay sync to catch up every event. */
async function catchUp(pool: VerifyPool | undefined, url: string): Promise<number> {
  const { store, ingest } = freshIngest(pool);
  const t0 = performance.now();
  const sync = startRelaySync({ url, store, ingest, log, maxSkewMs: 600_000, pageLimit: 1000 });
  while (ingest.stored() < posts) await new Promise((r) => setTimeout(r, 5));
  const s = (performance.now() - t0) / 1000;
  await sync.close();
  await ingest.settle();
  store.close();
  return s;
}

const source = helper(["--serve", sourceStore]);
const sourceUrl = `ws://127.0.0.1:${await firstLine(source)}`;
const pool = createVerifyPool();
// Warm both paths up (wasm loaded in each worker and here).
await Promise.all(events.slice(0, 50).map((e) => pool.verify({ ...e })));
const [firstEvent] = events;
if (firstEvent === undefined) throw new Error("error: no events to verify; sign at least one");
await verifyEvent({ ...firstEvent });

const rows: {
  round: number;
  verify: number;
  ep1: number;
  epN: number;
  cu1: number;
  cuN: number;
}[] = [];
for (let round = 1; round <= rounds; round++) {
  const verify = await verifyRate();
  const ep1 = await endpoint(undefined);
  const epN = await endpoint(pool);
  const cu1 = await catchUp(undefined, sourceUrl);
  const cuN = await catchUp(pool, sourceUrl);
  rows.push({ round, verify, ep1, epN, cu1, cuN });
}
pool.close();
source.kill("SIGTERM");
await source.status;
await Deno.remove(dir, { recursive: true });

console.log(
  `${posts} posts, ${navigator.hardwareConcurrency} cores, pool of ${pool.size} workers`,
);
console.log(
  "| round | verify only, 1 thread /s | endpoint inline /s | endpoint pool /s | ratio | catch-up inline s | catch-up pool s | ratio |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const r of rows) {
  console.log(
    `| ${r.round} | ${r.verify.toFixed(0)} | ${r.ep1.toFixed(0)} | ${r.epN.toFixed(0)} | ${
      (r.epN / r.ep1).toFixed(2)
    }x | ${r.cu1.toFixed(2)} | ${r.cuN.toFixed(2)} | ${(r.cu1 / r.cuN).toFixed(2)}x |`,
  );
}
