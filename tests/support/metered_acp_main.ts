/**
 * A coding agent process for daemon tests of the budget (tests/e2e/acp_spend_kill_test.ts):
 * it speaks ACP over stdio as plain JSON lines (no imports, so it runs with
 * `deno run --no-config` wherever the daemon starts it), and to each prompt
 * makes one model reply that costs the USD amount in its first argument
 * (`usage_update` with the session's cumulative cost, as Claude reports it),
 * then works on without ending the prompt, until it is cancelled or its stdin
 * closes (its daemon died).
 *
 * @module
 */

const cost = Number(Deno.args[0] ?? "0.3");
const out = new TextEncoder();
const send = (msg: unknown) => Deno.stdout.writeSync(out.encode(JSON.stringify(msg) + "\n"));
let spent = 0;
const prompts = new Map<string, number | string>();

function answer(msg: { id: number | string; method: string; params?: Record<string, unknown> }) {
  if (msg.method === "initialize") {
    send({
      jsonrpc: "2.0",
      id: msg.id,
      result: {
        protocolVersion: 1,
        agentCapabilities: {},
        agentInfo: { name: "metered", version: "0" },
      },
    });
  } else if (msg.method === "session/new") {
    send({ jsonrpc: "2.0", id: msg.id, result: { sessionId: "metered-1" } });
  } else if (msg.method === "session/prompt") {
    const sessionId = String(msg.params?.sessionId);
    prompts.set(sessionId, msg.id);
    spent += cost;
    send({
      jsonrpc: "2.0",
      method: "session/update",
      params: {
        sessionId,
        update: {
          sessionUpdate: "usage_update",
          used: 1,
          size: 1_000_000,
          cost: { amount: spent, currency: "USD" },
        },
      },
    });
  } else {
    send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `no ${msg.method}` } });
  }
}

let buf = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl).trim();
    buf = buf.slice(nl + 1);
    if (line === "") continue;
    const msg = JSON.parse(line);
    if (msg.method === "session/cancel") {
      const id = prompts.get(String(msg.params?.sessionId));
      if (id !== undefined) send({ jsonrpc: "2.0", id, result: { stopReason: "cancelled" } });
    } else if (msg.id !== undefined && msg.method !== undefined) answer(msg);
  }
}
