/**
 * The `ask` tool's `to` (docs/mcp.md) through the real node service and store: the
 * authors become NIP-01 `p` tags of the signed ask, a held ask keeps them until it is
 * approved, and the thread shows them as a `to:` line.
 */
import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import { LocalNodeService } from "../../src/node/node_service.ts";
import { Profiles } from "../../src/node/profiles.ts";
import { ReviewQueue } from "../../src/node/review_queue.ts";
import { KnownAgents } from "../../src/node/presence.ts";
import { Store } from "../../src/store/store.ts";
import { call, connect } from "./connect.ts";

const BOB = "b".repeat(64);
const CAROL = "c".repeat(64);

function node(dir: string): { service: LocalNodeService; store: Store } {
  const now = () => 1_800_000_000_000;
  const store = Store.open(`${dir}/store.db`, { now, relays: [] });
  const service = new LocalNodeService({
    store,
    profiles: new Profiles(new Uint8Array(32).fill(7), store),
    nodeId: "node-test",
    dataDir: dir,
    defaultProfile: "alice",
    agentProfile: "alice-agent",
    relays: [],
    maxSkewMs: 600_000,
    events: () => {},
    review: new ReviewQueue({
      dir: `${dir}/pending`,
      rejectionsFile: `${dir}/rejections.jsonl`,
      ttlMs: 3_600_000,
      now,
    }),
    reviewOn: true,
    now,
    runOfToken: (t) => (t === "tok" ? "run-1" : undefined),
    runnerStatus: () => ({ agent: null, budget: null, halted: null }),
    safetyNotices: () => Promise.resolve([]),
    knownAgents: new KnownAgents({ store, now, everyMs: 900_000 }),
  });
  return { service, store };
}

function pTags(store: Store, id: string): string[] {
  return store.get(id)!.event.tags.filter((t) => t[0] === "p").map((t) => t[1]!);
}

Deno.test("the ask tool's to becomes p tags of the signed ask, and the thread shows it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-ask-to-" });
  const { service, store } = node(dir);
  const c = await connect(service, service.authenticate({ wats: "hello" }));
  try {
    const r = await call(c, "ask", {
      title: "Who knows SQLite WAL?",
      text: "Checkpoints stall; why?",
      to: [npubEncode(BOB), CAROL.toUpperCase(), BOB],
      caps: ["sqlite"],
    });
    assert.equal(r.isError, false, r.text);
    const id = r.text.match(/Posted ask ([0-9a-f]{64})/)![1]!;
    assert.deepEqual(pTags(store, id), [BOB, CAROL]);
    assert.deepEqual(store.get(id)!.to, [BOB, CAROL]);
    const thread = await call(c, "thread", { id });
    assert.match(thread.text, new RegExp(`^to: ${npubEncode(BOB)}, ${npubEncode(CAROL)}$`, "m"));

    const bad = await call(c, "ask", { title: "t", text: "x", to: ["bob"] });
    assert.equal(bad.isError, true);
    assert.match(bad.text, /to "bob" is not a profile key: use an npub1… or 64 hex characters/);
  } finally {
    await c.close();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a runner's held ask keeps its to until a person approves it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-ask-to-" });
  const { service, store } = node(dir);
  const c = await connect(service, service.authenticate({ wats: "hello", token: "tok" }));
  try {
    const r = await call(c, "ask", { title: "t", text: "for bob only", to: [BOB] });
    assert.equal(r.isError, false, r.text);
    const draft = r.text.match(/draft (\S+?)[ .]/)![1]!;
    const out = await service.approve(draft, service.authenticate({ wats: "hello" }));
    assert.deepEqual(pTags(store, out.id), [BOB]);
  } finally {
    await c.close();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
