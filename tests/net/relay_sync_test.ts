import assert from "node:assert/strict";
import type { Ingest } from "../../src/net/ingest.ts";
import { serveRelay } from "../../src/net/relay_server.ts";
import { startRelaySync } from "../../src/net/relay_sync.ts";
import { interestSubscriptions } from "../../src/net/interest.ts";
import { NOSTR_KINDS } from "../../src/posts/kinds.ts";
import type { NostrEvent } from "../../src/posts/post.ts";
import type { Store } from "../../src/store/store.ts";
import {
  alice,
  bob,
  fetchAll,
  ingestStore,
  nowSec,
  openWs,
  publishAll,
  signed,
  testLog,
  waitFor,
} from "./net_support.ts";
import { RELAY_HELPER, startNodeRelay } from "./node_relay.ts";

const FAST_BACKOFF = { backoffBaseMs: 50, backoffMaxMs: 400 };

/** An ingest that counts the events handed to it. */
function counting(inner: Ingest): { ingest: Ingest; calls: () => number } {
  let n = 0;
  const ingest = Object.defineProperties(
    (input: unknown, source: string) => {
      n++;
      return inner(input, source);
    },
    {
      rejected: { value: inner.rejected },
      stored: { value: inner.stored },
      settle: { value: inner.settle },
    },
  ) as Ingest;
  return { ingest, calls: () => n };
}

function localPost(store: Store, text: string): NostrEvent {
  store.recordProfile("alice", alice.pubkey);
  const e = signed(alice, "ask", text, { title: text });
  store.insert([e], { origin: "local" });
  return e;
}

Deno.test({
  name: "catch-up pages past the relay's 1,000-event cap, saves the cursor, then resumes from it",
  ignore: RELAY_HELPER === null,
  async fn() {
    const relay = await startNodeRelay();
    const b = ingestStore({ maxSkewMs: 60_000 });
    try {
      // 1,250 posts, three per second, over the last ~7 minutes.
      const t = nowSec();
      const events = Array.from(
        { length: 1250 },
        (_, i) => signed(bob, "note", `n${i}`, { createdAt: t - Math.floor(i / 3) }),
      );
      const client = await openWs(relay.url);
      const oks = await publishAll(client, events);
      assert.ok([...oks.values()].every((m) => m[2] === true));

      const sync = startRelaySync({
        url: relay.url,
        store: b.store,
        ingest: b.ingest,
        log: testLog,
        maxSkewMs: 60_000,
      });
      await waitFor(() => sync.status().caughtUp, "the first catch-up");
      assert.equal(b.store.count(), 1250);
      const cursor = b.store.getCursor(relay.url);
      assert.ok(cursor !== undefined && Math.abs(cursor - nowSec()) <= 5, `cursor ${cursor}`);
      assert.ok(b.seen.every((e) => e.event === "post_stored" && e.source === relay.url));
      await sync.close();

      // While B is away, three more posts; B comes back and asks only from its cursor.
      const later = [0, 1, 2].map((i) => signed(bob, "note", `later ${i}`));
      await publishAll(client, later);
      await client.close();
      const { ingest, calls } = counting(b.ingest);
      const again = startRelaySync({
        url: relay.url,
        store: b.store,
        ingest,
        log: testLog,
        maxSkewMs: 60_000,
      });
      await waitFor(() => again.status().caughtUp, "the second catch-up");
      assert.equal(b.store.count(), 1253);
      // The cursor minus a 60 s overlap: the old posts are not fetched again.
      assert.ok(calls() < 400, `${calls()} events fetched again`);
      assert.ok(calls() >= 3);
      await again.close();
      await b.ingest.settle();
    } finally {
      await relay.stop();
      b.cleanup();
    }
  },
});

Deno.test({
  name:
    "the outbox waits while the relay is down and empties once it acknowledges; new local posts follow",
  ignore: RELAY_HELPER === null,
  async fn() {
    // Learn a free port, then leave it closed.
    const probe = await startNodeRelay();
    const port = probe.port;
    await probe.stop();
    const url = `ws://127.0.0.1:${port}`;
    const a = ingestStore({ relays: [url] });
    let relay: Awaited<ReturnType<typeof startNodeRelay>> | undefined;
    const sync = startRelaySync({
      url,
      store: a.store,
      ingest: a.ingest,
      log: testLog,
      maxSkewMs: 600_000,
      ...FAST_BACKOFF,
    });
    try {
      const first = localPost(a.store, "posted while the relay is down");
      await waitFor(() => sync.status().lastError !== undefined, "a failed connection");
      assert.equal(sync.status().connected, false);
      assert.equal(a.store.outbox.size(), 1);

      relay = await startNodeRelay({ port });
      await waitFor(() => a.store.outbox.size() === 0, "the outbox to empty");
      const client = await openWs(url);
      assert.deepEqual((await fetchAll(client, "q1", { ids: [first.id] })).map((e) => e.id), [
        first.id,
      ]);

      // A new local post goes out as it is stored; a post from the network does not.
      const second = localPost(a.store, "posted while connected");
      const foreign = signed(bob, "note", "someone else's");
      assert.equal((await a.ingest(foreign, "elsewhere")).ok, true);
      await waitFor(() => a.store.outbox.size() === 0, "the outbox to empty again");
      // The relay stores what it acknowledged; ask until it answers with the post.
      let found: NostrEvent[] = [];
      for (let i = 0; found.length === 0; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 20));
        found = await fetchAll(client, `q2-${i}`, { ids: [second.id, foreign.id] });
      }
      assert.deepEqual(found.map((e) => e.id), [second.id]);
      await client.close();
    } finally {
      await sync.close();
      await a.ingest.settle();
      await relay?.stop();
      a.cleanup();
    }
  },
});

