/**
 * The outbox window of one relay (src/net/outbox_window.ts) on a real store's
 * outbox, with the relay's answers given by hand: the window, what leaves the
 * outbox on which answer, and what is sent again only on the next connection.
 * relay_sync_test.ts runs it against relays.
 */

import assert from "node:assert/strict";
import { OutboxWindow, type OutboxWindowOptions } from "../../src/net/outbox_window.ts";
import { alice, signed, tempStore, testLog } from "./net_support.ts";

const URL = "ws://relay.test";

function setup(
  posts: number,
  window: number,
  hooks: Partial<Pick<OutboxWindowOptions, "refused" | "accepted" | "authRequired">> = {},
) {
  const t = tempStore([URL]);
  t.store.recordProfile("alice", alice.pubkey);
  const events = Array.from({ length: posts }, (_, i) => signed(alice, "note", `p${i}`));
  t.store.insert(events, { origin: "local" });
  const sent: string[] = [];
  let connected = true;
  const outbox = new OutboxWindow({
    url: URL,
    outbox: t.store.outbox,
    log: testLog,
    window,
    connected: () => connected,
    ...hooks,
    send: (m) => {
      if (!connected) return false;
      sent.push((m[1] as { id: string }).id);
      return true;
    },
  });
  const disconnect = () => {
    connected = false;
    outbox.reset();
  };
  const reconnect = () => {
    connected = true;
    outbox.flush();
  };
  return { ...t, events, sent, outbox, disconnect, reconnect };
}

Deno.test("at most the window is unanswered; answers refill it from half empty, oldest first", () => {
  const s = setup(10, 4);
  try {
    s.outbox.flush();
    assert.equal(s.sent.length, 4);
    // One answer: still 3 in flight, over half the window: nothing more yet.
    s.outbox.answered(s.sent[0], true, "");
    assert.equal(s.sent.length, 4);
    s.outbox.answered(s.sent[1], true, "");
    assert.equal(s.sent.length, 6, "refilled to the window");
    assert.equal(new Set(s.sent).size, 6, "none sent twice");
    assert.equal(s.store.outbox.size(), 8);
  } finally {
    s.cleanup();
  }
});

Deno.test("OK true and duplicate acknowledge; a permanent refusal drops; a temporary one waits for the next connection", () => {
  const s = setup(4, 10);
  try {
    s.outbox.flush();
    const [ok, dup, refused, later] = s.sent as [string, string, string, string];
    s.outbox.answered(ok, true, "");
    s.outbox.answered(dup, false, "duplicate: have it");
    s.outbox.answered(refused, false, "invalid: bad signature");
    s.outbox.answered(later, false, "rate-limited: slow down");
    assert.deepEqual(s.store.outbox.pending(URL, 10).map((e) => e.id), [later]);
    // Not sent again on this connection, even when more is published.
    s.outbox.flush();
    assert.equal(s.sent.length, 4);
    // An answer for something not in flight (or not a string) changes nothing.
    s.outbox.answered(later, true, "");
    s.outbox.answered(42, true, "");
    assert.equal(s.store.outbox.size(), 1);
    s.disconnect();
    s.reconnect();
    assert.deepEqual(s.sent.slice(4), [later]);
  } finally {
    s.cleanup();
  }
});

Deno.test("while disconnected nothing is sent; posts inserted in one turn are published together once", async () => {
  const s = setup(2, 10);
  try {
    s.disconnect();
    s.outbox.flush();
    assert.deepEqual(s.sent, []);
    s.reconnect();
    assert.equal(s.sent.length, 2);
    const more = [signed(alice, "note", "a"), signed(alice, "note", "b")];
    s.store.insert([more[0]!], { origin: "local" });
    s.outbox.inserted();
    s.store.insert([more[1]!], { origin: "local" });
    s.outbox.inserted();
    assert.equal(s.sent.length, 2, "not before the turn ends");
    await Promise.resolve();
    assert.deepEqual(s.sent.slice(2).sort(), more.map((e) => e.id).sort());
  } finally {
    s.cleanup();
  }
});

Deno.test("restricted: and blocked: keep the post queued and report it; auth-required: waits for the AUTH", () => {
  const refused: Array<[string, string]> = [];
  let authRequired = 0;
  const accepted: string[] = [];
  const s = setup(3, 10, {
    refused: (id, reason) => refused.push([id, reason]),
    accepted: (id) => accepted.push(id),
    authRequired: () => authRequired++,
  });
  try {
    s.outbox.flush();
    const [a, b, c] = s.sent as [string, string, string];
    s.outbox.answered(a, false, "restricted: not a member");
    s.outbox.answered(b, false, "blocked: not here");
    s.outbox.answered(c, false, "auth-required: authenticate first");
    // Nothing leaves the outbox: the sender sees them refused, never lost.
    assert.equal(s.store.outbox.pending(URL, 10).length, 3);
    assert.deepEqual(refused, [[a, "restricted: not a member"], [b, "blocked: not here"]]);
    assert.equal(authRequired, 1);
    // Not sent again in a loop on this connection…
    s.outbox.flush();
    assert.equal(s.sent.length, 3);
    // …but on the next session (after the AUTH, or a reconnect), and taken then.
    s.disconnect();
    s.reconnect();
    assert.deepEqual(s.sent.slice(3).sort(), [a, b, c].sort());
    for (const id of [a, b, c]) s.outbox.answered(id, true, "");
    assert.equal(s.store.outbox.size(), 0);
    assert.deepEqual(accepted.sort(), [a, b, c].sort());
  } finally {
    s.cleanup();
  }
});
