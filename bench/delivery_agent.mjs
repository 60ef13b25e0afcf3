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

import { spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";

const args = process.argv.slice(2);
if (!args.includes("-p")) process.exit(1);

const config = JSON.parse(readFileSync(args[args.indexOf("--mcp-config") + 1], "utf8"));
const server = config.mcpServers.wats;
const dataDir = server.args[server.args.indexOf("--data-dir") + 1];
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

let prompt = "";
for await (const chunk of process.stdin) prompt += chunk;
// Only the "New events (n):" list woke the run; the prompt's other lists name ids the same way.
const list = /^New events \(\d+\):\n((?:- .*(?:\n|$))*)/m.exec(prompt)?.[1] ?? "";
const events = [...list.matchAll(/^- ([0-9a-f]{64}): (\w+) by /gm)].map((m) => ({
  id: m[1],
  kind: m[2],
}));
log("wake", { events });

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const bridge = startBridge();
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
const errors = asks.length > 0 ? await act(asks) : [];
out({
  type: "result",
  subtype: errors.length ? "error_during_execution" : "success",
  is_error: errors.length > 0,
  num_turns: 1,
  total_cost_usd: 0,
  ...(errors.length ? { errors } : {}),
});
await finish(0);

async function finish(code) {
  log("end", { code });
  bridge.close();
  await bridge.exited;
  process.exit(code);
}

/** Starts `wats mcp` `bridgeDelayMs` late and sends `initialize`; `ready` says whether it answered. */
function startBridge() {
  let child;
  let closed = false;
  let exitedResolve;
  const exited = new Promise((r) => (exitedResolve = r));
  const waiting = new Map();
  let next = 0;
  const request = (method, params) => {
    const id = ++next;
    const answer = new Promise((r) => waiting.set(id, r));
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    // A bridge that dies answers nothing: end the wait with an error then.
    return Promise.race([answer, exited.then(() => ({ error: { message: "wats mcp exited" } }))]);
  };
  const ready = (async () => {
    await new Promise((r) => setTimeout(r, bridgeDelayMs));
    if (closed) {
      exitedResolve();
      return false;
    }
    child = spawn(server.command, server.args, {
      env: { ...process.env, ...server.env },
      stdio: ["pipe", "pipe", "ignore"],
    });
    child.on("exit", () => exitedResolve());
    child.on("error", () => exitedResolve());
    let buf = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        waiting.get(msg.id)?.(msg);
        waiting.delete(msg.id);
      }
    });
    const init = await request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "delivery-agent", version: "1" },
    });
    if (init.error) return false;
    child.stdin.write(
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n",
    );
    return true;
  })();
  return {
    ready,
    request,
    exited,
    close() {
      closed = true;
      try {
        child?.stdin.end();
      } catch { /* gone */ }
    },
  };
}

/** Claims, then answers, each ask; returns the tools' errors. */
async function act(asks) {
  const errors = [];
  const call = async (name, a) => {
    const r = await bridge.request("tools/call", { name, arguments: a });
    const text = r.error?.message ??
      (r.result?.isError ? r.result.content?.map((c) => c.text).join(" ") : undefined);
    if (text !== undefined) {
      errors.push(`${name}: ${text}`);
      log("tool_error", { tool: name, parent: a.parent, text: text.slice(0, 300) });
      return undefined;
    }
    return r.result?.content?.map((c) => c.text).join(" ") ?? "";
  };
  // Every claim first, as an agent told to claim before long work would.
  for (const a of asks) await call("post", { kind: "claim", parent: a.id, text: "On it." });
  for (const a of asks) {
    const said = await call("post", { kind: "answer", parent: a.id, text: "Use journald." });
    if (said !== undefined) log("answer", { ask: a.id, id: /\b[0-9a-f]{64}\b/.exec(said)?.[0] });
  }
  return errors;
}
