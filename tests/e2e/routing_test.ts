/**
 * Routing across a network (issue 18): several real daemons, each with the
 * real Claude Code CLI against its own scripted mock model, synced through one
 * relay (each test twice: the independent relay of tests/support/node/relay,
 * and a wats node's endpoint), each node through its own relay tap
 * (tests/support/relay_tap.ts) that keeps the REQ frames it sends.
 *
 * "Never woke for X" is read at a marker: after X reached the agents that
 * should wake, an open ask goes out behind it on the same relay connection;
 * once an agent ran for the marker, it has seen X, and no request its model
 * received listed X. No test waits a fixed time.
 *
 * @module
 */

import assert from "node:assert/strict";
import { decode as nip19Decode } from "nostr-tools/nip19";
import { requireCli } from "../support/clis.ts";
import type { MockAnthropic } from "../support/mock_anthropic.ts";
import { answeringMock, call, eventIds, idIn, waitFor } from "../support/swarm.ts";
import { type NodeRig, nodeRig } from "../support/rig.ts";
import { type RelayTap, startRelayTap } from "../support/relay_tap.ts";
import { RELAY_HELPER, startNodeRelay } from "../net/node_relay.ts";
import { nostrKindOf } from "../../src/posts/kinds.ts";

const claude = requireCli("claude");

/**
 * The relays each test runs through: the independent relay, which sends live
 * events whatever their tags (the node's own interest check drops the rest),
 * and a wats node's endpoint, which applies each filter to live events too,
 * so a node gets only what it asked for.
 */
const RELAYS = ["the Node relay", "a node's endpoint"] as const;
type RelayKind = typeof RELAYS[number];

function optsFor(via: RelayKind) {
  return {
    ignore: claude === null || (via === "the Node relay" && RELAY_HELPER === null),
    sanitizeOps: false,
    sanitizeResources: false,
  };
}

/** A node of the network: its rig, its relay tap, its agent (when it has one). */
interface Member extends AsyncDisposable {
  rig: NodeRig;
  tap: RelayTap;
  /** The agent profile's npub and hex key (`helper`); empty on a node without an agent. */
  npub: string;
  hex: string;
  /** The agent's mock model (nodes without an agent: undefined). */
  mock?: MockAnthropic;
}

/** Starts a node on `relay` through a tap; with `agent`, its runner on, settings as WATS_* variables. */
async function member(
  relay: { url: string },
  agent?: Record<string, string>,
): Promise<Member> {
  const tap = startRelayTap(relay.url);
  const mock = agent ? answeringMock() : undefined;
  const rig = await nodeRig({
    args: ["--infra", tap.url],
    ...(mock ? { agent: { mock, settings: agent } } : {}),
  });
  const npub = rig.started.profiles.helper ?? "";
  // Connected: the node has subscribed through its tap.
  await waitFor("the node's first REQ", () => tap.up().some((f) => f[0] === "REQ"), 120_000);
  return {
    rig,
    tap,
    npub,
    hex: npub ? nip19Decode(npub).data as string : "",
    ...(mock ? { mock } : {}),
    async [Symbol.asyncDispose]() {
      await rig[Symbol.asyncDispose]();
      await tap.close();
      await mock?.[Symbol.asyncDispose]();
    },
  };
}

/** Every event id the agent's model was shown in a wake prompt. */
function listed(m: Member): Set<string> {
  return new Set(m.mock!.messages().flatMap((r) => r.body ? eventIds(r.body) : []));
}

/** Waits until a wake prompt of `m` listed `id`. */
function waitListed(m: Member, id: string, what: string): Promise<void> {
  return waitFor(
    `${what}: a wake of ${m.npub.slice(0, 12)} for ${id}`,
    () => listed(m).has(id),
    240_000,
  );
}

/** True once `m`'s node stored `id` (its `post_stored` event). */
function stored(m: Member, id: string): boolean {
  return m.rig.events("post_stored").some((e) => e.id === id);
}

/** A relay of `via`, closed with the scope. */
async function relayScope(via: RelayKind): Promise<{ url: string } & AsyncDisposable> {
  if (via === "the Node relay") {
    const relay = await startNodeRelay();
    return Object.assign(relay, { [Symbol.asyncDispose]: () => relay.stop() });
  }
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const rig = await nodeRig({ args: ["--listen", `127.0.0.1:${port}`] });
  return { url: `ws://127.0.0.1:${port}`, [Symbol.asyncDispose]: () => rig[Symbol.asyncDispose]() };
}