/**
 * A scripted relay: it records what it receives and answers only what the test
 * tells it to, so the test decides when (and whether) an event is acknowledged.
 */
function scriptedRelay() {
  const received: unknown[][] = [];
  const sockets: WebSocket[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onopen = () => sockets.push(socket);
    socket.onmessage = (e) => {
      const m = JSON.parse(e.data);
      received.push(m);
      // Subscriptions end at once: nothing stored here.
      if (m[0] === "REQ") socket.send(JSON.stringify(["EOSE", m[1]]));
    };
    return response;
  });
  return {
    url: `ws://127.0.0.1:${server.addr.port}`,
    received,
    events: () => received.filter((m) => m[0] === "EVENT").map((m) => m[1] as NostrEvent),
    ok(id: string, accepted: boolean, message: string) {
      sockets.at(-1)!.send(JSON.stringify(["OK", id, accepted, message]));
    },
    dropConnection() {
      sockets.at(-1)!.close();
    },
    connections: () => sockets.length,
    async close() {
      for (const s of sockets) if (s.readyState === WebSocket.OPEN) s.close();
      await server.shutdown();
    },
  };
}

Deno.test("an outbox event leaves only on OK true; a temporary refusal is retried after reconnect, a permanent one dropped", async () => {
  const relay = scriptedRelay();
  const a = ingestStore();
  a.store.recordProfile("alice", alice.pubkey);
  const e1 = signed(alice, "ask", "one", { title: "one" });
  const e2 = signed(alice, "ask", "two", { title: "two" });
  a.store.insert([e1, e2], { origin: "remote" });
  a.store.outbox.add(e1.id, [relay.url]);
  a.store.outbox.add(e2.id, [relay.url]);
  const sync = startRelaySync({
    url: relay.url,
    store: a.store,
    ingest: a.ingest,
    log: testLog,
    maxSkewMs: 600_000,
    ...FAST_BACKOFF,
  });
  try {
    await waitFor(() => relay.events().length === 2, "both events at the relay");
    // Received but not acknowledged: still queued.
    assert.equal(a.store.outbox.size(), 2);
    relay.ok(e1.id, true, "");
    relay.ok(e2.id, false, "error: database busy");
    await waitFor(() => a.store.outbox.size() === 1, "e1 acknowledged");
    assert.deepEqual(a.store.outbox.pending(relay.url, 10).map((e) => e.id), [e2.id]);
    // Not re-sent on this connection…
    assert.equal(relay.events().length, 2);
    // …but after a reconnect.
    relay.dropConnection();
    await waitFor(() => relay.events().length === 3, "e2 sent again after reconnecting");
    assert.equal(relay.events()[2]!.id, e2.id);
    assert.equal(relay.connections(), 2);
    relay.ok(e2.id, false, "invalid: this relay takes no wats posts");
    await waitFor(() => a.store.outbox.size() === 0, "e2 dropped for good");
  } finally {
    await sync.close();
    await relay.close();
    a.cleanup();
  }
});

