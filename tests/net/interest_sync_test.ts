/**
 * A node syncing by interest with a real relay (wats' own endpoint, and the
 * independent Node relay), through a proxy that records what the node sends: the
 * REQ frames carry the node's `#p`, `#t`, kinds and `#e`, and the node gets what it
 * needs (an addressed ask, a cap ask, a reply to its post, a halt by a halt.accept
 * author, a claim in a thread it follows) and, from wats' endpoint, not the rest.
 * The Node relay ignores tag filters on live events: the node falls back to one
 * subscription to every post.
 */

import assert from "node:assert/strict";
import { createIngest } from "../../src/net/ingest.ts";
import { watchInterest } from "../../src/net/interest_source.ts";
import { startNetwork } from "../../src/net/network.ts";
import { serveRelay } from "../../src/net/relay_server.ts";
import { THREAD_BUCKETS } from "../../src/net/interest.ts";
import { NOSTR_KINDS, nostrKindOf } from "../../src/posts/kinds.ts";
import { deriveProfileKey } from "../../src/identity/profile_key.ts";
import {
  alice,
  bob,
  openWs,
  publishAll,
  recordingSink,
  signed,
  tempStore,
  testLog,
  waitFor,
} from "./net_support.ts";
import { RELAY_HELPER, startNodeRelay } from "./node_relay.ts";
import { recordingProxy } from "./recording_proxy.ts";

const guardian = deriveProfileKey(new Uint8Array(32).fill(3), "guardian");
const carol = deriveProfileKey(new Uint8Array(32).fill(5), "carol");

/** A relay to test against: wats' own endpoint on its own store, or the Node relay. */
async function ownEndpoint() {
  const hub = tempStore();
  const server = await serveRelay({
    hostname: "127.0.0.1",
    port: 0,
    store: hub.store,
    ingest: createIngest({
      store: hub.store,
      events: () => {},
      log: testLog,
      now: Date.now,
      maxSkewMs: 600_000,
    }),
    log: testLog,
  });
  return {
    url: `ws://127.0.0.1:${server.port}`,
    async stop() {
      await server.close();
      hub.cleanup();
    },
  };
}

async function nodeRelay() {
  const r = await startNodeRelay();
  return { url: r.url, stop: () => r.stop() };
}

const ALL = [...NOSTR_KINDS];
const ASK = nostrKindOf("ask");

