/**
 * A call's permission handling, in process: `AcpLayer.call` against a scripted
 * ACP agent over in-memory streams (tests/support/fake_acp_agent.ts), in a real
 * git checkout. The real agents' side is tests/e2e/acp_*_test.ts.
 */

import assert from "node:assert/strict";
import { AcpLayer, type CallEvent } from "../../src/acp/calls.ts";
import type { PermissionAsk } from "../../src/contracts/coding_agents.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import { git } from "../../src/acp/worktrees.ts";
import { fakeAcpAgent, type FakeAgent, type FakeTurn } from "../support/fake_acp_agent.ts";
import { bareHarness } from "../support/harness_fixtures.ts";

const ID = ["-c", "user.name=t", "-c", "user.email=t@example.com"];

interface Rig extends AsyncDisposable {
  layer: AcpLayer;
  agent: FakeAgent;
  root: string;
  events: CallEvent[];
  asks: PermissionAsk[];
  decided: Array<[PermissionAsk, boolean]>;
  costs: number[];
}

/** A checkout with one commit, and a layer whose one harness is the fake agent. */
async function rig(turns: FakeTurn[], review: boolean): Promise<Rig> {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-calls-" }));
  const repo = `${root}/repo`;
  Deno.mkdirSync(repo);
  await git(["init", "-q", "-b", "main"], repo);
  Deno.writeTextFileSync(`${repo}/README.md`, "hi\n");
  await git(["add", "README.md"], repo);
  await git([...ID, "commit", "-qm", "first"], repo);
  const agent = fakeAcpAgent(turns);
  const r: Omit<Rig, "layer" | typeof Symbol.asyncDispose> = {
    agent,
    root,
    events: [],
    asks: [],
    decided: [],
    costs: [],
  };
  const layer = new AcpLayer({
    worktrees: `${root}/worktrees`,
    harnesses: { fake: bareHarness("fake", "fake-agent") },
    checkouts: { app: { name: "app", path: repo, base: "main", fetch: false } },
    allowedCheckouts: [],
    policy: makePolicy([], [], `${root}/data`, { foldCase: false }),
    env: {},
    connect: agent.connect,
    onEvent: (e) => r.events.push(e),
    onCost: (usd) => r.costs.push(usd),
    park: review
      ? (ask) => {
        r.asks.push(ask);
        return `p${r.asks.length}`;
      }
      : undefined,
    onDecided: (ask, approved) => r.decided.push([ask, approved]),
  });
  return {
    ...r,
    layer,
    [Symbol.asyncDispose]: async () => {
      await layer.close();
      Deno.removeSync(root, { recursive: true });
    },
  };
}

const ORIGIN = { agent: "bot", thread: "_", callId: "run-1.acp_1", run: "run-1" };
const ARGS = { task: "TASK: fix it", checkout: "app", work: "fix" };

Deno.test("in the worktree a read is allowed once; a gated edit with review off is refused and listed", async () => {
  await using r = await rig([{
    requests: [
      { toolCallId: "t1", kind: "read", locations: ["README.md"] },
      { toolCallId: "t2", kind: "edit", title: "Edit a.ts", locations: ["src/a.ts"] },
    ],
    message: "done",
    cost: 0.25,
  }], false);
  const res = await r.layer.call("fake", ORIGIN, ARGS);
  assert.deepEqual(r.agent.outcomes, [
    { toolCallId: "t1", answer: "yes" },
    { toolCallId: "t2", answer: "no" },
  ]);
  assert.equal(res.stop_reason, "end_turn");
  assert.equal(res.message, "done");
  assert.equal(res.usd, 0.25);
  assert.deepEqual(r.costs, [0.25]);
  assert.deepEqual(res.refused, [{
    id: "run-1.acp_1:t2",
    request: "fake/edit",
    title: "Edit a.ts",
    reason:
      "fake/edit is gated: it needs a rule or a person's approval; agent.review is off, so it was refused",
  }]);
  assert.match(r.agent.prompts[0]!, /TASK: fix it/);
  // The run is carried on every line of the call, not read back out of its id.
  const perms = r.events.filter((e) => e.type === "acp_permission");
  assert.deepEqual(perms.map((e) => [e.run, e.verdict, e.answer]), [
    ["run-1", "allow", "allow_once"],
    ["run-1", "ask", "reject_once"],
  ]);
});

