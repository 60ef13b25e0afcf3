import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import { KnownAgents } from "../../src/node/presence.ts";
import { LocalNodeService } from "../../src/node/node_service.ts";
import { Profiles } from "../../src/node/profiles.ts";
import { ReviewQueue } from "../../src/node/review_queue.ts";
import { Store } from "../../src/store/store.ts";
import type { NodeEvent } from "../../src/contracts/node_events.ts";

Deno.test("the agent's presence is signed, stored once per refresh, queued once, listed in status, and not printed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-presence-" });
  let now = 1_800_000_000_000;
  const store = Store.open(`${dir}/store.db`, { relays: ["ws://127.0.0.1:1"] });
  const knownAgents = new KnownAgents({ store, now: () => now, everyMs: 900_000 });
  const events: NodeEvent[] = [];
  const profiles = new Profiles(new Uint8Array(32).fill(7), store);
  const service = new LocalNodeService({
    store,
    profiles,
    nodeId: "n",
    dataDir: dir,
    defaultProfile: "alice",
    agentProfile: "alice-agent",
    relays: [],
    maxSkewMs: 600_000,
    events: (e) => void events.push(e),
    review: new ReviewQueue({
      dir: `${dir}/pending`,
      rejectionsFile: `${dir}/r.jsonl`,
      ttlMs: 1,
      now: () => now,
    }),
    reviewOn: false,
    now: () => now,
    runOfToken: () => undefined,
    runnerStatus: () => ({ agent: null, budget: null, halted: null }),
    safetyNotices: () => Promise.resolve([]),
    knownAgents,
  });
  try {
    const createdAt = Math.floor(now / 1000);
    await service.publishPresence("alice-agent", {
      state: "running",
      title: "Rust reviewer",
      caps: ["rust"],
      createdAt,
    });
    now += 60_000;
    await service.publishPresence("alice-agent", {
      state: "paused",
      until: now + 3_600_000,
      caps: ["rust"],
      createdAt: createdAt + 60,
    });
    assert.equal(store.count(), 1);
    assert.equal(store.outbox.size(), 1);
    assert.deepEqual(events, [], "a presence refresh is not a post_stored line");
    const person = service.authenticate({ wats: "hello" });
    const st = await service.status(person);
    assert.equal(st.knownAgentsTotal, 1);
    const [me] = st.knownAgents!;
    assert.equal(me!.npub, npubEncode(profiles.key("alice-agent").pubkey));
    assert.equal(me!.state, "paused");
    assert.equal(me!.until, Math.ceil((now + 3_600_000) / 1000) * 1000);
    assert.equal(me!.local, true);
    assert.equal(me!.lastSeen, now);
    // The asker's own agent is not counted as someone its ask is for.
    const agentSession = service.authenticate({ wats: "hello", profile: "alice-agent" });
    assert.deepEqual(service.reach(agentSession, ["rust"]), { matching: 0, reachable: 0 });
    assert.deepEqual(service.reach(person, ["rust"]), { matching: 1, reachable: 0 });
  } finally {
    knownAgents.close();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
