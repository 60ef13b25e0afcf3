/**
 * Many MCP sessions posting at once (issue 3): --sessions sessions, each
 * posting --posts `ask`s with distinct texts, directly on the daemon's socket
 * (`connectDaemon`). It checks that every post was stored, none lost and none
 * doubled, three ways: the ids the tool calls returned, the daemon's
 * `post_stored` lines on stdout, and the `feed` tool read with its cursor until
 * exhausted. Posts per second are reported against a baseline measured in the
 * same run: the same number of posts from one session, one after another, on a
 * fresh daemon, so the ratio shows what concurrency gives.
 *
 * Run: deno run -A bench/mcp_concurrency.ts [--sessions 50] [--posts 100]
 * Linux only (reads the daemon's CPU time from /proc).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { callText, connectDaemon, type DaemonSession } from "../src/mcp/socket_client.ts";
import { type RunningWats, startWats, tempDataDir } from "../tests/support/cli.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    sessions: { type: "string", default: "50" },
    posts: { type: "string", default: "100" },
  },
});
const sessions = Number(values.sessions);
const posts = Number(values.posts);
for (const [flag, v] of [["--sessions", sessions], ["--posts", posts]] as const) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`${flag} must be a whole number ≥ 1`);
}
const total = sessions * posts;
const FEED_PAGE = 200;

/** CPU milliseconds (user + system, all threads) a process has used so far. */
function cpuMs(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10; // CLK_TCK is 100 on Linux.
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const v = s[Math.min(s.length - 1, Math.floor(q * s.length))];
  if (v === undefined) throw new Error("error: no samples were taken; run at least one iteration");
  return v;
}

/** One session's plan: which profile posts, and the title and text of each post. */
interface Plan {
  profile: string;
  posts: Array<{ title: string; text: string }>;
}

/** What a phase measured and what the checks found. */
interface PhaseResult {
  name: string;
  seconds: number;
  latencies: number[];
  daemonCpuMs: number;
  okIds: Set<string>;
  errors: string[];
  storedLines: number;
  storedIdsMatch: boolean;
  feedCount: number;
  feedDistinct: number;
  feedMissingIds: number;
  feedMissingTitles: number;
  feedCalls: number;
}

async function startNode(dataDir: string): Promise<RunningWats> {
  const node = startWats(["--data-dir", dataDir, "node", "--agent", "none"], {
    timeoutMs: 600_000,
  });
  await node.waitForLine((l) => l.includes('"event":"started"'));
  return node;
}

/** Reads the whole feed with its cursor: every post id and title, in feed order. */
async function readFeed(session: DaemonSession) {
  const ids: string[] = [];
  const titles: string[] = [];
  let since = 0;
  let calls = 0;
  while (true) {
    const text = await callText(session, "feed", { since, limit: FEED_PAGE });
    calls++;
    const next = text.match(/Next cursor: (\d+)/);
    if (!next) throw new Error(`the feed answer has no next cursor: ${text.slice(0, 200)}`);
    const page = [...text.matchAll(/^----- post ([0-9a-f]{64}) ·/gm)].map((m) => m[1]!);
    for (const m of text.matchAll(/^title: (.*)$/gm)) titles.push(m[1]!);
    if (page.length === 0) break;
    ids.push(...page);
    since = Number(next[1]);
  }
  return { ids, titles, calls };
}

/**
 * Runs `plans` on a fresh daemon, each plan in its own session, all at once,
 * each session posting its posts one after another; then checks what was stored.
 */
