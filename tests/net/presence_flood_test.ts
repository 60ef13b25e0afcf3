/**
 * A presence flood from fresh keys on one connection to a node's relay endpoint
 * (docs/decisions/presence.md, Floods): the issue-27 attack of 10,100 keys. The
 * node stores at most its per-source budget of new authors, refuses the rest as
 * `too_many_authors` (counted), keeps the real agent that posted in a thread, and
 * its reach count names only that agent as reachable.
 *
 * @module
 */

import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import { generateSecretKey, getPublicKey } from "nostr-tools/pure";
import { createIngest } from "../../src/net/ingest.ts";
import { serveRelay } from "../../src/net/relay_server.ts";
import { NEW_AUTHORS_PER_SOURCE_BURST } from "../../src/net/presence_gate.ts";
import { KnownAgents } from "../../src/node/presence.ts";
import { presenceTags } from "../../src/posts/presence.ts";
import { buildPost, type NostrEvent } from "../../src/posts/post.ts";
import {
  alice,
  nowSec,
  openWs,
  publishAll,
  recordingSink,
  signed,
  tempStore,
  testLog,
} from "./net_support.ts";

const FLOOD = 10_100;

function runningPresence(secret: Uint8Array): NostrEvent {
  return buildPost(
    {
      kind: "presence",
      text: "",
      createdAt: nowSec(),
      caps: ["rust"],
      extraTags: presenceTags({ state: "running" }),
    },
    secret,
  );
}

Deno.test({
  name:
    "10,100 presences from fresh keys on one connection: the budget's worth stored, the rest refused and counted, the real agent kept and alone reachable",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const t = tempStore();
    const rec = recordingSink();
    // The budget refills one author per 18 s: a clock that stands still keeps a slow flood
    // (70 s on a loaded machine) from earning extra room, so the counts do not depend on speed.
    const start = Date.now();
    const now = () => start;
    const ingest = createIngest({
      store: t.store,
      events: rec.sink,
      log: testLog,
      now,
      maxSkewMs: 600_000,
    });
    const server = await serveRelay({
      hostname: "127.0.0.1",
      port: 0,
      store: t.store,
      ingest,
      log: testLog,
    });
    const known = new KnownAgents({ store: t.store, now, everyMs: 15 * 60_000 });
    const url = `ws://127.0.0.1:${server.port}`;
    const agent = await openWs(url);
    const flooder = await openWs(url);
    try {
      // The real agent: its presence, and an ask it posted in a thread.
      const oks = await publishAll(agent, [
        signed(alice, "presence", "", {
          caps: ["rust"],
          extraTags: presenceTags({ state: "running" }),
        }),
        signed(alice, "ask", "Who reviews borrow errors?", { title: "Borrow" }),
      ]);
      assert.ok([...oks.values()].every((m) => m[2] === true), JSON.stringify([...oks.values()]));

      const flood = Array.from({ length: FLOOD }, () => runningPresence(generateSecretKey()));
      const answers = await publishAll(flooder, flood);
      const accepted = [...answers.values()].filter((m) => m[2] === true).length;
      const refused = [...answers.values()].filter((m) =>
        m[2] === false && /^rate-limited: .*\(too_many_authors\)$/.test(String(m[3]))
      ).length;
      assert.equal(accepted, NEW_AUTHORS_PER_SOURCE_BURST);
      assert.equal(refused, FLOOD - NEW_AUTHORS_PER_SOURCE_BURST);
      assert.equal(ingest.rejected().too_many_authors, FLOOD - NEW_AUTHORS_PER_SOURCE_BURST);

      assert.equal(t.store.hasPresence(alice.pubkey), true, "the real agent's presence is kept");
      assert.equal(t.store.presenceCount(), 1 + NEW_AUTHORS_PER_SOURCE_BURST);
      const listed = known.list(50);
      assert.equal(listed[0]?.npub, npubEncode(alice.pubkey));
      assert.equal(listed[0]?.reachable, true, "the real agent is listed first, reachable");
      assert.equal(
        listed.filter((a) =>
          a.reachable
        ).length,
        1,
      );
      const someone = getPublicKey(generateSecretKey());
      assert.deepEqual(known.reach(someone, ["rust"]), {
        matching: 1 + NEW_AUTHORS_PER_SOURCE_BURST,
        reachable: 1,
        unseen: NEW_AUTHORS_PER_SOURCE_BURST,
      });
      assert.deepEqual(known.counts(), { total: 1 + NEW_AUTHORS_PER_SOURCE_BURST, seen: 1 });
    } finally {
      await agent.close();
      await flooder.close();
      known.close();
      await server.close();
      await ingest.settle();
      t.cleanup();
    }
  },
});
