/**
 * Runaway drill (issue 30, item 4): `--calls` coding agent calls on as many
 * works, started at once, each replying forever at `--reply` USD a reply (an
 * in-process ACP agent that reports the session's cumulative cost with
 * `usage_update` after each reply, as Claude's does, and lets a reply under
 * way finish when cancelled: tests/support/fake_acp_agent.ts
 * `meteredAcpAgent`), through the real ACP layer (src/acp/calls.ts) and the
 * real runner's budget (src/runner/scheduler.ts, on a fake clock, no heartbeat)
 * with `agent.max_usd_per_day = --budget`.
 *
 * Per version: the total spent, the overshoot past the budget, how many calls
 * were admitted, refused at admission and stopped by the budget, and for each
 * call the replies it made after its stop (its `session/cancel`) or, never
 * stopped, after the total first reached the budget. The goals: total ≤
 * budget + 5 % and no call more than one reply past its stop.
 *
 * Baseline, in the same run: commit 3d97b22 (main before this change;
 * `--baseline-commit`, or `--before DIR`) extracted with `git archive`, run the
 * same way, its spend wired as its daemon wires it (each call's cost added to
 * the runner's ledger when the call ends). Its calls are never stopped, so the
 * drill halts them (`AcpLayer.halt`) once they spent `--bound` × the budget.
 *
 * Run: deno run -A bench/budget_drill.ts [--calls 8] [--reply 0.01] [--budget 1]
 *        [--reserve 0.1,0.5] [--bound 5] [--before DIR]
 */

import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import type { CodingAgents } from "../src/contracts/coding_agents.ts";
import { meteredAcpAgent, type MeteredPrompt } from "../tests/support/fake_acp_agent.ts";
import { bareHarness } from "../tests/support/harness_fixtures.ts";
import { gitRepo } from "../tests/support/rig.ts";
import { baselineDir } from "./swarm_rig.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    calls: { type: "string", default: "8" },
    reply: { type: "string", default: "0.01" },
    budget: { type: "string", default: "1" },
    reserve: { type: "string", default: "0.1,0.5" },
    bound: { type: "string", default: "5" },
    before: { type: "string" },
    "baseline-commit": { type: "string", default: "3d97b22" },
  },
});
const CALLS = Number(values.calls);
const REPLY = Number(values.reply);
const BUDGET = Number(values.budget);
const RESERVES = String(values.reserve).split(",").map(Number);
const BOUND = Number(values.bound) * BUDGET;

/** What one version did. */
interface Outcome {
  version: string;
  spent: number;
  admitted: number;
  refused: number;
  stoppedByBudget: number;
  /** Per call that prompted: replies after its stop, or after the total first reached the budget. */
  after: number[];
  /** The reason of the first refusal at admission, if any. */
  refusal?: string;
}