Deno.test("two nodes peer directly: one serves the endpoint, the other syncs through it both ways", async () => {
  const a = ingestStore();
  const b = ingestStore();
  const server = await serveRelay({
    hostname: "127.0.0.1",
    port: 0,
    store: a.store,
    ingest: a.ingest,
    log: testLog,
  });
  const url = `ws://127.0.0.1:${server.port}`;
  const sync = startRelaySync({
    url,
    store: b.store,
    ingest: b.ingest,
    log: testLog,
    maxSkewMs: 600_000,
  });
  try {
    await waitFor(() => sync.status().caughtUp, "B caught up with A");
    // A's post reaches B live.
    const ask = localPost(a.store, "From A");
    await waitFor(() => b.store.has(ask.id), "A's ask on B");
    assert.ok(b.seen.some((e) => e.event === "post_stored" && e.id === ask.id && e.source === url));
    // B's answer reaches A through B's outbox, acknowledged.
    b.store.recordProfile("bob", bob.pubkey);
    const answer = signed(bob, "answer", "From B", {
      root: ask.id,
      parent: ask.id,
      parentAuthor: alice.pubkey,
    });
    // B's store was opened before A's port was known: queue for it by hand.
    b.store.insert([answer], { origin: "local" });
    b.store.outbox.add(answer.id, [url]);
    await waitFor(() => a.store.has(answer.id) && b.store.outbox.size() === 0, "B's answer on A");
    assert.ok(
      a.seen.some((e) =>
        e.event === "post_stored" && e.id === answer.id && String(e.source).startsWith("listen:")
      ),
    );
    const { bytesReceived, unasked: _, ...status } = sync.status();
    assert.deepEqual(status, { url, connected: true, caughtUp: true });
    // At least the two events B received, as sent on the wire.
    assert.ok(bytesReceived > JSON.stringify(ask).length, `${bytesReceived} bytes received`);
  } finally {
    await sync.close();
    await server.close();
    await Promise.all([a.ingest.settle(), b.ingest.settle()]);
    a.cleanup();
    b.cleanup();
  }
});

/**
 * A relay that answers each catch-up REQ (not the live one) with what `answer`
 * returns for the page's number (1, 2…), sent as raw messages, and records the REQs.
 */
function hostileRelay(answer: (page: number, subId: string) => unknown[][]) {
  const reqs: Record<string, unknown>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = (e) => {
      const m = JSON.parse(e.data);
      if (m[0] !== "REQ" || m[1].startsWith("wats-live-")) return;
      reqs.push(m[2]);
      for (const out of answer(reqs.length, m[1])) socket.send(JSON.stringify(out));
    };
    return response;
  });
  return { url: `ws://127.0.0.1:${server.addr.port}`, reqs, close: () => server.shutdown() };
}

/** Starts a sync with `relay` and waits until it caught up or asked `maxPages` pages. */
async function catchUp(
  relay: ReturnType<typeof hostileRelay>,
  more: { pageLimit?: number; pageTimeoutMs?: number },
  maxPages: number,
) {
  const a = ingestStore();
  const sync = startRelaySync({
    url: relay.url,
    store: a.store,
    ingest: a.ingest,
    log: testLog,
    maxSkewMs: 600_000,
    ...FAST_BACKOFF,
    ...more,
  });
  try {
    await waitFor(
      () => sync.status().caughtUp || relay.reqs.length > maxPages,
      "the catch-up to end",
    );
    return {
      caughtUp: sync.status().caughtUp,
      pages: relay.reqs.length,
      stored: a.ingest.stored(),
    };
  } finally {
    await sync.close();
    await a.ingest.settle();
    await relay.close();
    a.cleanup();
  }
}

Deno.test("junk events with fresh ids do not count for a page: the catch-up ends after one page", async () => {
  // Before, every EVENT's id counted as new, so each page of junk asked for another.
  const junk = (n: number) => ({ id: `junk-${n}-${"x".repeat(1000)}`, created_at: 1 });
  const relay = hostileRelay((page, sub) => [
    ...[0, 1, 2, 3, 4].map((i) => ["EVENT", sub, junk(page * 10 + i)]),
    ["EOSE", sub],
  ]);
  const r = await catchUp(relay, {}, 5);
  assert.deepEqual(r, { caughtUp: true, pages: 1, stored: 0 });
});

Deno.test("a page ends at the limit asked even with no EOSE; events outside the filter do not count", async () => {
  const old = nowSec() - 100;
  const events = [0, 1, 2].map((i) => signed(alice, "note", `old ${i}`, { createdAt: old - i }));
  const later = signed(alice, "note", "newer than asked", { createdAt: old });
  const relay = hostileRelay((page, sub) =>
    // The first page: three events, never an EOSE. The second (until = the oldest
    // of the first) also gets an event newer than its `until`, then an EOSE.
    page === 1 ? events.map((e) => ["EVENT", sub, e]) : [["EVENT", sub, later], ["EOSE", sub]]
  );
  const r = await catchUp(relay, { pageLimit: 3 }, 5);
  assert.deepEqual(r, { caughtUp: true, pages: 2, stored: 4 });
  assert.equal(relay.reqs[1]!.until, old - 2);
});

Deno.test("a page with no EOSE and fewer events than the limit ends after the page time limit", async () => {
  const relay = hostileRelay((_page, sub) => [["EVENT", sub, { id: "junk" }]]);
  const r = await catchUp(relay, { pageTimeoutMs: 50 }, 5);
  assert.deepEqual(r, { caughtUp: true, pages: 1, stored: 0 });
});

