/**
 * The connection to one relay (src/net/relay_link.ts): the backoff's arithmetic,
 * and a real link against a WebSocket server that drops it, a listener that never
 * answers the handshake, and a URL that cannot work. Timers left running would
 * fail these tests (Deno's op sanitizer), so `close` cancelling the reconnect is
 * checked by each.
 */

import assert from "node:assert/strict";
import { backoffDelay, type LinkHandlers, RelayLink } from "../../src/net/relay_link.ts";
import { testLog, waitFor } from "./net_support.ts";

const LIMITS = { baseMs: 1_000, maxMs: 60_000 };

Deno.test("the reconnect delay stays at the first for three attempts, then doubles up to the cap, half of it fixed and half random", () => {
  assert.equal(backoffDelay(0, LIMITS, () => 0), 500);
  assert.equal(backoffDelay(0, LIMITS, () => 0.999999), 999.9995);
  assert.equal(backoffDelay(1, LIMITS, () => 0), 500, "a relay restarted is back within seconds");
  assert.equal(backoffDelay(2, LIMITS, () => 0), 500);
  assert.equal(backoffDelay(3, LIMITS, () => 0), 1_000);
  assert.equal(backoffDelay(5, LIMITS, () => 0.5), 6_000);
  assert.equal(backoffDelay(8, LIMITS, () => 0), 30_000, "2^6 s is past the cap");
  assert.equal(backoffDelay(10_000, LIMITS, () => 1), 60_000, "no overflow for long absences");
});

/** Handlers that record what the link told them. */
function recording(): LinkHandlers & { log: string[] } {
  const log: string[] = [];
  return {
    log,
    open: () => log.push("open"),
    message: (data) => {
      log.push(`message ${data}`);
      if (data === "throw") throw new Error("a handler's bug");
    },
    peek: (head) => new TextDecoder().decode(head) !== "drop",
    lost: () => log.push("lost"),
  };
}

Deno.test("a dropped connection is reported and reconnected; messages arrive and bytes add up across connections", async () => {
  const sockets: WebSocket[] = [];
  const received: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onopen = () => {
      sockets.push(socket);
      for (const m of ["drop", "throw", `hello ${sockets.length}`]) socket.send(m);
    };
    socket.onmessage = (e) => received.push(e.data);
    return response;
  });
  const handlers = recording();
  const link = new RelayLink({
    url: `ws://127.0.0.1:${server.addr.port}`,
    log: testLog,
    handlers,
    backoffBaseMs: 10,
    backoffMaxMs: 20,
  });
  try {
    await waitFor(() => handlers.log.includes("message hello 1"), "the first connection's message");
    assert.deepEqual(handlers.log, ["open", "message throw", "message hello 1"]);
    assert.equal(link.connected, true);
    assert.equal(link.send(["REQ", "x", {}]), true);
    await waitFor(() => received.length === 1, "the message at the server");
    assert.deepEqual(JSON.parse(received[0]!), ["REQ", "x", {}]);
    const firstBytes = link.bytesReceived;
    assert.ok(firstBytes > 0);

    sockets[0]!.close(4000, "bye");
    await waitFor(() => handlers.log.includes("message hello 2"), "a second connection");
    assert.deepEqual(handlers.log.slice(3), ["lost", "open", "message throw", "message hello 2"]);
    assert.equal(link.lastError, "connection closed (4000 bye)");
    assert.ok(link.bytesReceived > firstBytes);
    link.healthy();
    assert.equal(link.lastError, undefined);
  } finally {
    await link.close();
    await server.shutdown();
  }
  assert.equal(link.connected, false);
  assert.equal(link.send(["CLOSE", "x"]), false);
});

Deno.test("an attempt that does not open in time is abandoned and tried again; close cancels the retry", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })();
  const handlers = recording();
  const link = new RelayLink({
    url: `ws://127.0.0.1:${listener.addr.port}`,
    log: testLog,
    handlers,
    connectTimeoutMs: 30,
    backoffBaseMs: 10,
    backoffMaxMs: 20,
  });
  try {
    await waitFor(() => held.length >= 2, "a second attempt");
    assert.equal(link.lastError, "no connection within 0.03 s");
    assert.ok(!handlers.log.includes("open"));
    assert.equal(link.connected, false);
  } finally {
    await link.close();
    listener.close();
    await accepting.catch(() => {});
    for (const c of held) {
      try {
        c.close();
      } catch {
        // The link closed it.
      }
    }
  }
});

Deno.test("a URL that is not ws:// is an error to fix, never retried", async () => {
  const handlers = recording();
  const link = new RelayLink({ url: "http://relay.example", log: testLog, handlers });
  assert.match(link.lastError ?? "", /^cannot connect: http:\/\/relay\.example is not a ws:\/\//);
  assert.equal(link.connected, false);
  await link.close();
  assert.deepEqual(handlers.log, []);
});
