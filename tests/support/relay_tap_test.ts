/**
 * The relay tap passes messages both ways, keeps what the client sent up, and
 * counts what the relay sent down (tests/support/relay_tap.ts).
 */

import assert from "node:assert/strict";
import { startRelayTap } from "./relay_tap.ts";

/** A stand-in relay: answers each REQ with one EVENT and an EOSE, and an EVENT with OK. */
function fakeRelay(): { url: string; close(): Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = (m) => {
      const msg = JSON.parse(String(m.data));
      if (msg[0] === "REQ") {
        socket.send(JSON.stringify(["EVENT", msg[1], { id: "e1", content: "héllo" }]));
        socket.send(JSON.stringify(["EOSE", msg[1]]));
      } else if (msg[0] === "EVENT") socket.send(JSON.stringify(["OK", msg[1].id, true, ""]));
    };
    return response;
  });
  return { url: `ws://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test("a relay tap forwards both ways, records REQ filters and counts UTF-8 bytes down by type", async () => {
  const relay = fakeRelay();
  await using tap = startRelayTap(relay.url);
  const ws = new WebSocket(tap.url);
  const got: string[] = [];
  const three = new Promise<void>((done) => {
    ws.onmessage = (m) => {
      got.push(String(m.data));
      if (got.length === 3) done();
    };
  });
  await new Promise((ok) => ws.onopen = ok);
  // Sent at once: the tap queues what arrives before its own connection to the relay opens.
  ws.send(JSON.stringify(["REQ", "s1", { kinds: [4470], "#p": ["ab"] }, { "#t": ["cap:go"] }]));
  ws.send(JSON.stringify(["EVENT", { id: "x1" }]));
  await three;
  const closed = new Promise((r) => ws.onclose = r);
  ws.close();
  await closed;

  assert.deepEqual(tap.reqFilters(), [{ kinds: [4470], "#p": ["ab"] }, { "#t": ["cap:go"] }]);
  assert.deepEqual(tap.up().map((f) => f[0]), ["REQ", "EVENT"]);
  const bytes = got.reduce((n, t) => n + new TextEncoder().encode(t).length, 0);
  assert.equal(tap.bytesDown(), bytes, "UTF-8 bytes, not UTF-16 units (é is two bytes)");
  assert.deepEqual(tap.downByType(), { EVENT: 1, EOSE: 1, OK: 1 });
  assert.ok(tap.lastActivity() > 0);
  tap.resetCounts();
  assert.equal(tap.bytesDown(), 0);
  assert.equal(tap.reqFilters().length, 2, "a reset keeps the frames");
  await relay.close();
});