Deno.test("new events all dated the page's until second: that second is asked once more, then skipped", async () => {
  const t = nowSec() - 100;
  let n = 0;
  const relay = hostileRelay((page, sub) => [
    // Each answer: two events never seen before, all dated t (a relay inventing them).
    ...(page <= 4 ? [0, 1] : []).map(
      () => ["EVENT", sub, signed(alice, "note", `${n++}`, { createdAt: t })],
    ),
    ["EOSE", sub],
  ]);
  const r = await catchUp(relay, {}, 6);
  assert.equal(r.caughtUp, true);
  assert.deepEqual(relay.reqs.map((f) => f.until), [undefined, t, t, t - 1]);
});

Deno.test("a relay that sends live events outside the filters gets one subscription to every post; a subscription still sending after its CLOSE is closed again", async () => {
  // Before, each live subscription with a tag filter got its own copy of every post
  // from such a relay (10.7x the firehose's bytes measured on the Node relay).
  const sent: unknown[][] = [];
  const outside = signed(alice, "note", "tags bob nowhere");
  const late = signed(alice, "note", "after the CLOSE");
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = (e) => {
      const m = JSON.parse(e.data);
      sent.push(m);
      if (m[0] === "REQ") socket.send(JSON.stringify(["EOSE", m[1]]));
      // A relay ignoring tags: the note goes out on the base subscription.
      if (m[0] === "REQ" && String(m[1]).startsWith("wats-live-base")) {
        socket.send(JSON.stringify(["EVENT", m[1], outside]));
      }
      // A relay that took the CLOSE before the REQ: the base subscription goes on.
      if (m[0] === "CLOSE" && String(m[1]).startsWith("wats-live-base")) {
        socket.send(JSON.stringify(["EVENT", m[1], late]));
      }
    };
    return response;
  });
  const a = ingestStore();
  const subscriptions = interestSubscriptions({
    profiles: [bob.pubkey],
    caps: [],
    openAsks: false,
    haltAuthors: [],
    threads: [],
  });
  const sync = startRelaySync({
    url: `ws://127.0.0.1:${server.addr.port}`,
    store: a.store,
    ingest: a.ingest,
    log: testLog,
    maxSkewMs: 600_000,
    subscriptions,
    ...FAST_BACKOFF,
  });
  try {
    await waitFor(() => a.store.has(outside.id) && a.store.has(late.id), "both notes stored");
    const live = sent.filter((m) => String(m[1]).startsWith("wats-live-"));
    const base = String(live[0]![1]);
    assert.match(base, /^wats-live-base-\d+$/);
    assert.deepEqual(live.slice(1).map((m) => [m[0], String(m[1]).replace(/-\d+$/, "")]), [
      ["REQ", "wats-live-all"],
      ["CLOSE", "wats-live-base"],
      ["CLOSE", "wats-live-base"],
    ]);
    assert.deepEqual(live[1]!.slice(2), [{ kinds: [...NOSTR_KINDS], limit: 0 }]);
    assert.equal(live[3]![1], base, "the same subscription closed again");
    assert.equal(sync.status().unasked, 1);
  } finally {
    await sync.close();
    await a.ingest.settle();
    await server.shutdown();
    a.cleanup();
  }
});

Deno.test("a relay that answers the live subscriptions but drops before the catch-up ends is reconnected to at the first delay each time, not an ever longer one", async () => {
  // Each connection: the live REQ gets its EOSE, the catch-up page never ends, and the relay
  // goes away (a restart). Before, only a finished catch-up reset the delay: it doubled at each
  // restart up to 60 s (issue 27). With a 50 ms first delay and no jitter, 14 connections whose
  // delays doubled would wait 25 ms × (2^13 − 1) ≈ 205 s in all, past waitFor's 60 s; at the
  // first delay they wait 13 × 25 ms.
  let connections = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onopen = () => connections++;
    socket.onmessage = (e) => {
      const m = JSON.parse(e.data);
      if (m[0] !== "REQ" || !String(m[1]).startsWith("wats-live-")) return;
      socket.send(JSON.stringify(["EOSE", m[1]]));
      setTimeout(() => socket.close(), 0);
    };
    return response;
  });
  const a = ingestStore();
  const sync = startRelaySync({
    url: `ws://127.0.0.1:${server.addr.port}`,
    store: a.store,
    ingest: a.ingest,
    log: testLog,
    maxSkewMs: 600_000,
    subscriptions: interestSubscriptions({
      profiles: [alice.pubkey],
      caps: [],
      openAsks: false,
      haltAuthors: [],
      threads: [],
    }),
    backoffBaseMs: 50,
    backoffMaxMs: 600_000,
    random: () => 0,
  });
  try {
    await waitFor(() => connections >= 14, () => `14 connections (${connections} so far)`);
    assert.equal(sync.status().caughtUp, false, "no catch-up ever ended");
  } finally {
    await sync.close();
    await server.shutdown();
    a.cleanup();
  }
});
