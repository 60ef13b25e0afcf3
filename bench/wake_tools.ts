/**
 * Does a run start with its tools under load (issue 27, item 1's check): a real daemon with
 * `agent.runtime = claude` driving the pinned Claude Code (.cache/clis) against the scripted mock
 * model (tests/support/mock_anthropic.ts, the e2e tests' `answeringMock`), beside `--hogs` CPU
 * hogs (`yes > /dev/null`). `--wakes` asks, one after another, each posted by another profile of
 * the node through a real `wats mcp` and each waking one run; the next ask goes once that run
 * ended.
 *
 * Counted per variant, from the runs' transcripts (`<data>/agent/runs/<id>.jsonl`: the CLI's own
 * `system/init` line) and from the mock's requests:
 *
 * - runs whose `system/init` shows the wats server not `connected` (`pending`, `failed`);
 * - model requests that offered no `mcp__wats__*` tool (the agent could not have acted);
 * - asks answered (an `answer` tool call that returned without an error, per parent).
 *
 * Variants, one daemon each, same hogs, same mock, one after the other. In both the `claude` first
 * on the daemon's PATH is a small shell wrapper that logs when it starts and execs the pinned CLI
 * (so the bench also reads the CLI's start → its first model request: without the wait, all the
 * time `wats mcp` has to connect):
 *
 * - `wait`  — this tree as it runs: the harness sets `MCP_CONNECTION_NONBLOCKING=false`
 *   (src/runner/runtimes/claude/harness.ts, `MCP_CONNECT_WAIT_ENV`);
 * - `nowait` — the same tree and daemon, but the wrapper unsets `MCP_CONNECTION_NONBLOCKING`: the
 *   run environment of before 406f788 (which still set `MCP_CONNECT_TIMEOUT_MS`, read only on the
 *   waiting path), everything else equal — retries included (src/runner/retry.ts), so a run
 *   without tools is tried again 30 s later; after the last wake the bench waits up to
 *   `--drain-s` for those tries and reports the asks answered in the end. (Commit 109f9d3 already
 *   has the variable; c388885 is the last without it.)
 *
 * Run: deno run -A bench/wake_tools.ts [--wakes 20] [--hogs 3] [--variants wait,nowait] [--drain-s 150]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { CLIS_DIR } from "../tests/support/clis.ts";
import { startWats } from "../tests/support/cli.ts";
import { closing, eventOf, jsonLines } from "../tests/support/rig.ts";
import {
  agentEnv,
  answeringMock,
  call,
  eventIds,
  idIn,
  mcpClient,
} from "../tests/support/swarm.ts";
import { type MockAnthropic, promptContains } from "../tests/support/mock_anthropic.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    wakes: { type: "string", default: "20" },
    hogs: { type: "string", default: "3" },
    variants: { type: "string", default: "wait,nowait" },
    "drain-s": { type: "string", default: "150" },
  },
});
const WAKES = Number(values.wakes);
const HOGS = Number(values.hogs);
const DRAIN_MS = Number(values["drain-s"]) * 1000;
const VARIANTS = values.variants.split(",");
if (!(WAKES >= 1) || !(HOGS >= 0) || VARIANTS.some((v) => v !== "wait" && v !== "nowait")) {
  throw new Error("error: --wakes takes a number ≥ 1, --hogs ≥ 0, --variants wait and/or nowait");
}

const CLAUDE = `${CLIS_DIR}/node_modules/.bin/claude`;
try {
  Deno.statSync(CLAUDE);
} catch {
  throw new Error(
    `error: no pinned Claude Code at ${CLAUDE}: run deno run -A tests/support/prepare.ts first`,
  );
}

/** What one variant's run gave. */
interface Outcome {
  variant: string;
  asks: number;
  runs: number;
  /** Runs whose `system/init` showed the wats server other than `connected`, by status. */
  notConnected: Record<string, number>;
  /** Model requests that offered no wats tool. */
  requestsWithoutTools: number;
  requests: number;
  /** Asks answered while the wakes went on (first runs and any tries between). */
  answeredDuringWakes: number;
  /** Asks answered at the end, after the drain. */
  answered: number;
  /** Runs the runner marked as not able to act (their `retry` field). */
  retried: number;
  /** Per ask, ms from the ask's tool answer to its first run's end. */
  firstRunMs: number[];
  /** Per run, ms from the CLI's start (the wrapper's) to its first model request. */
  toFirstTurn: number[];
  seconds: number;
}

/** The parents of the `answer` calls whose results came back without an error. */
function answeredParents(mock: MockAnthropic, since: number): Set<string> {
  const out = new Set<string>();
  for (const r of mock.messages().slice(since)) {
    const msgs = r.body?.messages ?? [];
    const uses = new Map<string, string>();
    for (const m of msgs) {
      if (m.role !== "assistant" || typeof m.content === "string") continue;
      for (const b of m.content) {
        if (b.type === "tool_use" && b.name === "mcp__wats__post" && b.id) {
          uses.set(b.id, String((b.input as { parent?: string }).parent));
        }
      }
    }
    for (const m of msgs) {
      if (m.role !== "user" || typeof m.content === "string") continue;
      for (const b of m.content) {
        const parent = uses.get(b.tool_use_id ?? "");
        if (b.type === "tool_result" && parent && !b.is_error) out.add(parent);
      }
    }
  }
  return out;
}

