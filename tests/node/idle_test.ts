/**
 * A node `wats mcp` started stops once no MCP session has been open for its
 * idle time (10 minutes), measured on a fake clock.
 */

import assert from "node:assert/strict";
import { MCP_NODE_IDLE_MS, watchIdle } from "../../src/node/idle.ts";
import { FakeTime } from "../runner/fakes.ts";

Deno.test("the idle time is 10 minutes", () => {
  assert.equal(MCP_NODE_IDLE_MS, 10 * 60_000);
});

Deno.test("a node nobody connects to stops after the idle time, once", async () => {
  const time = new FakeTime(0);
  let stops = 0;
  watchIdle(MCP_NODE_IDLE_MS, () => stops++, time);
  await time.advance(MCP_NODE_IDLE_MS - 1);
  assert.equal(stops, 0);
  await time.advance(1);
  assert.equal(stops, 1);
  await time.advance(10 * MCP_NODE_IDLE_MS);
  assert.equal(stops, 1);
});

Deno.test("an open session holds the node; the idle time counts from the last session's end", async () => {
  const time = new FakeTime(0);
  let stops = 0;
  const idle = watchIdle(1_000, () => stops++, time);
  await time.advance(900);
  idle.sessions(1);
  idle.sessions(2);
  await time.advance(5_000);
  assert.equal(stops, 0, "sessions open");
  idle.sessions(1);
  await time.advance(5_000);
  assert.equal(stops, 0, "one session still open");
  idle.sessions(0);
  await time.advance(999);
  assert.equal(stops, 0);
  idle.sessions(0); // told again: the countdown does not restart
  await time.advance(1);
  assert.equal(stops, 1);
});

Deno.test("a stopped watch never fires", async () => {
  const time = new FakeTime(0);
  let stops = 0;
  const idle = watchIdle(1_000, () => stops++, time);
  idle.stop();
  idle.sessions(0);
  await time.advance(5_000);
  assert.equal(stops, 0);
  assert.equal(time.pending(), 0);
});

Deno.test("each way counts its own sessions: one way's last ending holds while the other has some", async () => {
  const time = new FakeTime(0);
  let stops = 0;
  const idle = watchIdle(1_000, () => stops++, time);
  idle.sessions(1, "http");
  idle.sessions(0); // the socket's: none, but HTTP still has one
  await time.advance(5_000);
  assert.equal(stops, 0);
  idle.sessions(0, "http");
  await time.advance(999);
  assert.equal(stops, 0);
  await time.advance(1);
  assert.equal(stops, 1);
});

Deno.test("activity with no session open starts the countdown again; with one open it changes nothing", async () => {
  const time = new FakeTime(0);
  let stops = 0;
  const idle = watchIdle(1_000, () => stops++, time);
  await time.advance(900);
  idle.activity();
  await time.advance(900);
  assert.equal(stops, 0, "counted from the activity");
  idle.sessions(1, "http");
  idle.activity();
  assert.equal(time.pending(), 0, "an open session holds: no countdown");
  idle.sessions(0, "http");
  await time.advance(1_000);
  assert.equal(stops, 1);
  idle.activity();
  await time.advance(5_000);
  assert.equal(stops, 1, "once only");
});
