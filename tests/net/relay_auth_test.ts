/**
 * The node as a NIP-42 client (src/net/relay_auth.ts, relay_sync.ts) against an
 * independent relay: `@nostr-relay/core` under Node with its own NIP-42 on and a
 * members-only plugin (tests/support/node/relay/relay.mjs, `--members`). A member
 * catches up and subscribes after its AUTH, and what was refused `auth-required:`
 * is sent again and taken; a non-member's posts are refused `restricted:`, kept in
 * the outbox and shown; a relay restart is answered with a new AUTH.
 */

import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import { startRelaySync } from "../../src/net/relay_sync.ts";
import type { ProfileKey } from "../../src/identity/profile_key.ts";
import type { NostrEvent } from "../../src/posts/post.ts";
import {
  alice,
  authedWs,
  bob,
  carol,
  fetchAll,
  type IngestStore,
  ingestStore,
  publishAll,
  servedStore,
  signed,
  testLog,
  waitFor,
  type WsClient,
} from "./net_support.ts";
import { RELAY_HELPER, startNodeRelay } from "./node_relay.ts";
import { recordingProxy } from "./recording_proxy.ts";

const FAST_BACKOFF = { backoffBaseMs: 50, backoffMaxMs: 400 };

/** `t`'s sync with the relay at `url`, answering its AUTH challenges as `who`. */
function authedSync(t: IngestStore, url: string, who: ProfileKey) {
  return startRelaySync({
    url,
    store: t.store,
    ingest: t.ingest,
    log: testLog,
    maxSkewMs: 10 * 60_000,
    authKey: who,
    ...FAST_BACKOFF,
  });
}

/** A node's store (its local posts queued for `url`) and ingest, `who` its profile `name`. */
function node(url: string, who: ProfileKey, name: string) {
  const t = ingestStore({ relays: [url] });
  t.store.recordProfile(name, who.pubkey);
  return t;
}

Deno.test({
  name:
    "a member: refused auth-required: before its AUTH, then caught up, live, and its post taken",
  ignore: RELAY_HELPER === null,
  async fn() {
    const relay = await startNodeRelay({ members: [alice.pubkey, bob.pubkey] });
    const proxy = recordingProxy(relay.url);
    const a = node(proxy.url, alice, "alice");
    const bobWs = await authedWs(relay.url, bob);
    try {
      const before = [0, 1, 2].map((i) => signed(bob, "note", `before ${i}`));
      await publishAll(bobWs, before);
      const mine = signed(alice, "ask", "from a member", { title: "member" });
      a.store.insert([mine], { origin: "local" });
      const sync = authedSync(a, proxy.url, alice);
      await waitFor(
        () => sync.status().caughtUp && a.store.outbox.size() === 0,
        () =>
          `caught up and the outbox empty: ${
            JSON.stringify(sync.status())
          }, outbox ${a.store.outbox.size()}`,
      );
      // The relay refused the first REQ and the post, before the AUTH…
      const refusedPost = proxy.received.find((m) => m[0] === "OK" && m[1] === mine.id);
      assert.deepEqual(refusedPost?.slice(0, 3), ["OK", mine.id, false]);
      assert.match(String(refusedPost?.[3]), /^auth-required:/);
      assert.ok(
        proxy.received.some((m) => m[0] === "CLOSED" && /^auth-required:/.test(String(m[2]))),
      );
      // …and took them after it: the catch-up brought bob's posts, the post is there.
      for (const e of before) assert.ok(a.store.get(e.id), "caught up on bob's post");
      assert.equal((await fetchAll(bobWs, "mine", { ids: [mine.id] })).length, 1);
      assert.equal(proxy.sent.filter((m) => m[0] === "AUTH").length, 1, "one AUTH a connection");
      assert.deepEqual(sync.status().auth, { as: npubEncode(alice.pubkey) });
      assert.equal(sync.status().refused, undefined);
      // Live after the AUTH.
      const live = signed(bob, "note", "live");
      await publishAll(bobWs, [live]);
      await waitFor(() => a.store.get(live.id) !== undefined, "bob's live post");
      await sync.close();
      await a.ingest.settle();
    } finally {
      await bobWs.close();
      await proxy.close();
      await relay.stop();
      a.cleanup();
    }
  },
});

