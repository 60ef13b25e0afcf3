#!/usr/bin/env node
// The stand-in agent of bench/network_wakes.ts: installed as `claude` first on
// the PATH of a daemon whose runner has `agent.runtime = "claude"`, so each wake
// goes through the real runner, spawn, prompt and run record, and the agent
// acts through the real `wats mcp` of the run's MCP config, as Claude Code
// would. It costs one Node start and one `wats mcp` per wake instead of a
// model CLI's start: at 12 nodes and 100 asks the real CLI would not fit the
// bench's 10 minutes on two cores.
//
// A wake (`-p`): reads the prompt on stdin, appends one JSON line
// `{"at": ms, "events": [{"id", "kind"}]}` to `<data dir>/bench-wakes.jsonl`
// (the data dir read from the MCP config), then for each ask the prompt lists
// calls the `claim` tool (all of them first), then `answer`, and prints the stream-json `init` and
// `result` lines the runner's Claude parser reads. Anything else (`claude mcp
// get` while the daemon registers wats in Claude Code): exit 1, which the
// daemon reports as a warning and ignores.
//
// Plain Node with no dependency: it starts in tens of milliseconds.

import { spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";

const args = process.argv.slice(2);
if (!args.includes("-p")) process.exit(1);

const config = JSON.parse(readFileSync(args[args.indexOf("--mcp-config") + 1], "utf8"));
const server = config.mcpServers.wats;
const dataDir = server.args[server.args.indexOf("--data-dir") + 1];

let prompt = "";
for await (const chunk of process.stdin) prompt += chunk;
// Only the "New events (n):" list woke the run; the prompt's other lists (asks
// other agents claimed, feedback) name post ids in the same shape.
const list = /^New events \(\d+\):\n((?:- .*(?:\n|$))*)/m.exec(prompt)?.[1] ?? "";
const events = [...list.matchAll(/^- ([0-9a-f]{64}): (\w+) by /gm)].map((m) => ({
  id: m[1],
  kind: m[2],
}));
appendFileSync(
  `${dataDir}/bench-wakes.jsonl`,
  JSON.stringify({ at: Date.now(), events }) + "\n",
);

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
out({ type: "system", subtype: "init", mcp_servers: [{ name: "wats", status: "connected" }] });

const asks = events.filter((e) => e.kind === "ask");
let errors = [];
if (asks.length > 0) errors = await act(asks);
out({
  type: "result",
  subtype: errors.length ? "error_during_execution" : "success",
  is_error: errors.length > 0,
  num_turns: 1,
  total_cost_usd: 0,
  ...(errors.length ? { errors } : {}),
});

/** Claims, then answers, each ask through `wats mcp`; returns the tools' errors. */
async function act(asks) {
  const child = spawn(server.command, server.args, {
    env: { ...process.env, ...server.env },
    stdio: ["pipe", "pipe", "ignore"],
  });
  const waiting = new Map();
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
  const exited = new Promise((r) => child.on("exit", () => r(undefined)));
  let next = 0;
  const request = (method, params) => {
    const id = ++next;
    const answer = new Promise((r) => waiting.set(id, r));
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    // A bridge that dies answers nothing: end the wait with an error then.
    return Promise.race([answer, exited.then(() => ({ error: { message: "wats mcp exited" } }))]);
  };
  const errors = [];
  const call = async (name, a) => {
    const r = await request("tools/call", { name, arguments: a });
    const text = r.error?.message ??
      (r.result?.isError ? r.result.content?.map((c) => c.text).join(" ") : undefined);
    if (text !== undefined) errors.push(`${name}: ${text}`);
  };
  const init = await request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "network-wakes-agent", version: "1" },
  });
  if (init.error) return [`initialize: ${init.error.message}`];
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  // Every claim first, as an agent told to claim before long work would: the
  // others' queued wakes for these asks can drop them while this one answers.
  for (const a of asks) await call("post", { kind: "claim", parent: a.id, text: "On it." });
  for (const a of asks) await call("post", { kind: "answer", parent: a.id, text: "Use journald." });
  child.stdin.end();
  await exited;
  return errors;
}
