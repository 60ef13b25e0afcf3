/**
 * The budget over coding agent calls (issue 30, item 4): the runner's desk and
 * the ACP layer together, on a fake clock, against an agent in this process
 * that reports a cost per reply (tests/support/fake_acp_agent.ts
 * `meteredAcpAgent`). The real agent's side is tests/e2e/acp_budget_test.ts.
 */

import assert from "node:assert/strict";
import { AcpLayer } from "../../src/acp/calls.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import { readWorkState } from "../../src/acp/work_state.ts";
import { readCalls } from "../../src/acp/work_record.ts";
import { nextUtcDay } from "../../src/duration.ts";
import type { Runner } from "../../src/runner/scheduler.ts";
import { fakeAcpAgent, meteredAcpAgent } from "../support/fake_acp_agent.ts";
import type { Connect } from "../../src/acp/agent_link.ts";
import type { CallEvent } from "../../src/acp/turn.ts";
import type { PermissionAsk } from "../../src/contracts/coding_agents.ts";
import type { BudgetStop } from "../../src/acp/work_state.ts";
import { AcpSpendFile } from "../../src/acp/spend.ts";
import { reservedLine } from "../../src/node/runner_views.ts";
import { noticeOf } from "../../src/node/notices.ts";
import { git } from "../../src/acp/worktrees.ts";
import { bareHarness } from "../support/harness_fixtures.ts";
import { gitRepo } from "../support/rig.ts";
import { MIN, rig as runnerRig, T0 } from "../runner/scheduler_rig.ts";

const REPLY = 0.03;
/** Float sums of cents: what "equal" means for money here. */
const EPS = 1e-9;

/** What a layer test hears of the layer. */
interface Heard {
  events: CallEvent[];
  asks: PermissionAsk[];
  resumedEnds: Array<{ stop: BudgetStop; outcome: string; work: string; commits?: number }>;
}

/**
 * A checkout with one commit and a layer whose one harness is `agent`, budgeted by `runner`;
 * `review`: requests that ask wait in a review queue; `spend`: calls keep their spend there.
 */
async function layerRig(
  agent: { connect: Connect },
  runner: Runner,
  o: { review?: boolean; spend?: boolean } = {},
) {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-budget-" }));
  const repo = await gitRepo(`${root}/repo`);
  const heard: Heard = { events: [], asks: [], resumedEnds: [] };
  const spendFile = o.spend ? new AcpSpendFile(`${root}/data/agent`) : undefined;
  const layer = new AcpLayer({
    worktrees: `${root}/worktrees`,
    harnesses: { fake: bareHarness("fake", "fake-agent") },
    checkouts: { app: { name: "app", path: repo, base: "main", fetch: false } },
    allowedCheckouts: [],
    policy: makePolicy([], [], `${root}/data`, { foldCase: false }),
    env: {},
    connect: agent.connect,
    host: runner,
    onEvent: (e) => heard.events.push(e),
    ...(o.review
      ? {
        park: (ask: PermissionAsk) => {
          heard.asks.push(ask);
          return `p${heard.asks.length}`;
        },
      }
      : {}),
    // As src/acp/setup.ts wires it: the heartbeat agent hears how a resumed work ended.
    onResumedEnd: (stop, end) => {
      heard.resumedEnds.push({ stop, ...end });
      runner.permissionDecided(`resumed work ${stop.work} ended: ${end.outcome}`);
    },
    ...(spendFile !== undefined
      ? {
        spendFile,
        onCost: (usd, c) =>
          spendFile.add({ at: Date.now(), usd, harness: c.harness, call: c.callId }),
      }
      : {}),
  });
  return {
    layer,
    root,
    heard,
    spendFile,
    [Symbol.asyncDispose]: async () => {
      await layer.close();
      Deno.removeSync(root, { recursive: true });
    },
  };
}

const call = (layer: AcpLayer, work: string) =>
  layer.call("fake", { agent: "bot", thread: "_", callId: `call-${work}` }, {
    task: `TASK: ${work}`,
    checkout: "app",
    work,
  });

/** Waits, turn by turn of the event loop, until `cond` holds (a bounded count of turns). */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 0));
  }
  assert.fail(`never: ${what}`);
}

