/**
 * What became of an ask, end to end (docs/asks.md): real daemons synced through one relay (the
 * independent relay of tests/support/node/relay when installed, else a wats node's endpoint), the
 * sender reading its ask's state through the `ask`/`thread` tools and `wats ask`/`wats thread`:
 * sent and routed, none will wake, claimed by another node's agent, no taker after
 * agent.ask_timeout (the `no_taker` notification delivered to a webhook the test serves),
 * answered by another node's agent (the real Claude Code against a scripted model), and an answer
 * held for review on the sender's own node. Every wait is on an event or a condition.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { decode as nip19Decode } from "nostr-tools/nip19";
import { signature } from "../../src/node/notify_payloads.ts";
import { requireCli } from "../support/clis.ts";
import { type NodeRig, nodeRig } from "../support/rig.ts";
import { answeringMock, call, idIn } from "../support/swarm.ts";
import { RELAY_HELPER, startNodeRelay } from "../net/node_relay.ts";

const claude = requireCli("claude");
const opts = { sanitizeOps: false, sanitizeResources: false };

/** A relay for the test's nodes, closed with the scope. */
async function relayScope(): Promise<{ url: string } & AsyncDisposable> {
  if (RELAY_HELPER !== null) {
    const relay = await startNodeRelay();
    return Object.assign(relay, { [Symbol.asyncDispose]: () => relay.stop() });
  }
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const rig = await nodeRig({ args: ["--listen", `127.0.0.1:${port}`] });
  return { url: `ws://127.0.0.1:${port}`, [Symbol.asyncDispose]: () => rig[Symbol.asyncDispose]() };
}

/** The hex key of a profile `started` names. */
function hexOf(rig: NodeRig, profile: string): string {
  return nip19Decode(rig.started.profiles[profile]!).data as string;
}

/** Waits until `rig` stored a post matching `where` (its `post_stored` event). */
function storedBy(
  rig: NodeRig,
  where: (e: { id: string; kind: string; author: string }) => boolean,
) {
  return rig.waitEvent("post_stored", { where, timeoutMs: 120_000 });
}

