// What the swarm benches' stand-in agents share (network_wakes_agent.mjs, delivery_agent.mjs):
// each is linked as `claude` first on the PATH of a daemon whose runner has
// `agent.runtime = "claude"`, so each wake goes through the real runner, spawn, prompt and run
// record, and the agent acts through the real `wats mcp` of the run's MCP config, as Claude Code
// would. Plain Node with no dependency: it starts in tens of milliseconds.

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * The wake this process is: its MCP config's wats server, the data dir, and the events the
 * prompt's "New events (n):" list names (the prompt's other lists — asks other agents claimed,
 * feedback — name post ids in the same shape, but did not wake the run). Anything else than a
 * `-p` run (`claude mcp get` while the daemon registers wats) exits 1, which the daemon reports
 * as a warning and ignores.
 */
export async function readWake() {
  const args = process.argv.slice(2);
  if (!args.includes("-p")) process.exit(1);
  const config = JSON.parse(readFileSync(args[args.indexOf("--mcp-config") + 1], "utf8"));
  const server = config.mcpServers.wats;
  const dataDir = server.args[server.args.indexOf("--data-dir") + 1];
  let prompt = "";
  for await (const chunk of process.stdin) prompt += chunk;
  const list = /^New events \(\d+\):\n((?:- .*(?:\n|$))*)/m.exec(prompt)?.[1] ?? "";
  // "- ID: KIND by NPUB, …" or, when the prompt shows the threads (their fences name the
  // authors), "- ID: KIND, starts its thread" / "- ID: KIND in thread …".
  const events = [...list.matchAll(/^- ([0-9a-f]{64}): (\w+)\b/gm)].map((m) => ({
    id: m[1],
    kind: m[2],
  }));
  return { server, dataDir, events };
}

/** Prints one stream-json line, as Claude Code does. */
export const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");

/** Prints the run's `result` line: an error when a tool failed (`errors`). */
export function printResult(errors) {
  out({
    type: "result",
    subtype: errors.length ? "error_during_execution" : "success",
    is_error: errors.length > 0,
    num_turns: 1,
    total_cost_usd: 0,
    ...(errors.length ? { errors } : {}),
  });
}

/**
 * Starts `wats mcp` (the wats server of the run's config) `delayMs` late and sends
 * `initialize`; `ready` says whether it answered. `request` sends one JSON-RPC request; a bridge
 * that dies answers every request still waiting with an error.
 */
export function startBridge(server, { delayMs = 0, clientName }) {
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
    return Promise.race([answer, exited.then(() => ({ error: { message: "wats mcp exited" } }))]);
  };
  const ready = (async () => {
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
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
      clientInfo: { name: clientName, version: "1" },
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

/**
 * Calls one tool through `bridge`: resolves with its text, or undefined when it failed (the
 * error, `name: message`, goes to `onError`).
 */
export async function callTool(bridge, name, args, onError) {
  const r = await bridge.request("tools/call", { name, arguments: args });
  const text = r.error?.message ??
    (r.result?.isError ? r.result.content?.map((c) => c.text).join(" ") : undefined);
  if (text !== undefined) {
    onError(`${name}: ${text}`, text);
    return undefined;
  }
  return r.result?.content?.map((c) => c.text).join(" ") ?? "";
}

/**
 * Posts a reply of `kind` through `post`; against a baseline from before `post` (issue 30), whose
 * kinds were tools of their own (`claim`, `answer`), through the kind's tool. The bridge
 * remembers which it has.
 */
async function postKind(bridge, kind, args, onError) {
  if (!bridge.kindTools) {
    let missing = false;
    const said = await callTool(bridge, "post", { kind, ...args }, (line, text) => {
      if (/Tool post not found/.test(text)) missing = true;
      else onError(line, text);
    });
    if (!missing) return said;
    bridge.kindTools = true;
  }
  return await callTool(bridge, kind, args, onError);
}

/**
 * Claims every ask first, as an agent told to claim before long work would (the others' queued
 * wakes for these asks can drop them while this one answers), then answers each; `onAnswer` gets
 * each answer's tool text. Returns the tools' errors.
 */
export async function claimThenAnswer(bridge, asks, o = {}) {
  const errors = [];
  const onError = (line, text, tool, parent) => {
    errors.push(line);
    o.onToolError?.({ tool, parent, text });
  };
  for (const a of asks) {
    await postKind(
      bridge,
      "claim",
      { parent: a.id, text: "On it." },
      (l, t) => onError(l, t, "claim", a.id),
    );
  }
  for (const a of asks) {
    const said = await postKind(
      bridge,
      "answer",
      { parent: a.id, text: "Use journald." },
      (l, t) => onError(l, t, "answer", a.id),
    );
    if (said !== undefined) o.onAnswer?.(a, said);
  }
  return errors;
}