Deno.test("two works' calls in parallel against $1.00: the second is admitted against what the first's reservation leaves, a third is refused, no heartbeat run starts while they hold the rest, and both stop within one reply of the cap", async () => {
  const r = runnerRig({
    "agent.max_usd_per_day": 1,
    "agent.reserve_usd": 0.4,
    "agent.heartbeat": MIN,
  });
  let open!: () => void;
  const gate = new Promise<void>((resolve) => open = resolve);
  const agent = meteredAcpAgent({ costPerReply: REPLY, replies: () => Infinity, gate });
  await using l = await layerRig(agent, r.runner);
  try {
    r.runner.start();
    const budget = () => r.runner.status().budget;
    const a = call(l.layer, "a");
    await until(() => agent.prompts.length === 1, "the first call prompts");
    assert.equal(budget().inFlight.reservedUsd, 0.4);
    assert.ok(Math.abs(budget().usdFree - 0.6) < EPS);

    const b = call(l.layer, "b");
    await until(() => agent.prompts.length === 2, "the second call prompts");
    assert.equal(budget().inFlight.count, 2);
    assert.ok(Math.abs(budget().usdFree - 0.2) < EPS, "the second holds its reservation too");

    await assert.rejects(
      () => call(l.layer, "c"),
      /^CallError: no coding agent call now: \$0\.80 of the \$1\.00 left is held by 2 run\(s\) and coding agent call\(s\) in flight; try again when one of them ends$/,
    );

    // The heartbeat comes due while the two hold all but $0.20 of the day.
    await r.time.advance(MIN);
    assert.equal(r.spawner.procs.length, 0, "no heartbeat run started");
    assert.equal(r.log.matching("run waits: $0.80 of the $1.00 left is held by 2").length, 1);

    open();
    const [ra, rb] = await Promise.all([a, b]);
    for (const res of [ra, rb]) {
      assert.equal(res.stopped, "budget");
      assert.equal(res.stop_reason, "cancelled");
      assert.match(res.message, /^stopped: budget \(wats stopped the coding agent/);
    }
    for (const p of agent.prompts) {
      assert.ok(p.cancelledAt !== undefined, "each call was cancelled");
      assert.ok(p.replies - p.cancelledAt <= 1, `at most one reply after the cancel: ${p.replies}`);
    }
    // What was spent is what the ledger counted; it stays under the cap plus one reply.
    assert.ok(Math.abs(budget().usdToday - agent.spent()) < EPS);
    assert.ok(agent.spent() <= 1 + REPLY + EPS, `spent ${agent.spent()}`);
    assert.ok(Math.abs(ra.usd + rb.usd - agent.spent()) < EPS);
    // The calls released the budget: the heartbeat run that waited starts, on what is left.
    const left = budget().usdLeft;
    if (budget().blocked === undefined) {
      assert.equal(r.spawner.procs.length, 1);
      assert.ok(Math.abs(r.harness.contexts[0]!.maxBudgetUsd - left) < EPS);
    } else assert.equal(r.spawner.procs.length, 0);
  } finally {
    await r.runner.stop();
    r.cleanup();
  }
});

Deno.test("works the budget stopped say so, and go on in the same session after the window resets", async () => {
  const r = runnerRig({ "agent.max_usd_per_day": 1, "agent.reserve_usd": 0.4 });
  // Each session's first prompt replies until stopped; the one that goes on finishes after one.
  const agent = meteredAcpAgent({ costPerReply: REPLY, replies: (n) => n === 0 ? Infinity : 1 });
  await using l = await layerRig(agent, r.runner);
  try {
    r.runner.start();
    const [ra, rb] = await Promise.all([call(l.layer, "a"), call(l.layer, "b")]);
    assert.deepEqual([ra.stopped, rb.stopped], ["budget", "budget"]);
    for (const res of [ra, rb]) {
      const work = res.worktree.split("/").at(-1);
      const stop = readWorkState(`${res.worktree}.acp.json`).budgetStop;
      assert.equal(stop?.task, `TASK: ${work}`);
      const noted = readCalls(res.worktree).find((c) => c.id === `call-${work}`);
      assert.equal(noted?.outcome, "stopped: budget");
    }
    // Nothing goes on before the reset.
    await r.time.advanceTo(nextUtcDay(T0) - 1);
    assert.equal(agent.prompts.length, 2);

    await r.time.advanceTo(nextUtcDay(T0));
    await until(
      () => agent.prompts.length === 4 && agent.prompts.every((p) => p.stopReason !== undefined),
      "both works go on and end",
    );
    // Each end reaches the heartbeat agent, as a call's result would: it is woken.
    await until(() => l.heard.resumedEnds.length === 2, "both settle");
    assert.deepEqual(l.heard.resumedEnds.map((e) => e.outcome), ["ok", "ok"]);
    assert.equal(r.log.matching("queued: resumed work").length, 2);
    await until(() => r.spawner.procs.length === 1, "the woken heartbeat run starts");
    for (const res of [ra, rb]) {
      const [first, again] = agent.prompts.filter((p) =>
        p.text.includes(`TASK: ${res.worktree.split("/").at(-1)}`)
      );
      assert.ok(first && again, "the task is told again");
      assert.equal(again.sessionId, first.sessionId, "in the same session");
      assert.match(again.text, /the budget window has reset\. Go on with that task/);
      assert.equal(again.stopReason, "end_turn");
      assert.equal(readWorkState(`${res.worktree}.acp.json`).budgetStop, undefined);
    }
    // The new day counts only what went on.
    assert.ok(Math.abs(r.runner.status().budget.usdToday - 2 * REPLY) < EPS);
  } finally {
    await r.runner.stop();
    r.cleanup();
  }
});

Deno.test("money that runs out elsewhere mid-call cancels the call: stopped: budget", async () => {
  const r = runnerRig({ "agent.max_usd_per_day": 1, "agent.reserve_usd": 0.4 });
  // Replies that report no new cost: only spend elsewhere can stop it.
  const agent = meteredAcpAgent({ costPerReply: 0, replies: () => Infinity });
  await using l = await layerRig(agent, r.runner);
  try {
    r.runner.start();
    const a = call(l.layer, "a");
    await until(() => (agent.prompts[0]?.replies ?? 0) > 0, "the call replies");
    // Another call that reported its cost as it ended: $0.90, and the call holds $0.40.
    r.runner.budget.addSpend(r.time.now(), 0.9);
    const res = await a;
    assert.equal(res.stopped, "budget");
    assert.equal(res.stop_reason, "cancelled");
    const p = agent.prompts[0]!;
    assert.ok(p.cancelledAt !== undefined && p.replies - p.cancelledAt <= 1);
    assert.ok(readWorkState(`${res.worktree}.acp.json`).budgetStop !== undefined);
  } finally {
    await r.runner.stop();
    r.cleanup();
  }
});

Deno.test("a call parked for a person's decision holds only what it spent while it waits; the decision finds no room, so it stops as stopped: budget, and the call that goes on after the reset carries the decision and wakes the heartbeat agent", async () => {
  const r = runnerRig({ "agent.max_usd_per_day": 1, "agent.reserve_usd": 0.4 });
  const edit = { toolCallId: "t1", kind: "edit" as const, title: "Edit a.ts", locations: ["a.ts"] };
  const agent = fakeAcpAgent([
    // A reply costing $0.10, then a request that waits for a person.
    { costBefore: 0.1, requests: [edit], message: "waited" },
    // After the reset, in the same session: the same request again, and $0.05 more.
    { requests: [edit], message: "went on", cost: 0.15 },
  ]);
  await using l = await layerRig(agent, r.runner, { review: true });
  try {
    r.runner.start();
    const budget = () => r.runner.status().budget;
    const parked = await call(l.layer, "a");
    assert.equal(parked.stop_reason, "parked");
    // While it waits it holds what it spent, not its reservation.
    assert.ok(
      Math.abs(budget().inFlight.reservedUsd - 0.1) < EPS,
      `${budget().inFlight.reservedUsd}`,
    );
    assert.equal(budget().inFlight.count, 1);
    assert.equal(budget().inFlight.parked, 1);
    assert.equal(
      reservedLine(budget().inFlight),
      "$0.10 reserved by 1 run(s) and coding agent call(s) in flight, 1 of them parked for a " +
        "person's decision (holding only what they spent)",
    );
    // Others are admitted on the rest meanwhile: two calls of $0.40 each.
    const others = [r.runner.budget.admitCall("x"), r.runner.budget.admitCall("y")];
    assert.deepEqual(others.map((a) => a.admitted), [true, true]);

    // A commit on the work while it waits: the work has something to review when it ends.
    Deno.writeTextFileSync(`${parked.worktree}/a.txt`, "a\n");
    await git(["add", "a.txt"], parked.worktree);
    await git(
      ["-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-qm", "a"],
      parked.worktree,
    );

    // The person approves; $0.10 is free beside the others' $0.80: no room, it stops.
    assert.equal(
      l.layer.answer("p1", true, l.heard.asks[0]!),
      "approved fake/edit, but the budget has no room for its call to go on: work a is stopped: " +
        "budget, and goes on with your decision after the budget window resets",
    );
    await until(
      () => readWorkState(`${parked.worktree}.acp.json`).budgetStop !== undefined,
      "the call stops: budget",
    );
    assert.deepEqual(agent.outcomes, [{ toolCallId: "t1", answer: "cancelled" }]);
    assert.equal(agent.cancels, 1, "its prompt was cancelled");
    const stop = readWorkState(`${parked.worktree}.acp.json`).budgetStop!;
    assert.deepEqual(stop.decision, {
      kind: "edit",
      locations: [`${parked.worktree}/a.ts`],
      approved: true,
    });
    await until(() => !l.layer.busy(parked.worktree), "the call ended");
    assert.equal(
      readCalls(parked.worktree).find((c) => c.id === "call-a")?.outcome,
      "stopped: budget",
    );
    assert.equal(budget().inFlight.count, 2);
    for (const a of others) if (a.admitted) a.hold.settle(0);

    // After the reset the work goes on: the same request is answered by the person's decision.
    await r.time.advanceTo(nextUtcDay(T0));
    await until(() => l.heard.resumedEnds.length === 1, "the work that went on ends");
    assert.match(agent.prompts[1]!, /A person approved the request you were waiting on/);
    assert.deepEqual(agent.outcomes.map((o) => o.answer), ["cancelled", "yes"]);
    const [end] = l.heard.resumedEnds;
    assert.deepEqual([end!.stop.call, end!.outcome, end!.commits], ["call-a", "ok", 1]);
    // The heartbeat agent is woken with it, as by a person's decision.
    assert.equal(r.log.matching("queued: resumed work a ended: ok").length, 1);
    // And the person hears the work is ready, as of any call that ends with commits.
    const ended = l.heard.events.filter((e) =>
      e.type === "work_changed" && e.call === "call-a.resume" && e.what.startsWith("call ended")
    );
    assert.equal(ended.length, 1);
    const notice = noticeOf({ event: "work_changed", ...ended[0]! } as never, {
      node: "n",
      at: 0,
      id: "i",
    });
    assert.equal(notice?.event, "work_ready");
    // The new day counts what the call spent after the reset.
    assert.ok(Math.abs(budget().usdToday - 0.05) < EPS, `${budget().usdToday}`);
  } finally {
    await r.runner.stop();
    r.cleanup();
  }
});

Deno.test("a call notes what it reports as it reports it, and at its end its one line replaces the note: nothing counted twice", async () => {
  const r = runnerRig({ "agent.max_usd_per_day": 1, "agent.reserve_usd": 0.4 });
  const notes: number[] = [];
  /** The layer's spend file, once it is built. */
  const at: { file?: AcpSpendFile } = {};
  const agent = meteredAcpAgent({
    costPerReply: REPLY,
    replies: () => 3,
    // After each reply, what the note says (the first reply's is written at once).
    onReply: () => {
      const path = at.file!.openPath("fake", "call-a");
      try {
        notes.push(JSON.parse(Deno.readTextFileSync(path)).usd);
      } catch {
        notes.push(-1);
      }
    },
  });
  await using l = await layerRig(agent, r.runner, { spend: true });
  at.file = l.spendFile;
  const spendFile = l.spendFile;
  try {
    r.runner.start();
    const res = await call(l.layer, "a");
    assert.equal(res.stop_reason, "end_turn");
    assert.ok(Math.abs(notes[0]! - REPLY) < EPS, `noted ${notes}`);
    const lines = spendFile!.month(Date.now());
    assert.equal(lines.length, 1);
    assert.ok(Math.abs(lines[0]!.usd! - 3 * REPLY) < EPS);
    assert.deepEqual([...Deno.readDirSync(`${l.root}/data/agent/acp_spend_open`)], []);
    // A start now finds no note: the call counts once.
    assert.equal(spendFile!.recoverOpen(Date.now()), 0);
  } finally {
    await r.runner.stop();
    r.cleanup();
  }
});
