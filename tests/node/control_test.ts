/**
 * The node's control ops as a table (src/node/control.ts): every op the session contract lists
 * has a handler, a socket answers only the ops of its table, and the person-only ops refuse what
 * they must.
 */

import assert from "node:assert/strict";
import { CONTROL_OPS, type ControlRequest } from "../../src/contracts/session.ts";
import type { NodeEvent } from "../../src/contracts/node_events.ts";
import { controlHandler, nodeControl } from "../../src/node/control.ts";
import { HaltState } from "../../src/node/halt.ts";
import { log } from "../../src/log.ts";
import { WatsError } from "../../src/errors.ts";

function parts(startedByMcp: boolean) {
  const meta = new Map<string, string>();
  const events: NodeEvent[] = [];
  const halts: string[] = [];
  let tookOver = 0;
  const table = nodeControl({
    halt: new HaltState({
      meta: {
        getMeta: (k) => meta.get(k),
        setMeta: (k, v) => void meta.set(k, v),
        maxSeq: () => 0,
      },
      accepted: [],
      agentKey: "a".repeat(64),
      warn: () => {},
    }),
    postHalt: (reason) => (halts.push(reason), Promise.resolve(`halt posted: ${reason}`)),
    startedByMcp,
    takeOver: () => tookOver++,
    events: (e) => events.push(e),
    log: log("test"),
    spend: () => [],
  });
  return { table, events, halts, tookOver: () => tookOver };
}

const req = (op: ControlRequest["op"], more: Partial<ControlRequest> = {}): ControlRequest => ({
  wats: "control",
  op,
  ...more,
});

Deno.test("every control op of the session contract has a handler in the node's table", () => {
  const { table } = parts(false);
  assert.deepEqual(Object.keys(table).sort(), [...CONTROL_OPS].sort());
});

Deno.test("a socket refuses an op its table does not hold, naming it; an empty table serves no control", async () => {
  const { table, halts } = parts(false);
  const serve = controlHandler({ halt: table.halt })!;
  assert.equal(await serve(req("halt", { reason: "stop" })), "halt posted: stop");
  await assert.rejects(
    () => serve(req("resume")),
    (e) => e instanceof WatsError && e.code === "mcp.bad_control" && /resume/.test(e.message),
  );
  assert.deepEqual(halts, ["stop"]);
  assert.equal(controlHandler({}), undefined);
});

Deno.test("takeover: a foreground node refuses and stays; a node wats mcp started stops once it has answered", async () => {
  const fg = parts(false);
  const serveFg = controlHandler(fg.table)!;
  await assert.rejects(() => serveFg(req("takeover")), /started in the foreground/);
  assert.equal(fg.tookOver(), 0);

  const bg = parts(true);
  const answer = await controlHandler(bg.table)!(req("takeover"));
  assert.equal(typeof answer, "object");
  assert.equal(bg.tookOver(), 0, "not before the answer is out");
  (answer as { afterAnswer: () => void }).afterAnswer();
  assert.equal(bg.tookOver(), 1);
});

Deno.test("resume with nothing halted says so, and tells the watchers", async () => {
  const { table, events } = parts(false);
  assert.equal(await controlHandler(table)!(req("resume")), "nothing was halted");
  assert.deepEqual(events, [{ event: "resumed" }]);
});

Deno.test("the works ops without coding agents: the list is empty, the others say what to enable", async () => {
  const serve = controlHandler(parts(false).table)!;
  assert.equal(await serve(req("work_list")), JSON.stringify({ works: [] }));
  await assert.rejects(() => serve(req("work_show", { work: "w1" })), /no enabled \[harnesses/);
});
