/**
 * `wats ui` page times with a full store against an empty one, same run:
 * `deno run -A bench/ui_pages.ts [--loads 15]`.
 *
 * Two real daemons (`wats node --agent none`), each with its own `wats ui`:
 * one on an empty data dir (the baseline), one whose store holds 50,000 posts
 * and whose agent dir holds 1,000 runs (index lines and transcripts). Headless
 * Chromium (tests/support/cdp.ts) loads the overview, runs and posts pages
 * `--loads` times each, alternating the two dashboards so that load from other
 * work hits both alike, and reads the Navigation Timing of each load: time to
 * first byte (`responseStart - requestStart`) and full load (`loadEventEnd`).
 * The goal (issue 11): TTFB and full load ≤ 2× empty, for each page.
 *
 * The posts are well-formed but unsigned events written straight into the
 * store before the daemon starts (the store does not verify; store_bench.ts
 * does the same), so setup takes seconds, not minutes.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { startWats, tempDataDir } from "../tests/support/cli.ts";
import { launchChromium } from "../tests/support/cdp.ts";
import { dataPaths } from "../src/config/paths.ts";
import { Store } from "../src/store/store.ts";
import { nostrKindOf, type WatsKind } from "../src/posts/kinds.ts";
import type { NostrEvent } from "../src/posts/post.ts";
import type { RunIndexEntry } from "../src/contracts/runs.ts";
import { cyclic } from "./cycle.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    loads: { type: "string", default: "15" },
    posts: { type: "string", default: "50000" },
    runs: { type: "string", default: "1000" },
  },
});
const LOADS = Number(values.loads);
const POSTS = Number(values.posts);
const RUNS = Number(values.runs);
const PAGES = ["/", "/runs", "/posts"];

const KINDS: WatsKind[] = ["ask", "answer", "clarify", "note", "progress"];
const REPLY_KINDS = KINDS.slice(1);
const AUTHORS = Array.from({ length: 50 }, (_, i) => (i + 1).toString(16).padStart(64, "0"));

/** `n` posts in threads of 50, newest last, dated up to now. */
function fillStore(path: string, n: number): void {
  const store = Store.open(path);
  const now = Math.floor(Date.now() / 1000);
  let batch: NostrEvent[] = [];
  let root = "";
  for (let i = 0; i < n; i++) {
    const id = (i + 1).toString(16).padStart(64, "b");
    const kind = i % 50 === 0 ? "ask" : cyclic(REPLY_KINDS, i);
    const tags = i % 50 === 0 ? [["subject", `question ${i}`]] : [["e", root, "", "root"]];
    if (i % 50 === 0) root = id;
    batch.push({
      id,
      pubkey: cyclic(AUTHORS, i),
      created_at: now - (n - i),
      kind: nostrKindOf(kind),
      tags,
      content: `post ${i} about topic${i % 500}: ${"some words of a plausible length ".repeat(4)}`,
      sig: "0".repeat(128),
    });
    if (batch.length === 1000) {
      store.insert(batch, { origin: "remote" });
      batch = [];
    }
  }
  if (batch.length > 0) store.insert(batch, { origin: "remote" });
  store.close();
}

