/**
 * Routing across a network (issue 18): several real daemons, each with the
 * real Claude Code CLI against its own scripted mock model, synced through one
 * relay (each test three times: the independent relay of tests/support/node/relay,
 * a wats node's endpoint, and a wats endpoint with `net.auth = "required"` whose
 * members are the other nodes' profiles: issue 31), each node through its own
 * relay tap (tests/support/relay_tap.ts) that keeps the REQ frames it sends. The
 * tap passes `X-Forwarded-Host` as a reverse proxy would, which the members-only
 * endpoint trusts (`net.trust_forwarded`) to check each node's AUTH relay tag.
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
import { deriveProfileKey } from "../../src/identity/profile_key.ts";

const claude = requireCli("claude");

/**
 * The relays each test runs through: the independent relay, which sends live
 * events whatever their tags (the node's own interest check drops the rest),
 * and a wats node's endpoint, which applies each filter to live events too,
 * so a node gets only what it asked for.
 */
const RELAYS = ["the Node relay", "a node's endpoint", "a members-only endpoint"] as const;
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

/** A relay of a test; a members-only one hands out the data dirs of its members. */
interface RelayScope extends AsyncDisposable {
  url: string;
  /** A data dir whose node's profiles (person, helper, carol) are members; absent: any node is. */
  seat?: () => string;
}

/**
 * Starts a node on `relay` through a tap; with `agent`, its runner on, settings as WATS_*
 * variables. `outsider`: on a members-only relay, a node that is not a member.
 */
async function member(
  relay: RelayScope,
  agent?: Record<string, string>,
  outsider = false,
): Promise<Member> {
  const tap = startRelayTap(relay.url);
  const mock = agent ? answeringMock() : undefined;
  const seat = outsider ? undefined : relay.seat?.();
  const rig = await nodeRig({
    args: ["--infra", tap.url],
    ...(seat ? { dataDir: seat, config: `profile = "${PERSON}"\n` } : {}),
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

/** The person profile of a member's node (its config.toml says so: the OS user varies). */
const PERSON = "person";
/** Data dirs a members-only relay prepares: more than any test here starts. */
const SEATS = 6;

/** A relay of `via`, closed with the scope. */
async function relayScope(via: RelayKind): Promise<RelayScope> {
  if (via === "the Node relay") {
    const relay = await startNodeRelay();
    return Object.assign(relay, { [Symbol.asyncDispose]: () => relay.stop() });
  }
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  if (via === "a node's endpoint") {
    const rig = await nodeRig({ args: ["--listen", `127.0.0.1:${port}`] });
    return {
      url: `ws://127.0.0.1:${port}`,
      [Symbol.asyncDispose]: () => rig[Symbol.asyncDispose](),
    };
  }
  // Each member's node key is written before anything starts, so that the endpoint's
  // net.members can name its profiles' keys (derived from it: src/identity).
  const seats = Array.from({ length: SEATS }, () => {
    const dir = Deno.makeTempDirSync({ prefix: "wats-member-" });
    const secret = crypto.getRandomValues(new Uint8Array(32));
    Deno.writeFileSync(`${dir}/node.key`, secret, { mode: 0o600 });
    return { dir, keys: [PERSON, "helper", "carol"].map((n) => deriveProfileKey(secret, n).npub) };
  });
  const rig = await nodeRig({
    args: ["--listen", `127.0.0.1:${port}`],
    config: [
      'net.auth = "required"',
      `net.members = [${seats.flatMap((s) => s.keys).map((k) => `"${k}"`).join(", ")}]`,
      "net.trust_forwarded = true",
      "",
    ].join("\n"),
  });
  let next = 0;
  return {
    url: `ws://127.0.0.1:${port}`,
    seat: () => seats[next++]!.dir,
    async [Symbol.asyncDispose]() {
      await rig[Symbol.asyncDispose]();
      for (const s of seats) await Deno.remove(s.dir, { recursive: true }).catch(() => {});
    },
  };
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

Deno.test({
  ...optsFor("a members-only endpoint"),
  name: "through a members-only endpoint: a node whose profiles are not members gets nothing and " +
    "can post nothing; its ask shows refused, kept queued",
  async fn() {
    await using relay = await relayScope("a members-only endpoint");
    await using agent = await member(relay, {});
    await using poster = await member(relay);
    await using outsider = await member(relay, undefined, true);
    const carol = await poster.rig.mcp("carol");
    const stranger = await outsider.rig.mcp("carol");

    const outside = idIn(await call(stranger, "ask", { title: "Outside", text: "Let me in?" }));
    // The endpoint refused the outsider's AUTH (restricted:), then its post.
    await waitFor(
      "the outsider's AUTH and post answered",
      () => (outsider.tap.downByType().OK ?? 0) >= 2,
      120_000,
    );
    const inside = idIn(await call(carol, "ask", { title: "Inside", text: "Members only?" }));
    await waitListed(agent, inside, "a member's agent wakes for a member's ask");
    const marker = idIn(await call(carol, "ask", { title: "Marker", text: "Anyone?" }));
    await waitListed(agent, marker, "and for the next");

    assert.ok(!listed(agent).has(outside), "the outsider's ask never woke a member's agent");
    assert.ok(!stored(agent, outside) && !stored(poster, outside), "nor was it stored");
    assert.ok(!stored(outsider, inside) && !stored(outsider, marker), "the outsider got nothing");
    assert.equal(outsider.tap.downByType().EVENT ?? 0, 0, "not one EVENT sent to the outsider");
    const state = await call(stranger, "thread", { id: outside });
    assert.match(state, /refused by ws:\/\/127\.0\.0\.1:\d+: restricted:/);
    const status = await outsider.rig.wats(["status"]);
    // The ask and the node's presence ("off": it runs no agent).
    assert.match(status.stdout, /restricted: .*, \d+ post\(s\) refused and kept queued/);
  },
});
