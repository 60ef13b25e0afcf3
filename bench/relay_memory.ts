/**
 * What clients that never read cost a daemon serving `listen`: peak RSS of a real
 * `wats node --listen` over a store of --posts posts while --clients raw WebSocket
 * clients each ask for all the history they can (every subscription they may open,
 * each with the most filters and the highest limit) and never read a byte, against
 * the same daemon idle just before (the baseline of the same run).
 *
 * Run: deno run -A bench/relay_memory.ts [--clients 200] [--posts 10000] [--seconds 20]
 * Linux only (reads /proc).
 */

import { parseArgs } from "node:util";
import { tempDataDir, watsCommand } from "../tests/support/cli.ts";
import { deriveProfileKey } from "../src/identity/profile_key.ts";
import { NOSTR_KINDS, WATS_KINDS } from "../src/posts/kinds.ts";
import { type NostrEvent, signPost } from "../src/posts/post.ts";
import { Store } from "../src/store/store.ts";
import { lazyClient } from "../tests/net/net_support.ts";
import { splitArgv } from "./argv.ts";
import { cyclic } from "./cycle.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    clients: { type: "string", default: "200" },
    posts: { type: "string", default: "10000" },
    seconds: { type: "string", default: "20" },
    subs: { type: "string", default: "20" },
  },
});
const clients = Number(values.clients);
const posts = Number(values.posts);
const seconds = Number(values.seconds);
const subs = Number(values.subs);

function status(pid: number, field: string): number {
  const m = Deno.readTextFileSync(`/proc/${pid}/status`).match(new RegExp(`${field}:\\s+(\\d+)`));
  return m ? Number(m[1]) / 1024 : NaN;
}

const dir = tempDataDir();
// Posts of every kind from a few authors, spread over a week, about 600 bytes each.
{
  const store = Store.open(`${dir}/store.db`);
  const keys = ["alice", "bob", "carol", "dave"].map((n) =>
    deriveProfileKey(new Uint8Array(32).fill(3), n)
  );
  const now = Math.floor(Date.now() / 1000);
  const batch: NostrEvent[] = [];
  for (let i = 0; i < posts; i++) {
    const kind = WATS_KINDS[i % 3 === 0 ? 0 : 1];
    batch.push(
      await signPost({
        kind,
        text: `post ${i}: ${"lorem ipsum dolor sit amet ".repeat(20)}`,
        createdAt: now - 7 * 86400 + Math.floor(i * 7 * 86400 / posts),
        ...(kind === "ask" ? { title: `question ${i}` } : {}),
      }, cyclic(keys, i).secret),
    );
    if (batch.length === 500) store.insert(batch.splice(0), { origin: "remote" });
  }
  store.insert(batch, { origin: "remote" });
  store.close();
}

const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
const port = (l.addr as Deno.NetAddr).port;
l.close();
const wats = splitArgv(watsCommand());
const child = new Deno.Command(wats.command, {
  args: [...wats.args, "--data-dir", dir, "node", "--listen", `127.0.0.1:${port}`],
  env: { ...Deno.env.toObject(), NO_COLOR: "1", HOME: dir },
  stdin: "null",
  stdout: "piped",
  stderr: "null",
}).spawn();
const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
let out = "";
while (!out.includes('"event":"started"')) {
  const { value, done } = await reader.read();
  if (done) throw new Error(`wats node ended before it started:\n${out}`);
  out += value;
}
(async () => {
  while (!(await reader.read()).done) { /* drain */ }
})().catch(() => {});
const pid = child.pid;

// Idle: let start-up settle, then read RSS for two seconds.
await new Promise((r) => setTimeout(r, 3000));
let idle = 0;
for (let i = 0; i < 20; i++) {
  idle = Math.max(idle, status(pid, "VmRSS"));
  await new Promise((r) => setTimeout(r, 100));
}

// The hostile clients: every subscription they may open, each asking for everything.
const filters = Array.from({ length: 10 }, (_, i) => ({
  kinds: [...NOSTR_KINDS],
  limit: 500,
  until: Math.floor(Date.now() / 1000) - i * 3600 * 12,
}));
const lazies: Awaited<ReturnType<typeof lazyClient>>[] = [];
let refused = 0;
const t0 = performance.now();
let peak = idle;
const sampler = setInterval(() => peak = Math.max(peak, status(pid, "VmRSS")), 50);
for (let c = 0; c < clients; c++) {
  try {
    const lazy = await lazyClient(port);
    lazies.push(lazy);
    for (let s = 0; s < subs; s++) await lazy.send(["REQ", `s${s}`, ...filters]);
  } catch {
    refused++;
  }
}
const connected = performance.now() - t0;
await new Promise((r) => setTimeout(r, seconds * 1000));
clearInterval(sampler);
const hwm = status(pid, "VmHWM");
for (const lazy of lazies) {
  try {
    lazy.close();
  } catch { /* gone */ }
}
child.kill("SIGTERM");
await child.status;
await Deno.remove(dir, { recursive: true });

console.log(
  `${clients} clients (${refused} refused), ${subs} REQs of 10 filters each, never reading, ` +
    `over ${posts} posts; ${(connected / 1000).toFixed(1)} s to connect, then ${seconds} s`,
);
console.log(`  idle RSS            ${idle.toFixed(1)} MiB`);
console.log(`  peak RSS (sampled)  ${peak.toFixed(1)} MiB   (+${(peak - idle).toFixed(1)} MiB)`);
console.log(`  VmHWM               ${hwm.toFixed(1)} MiB   (+${(hwm - idle).toFixed(1)} MiB)`);
console.log(`  ratio               ${(Math.max(peak, hwm) / idle).toFixed(2)}x idle`);
