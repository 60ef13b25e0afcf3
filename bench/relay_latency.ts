/**
 * Publish → receipt between two real nodes: B (`--infra ws://A`) posts a note
 * through MCP (`mcp.sock`), its relay sync publishes it from the outbox, and A
 * stores it (`post_stored` on A's stdout). Each post is sent alone (a pause before
 * it), for 200-byte and 4 KiB texts; p50 and p90 in ms.
 *
 * The baseline of the same run is an older wats checkout (`--before DIR`, e.g. the
 * commit before the relay syncs stopped using Deno's WebSocket client), run the
 * same way, interleaved post by post:
 *
 *   git archive <commit> | (mkdir -p /tmp/wats-before && tar -x -C /tmp/wats-before)
 *   deno run -A bench/relay_latency.ts --before /tmp/wats-before [--posts 30]
 *
 * Without `--before` only this tree is measured.
 */

import { parseArgs } from "node:util";
import { connectDaemon, type DaemonSession } from "../src/mcp/socket_client.ts";
import { LAUNCHER_FLAGS } from "../src/cli/permissions.ts";
import { DENO_JSON, denoDir, MAIN_TS, tempDataDir } from "../tests/support/cli.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    posts: { type: "string", default: "30" },
    before: { type: "string" },
    "pause-ms": { type: "string", default: "100" },
  },
});
const posts = Number(values.posts);
const pauseMs = Number(values["pause-ms"]);

interface Node {
  child: Deno.ChildProcess;
  dir: string;
  lines: string[];
  waiters: (() => void)[];
}

function startNode(main: string, config: string, args: string[]): Node {
  const dir = tempDataDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...LAUNCHER_FLAGS, "--quiet", "--config", config, main, "node", ...args],
    env: {
      ...Deno.env.toObject(),
      NO_COLOR: "1",
      HOME: dir,
      DENO_DIR: denoDir(),
      WATS_DATA_DIR: dir,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const node: Node = { child, dir, lines: [], waiters: [] };
  (async () => {
    let rest = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      rest += chunk;
      let nl;
      while ((nl = rest.indexOf("\n")) >= 0) {
        node.lines.push(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
      }
      for (const w of node.waiters.splice(0)) w();
    }
  })().catch(() => {});
  return node;
}

async function waitLine(node: Node, match: (l: string) => boolean, from = 0): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (let i = from;; i++) {
    while (i >= node.lines.length) {
      if (Date.now() > deadline) throw new Error("no such line within 60 s");
      await new Promise<void>((r) => node.waiters.push(r));
    }
    if (match(node.lines[i]!)) return i;
  }
}

interface Pair {
  name: string;
  a: Node;
  b: Node;
  session: DaemonSession;
}

async function startPair(name: string, main: string, config: string): Promise<Pair> {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const a = startNode(main, config, ["--agent", "none", "--listen", `127.0.0.1:${port}`]);
  await waitLine(a, (x) => x.includes('"event":"started"'));
  const b = startNode(main, config, ["--agent", "none", "--infra", `ws://127.0.0.1:${port}`]);
  await waitLine(b, (x) => x.includes('"event":"started"'));
  const session = await connectDaemon(`${b.dir}/mcp.sock`, "bench");
  const pair = { name, a, b, session };
  await roundTrip(pair, "warm-up"); // also waits until B is connected to A
  return pair;
}

/** Posts `text` on B and resolves with ms until A stores it. */
async function roundTrip(p: Pair, text: string): Promise<number> {
  const from = p.a.lines.length;
  const t0 = performance.now();
  const r = await p.session.client.callTool({ name: "post", arguments: { kind: "note", text } });
  const out = (r.content as { text?: string }[]).map((c) => c.text ?? "").join("\n");
  const id = out.match(/\b([0-9a-f]{64})\b/)?.[1];
  if (r.isError || !id) throw new Error(`note failed: ${out}`);
  await waitLine(p.a, (x) => x.includes('"event":"post_stored"') && x.includes(id), from);
  return performance.now() - t0;
}

async function stopPair(p: Pair) {
  await p.session.close();
  for (const n of [p.a, p.b]) {
    try {
      n.child.kill("SIGTERM");
    } catch { /* gone */ }
    await n.child.status;
    await Deno.remove(n.dir, { recursive: true });
  }
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const v = s[Math.min(s.length - 1, Math.floor(s.length * p))];
  if (v === undefined) throw new Error("error: no samples were taken; run at least one iteration");
  return v;
}

const pairs = [await startPair("this tree", MAIN_TS, DENO_JSON)];
if (values.before) {
  pairs.push(await startPair("before", `${values.before}/main.ts`, `${values.before}/deno.json`));
}
const sizes = [200, 4096];
const times = new Map<string, number[]>();
try {
  for (let i = 0; i < posts; i++) {
    for (const size of sizes) {
      for (const p of pairs) {
        await new Promise((r) => setTimeout(r, pauseMs));
        const text = `${i} `.padEnd(size, "lorem ipsum ");
        const key = `${p.name} ${size}`;
        times.set(key, [...(times.get(key) ?? []), await roundTrip(p, text)]);
      }
    }
  }
} finally {
  for (const p of pairs) await stopPair(p);
}
console.log(`publish → receipt, B → A over the relay endpoint, ${posts} posts each (ms)`);
console.log("| variant | text | p50 | p90 |");
console.log("| --- | --- | --- | --- |");
for (const [key, xs] of times) {
  const [name, size] = [key.slice(0, key.lastIndexOf(" ")), key.slice(key.lastIndexOf(" ") + 1)];
  console.log(`| ${name} | ${size} B | ${pct(xs, 0.5).toFixed(2)} | ${pct(xs, 0.9).toFixed(2)} |`);
}
if (pairs.length === 2) {
  for (const size of sizes) {
    const now = pct(times.get(`this tree ${size}`)!, 0.5);
    const was = pct(times.get(`before ${size}`)!, 0.5);
    console.log(`${size} B: before/after p50 ratio ${(was / now).toFixed(2)}x`);
  }
}