/** Calls `thread` until its text matches `want`: the state follows acknowledgements and posts. */
async function threadUntil(client: Client, id: string, want: RegExp): Promise<string> {
  const give = Date.now() + 120_000;
  for (;;) {
    const text = await call(client, "thread", { id });
    if (want.test(text)) return text;
    if (Date.now() > give) throw new Error(`the thread never matched ${want}:\n${text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The profile name of a node's person: the first one `started` names. */
function personOf(rig: NodeRig): string {
  return Object.keys(rig.started.profiles)[0]!;
}

Deno.test({
  ...opts,
  name:
    "through a relay: the sender sees its ask acknowledged and who it reaches, then claimed by another node's agent; an ask for caps no agent has says none will wake",
  async fn() {
    await using relay = await relayScope();
    await using b = await nodeRig({
      args: ["--infra", relay.url],
      env: { WATS_AGENT_PROFILE: "helper", WATS_AGENT_CAPS: "rust" },
    });
    await using a = await nodeRig({ args: ["--infra", relay.url] });
    const helper = hexOf(b, "helper");
    // A knows B's agent from its presence before it asks.
    await storedBy(a, (e) => e.kind === "presence" && e.author === helper);

    const asked = await a.wats([
      "ask",
      "Logs",
      "--text",
      "logrotate or journald?",
      "--caps",
      "rust",
    ]);
    assert.equal(asked.code, 0, asked.stderr);
    const ask = idIn(asked.stdout);
    // B's agent runs no runner (its presence says off): known and matching, not reachable.
    assert.match(
      asked.stdout,
      /- routing: 1 known agent matches caps \[rust\]; 0 are reachable/,
    );
    assert.match(asked.stdout, new RegExp(`State of ask ${ask}: waiting for a taker\\.`));
    const person = await a.mcp(personOf(a));
    await threadUntil(person, ask, /- sent: acknowledged by 1 of 1 relay\(s\)\n/);

    await storedBy(b, (e) => e.id === ask);
    const agentB = await b.mcp("helper");
    const claim = idIn(await call(agentB, "post", { kind: "claim", parent: ask, text: "On it." }));
    await storedBy(a, (e) => e.id === claim);
    const claimed = await a.wats(["thread", ask]);
    assert.equal(claimed.code, 0, claimed.stderr);
    assert.match(
      claimed.stdout,
      new RegExp(
        `State of ask ${ask}: claimed by ${b.started.profiles.helper} until \\S+Z unless they post again\\.`,
      ),
    );

    const cobol = await call(person, "ask", {
      title: "Old code",
      text: "COMP-3?",
      caps: ["cobol"],
    });
    assert.match(cobol, /: none will wake: no known agent has caps \[cobol\]\./);
    assert.match(cobol, /- routing: 0 known agents match caps \[cobol\]/);
  },
});

Deno.test({
  ...opts,
  name:
    "through a relay: an ask nobody answers or claims within agent.ask_timeout is no taker: the sender's thread says so and a signed no_taker notification reaches its webhook",
  async fn() {
    const got: Array<{ headers: Headers; body: string }> = [];
    let arrived: (() => void) | undefined;
    const first = new Promise<void>((r) => arrived = r);
    const hook = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
      got.push({ headers: req.headers, body: await req.text() });
      arrived?.();
      return new Response(null, { status: 200 });
    });
    try {
      await using relay = await relayScope();
      await using b = await nodeRig({ args: ["--infra", relay.url] });
      await using a = await nodeRig({
        args: ["--infra", relay.url],
        config: `[notify.hook]
type = "webhook"
url = "http://127.0.0.1:${hook.addr.port}/hook"
secret_env = "HOOK_SECRET"
events = ["no_taker"]
`,
        env: { HOOK_SECRET: "s3cret-for-test", WATS_AGENT_ASK_TIMEOUT: "3s" },
      });
      const person = await a.mcp(personOf(a));
      const ask = idIn(
        await call(person, "ask", { title: "Logs", text: "logrotate or journald?" }),
      );
      // It went out: the other node has it, and still nobody takes it.
      await storedBy(b, (e) => e.id === ask);

      const noTaker = await a.waitEvent("ask_no_taker", { where: (e) => e.ask === ask });
      assert.equal(noTaker.title, "Logs");
      await first;
      const [req] = got;
      const body = JSON.parse(req!.body);
      assert.equal(body.event, "no_taker");
      assert.equal(body.command, `wats thread ${ask}`);
      assert.equal(body.path, `/go/posts/thread/${ask}`);
      assert.match(body.text, /^"Logs": nobody answered or claimed it by /);
      const t = req!.headers.get("x-wats-timestamp")!;
      assert.equal(
        req!.headers.get("x-wats-signature"),
        `sha256=${signature("s3cret-for-test", t, req!.body)}`,
      );

      const shown = await a.wats(["thread", ask]);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(
        shown.stdout,
        new RegExp(`State of ask ${ask}: no taker: nobody answered or claimed it by \\S+Z`),
      );
      assert.equal(a.events("ask_no_taker").length, 1, "reported once");
    } finally {
      await hook.shutdown();
    }
  },
});

Deno.test({
  ...opts,
  ignore: claude === null,
  name:
    "through a relay: another node's agent (real Claude Code) answers the ask; the sender's node reports it as it arrives and its thread says answered by that agent",
  async fn() {
    await using relay = await relayScope();
    await using mock = answeringMock();
    // An agent that announced (agent.about): reachable counts only agents seen posting, never a
    // bare presence (docs/decisions/presence.md).
    await using b = await nodeRig({
      args: ["--infra", relay.url],
      agent: { mock, settings: { WATS_AGENT_ABOUT: "Answers questions" } },
    });
    await using a = await nodeRig({ args: ["--infra", relay.url] });
    await storedBy(a, (e) => e.kind === "presence" && e.author === hexOf(b, "helper"));

    const asked = await a.wats(["ask", "Logs", "--text", "logrotate or journald?"]);
    assert.equal(asked.code, 0, asked.stderr);
    const ask = idIn(asked.stdout);
    // Every agent with a presence could take an open ask; only B's runs (the others say off).
    assert.match(
      asked.stdout,
      /- routing: \d+ known agents? could take an open ask; 1 is reachable/,
    );

    const answered = await a.waitEvent("ask_answered", {
      where: (e) => e.ask === ask,
      timeoutMs: 240_000,
    });
    assert.equal(answered.by, b.started.profiles.helper);
    const shown = await a.wats(["thread", ask]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      new RegExp(`State of ask ${ask}: answered by ${b.started.profiles.helper} at \\S+Z\\.`),
    );
    assert.match(shown.stdout, new RegExp(`- answer ${answered.answer} by`));
    assert.match(shown.stdout, /Use journald/);
  },
});

Deno.test({
  ...opts,
  ignore: claude === null,
  name:
    "with agent.review, the agent's answer to the person's ask is held on this node: the person's thread says held for review, naming the draft",
  async fn() {
    await using relay = await relayScope();
    await using mock = answeringMock();
    await using node = await nodeRig({
      args: ["--infra", relay.url],
      agent: { mock, settings: { WATS_AGENT_REVIEW: "true" } },
    });
    const asked = await node.wats(["ask", "Logs", "--text", "logrotate or journald?"]);
    assert.equal(asked.code, 0, asked.stderr);
    const ask = idIn(asked.stdout);
    const held = await node.waitEvent("held", { timeoutMs: 240_000 });
    const shown = await node.wats(["thread", ask]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      new RegExp(
        `State of ask ${ask}: an answer to it is held for review on this node \\(draft ${held.id}\\)`,
      ),
    );
  },
});
