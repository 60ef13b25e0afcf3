#!/usr/bin/env node
// The stand-in agent of bench/delivery.ts: bench/network_wakes_agent.mjs with the faults of issue
// 27's "Delivery under faults", installed as `claude` first on the PATH of a daemon whose runner
// has `agent.runtime = "claude"`. Each wake goes through the real runner, spawn, prompt and run
// record, and the agent acts through the real `wats mcp` of the run's MCP config.
//
// What it does as Claude Code 2.1.197 does (docs/harness_facts.md; issue 27):
//
// - It starts the MCP server itself. Unless `MCP_CONNECTION_NONBLOCKING` is a false value in its
//   environment it does not wait for it: its first model turn comes `windowMs` after the start, and
//   a server that has not answered `initialize` by then shows `pending` in `system/init`; the turn
//   then has no wats tool, the model says something and the run ends "successfully" with nothing
//   done. With the variable false it waits (up to `MCP_CONNECT_TIMEOUT_MS`).
// - A model API failure before any tool call (the 529 `overloaded_error` the CLI gives up on):
//   `system/init`, then a `result` with `is_error` and exit 1, no tool call.
//
// The faults, from `<data dir>/bench-agent.json` (the run environment is an allowlist, so they
// come in a file): `{"failRate": 0.1, "bridgeDelayMs": 2000, "windowMs": 3000}`. The bridge is
// slowed by starting it `bridgeDelayMs` late.
//
// Each step goes to `<data dir>/bench-wakes.jsonl` as it happens (a daemon may be SIGKILLed while
// a run is on): `{"run": pid-and-time, "at", "step": "wake", "events": [{id, kind}]}`, then
// `step` `init` (with `status`), `failed` (`529`, `no tools`), `answer` (`ask`, `id` of the answer
// post) or `tool_error`, and `end`.
//
// Anything else than `-p` (`claude mcp get` while the daemon registers wats): exit 1, which the
// daemon reports as a warning and ignores. Plain Node with no dependency.

import { appendFileSync, readFileSync } from "node:fs";
import { claimThenAnswer, out, printResult, readWake, startBridge } from "./stand_in_agent.mjs";

const { server, dataDir, events } = await readWake();
let faults = {};
try {
  faults = JSON.parse(readFileSync(`${dataDir}/bench-agent.json`, "utf8"));
} catch { /* no faults */ }
const failRate = faults.failRate ?? 0;
const bridgeDelayMs = faults.bridgeDelayMs ?? 0;
const windowMs = faults.windowMs ?? 3000;
const waits = /^(0|false|no|off)$/i.test(process.env.MCP_CONNECTION_NONBLOCKING ?? "");
const connectTimeoutMs = Number(process.env.MCP_CONNECT_TIMEOUT_MS ?? "30000");

const run = `${process.pid}-${Date.now()}`;
const log = (step, fields = {}) =>
  appendFileSync(
    `${dataDir}/bench-wakes.jsonl`,
    JSON.stringify({ run, at: Date.now(), step, ...fields }) + "\n",
  );

log("wake", { events });

const bridge = startBridge(server, { delayMs: bridgeDelayMs, clientName: "delivery-agent" });
const status = await Promise.race([
  bridge.ready.then((ok) => ok ? "connected" : "failed"),
  new Promise((r) => setTimeout(() => r("pending"), waits ? connectTimeoutMs : windowMs)),
]);
out({ type: "system", subtype: "init", mcp_servers: [{ name: "wats", status }] });
log("init", { status, waits });

if (Math.random() < failRate) {
  log("failed", { why: "529" });
  out({
    type: "result",
    subtype: "success",
    is_error: true,
    num_turns: 1,
    total_cost_usd: 0,
    result:
      'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
  });
  await finish(1);
}
if (status !== "connected") {
  // The CLI goes on without the server: the model answers in text and nothing reaches anyone.
  log("failed", { why: "no tools" });
  out({ type: "result", subtype: "success", is_error: false, num_turns: 1, total_cost_usd: 0 });
  await finish(0);
}
const asks = events.filter((e) => e.kind === "ask");
const errors = asks.length > 0
  ? await claimThenAnswer(bridge, asks, {
    onToolError: (e) => log("tool_error", { ...e, text: e.text.slice(0, 300) }),
    onAnswer: (a, said) => log("answer", { ask: a.id, id: /\b[0-9a-f]{64}\b/.exec(said)?.[0] }),
  })
  : [];
printResult(errors);
await finish(0);

async function finish(code) {
  log("end", { code });
  bridge.close();
  await bridge.exited;
  process.exit(code);
}
