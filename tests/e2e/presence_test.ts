/**
 * Presence between two real daemons through the independent relay
 * (docs/decisions/presence.md): node A runs an agent with caps, node B has none;
 * B learns A's agent from its presence (`wats status`, the `agents` tool, the ask
 * tool's reach line), and when A's agent is halted (then resumed), B sees it as soon
 * as A's presence says so — not after a refresh period.
 *
 * @module
 */

import assert from "node:assert/strict";
import { decode } from "nostr-tools/nip19";
import { requireCli } from "../support/clis.ts";
import { agentEnv, answeringMock, call } from "../support/swarm.ts";
import { nodeRig } from "../support/rig.ts";
import { RELAY_HELPER, startNodeRelay } from "../net/node_relay.ts";

const claude = requireCli("claude");

Deno.test({
  name:
    "node B lists node A's agent with its caps from A's presence, and sees it halted, then running, as soon as A says so",
  ignore: claude === null || RELAY_HELPER === null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const relayDir = Deno.makeTempDirSync({ prefix: "wats-relay-" });
    const relay = await startNodeRelay({ db: `${relayDir}/relay.db` });
    try {
      await using mock = answeringMock();
      await using a = await nodeRig({
        args: ["--agent", "claude", "--agent-profile", "helper", "--infra", relay.url],
        env: agentEnv(mock),
        config:
          '[agent]\nabout = "Rust reviewer\\nReads borrow errors."\ncaps = ["rust", "review"]\n',
      });
      await using b = await nodeRig({ args: ["--infra", relay.url] });
      const agentNpub = a.started.profiles["helper"]!;
      const agentHex = decode(agentNpub as `npub1${string}`).data as string;
      const isAgentPresence = (e: { kind: string; author: string }) =>
        e.kind === "presence" && e.author === agentHex;

      const first = await b.waitEvent("post_stored", { where: isAgentPresence });
      assert.equal(first.source, relay.url);
      const status = await b.wats(["status"]);
      assert.equal(status.code, 0, status.stderr);
      const line = status.stdout.split("\n").find((l) => l.includes(agentNpub));
      assert.ok(line, status.stdout);
      assert.match(line, /"Rust reviewer" · caps: rust, review · running · last seen \S+Z$/);

      const bob = await b.mcp("bob");
      const agents = await call(bob, "agents", { caps: ["rust"] });
      assert.match(agents, /^1 known agent matches caps \[rust\]; 1 is reachable/);
      assert.match(agents, new RegExp(`- ${agentNpub} · "Rust reviewer"`));
      const asked = await call(bob, "ask", { title: "Borrow?", text: "E0502", caps: ["rust"] });
      assert.match(asked, /1 known agent matches caps \[rust\]; 1 is reachable/);

      const halted = await a.wats(["guardian", "halt", "--reason", "presence test"]);
      assert.equal(halted.code, 0, halted.stderr);
      await b.waitEvent("post_stored", { where: (e) => isAgentPresence(e) && e.id !== first.id });
      const after = await b.wats(["status"]);
      const haltedLine = after.stdout.split("\n").find((l) => l.includes(agentNpub));
      assert.match(haltedLine ?? after.stdout, /caps: rust, review · halted · last seen/);
      const reach = await call(bob, "agents", { caps: ["rust"] });
      assert.match(reach, /^1 known agent matches caps \[rust\]; 0 are reachable/);
      // B keeps one presence of A's agent, however often it is refreshed.
      assert.equal(after.stdout.split("\n").filter((l) => l.includes(agentNpub)).length, 1);

      // Resumed, A says so at once too.
      const second = b.events("post_stored").filter(isAgentPresence).at(-1)!;
      const resumed = await a.wats(["resume"]);
      assert.equal(resumed.code, 0, resumed.stderr);
      await b.waitEvent("post_stored", { where: (e) => isAgentPresence(e) && e.id !== second.id });
      const back = await call(bob, "agents", { to: [agentNpub] });
      assert.match(back, /^1 known agent is among the 1 addressed; 1 is reachable/);
      assert.match(back, /caps: rust, review · running ·/);
    } finally {
      await relay.stop();
      Deno.removeSync(relayDir, { recursive: true });
    }
  },
});