async function runVariant(variant: string, mock: MockAnthropic): Promise<Outcome> {
  const bin = Deno.makeTempDirSync({ prefix: "wats-waketools-bin-" });
  const since = mock.messages().length;
  const t0 = Date.now();
  try {
    // Both variants start the CLI through the same wrapper, which logs when it starts; nowait's
    // also unsets the variable.
    Deno.writeTextFileSync(
      `${bin}/claude`,
      "#!/bin/sh\n" + (variant === "nowait" ? "unset MCP_CONNECTION_NONBLOCKING\n" : "") +
        `echo "$(date +%s%3N) $*" >> ${JSON.stringify(`${bin}/used`)}\n` +
        `exec ${JSON.stringify(CLAUDE)} "$@"\n`,
    );
    Deno.chmodSync(`${bin}/claude`, 0o755);
    const env = { PATH: `${bin}:${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}` };
    // When each run's first model request arrived (the mock keeps no times): the CLI's start to
    // its first turn, which without the wait is all the time the MCP server has to connect.
    const firstRequestAt = new Map<string, number>();
    let polled = since;
    const poller = setInterval(() => {
      const all = mock.messages();
      for (; polled < all.length; polled++) {
        const body = all[polled]!.body;
        if (body === undefined || !promptContains("New events (")(body)) continue;
        // By the events the prompt lists: the CLI marks the newest blocks for caching, so a run's
        // later requests carry its first message changed.
        const key = eventIds(body).join(",");
        if (!firstRequestAt.has(key)) firstRequestAt.set(key, Date.now());
      }
    }, 10);
    // The e2e rig's node has a 120 s safety net; 20 runs under three hogs take longer.
    const dataDir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-waketools-data-" }));
    const home = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-waketools-home-" }));
    await using _dirs = {
      [Symbol.asyncDispose]: async () => {
        for (const d of [dataDir, home]) await Deno.remove(d, { recursive: true }).catch(() => {});
      },
    };
    await using node = startWats(
      ["--data-dir", dataDir, "node", "--agent", "claude", "--agent-profile", "helper"],
      {
        home,
        env: agentEnv(mock, {
          WATS_AGENT_IGNORE_LOCAL: "false",
          WATS_AGENT_MAX_RUNS_PER_HOUR: "1000",
          ...env,
        }),
        timeoutMs: 3_600_000,
      },
    );
    const rig = {
      dataDir,
      waitEvent: async (name: string, where: (e: Record<string, unknown>) => boolean) => {
        const line = await node.waitForLine((l) => {
          const e = eventOf(l);
          return e?.event === name && where(e);
        }, 300_000);
        return eventOf(line)!;
      },
      events: (name: string) =>
        node.stdoutLines.map(eventOf).filter((e) => e?.event === name) as Record<
          string,
          unknown
        >[],
    };
    await rig.waitEvent("started", () => true);
    await using alice = closing(await mcpClient(dataDir, "alice", home));
    const asks: string[] = [];
    const firstRunMs: number[] = [];
    for (let i = 1; i <= WAKES; i++) {
      const sent = Date.now();
      const id = idIn(
        await call(alice, "ask", {
          title: `Logs ${i}`,
          text: `Which log rotation should host ${i} use? (${crypto.randomUUID()})`,
        }),
      );
      asks.push(id);
      await rig.waitEvent("run_ended", (e) => headerOf(dataDir, String(e.run)).events.includes(id));
      firstRunMs.push(Date.now() - sent);
      console.error(
        `  ${variant}: wake ${i}/${WAKES}, ${((Date.now() - sent) / 1000).toFixed(1)} s`,
      );
    }
    const answeredDuringWakes = asks.filter((a) => answeredParents(mock, since).has(a)).length;
    const drainUntil = Date.now() + DRAIN_MS;
    while (
      Date.now() < drainUntil && asks.some((a) => !answeredParents(mock, since).has(a))
    ) await new Promise((r) => setTimeout(r, 500));
    // A try that started inside the drain ends before its transcript is read.
    while (rig.events("run_started").length > rig.events("run_ended").length) {
      await new Promise((r) => setTimeout(r, 250));
    }
    const done = answeredParents(mock, since);
    const runs = rig.events("run_ended");
    const notConnected: Record<string, number> = {};
    for (const r of runs) {
      const status = watsStatus(rig.dataDir, String(r.run));
      if (status !== "connected") notConnected[status] = (notConnected[status] ?? 0) + 1;
    }
    const reqs = mock.messages().slice(since);
    clearInterval(poller);
    // The wrapper logs each start: every run must have gone through it, or the variant is void.
    let spawns: number[] = [];
    try {
      spawns = Deno.readTextFileSync(`${bin}/used`).split("\n").filter((l) => l.includes(" -p "))
        .map((l) => Number(l.split(" ")[0]));
    } catch { /* never started */ }
    if (spawns.length < runs.length) {
      throw new Error(
        `error: ${runs.length} runs but the wrapper started ${spawns.length}: the daemon did ` +
          "not take claude from the bench's PATH, so the variant measured nothing",
      );
    }
    // Runs go one at a time here: the n-th start made the n-th run's first request.
    const firsts = [...firstRequestAt.values()];
    const toFirstTurn = spawns.slice(0, firsts.length).map((at, i) => firsts[i]! - at);
    return {
      variant,
      asks: asks.length,
      runs: runs.length,
      notConnected,
      requests: reqs.filter((r) => r.body !== undefined && promptContains("New events (")(r.body))
        .length,
      // Only the agent's turns carry the wake prompt; Claude Code's side requests (if any) do not.
      requestsWithoutTools: reqs.filter((r) =>
        r.body !== undefined && promptContains("New events (")(r.body) &&
        !(r.body.tools ?? []).some((t) =>
          t.name.startsWith("mcp__wats__")
        )
      ).length,
      answeredDuringWakes,
      answered: asks.filter((a) => done.has(a)).length,
      retried: runs.filter((r) => (r as { retry?: unknown }).retry !== undefined).length,
      firstRunMs,
      toFirstTurn,
      seconds: (Date.now() - t0) / 1000,
    };
  } finally {
    await Deno.remove(bin, { recursive: true }).catch(() => {});
  }
}