async function phase(name: string, plans: Plan[]): Promise<PhaseResult> {
  const dataDir = tempDataDir();
  const node = await startNode(dataDir);
  try {
    const socket = `${dataDir}/mcp.sock`;
    const open = await Promise.all(
      plans.map(async (plan) => ({ plan, session: await connectDaemon(socket, plan.profile) })),
    );
    const latencies: number[] = [];
    const okIds = new Set<string>();
    const errors: string[] = [];
    let duplicates = 0;

    const cpu0 = cpuMs(node.process.pid);
    const t0 = performance.now();
    await Promise.all(open.map(async ({ plan, session }) => {
      for (const post of plan.posts) {
        const start = performance.now();
        try {
          const text = await callText(session, "ask", post);
          latencies.push(performance.now() - start);
          const id = text.match(/\b([0-9a-f]{64})\b/)?.[1];
          if (id === undefined) errors.push(`no post id in the answer: ${text.slice(0, 120)}`);
          else if (okIds.has(id)) duplicates++;
          else okIds.add(id);
        } catch (err) {
          errors.push(err instanceof Error ? err.message : String(err));
        }
      }
    }));
    const seconds = (performance.now() - t0) / 1000;
    const daemonCpuMs = cpuMs(node.process.pid) - cpu0;
    if (duplicates > 0) errors.push(`${duplicates} answers repeated an id already returned`);

    const reader = open[0]?.session;
    if (reader === undefined) {
      throw new Error(`error: phase ${name} has no sessions; give it at least one`);
    }
    const feed = await readFeed(reader);
    // The event lines travel through a pipe: give the last ones a moment to arrive.
    const storedLines = () => node.stdoutLines.filter((l) => l.includes('"event":"post_stored"'));
    for (let waited = 0; storedLines().length < okIds.size && waited < 10_000; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const stored = storedLines().map((l) => JSON.parse(l).id as string);
    const storedSet = new Set(stored);
    const storedIdsMatch = storedSet.size === okIds.size &&
      [...okIds].every((id) => storedSet.has(id));

    const feedSet = new Set(feed.ids);
    const titleSet = new Set(feed.titles);
    const expectedTitles = plans.flatMap((p) => p.posts.map((q) => q.title));
    await Promise.all(open.map(({ session }) => session.close()));
    return {
      name,
      seconds,
      latencies,
      daemonCpuMs,
      okIds,
      errors,
      storedLines: stored.length,
      storedIdsMatch,
      feedCount: feed.ids.length,
      feedDistinct: feedSet.size,
      feedMissingIds: [...okIds].filter((id) => !feedSet.has(id)).length,
      feedMissingTitles: expectedTitles.filter((t) => !titleSet.has(t)).length,
      feedCalls: feed.calls,
    };
  } finally {
    await node.stop();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}

function plansFor(prefix: string, nSessions: number, perSession: number): Plan[] {
  return Array.from({ length: nSessions }, (_, s) => ({
    profile: `${prefix}${String(s).padStart(3, "0")}`,
    posts: Array.from({ length: perSession }, (_, i) => ({
      title: `${prefix} session ${s} post ${i}`,
      text: `concurrency bench: session ${s} of ${nSessions}, post ${i} of ${perSession}`,
    })),
  }));
}

const load0 = Deno.loadavg();
const started = performance.now();
// Baseline: the same number of posts, from one session, one after another.
const sequential = await phase("1 session, sequential", plansFor("seq", 1, total));
const concurrent = await phase(`${sessions} sessions at once`, plansFor("con", sessions, posts));

console.log(
  `MCP concurrency: ${total} asks, ${sessions} sessions x ${posts} posts, each phase on a fresh daemon`,
);
console.log(
  `load average ${load0.map((l) => l.toFixed(2)).join(" ")} before, ${
    Deno.loadavg().map((l) => l.toFixed(2)).join(" ")
  } after; ${Math.round((performance.now() - started) / 1000)} s`,
);
console.log("");
let failed = false;
for (const r of [sequential, concurrent]) {
  const rate = r.okIds.size / r.seconds;
  console.log(`${r.name}:`);
  console.log(
    `  ${r.okIds.size} of ${total} posted in ${r.seconds.toFixed(2)} s: ${rate.toFixed(0)} posts/s`,
  );
  console.log(
    `  per post: p50 ${quantile(r.latencies, 0.5).toFixed(2)} ms, p99 ${
      quantile(r.latencies, 0.99).toFixed(2)
    } ms; daemon CPU ${(r.daemonCpuMs / total).toFixed(2)} ms per post, ${
      (r.daemonCpuMs / 1000 / r.seconds * 100).toFixed(0)
    }% of one core`,
  );
  console.log(
    `  daemon post_stored lines: ${r.storedLines}, same ids as the answers: ${
      r.storedIdsMatch ? "yes" : "NO"
    }`,
  );
  console.log(
    `  feed read in ${r.feedCalls} calls: ${r.feedCount} posts, ${r.feedDistinct} distinct, ` +
      `${r.feedMissingIds} answered ids missing, ${r.feedMissingTitles} titles missing`,
  );
  console.log(
    `  errors: ${r.errors.length}${r.errors.length > 0 ? ` (first: ${r.errors[0]})` : ""}`,
  );
  const ok = r.errors.length === 0 && r.okIds.size === total && r.storedLines === total &&
    r.storedIdsMatch && r.feedCount === total && r.feedDistinct === total &&
    r.feedMissingIds === 0 && r.feedMissingTitles === 0;
  console.log(`  all ${total} stored, none lost or doubled: ${ok ? "yes" : "NO"}`);
  failed ||= !ok;
}
const ratio = (concurrent.okIds.size / concurrent.seconds) /
  (sequential.okIds.size / sequential.seconds);
console.log("");
console.log(`throughput ratio, concurrent / sequential: ${ratio.toFixed(2)}x`);
console.log(
  `p50 latency ratio, concurrent / sequential: ${
    (quantile(concurrent.latencies, 0.5) / quantile(sequential.latencies, 0.5)).toFixed(2)
  }x`,
);
if (failed) throw new Error("posts were lost, doubled or refused: see above");