Deno.test({
  name:
    "a non-member: its post refused restricted:, kept in the outbox, shown per relay; nothing read",
  ignore: RELAY_HELPER === null,
  async fn() {
    const relay = await startNodeRelay({ members: [bob.pubkey] });
    const c = node(relay.url, carol, "carol");
    const bobWs = await authedWs(relay.url, bob);
    try {
      await publishAll(bobWs, [signed(bob, "note", "members only")]);
      const mine = signed(carol, "ask", "from outside", { title: "outside" });
      c.store.insert([mine], { origin: "local" });
      const sync = authedSync(c, relay.url, carol);
      await waitFor(
        () => sync.refusal(mine.id) !== undefined,
        () => `the refusal: ${JSON.stringify(sync.status())}`,
      );
      const status = sync.status();
      assert.match(sync.refusal(mine.id)!, /^restricted:/);
      assert.equal(status.refused, 1);
      assert.match(status.auth?.refused ?? "", /restricted:/);
      assert.equal(status.auth?.as, npubEncode(carol.pubkey), "the relay took the AUTH itself");
      assert.equal(status.caughtUp, false);
      // Never lost: still queued for this relay; never read: carol's store has only its own post.
      assert.deepEqual(c.store.outbox.waiting(mine.id), [relay.url]);
      assert.equal(c.store.count(), 1);
      assert.equal((await fetchAll(bobWs, "theirs", { ids: [mine.id] })).length, 0);
      await sync.close();
    } finally {
      await bobWs.close();
      await relay.stop();
      c.cleanup();
    }
  },
});

Deno.test({
  name: "a relay restart: the node authenticates again on the new connection and publishes",
  ignore: RELAY_HELPER === null,
  async fn() {
    const dir = Deno.makeTempDirSync({ prefix: "wats-auth-relay-" });
    const db = `${dir}/relay.db`;
    let relay = await startNodeRelay({ db, members: [alice.pubkey, bob.pubkey] });
    const port = relay.port;
    const a = node(relay.url, alice, "alice");
    let bobWs: WsClient | undefined;
    try {
      const sync = authedSync(a, relay.url, alice);
      await waitFor(() => sync.status().caughtUp, "the first catch-up");
      await relay.stop();
      await waitFor(() => !sync.status().connected, "the connection lost");
      assert.equal(sync.status().auth, undefined, "a lost connection is no longer authenticated");
      const during: NostrEvent = signed(alice, "note", "while the relay was down");
      a.store.insert([during], { origin: "local" });
      relay = await startNodeRelay({ port, db, members: [alice.pubkey, bob.pubkey] });
      await waitFor(
        () => sync.status().caughtUp && a.store.outbox.size() === 0,
        () => `after the restart: ${JSON.stringify(sync.status())}`,
      );
      assert.deepEqual(sync.status().auth, { as: npubEncode(alice.pubkey) });
      bobWs = await authedWs(relay.url, bob);
      assert.equal((await fetchAll(bobWs, "during", { ids: [during.id] })).length, 1);
      await sync.close();
      await a.ingest.settle();
    } finally {
      await bobWs?.close();
      await relay.stop();
      a.cleanup();
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test("against a members-only wats endpoint: a refused AUTH refuses what waited for it, with the endpoint's reason", async () => {
  const server = await servedStore({ auth: { required: true, members: new Set([bob.pubkey]) } });
  const url = server.url;
  const c = node(url, carol, "carol");
  try {
    const first = signed(carol, "ask", "before the AUTH", { title: "first" });
    c.store.insert([first], { origin: "local" });
    const sync = authedSync(c, url, carol);
    await waitFor(() => sync.refusal(first.id) !== undefined, () => JSON.stringify(sync.status()));
    // A post made after the AUTH was refused is refused with the same reason.
    const later = signed(carol, "ask", "after the AUTH", { title: "later" });
    c.store.insert([later], { origin: "local" });
    await waitFor(() => sync.refusal(later.id) !== undefined, () => JSON.stringify(sync.status()));
    for (const id of [first.id, later.id]) {
      assert.match(sync.refusal(id)!, /^restricted: .*not a member/);
    }
    assert.equal(sync.status().refused, 2);
    assert.match(sync.status().auth?.refused ?? "", /not a member/);
    assert.equal(c.store.outbox.size(), 2, "both kept queued");
    assert.equal(server.store.count(), 0, "nothing stored at the endpoint");
    await sync.close();
  } finally {
    c.cleanup();
    await server.cleanup();
  }
});