/** `n` finished runs over the last 30 days: index lines and small transcripts. */
function fillRuns(dir: string, n: number): void {
  const p = dataPaths(dir);
  Deno.mkdirSync(p.runsDir, { recursive: true });
  const now = Date.now();
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const start = now - Math.floor(((n - i) / n) * 29 * 86_400_000);
    const ts = new Date(start).toISOString();
    const id = `${ts.replace(/[-:]/g, "").replace(/\.(\d{3})Z$/, "$1Z")}-${
      i.toString(16).padStart(6, "0")
    }`;
    const entry: RunIndexEntry = {
      id,
      trigger: "events",
      events: 1,
      started_at: ts,
      ended_at: new Date(start + 20_000).toISOString(),
      harness: "claude",
      status: "ok",
      exit_code: 0,
      duration_ms: 20_000,
      turns: 3,
      cost_usd: 0.012,
    };
    lines.push(JSON.stringify(entry));
    Deno.writeTextFileSync(
      `${p.runsDir}/${id}.jsonl`,
      [
        JSON.stringify({
          type: "wats_run",
          id,
          trigger: "events",
          events: ["a".repeat(64)],
          started_at: ts,
          harness: "claude",
        }),
        JSON.stringify({ type: "wats_end", status: "ok", exit_code: 0, duration_ms: 20_000 }),
      ].join("\n") + "\n",
    );
  }
  Deno.writeTextFileSync(p.runsIndex, lines.join("\n") + "\n");
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function dashboard(dir: string) {
  const node = startWats(["--data-dir", dir, "node", "--agent", "none"]);
  await node.waitForLine((l) => l.includes('"event":"started"'), 120_000);
  const port = freePort();
  const ui = startWats(["--data-dir", dir, "ui", "--listen", `127.0.0.1:${port}`], {
    home: node.home,
  });
  const line = await ui.waitForLine((l) => l.includes("/login?token="), 120_000);
  // `base` is the session's path, known once a browser has logged in.
  return { node, ui, base: "", login: line.match(/http:\/\/\S+/)![0] };
}

const emptyDir = tempDataDir();
const fullDir = tempDataDir();
const setupStart = performance.now();
fillStore(dataPaths(fullDir).store, POSTS);
fillRuns(fullDir, RUNS);
const setupS = ((performance.now() - setupStart) / 1000).toFixed(1);

const empty = await dashboard(emptyDir);
const full = await dashboard(fullDir);
// One browser per dashboard: each keeps its own session cookie.
const browsers = { empty: await launchChromium(), full: await launchChromium() };
type Sample = { ttfb: number; load: number };
const samples = PAGES.map((path) => ({ path, empty: [] as Sample[], full: [] as Sample[] }));
try {
  for (const [d, b] of [[empty, browsers.empty], [full, browsers.full]] as const) {
    await b.page.goto(d.login);
    d.base = (await b.page.evaluate<string>("location.href")).replace(/\/$/, "");
  }
  for (let i = 0; i < LOADS + 2; i++) {
    for (const pageSamples of samples) {
      const path = pageSamples.path;
      for (const which of ["empty", "full"] as const) {
        const d = which === "empty" ? empty : full;
        const page = browsers[which].page;
        await page.goto(`${d.base}${path}`);
        const t = await page.evaluate<Sample>(
          "(() => { const n = performance.getEntriesByType('navigation')[0]; return { ttfb: n.responseStart - n.requestStart, load: n.loadEventEnd - n.startTime }; })()",
        );
        // The first two rounds warm caches and JIT: not counted.
        if (i >= 2) pageSamples[which].push(t);
      }
    }
  }
} finally {
  await browsers.empty.close();
  await browsers.full.close();
  for (const d of [empty, full]) {
    await d.ui.stop();
    await d.node.stop();
  }
  for (const dir of [emptyDir, fullDir]) await Deno.remove(dir, { recursive: true });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s[Math.floor(s.length / 2)];
  if (m === undefined) throw new Error("error: no samples were taken; run at least one iteration");
  return m;
}

console.log(
  `\nwats ui pages: ${POSTS} posts and ${RUNS} runs vs an empty store, ${LOADS} loads each (median ms); setup ${setupS} s\n`,
);
console.log("| page | TTFB empty | TTFB full | ratio | load empty | load full | ratio |");
console.log("| ---- | ---------- | --------- | ----- | ---------- | --------- | ----- |");
let met = true;
for (const { path, empty: e, full: f } of samples) {
  const te = median(e.map((s) => s.ttfb));
  const tf = median(f.map((s) => s.ttfb));
  const le = median(e.map((s) => s.load));
  const lf = median(f.map((s) => s.load));
  if (lf / le > 2 || tf / te > 2) met = false;
  console.log(
    `| ${path} | ${te.toFixed(1)} | ${tf.toFixed(1)} | ${(tf / te).toFixed(2)}x | ${
      le.toFixed(1)
    } | ${lf.toFixed(1)} | ${(lf / le).toFixed(2)}x |`,
  );
}
console.log(`\nGoal "TTFB and full load ≤ 2× empty" for every page: ${met ? "met" : "NOT met"}`);