for (const via of RELAYS) {
  Deno.test({
    ...optsFor(via),
    name: `through ${via}: ` +
      "an ask with `to` wakes only its addressee, an ask with caps only the agents with a matching cap; the others never wake for them",
    async fn() {
      await using relay = await relayScope(via);
      await using rust = await member(relay, { WATS_AGENT_CAPS: "rust" });
      await using go = await member(relay, { WATS_AGENT_CAPS: "go" });
      // A third agent without caps: nothing addressed to it, no cap it has.
      await using plain = await member(relay, {});
      await using poster = await member(relay);
      const carol = await poster.rig.mcp("carol");

      const toGo = idIn(
        await call(carol, "ask", { title: "For go", text: "Which GC settings?", to: [go.npub] }),
      );
      const forRust = idIn(
        await call(carol, "ask", {
          title: "Borrowing",
          text: "Why this lifetime?",
          caps: ["rust"],
        }),
      );
      await waitListed(go, toGo, "the addressee wakes");
      await waitListed(rust, forRust, "the matching agent wakes");
      // Both asks reached every agent's node (or were not sent to it) before the marker.
      const marker = idIn(await call(carol, "ask", { title: "Marker", text: "Anyone?" }));
      for (const m of [rust, go, plain]) {
        await waitListed(m, marker, "an open ask wakes every agent");
      }

      assert.ok(!listed(rust).has(toGo), "an ask addressed to another agent did not wake rust");
      assert.ok(!listed(plain).has(toGo), "an ask addressed to another agent did not wake plain");
      assert.ok(!listed(go).has(forRust), "a cap ask did not wake an agent without that cap");
      assert.ok(
        !listed(plain).has(forRust),
        "a cap ask did not wake an agent that announced no caps",
      );
      // The addressee's node may store the ask; the others store it too or never receive it.
      assert.ok(stored(go, toGo));
    },
  });

  Deno.test({
    ...optsFor(via),
    name: `through ${via}: ` +
      "a claim by agent A that arrives while B's wake for the ask is queued drops it: B never runs for that ask",
    async fn() {
      await using relay = await relayScope(via);
      // B's wake waits out a long debounce; the claim arrives inside it.
      await using b = await member(relay, { WATS_AGENT_EVERY: "30s" });
      await using a = await member(relay);
      const carol = await a.rig.mcp("carol");
      const agentA = await a.rig.mcp("helper");

      const ask = idIn(await call(carol, "ask", { title: "Logs", text: "logrotate or journald?" }));
      await waitFor("B stores the ask", () => stored(b, ask), 120_000);
      const claim = idIn(
        await call(agentA, "post", { kind: "claim", parent: ask, text: "On it." }),
      );
      await waitFor("B stores the claim", () => stored(b, claim), 120_000);
      assert.equal(
        b.rig.events("run_started").length,
        0,
        "the claim reached B inside its debounce (a loaded machine that ran B first proves nothing)",
      );

      const marker = idIn(await call(carol, "ask", { title: "Marker", text: "Anyone?" }));
      await waitListed(b, marker, "B wakes for the next ask");
      assert.ok(!listed(b).has(ask), "B never ran for the claimed ask");
    },
  });

  Deno.test({
    ...optsFor(via),
    name: `through ${via}: ` +
      "a claim that lapses (agent.claim_ttl) with no progress or answer opens the ask again: B wakes for it after the lapse, not before",
    async fn() {
      const ttlMs = 40_000;
      await using relay = await relayScope(via);
      // The debounce ends inside the claim's life: code without claims runs B then.
      await using b = await member(relay, { WATS_AGENT_EVERY: "20s", WATS_AGENT_CLAIM_TTL: "40s" });
      await using a = await member(relay);
      const carol = await a.rig.mcp("carol");
      const agentA = await a.rig.mcp("helper");

      const ask = idIn(await call(carol, "ask", { title: "Logs", text: "logrotate or journald?" }));
      await waitFor("B stores the ask", () => stored(b, ask), 120_000);
      // The claim's created_at is at least this second: it lapses no earlier than that + the TTL.
      const claimedFrom = Math.floor(Date.now() / 1000) * 1000;
      const claim = idIn(
        await call(agentA, "post", { kind: "claim", parent: ask, text: "On it." }),
      );
      await waitFor("B stores the claim", () => stored(b, claim), 120_000);
      assert.equal(
        b.rig.events("run_started").length,
        0,
        "the claim reached B inside its debounce",
      );

      // A safety net only (60 s is the expected time): B's log says where a wake got stuck.
      await waitFor("B starts a run", () => b.rig.events("run_started").length > 0, 600_000)
        .catch((err) => {
          throw new Error(`${err.message}; B's log:\n${b.rig.node.stderr().slice(-4000)}`);
        });
      // Seen at most 100 ms after the run started: never earlier than it started.
      const startedBy = Date.now();
      assert.ok(
        startedBy >= claimedFrom + ttlMs,
        `B ran ${((claimedFrom + ttlMs - startedBy) / 1000).toFixed(1)} s before the claim lapsed`,
      );
      await waitListed(b, ask, "the lapsed claim wakes B for the ask");
    },
  });

  Deno.test({
    ...optsFor(via),
    name: `through ${via}: ` +
      "a node subscribes for what its agent is for: `#p` its profiles, `#t` its caps, no firehose of wats kinds with agent.open_asks = false",
    async fn() {
      await using relay = await relayScope(via);
      await using node = await member(relay, {
        WATS_AGENT_CAPS: "rust,go",
        WATS_AGENT_OPEN_ASKS: "false",
      });
      const filters = node.tap.reqFilters();
      const tagValues = (tag: string) =>
        filters.flatMap((f) => Array.isArray(f[tag]) ? f[tag] as string[] : []);
      assert.ok(
        tagValues("#p").includes(node.hex),
        `a #p filter names the agent: ${JSON.stringify(filters)}`,
      );
      assert.ok(
        tagValues("#t").includes("cap:rust") && tagValues("#t").includes("cap:go"),
        `#t filters name the caps: ${JSON.stringify(filters)}`,
      );
      const ask = nostrKindOf("ask");
      // A filter for asks that names no tag, author or id is the firehose an open-asks node takes.
      const narrowed = (f: Record<string, unknown>) =>
        ["#p", "#t", "#e", "#E", "authors", "ids"].some((k) => k in f);
      const firehose = filters.filter((f) =>
        (!Array.isArray(f.kinds) || (f.kinds as number[]).includes(ask)) && !narrowed(f)
      );
      assert.deepEqual(firehose, [], "no subscription takes every ask");
    },
  });
}
