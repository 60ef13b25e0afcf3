import assert from "node:assert/strict";
import { agentState, mayChangeState } from "../../src/node/agent_presence.ts";
import type { NodeStatus } from "../../src/contracts/views.ts";

type Pauses = NodeStatus["pauses"];

function runner(pauses: Pauses) {
  return { status: () => ({ agent: null, budget: null, pauses }) };
}
const notHalted = { current: () => null };
const halted = { current: () => ({ id: "h", by: "b", at: 1 }) };

Deno.test("the agent's state: off without a runner, halted over paused, paused with its end, else running", () => {
  assert.deepEqual(agentState(undefined, halted), { state: "off" });
  const paused = runner({ budget: { reason: "daily budget reached", until: 42 }, threads: [] });
  assert.deepEqual(agentState(paused, halted), { state: "halted" });
  assert.deepEqual(agentState(paused, notHalted), { state: "paused", until: 42 });
  assert.deepEqual(agentState(runner({ threads: [] }), notHalted), { state: "running" });
  // A thread the loop detector holds is not the agent's state: it still takes other asks.
  assert.deepEqual(
    agentState(runner({ threads: [{ thread: "t", reason: "loop" }] }), notHalted),
    { state: "running" },
  );
});

Deno.test("a run's end, a halt and a resume may change the state; a stored post does not", () => {
  assert.equal(mayChangeState({ event: "resumed" }), true);
  assert.equal(mayChangeState({ event: "halted", id: "h", by: "b", reason: "" }), true);
  assert.equal(
    mayChangeState({
      event: "post_stored",
      id: "p",
      seq: 1,
      kind: "ask",
      author: "a",
      source: "x",
    }),
    false,
  );
});