/** One drill on the code under `root` (this checkout or the baseline's). */
async function drill(version: string, root: string, reserve: number): Promise<Outcome> {
  const { AcpLayer } = await import(`${root}/src/acp/calls.ts`);
  const { makePolicy } = await import(`${root}/src/acp/policy.ts`);
  const { rig } = await import(`${root}/tests/runner/scheduler_rig.ts`);
  const r = rig({
    "agent.max_usd_per_day": BUDGET,
    "agent.max_usd_per_month": 100 * BUDGET,
    "agent.heartbeat": 0,
    "agent.reserve_usd": reserve,
  });
  const tmp = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-drill-" }));
  const repo = await gitRepo(`${tmp}/repo`);
  /** Replies per prompt when the total first reached the budget. */
  let atCap: Map<MeteredPrompt, number> | undefined;
  let halted = false;
  // deno-lint-ignore prefer-const
  let layer: { halt(reason: string): void; close(): Promise<void> } & Pick<CodingAgents, "call">;
  const agent = meteredAcpAgent({
    costPerReply: REPLY,
    replies: () => Infinity,
    onReply: () => {
      const spent = agent.spent();
      if (atCap === undefined && spent >= BUDGET - 1e-9) {
        atCap = new Map(agent.prompts.map((p) => [p, p.replies]));
      }
      if (!halted && spent >= BOUND - 1e-9) {
        halted = true;
        layer.halt(`the drill's bound: ${BOUND} USD spent`);
      }
    },
  });
  const baseline = typeof r.runner.budget !== "object";
  layer = new AcpLayer({
    worktrees: `${tmp}/worktrees`,
    harnesses: { metered: bareHarness("metered", "metered") },
    checkouts: { app: { name: "app", path: repo, base: "main", fetch: false } },
    allowedCheckouts: [],
    policy: makePolicy([], [], `${tmp}/data`, { foldCase: false }),
    env: {},
    connect: agent.connect,
    host: r.runner,
    // The baseline's daemon adds each call's cost to the ledger as the call ends (its setup.ts).
    ...(baseline ? { onCost: (usd: number) => r.runner.addSpend(r.time.now(), usd) } : {}),
  });
  r.runner.start();
  const results = await Promise.allSettled(
    Array.from(
      { length: CALLS },
      (_, i) =>
        layer.call("metered", { agent: "drill", thread: "_", callId: `c${i}` }, {
          task: `TASK ${i}: reply forever`,
          checkout: "app",
          work: `w${i}`,
        }),
    ),
  );
  await layer.close();
  await r.runner.stop();
  r.cleanup();
  Deno.removeSync(tmp, { recursive: true });
  const refusals = results.flatMap((x) =>
    x.status === "rejected" && /no coding agent call now/.test(String(x.reason))
      ? [String(x.reason)]
      : []
  );
  return {
    version,
    spent: agent.spent(),
    admitted: agent.prompts.length,
    refused: refusals.length,
    stoppedByBudget: results.filter((x) => x.status === "fulfilled" && x.value.stopped === "budget")
      .length,
    after: agent.prompts.map((p) =>
      p.cancelledAt !== undefined && !halted
        ? p.replies - p.cancelledAt
        : p.replies - (atCap?.get(p) ?? p.replies)
    ),
    ...(refusals[0] !== undefined ? { refusal: refusals[0] } : {}),
  };
}

// The drill imports the baseline's src/ and its tests/runner/scheduler_rig.ts in this process.
const before = await baselineDir({
  ...(values.before ? { before: values.before } : {}),
  commit: values["baseline-commit"]!,
  prefix: "wats-drill-before-",
  paths: ["src", "tests"],
});
const here = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const outcomes: Outcome[] = [];
try {
  outcomes.push(await drill(`main ${values["baseline-commit"]}`, before.dir, RESERVES[0]!));
  for (const reserve of RESERVES) {
    outcomes.push(await drill(`this, agent.reserve_usd = ${reserve}`, here, reserve));
  }
} finally {
  if (before.owned) Deno.removeSync(before.dir, { recursive: true });
}

const usd = (n: number) => `$${n.toFixed(4)}`;
console.log(
  `runaway drill: ${CALLS} calls at once, each replying forever at ${usd(REPLY)} a reply, ` +
    `agent.max_usd_per_day = ${usd(BUDGET)}; goals: total ≤ ${usd(BUDGET * 1.05)}, ` +
    "every call stopped within one reply",
);
const base = outcomes[0]!;
for (const o of outcomes) {
  const worst = Math.max(0, ...o.after);
  console.log(
    `\n${o.version}\n` +
      `  total spent ${usd(o.spent)} (${(o.spent / BUDGET).toFixed(3)} × the budget; ` +
      `overshoot ${usd(Math.max(0, o.spent - BUDGET))}); ${
        (o.spent / base.spent).toFixed(3)
      } × main's spend${o === base ? ` (halted by the drill at ${usd(BOUND)})` : ""}\n` +
      `  calls admitted ${o.admitted} of ${CALLS}, refused at admission ${o.refused}, ` +
      `stopped by the budget ${o.stoppedByBudget}\n` +
      `  replies after the stop (or the cap): max ${worst}, per call [${o.after.join(", ")}]\n` +
      `  goals: total ≤ +5 % ${o.spent <= BUDGET * 1.05 + 1e-9 ? "met" : "NOT met"}; ` +
      `within one reply ${
        worst <= 1 && o.stoppedByBudget + o.refused === CALLS ? "met" : "NOT met"
      }` +
      (o.refusal ? `\n  a refusal: ${o.refusal}` : ""),
  );
}
