/**
 * A node joining a relay of 20,000 posts, 200 of which concern it (asks addressed
 * to it, asks naming its cap, and the replies in their threads), beside 600 newer
 * open asks: its catch-up stores every one of the 200, with `agent.open_asks` off
 * and on (issue 33: with open asks on, the cap filter was dropped and the cap
 * asks' threads lost their places to the newest open asks).
 *
 * The relay is wats' own endpoint on a store filled directly; the 19,000 posts
 * that no filter of the node asks for are not signed (nothing sends them), the
 * rest is.
 */

import assert from "node:assert/strict";
import { createIngest } from "../../src/net/ingest.ts";
import { watchInterest } from "../../src/net/interest_source.ts";
import { startNetwork } from "../../src/net/network.ts";
import { serveRelay } from "../../src/net/relay_server.ts";
import { deriveProfileKey } from "../../src/identity/profile_key.ts";
import type { NostrEvent } from "../../src/posts/post.ts";
import {
  alice,
  bob,
  nowSec,
  recordingSink,
  signed,
  tempStore,
  testLog,
  waitFor,
} from "./net_support.ts";

const carol = deriveProfileKey(new Uint8Array(32).fill(5), "carol");
const STORE_SIZE = 20_000;

/** The hub's posts, and which of them concern bob's node (caps "deno"). */
function dataset(): { all: NostrEvent[]; concerning: NostrEvent[]; open: NostrEvent[] } {
  const start = nowSec() - 30_000;
  let at = start;
  const concerning: NostrEvent[] = [];
  const thread = (ask: NostrEvent, replies: number) => {
    concerning.push(ask);
    for (let i = 0; i < replies; i++) {
      const who = i % 2 === 0 ? carol : alice;
      concerning.push(signed(who, i % 3 === 0 ? "claim" : "answer", `reply ${i}`, {
        createdAt: at++,
        root: ask.id,
        parent: ask.id,
        parentAuthor: ask.pubkey,
      }));
    }
  };
  // 20 asks addressed to bob and 20 asks naming "deno", with 4 replies each.
  for (let i = 0; i < 20; i++) {
    thread(signed(alice, "ask", `for bob ${i}`, { createdAt: at++, mentions: [bob.pubkey] }), 4);
    thread(signed(carol, "ask", `deno ${i}`, { createdAt: at++, caps: ["deno"] }), 4);
  }
  // Newer than all of them: open asks for anyone, more than the node follows.
  const open = Array.from(
    { length: 600 },
    (_, i) => signed(alice, "ask", `open ${i}`, { createdAt: at++, caps: ["rust"] }),
  );
  // The rest: notes and answers in threads of notes, copies of one signed note
  // with fresh ids (the hub's store trusts what it is given; nobody asks for them).
  const template = signed(carol, "note", "filler");
  const filler: NostrEvent[] = [];
  const hexId = (n: number) => "e" + n.toString(16).padStart(63, "0");
  for (let i = 0; filler.length < STORE_SIZE - concerning.length - open.length; i++) {
    const root = hexId(i * 10);
    filler.push({ ...template, id: root, created_at: start + (i % 29_000), content: `note ${i}` });
    for (let j = 1; j < 10; j++) {
      filler.push({
        ...template,
        kind: 4471, // answer
        id: hexId(i * 10 + j),
        created_at: start + (i % 29_000) + j,
        content: `answer ${i}.${j}`,
        tags: [["e", root, "", "root"], ["p", template.pubkey]],
      });
    }
  }
  return { all: [...concerning, ...open, ...filler], concerning, open };
}

for (const openAsks of [false, true]) {
  Deno.test(`a catch-up from a relay of ${STORE_SIZE} posts stores all 200 that concern the node, open asks ${openAsks ? "on" : "off"}`, async () => {
    const data = dataset();
    assert.equal(data.concerning.length, 200);
    const hub = tempStore();
    hub.store.insert(data.all, { origin: "remote" });
    assert.equal(hub.store.count(), STORE_SIZE);
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
    const url = `ws://127.0.0.1:${server.port}`;
    const b = tempStore([url]);
    b.store.recordProfile("bob", bob.pubkey);
    const source = watchInterest(
      b.store,
      { caps: ["deno"], openAsks, haltAccept: [] },
      (next) => net.setInterest(next),
    );
    const net = await startNetwork({
      settings: { infra: [url], listen: "", maxSkewMs: 600_000 },
      store: b.store,
      events: recordingSink().sink,
      log: testLog,
      verifyWorkers: 0,
      backoff: { baseMs: 50, maxMs: 400 },
      interest: source.current(),
    });
    try {
      const missing = () => data.concerning.filter((e) => !b.store.has(e.id));
      await waitFor(
        () => net.status().relays[0]!.caughtUp && missing().length === 0,
        () => `every concerning post stored; ${missing().length} of 200 missing`,
        120_000,
      );
      assert.deepEqual(missing(), []);
      // Open asks add to that; with them off, none is fetched.
      const openStored = data.open.filter((e) => b.store.has(e.id)).length;
      assert.equal(openStored, openAsks ? data.open.length : 0);
      // Nothing that no filter asked for.
      assert.equal(b.store.count(), 200 + openStored);
    } finally {
      source.stop();
      await net.close();
      b.cleanup();
      await server.close();
      hub.cleanup();
    }
  });
}