for (
  const [name, startRelay, ignore] of [
    ["wats' own endpoint", ownEndpoint, false],
    ["the Node relay", nodeRelay, RELAY_HELPER === null],
  ] as const
) {
  Deno.test({
    name:
      `through ${name}: the node's REQs carry its interest, and it gets what is for it and not the rest`,
    ignore,
    async fn() {
      const relay = await startRelay();
      const proxy = recordingProxy(relay.url);
      // Node B: bob's node, caps "deno", open asks off, guardian may halt it.
      const b = tempStore([proxy.url]);
      b.store.recordProfile("bob", bob.pubkey);
      const rec = recordingSink();
      const source = watchInterest(b.store, {
        caps: ["deno"],
        openAsks: false,
        haltAccept: [guardian.pubkey],
      }, (next) => net.setInterest(next));
      const net = await startNetwork({
        settings: { infra: [proxy.url], listen: "", maxSkewMs: 600_000 },
        store: b.store,
        events: rec.sink,
        log: testLog,
        verifyWorkers: 0,
        backoff: { baseMs: 50, maxMs: 400 },
        interest: source.current(),
      });
      const client = await openWs(relay.url);
      try {
        // Before B connects: bob's own ask, one addressed to carol with caps bob
        // lacks, and an unrelated note. The catch-up brings only bob's own.
        const own = signed(bob, "ask", "bob's question", { title: "q" });
        const notForB = signed(alice, "ask", "for carol", {
          mentions: [carol.pubkey],
          caps: ["rust"],
        });
        const note = signed(alice, "note", "a note nobody asked about");
        await publishAll(client, [own, notForB, note]);
        await waitFor(() => net.status().relays[0]!.caughtUp, "B caught up");
        assert.ok(b.store.has(own.id), "B's own post comes back (a node restored elsewhere)");

        // The Node relay ignores tag filters on live events: a post published just
        // before B subscribed can still reach B live, which switches B to the
        // firehose (relay_sync.ts) before phase two, where this is checked. Our
        // endpoint never does.
        const isAll = (m: unknown[]) => m[0] === "REQ" && String(m[1]).startsWith("wats-live-all-");
        // The thread subscription follows the store's batch that holds bob's ask:
        // it may be sent just after the catch-up ends (and not at all after the fallback).
        await waitFor(
          () => proxy.reqFilters("wats-live-").some((f) => "#e" in f) || proxy.sent.some(isAll),
          "the followed thread's subscription",
        );
        const early = proxy.sent.some(isAll);
        if (early) assert.equal(name, "the Node relay", "our endpoint applies the filters live");
        const live = proxy.sent.filter((m) =>
          m[0] === "REQ" && String(m[1]).startsWith("wats-live-") && !isAll(m)
        ).flatMap((m) => m.slice(2) as Record<string, unknown>[]);
        const base = [
          { kinds: ALL, "#p": [bob.pubkey], limit: 0 },
          { kinds: ALL, authors: [bob.pubkey], limit: 0 },
          { kinds: [ASK], "#t": ["cap:deno"], limit: 0 },
          { kinds: [nostrKindOf("halt")], authors: [guardian.pubkey], limit: 0 },
          { kinds: [nostrKindOf("announce"), nostrKindOf("presence")], limit: 0 },
        ];
        // Bob's own ask is a thread it follows (unless the fallback came first).
        const thread = { kinds: ALL, "#e": [own.id], limit: 0 };
        if (early) assert.deepEqual(live.filter((f) => !("#e" in f)), base);
        else assert.deepEqual(live, [...base, thread]);
        // The catch-up: one filter per REQ, none for the whole firehose.
        const pages = proxy.sent.filter((m) =>
          m[0] === "REQ" && String(m[1]).startsWith("wats-page-")
        );
        assert.ok(pages.every((m) => m.length === 3), "one filter per catch-up REQ");
        assert.ok(
          proxy.sent.every((m) =>
            m[0] !== "REQ" || isAll(m) ||
            m.slice(2).every((f) =>
              Object.keys(f as object).some((k) =>
                k !== "kinds" && k !== "limit" && k !== "since" && k !== "until"
              ) ||
              JSON.stringify((f as { kinds: number[] }).kinds) !== JSON.stringify(ALL)
            )
          ),
          "no REQ asks for every wats post",
        );

        // Live: carol answers in a thread bob does not follow yet; alice asks
        // carol for rust; then what is for bob.
        // In the thread bucket of bob's own ask, so that following it replaces a
        // subscription rather than opening one.
        const bucket = (id: string) => parseInt(id.slice(0, 2), 16) % THREAD_BUCKETS;
        let aliceAsk = signed(alice, "ask", "who knows deno?", { caps: ["deno"] });
        for (let i = 0; bucket(aliceAsk.id) !== bucket(own.id); i++) {
          aliceAsk = signed(alice, "ask", `who knows deno? (${i})`, { caps: ["deno"] });
        }
        const addressed = signed(alice, "ask", "bob, please", { mentions: [bob.pubkey] });
        const reply = signed(carol, "answer", "an answer to bob", {
          root: own.id,
          parent: own.id,
          parentAuthor: bob.pubkey,
        });
        const halt = signed(guardian, "halt", "stop");
        const unrelatedHalt = signed(carol, "halt", "not bob's guardian");
        const rustAsk = signed(alice, "ask", "rust please", {
          mentions: [carol.pubkey],
          caps: ["rust"],
        });
        await publishAll(client, [
          rustAsk,
          unrelatedHalt,
          aliceAsk,
          addressed,
          reply,
          halt,
        ]);
        await waitFor(
          () => [aliceAsk, addressed, reply, halt].every((e) => b.store.has(e.id)),
          () =>
            `the cap ask, the addressed ask, the reply and the halt on B (${b.store.count()} stored)`,
        );
        await net.ingest.settle();
        if (!early) {
          assert.equal(b.store.has(notForB.id), false, "an ask for carol with caps bob lacks");
          assert.equal(b.store.has(note.id), false, "an unrelated note");
        }
        const claim = signed(carol, "claim", "mine", {
          root: aliceAsk.id,
          parent: aliceAsk.id,
          parentAuthor: alice.pubkey,
        });
        if (name === "the Node relay") {
          // It sent the rust ask on a subscription whose tags exclude it: the node
          // fell back to one subscription to every wats post (each event once, as
          // before interests) and stores what it sends.
          const allIds = proxy.sent.filter((m) =>
            m[0] === "REQ" && String(m[1]).startsWith("wats-live-all-")
          );
          assert.deepEqual(allIds.map((m) => m.slice(2)), [[{ kinds: ALL, limit: 0 }]]);
          const closed = new Set(proxy.sent.filter((m) => m[0] === "CLOSE").map((m) => m[1]));
          for (const m of proxy.sent) {
            if (m[0] === "REQ" && /^wats-live-(base|threads)/.test(String(m[1]))) {
              assert.ok(closed.has(m[1]), `${m[1]} closed`);
            }
          }
          assert.equal(net.status().relays[0]!.unasked, 1);
          assert.ok(b.store.has(rustAsk.id) && b.store.has(unrelatedHalt.id));
          await publishAll(client, [claim]);
          await waitFor(() => b.store.has(claim.id), "carol's claim");
        } else {
          assert.equal(b.store.has(rustAsk.id), false, "an ask for carol with caps bob lacks");
          assert.equal(
            b.store.has(unrelatedHalt.id),
            false,
            "a halt by someone not in halt.accept",
          );
          // Alice's cap ask is a thread B follows now (an ask it stored): a claim by
          // carol in it (tagging alice, not bob) reaches B through the thread's #e.
          await waitFor(
            () =>
              proxy.reqFilters("wats-live-").some((f) =>
                (f["#e"] as string[] | undefined)?.includes(aliceAsk.id)
              ),
            "B following the cap ask's thread",
          );
          // The new thread's earlier posts are caught up on: its whole history.
          await waitFor(
            () =>
              proxy.reqFilters("wats-page-").some((f) =>
                (f["#e"] as string[] | undefined)?.includes(aliceAsk.id) && f.since === undefined
              ),
            "a catch-up of the new thread",
          );
          await publishAll(client, [claim]);
          await waitFor(() => b.store.has(claim.id), "carol's claim in a thread B follows");
          // Replacing a subscription sent the new one before closing the old one.
          const threadReqs = proxy.sent.filter((m) =>
            (m[0] === "REQ" || m[0] === "CLOSE") && String(m[1]).startsWith("wats-live-threads-")
          );
          const firstClose = threadReqs.findIndex((m) => m[0] === "CLOSE");
          assert.ok(firstClose > 0, "a thread subscription was replaced");
          const closedKey = String(threadReqs[firstClose]![1]).replace(/-\d+$/, "");
          assert.ok(
            threadReqs.slice(0, firstClose).filter((m) => String(m[1]).startsWith(closedKey))
              .length >= 2,
            "the new REQ of that bucket went out before the CLOSE of the old",
          );
          assert.equal(
            net.status().relays[0]!.unasked,
            0,
            "wats' endpoint sends only what matches",
          );
        }
        // A person browsing: one fetch of notes brings the note B never subscribed to.
        const fetched = await net.fetchOnce({ kinds: [nostrKindOf("note")], limit: 10 });
        assert.deepEqual(fetched, { relays: 1, events: 1 });
        assert.ok(b.store.has(note.id), "the note fetched on request");
        assert.ok(net.status().relays[0]!.bytesReceived > 0);
      } finally {
        await client.close();
        source.stop();
        await net.close();
        await proxy.close();
        await relay.stop();
        b.cleanup();
      }
    },
  });
}