Deno.test("only allow_once allows; the data dir and deletes are denied; a fetch labels the call", async () => {
  const turns: FakeTurn[] = [];
  await using r = await rig(turns, false);
  turns.push({
    requests: [
      {
        toolCallId: "t1",
        kind: "read",
        locations: ["README.md"],
        options: [{ optionId: "always", name: "Always", kind: "allow_always" }],
      },
      { toolCallId: "t2", kind: "delete", locations: ["README.md"] },
      { toolCallId: "t3", kind: "read", locations: [`${r.root}/data/node.key`] },
      { toolCallId: "t4", kind: "fetch", locations: [] },
    ],
  });
  const res = await r.layer.call("fake", ORIGIN, ARGS);
  assert.deepEqual(r.agent.outcomes.map((o) => o.answer), ["cancelled", "no", "no", "no"]);
  assert.deepEqual(res.refused.map((x) => x.reason), [
    "fake/read is read-only inside the worktree, but the agent offered no allow_once option",
    "fake/delete is destructive and no rule allows it",
    `fake/read touches ${r.root}/data/node.key, inside the wats data directory`,
    r.events.filter((e) => e.type === "acp_permission")[3]!.reason,
  ]);
  assert.match(res.refused[3]!.reason, /agent\.review is off, so it was refused$/);
  assert.deepEqual(res.labels, ["outside"]);
});

Deno.test("with review on, a gated request parks the call; the person's approval reaches the waiting agent", async () => {
  await using r = await rig([{
    requests: [{ toolCallId: "t1", kind: "edit", title: "Edit a.ts", locations: ["src/a.ts"] }],
    message: "edited",
  }], true);
  const parked = await r.layer.call("fake", ORIGIN, ARGS);
  assert.equal(parked.stop_reason, "parked");
  assert.deepEqual(parked.parked, { id: "p1", request_id: "run-1.acp_1:t1", request: "fake/edit" });
  assert.equal(r.asks.length, 1);
  assert.equal(r.asks[0]!.worktree, parked.worktree);
  assert.deepEqual(r.agent.outcomes, []);
  const said = r.layer.answer("p1", true, r.asks[0]!);
  assert.equal(said, "approved fake/edit: the coding agent fake got the answer");
  // The next call on the work waits for the parked prompt to finish.
  const next = await r.layer.call("fake", { ...ORIGIN, callId: "run-1.acp_2" }, ARGS);
  assert.equal(next.stop_reason, "end_turn");
  assert.deepEqual(r.agent.outcomes, [{ toolCallId: "t1", answer: "yes" }]);
  assert.deepEqual(r.decided.map(([a, ok]) => [a.request_id, ok]), [["run-1.acp_1:t1", true]]);
  const last = r.events.filter((e) => e.type === "acp_permission").at(-1)!;
  assert.equal(
    last.type === "acp_permission" && last.reason,
    "fake/edit is gated: it needs a rule or a person's approval; a person approved it",
  );
  // One agent served both calls.
  assert.equal(r.agent.starts, 1);
});

Deno.test("a halt stops the running call's coding agent; no call starts until resume, nor a person's decision", async () => {
  await using r = await rig([
    {
      requests: [{ toolCallId: "t1", kind: "edit", title: "Edit a.ts", locations: ["src/a.ts"] }],
      message: "edited",
    },
    { requests: [], message: "after the resume" },
  ], true);
  const parked = await r.layer.call("fake", ORIGIN, ARGS);
  assert.equal(parked.stop_reason, "parked");
  assert.equal(await r.layer.isRunning("fake"), true);
  const ended = new Promise<void>((resolve) => {
    const take = r.events.push.bind(r.events);
    r.events.push = (...es: CallEvent[]) => {
      if (es.some((e) => e.type === "work_changed" && e.what.startsWith("call ended"))) resolve();
      return take(...es);
    };
  });

  r.layer.halt("halt 1234 by guardian: stop");
  await ended;
  assert.equal(await r.layer.isRunning("fake"), false, "its process was stopped");
  const calls = (await Deno.readTextFile(`${parked.worktree}.calls.jsonl`)).trim().split("\n")
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    calls.filter((c) => c.outcome === "error").map((c) => c.message),
    ["stopped: agents were halted (halt 1234 by guardian: stop)"],
  );
  // Nothing starts: the agent's tool, a send back (blocked), a person's decision.
  await assert.rejects(
    () => r.layer.call("fake", { ...ORIGIN, callId: "run-1.acp_2" }, ARGS),
    /no coding agent call while agents are halted \(halt 1234 by guardian: stop\)/,
  );
  assert.match(r.layer.blocked()!, /^agents are halted \(halt 1234/);
  assert.match(
    r.layer.answer("p1", true, r.asks[0]!),
    /^not approved: agents are halted \(halt 1234 by guardian: stop\), so no coding agent call starts; the request waits in the review queue again as p2/,
  );
  assert.equal(r.asks.length, 2);
  assert.equal(r.agent.starts, 1, "no agent was started while halted");

  r.layer.resume();
  assert.equal(r.layer.blocked(), undefined);
  const after = await r.layer.call("fake", { ...ORIGIN, callId: "run-1.acp_3" }, ARGS);
  assert.equal(after.message, "after the resume");
  assert.equal(r.agent.starts, 2);
});