/** A run's transcript header (`wats_run`). */
function headerOf(dataDir: string, run: string): { events: string[] } {
  const first = jsonLines(`${dataDir}/agent/runs/${run}.jsonl`)[0] as { events?: string[] };
  return { events: first?.events ?? [] };
}

/** The wats server's status in a run's `system/init` line; `no init` when the CLI printed none. */
function watsStatus(dataDir: string, run: string): string {
  for (const line of jsonLines(`${dataDir}/agent/runs/${run}.jsonl`)) {
    if (line.type !== "system" || line.subtype !== "init") continue;
    const servers = (line.mcp_servers ?? []) as { name: string; status: string }[];
    return servers.find((s) => s.name === "wats")?.status ?? "absent";
  }
  return "no init";
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
};

const hogs = Array.from(
  { length: HOGS },
  () => new Deno.Command("yes", { stdout: "null", stderr: "null", stdin: "null" }).spawn(),
);
const outcomes: Outcome[] = [];
try {
  await using mock = closing(answeringMock());
  for (const v of VARIANTS) outcomes.push(await runVariant(v, mock));
} finally {
  for (const h of hogs) {
    try {
      h.kill("SIGKILL");
    } catch { /* gone */ }
    await h.status;
  }
}

console.log(
  `wake tools: ${WAKES} wakes per variant, real claude -p (${CLAUDE}) and wats mcp, ` +
    `beside ${HOGS} CPU hogs (yes > /dev/null)`,
);
console.log("");
console.log(
  "| variant | runs | runs without wats connected | agent requests without wats tools | " +
    "asks answered by their first runs' end | answered after the drain | runs marked retry | " +
    "ask → first run ended p50 / max s | claude start → first model request p50 / min / max s | variant s |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const o of outcomes) {
  const nc = Object.values(o.notConnected).reduce((a, b) => a + b, 0);
  const why = Object.entries(o.notConnected).map(([k, c]) => `${c} ${k}`).join(", ");
  console.log(
    `| ${o.variant} | ${o.runs} | ${nc}${
      why ? ` (${why})` : ""
    } | ${o.requestsWithoutTools} of ${o.requests} | ` +
      `${o.answeredDuringWakes}/${o.asks} | ${o.answered}/${o.asks} | ${o.retried} | ` +
      `${(pct(o.firstRunMs, 0.5) / 1000).toFixed(1)} / ${
        (Math.max(...o.firstRunMs) / 1000).toFixed(1)
      } | ${(pct(o.toFirstTurn, 0.5) / 1000).toFixed(2)} / ${
        (Math.min(...o.toFirstTurn) / 1000).toFixed(2)
      } / ${(Math.max(...o.toFirstTurn) / 1000).toFixed(2)} | ${o.seconds.toFixed(0)} |`,
  );
}
const wait = outcomes.find((o) => o.variant === "wait");
if (wait) {
  const nc = Object.values(wait.notConnected).reduce((a, b) => a + b, 0);
  console.log("");
  console.log(
    `goal "${WAKES} wakes, 0 runs without tools" (wait): ${
      nc === 0 && wait.answered === wait.asks ? "pass" : "FAIL"
    } (${nc} without, ${wait.answered}/${wait.asks} answered)`,
  );
}
