import assert from "node:assert/strict";
import { Relay } from "nostr-tools/relay";
import { finalizeEvent } from "nostr-tools/pure";
import { createIngest } from "../../src/net/ingest.ts";
import { serveRelay } from "../../src/net/relay_server.ts";
import { NOSTR_KINDS } from "../../src/posts/kinds.ts";
import type { NostrEvent } from "../../src/posts/post.ts";
import {
  alice,
  bob,
  fetchAll,
  nowSec,
  openWs,
  recordingSink,
  signed,
  tempStore,
  testLog,
  waitFor,
} from "./net_support.ts";

async function setup(limits: { maxQueue?: number; stallMs?: number } = {}) {
  const t = tempStore();
  const rec = recordingSink();
  const ingest = createIngest({
    store: t.store,
    events: rec.sink,
    log: testLog,
    now: Date.now,
    maxSkewMs: 10 * 60_000,
  });
  const server = await serveRelay({
    hostname: "127.0.0.1",
    port: 0,
    store: t.store,
    ingest,
    log: testLog,
    ...limits,
  });
  const url = `ws://127.0.0.1:${server.port}`;
  return {
    ...t,
    ...rec,
    ingest,
    server,
    url,
    async cleanup() {
      await server.close();
      await ingest.settle();
      t.cleanup();
    },
  };
}

Deno.test("a nostr-tools client publishes a signed wats post: OK true, stored, announced", async () => {
  const s = await setup();
  const relay = await Relay.connect(s.url);
  try {
    const e = signed(alice, "ask", "Does the endpoint work?", { title: "Endpoint" });
    assert.equal(await relay.publish(e), "");
    assert.equal(s.store.has(e.id), true);
    const stored = s.seen.find((x) => x.event === "post_stored");
    assert.equal(stored?.id, e.id);
    assert.match(String(stored?.source), /^listen:127\.0\.0\.1:\d+$/);
    // Again: accepted as a duplicate, not stored twice.
    assert.match(await relay.publish(e), /^duplicate:/);
    assert.equal(s.store.count(), 1);
  } finally {
    relay.close();
    await s.cleanup();
  }
});

Deno.test("each kind of invalid event gets OK false with its reason; nothing stored; still serving", async () => {
  const s = await setup();
  const relay = await Relay.connect(s.url);
  try {
    const good = signed(alice, "note", "good");
    const cases: [NostrEvent, RegExp][] = [
      [
        { ...good, sig: (good.sig[0] === "a" ? "b" : "a") + good.sig.slice(1) },
        /^invalid: .*signature.*\(bad_sig\)$/,
      ],
      [
        finalizeEvent({ kind: 1, created_at: nowSec(), tags: [], content: "hi" }, alice.secret),
        /^invalid: kind 1 is not a wats kind.*\(unknown_kind\)$/,
      ],
      [
        signed(alice, "note", "later", { createdAt: nowSec() + 7200 }),
        /^invalid: created_at is \d+ s in the future.*\(future\)$/,
      ],
      [
        finalizeEvent({
          kind: NOSTR_KINDS[0],
          created_at: nowSec(),
          tags: Array.from({ length: 80 }, (_, i) => ["t", `t${i}`]),
          content: "tags",
        }, alice.secret),
        /^invalid: 80 tags; the limit is 64 \(too_many_tags\)$/,
      ],
    ];
    for (const [event, reason] of cases) {
      await assert.rejects(relay.publish(event), (err: Error) => {
        assert.match(err.message, reason);
        return true;
      });
    }
    assert.equal(s.store.count(), 0);
    assert.deepEqual(s.ingest.rejected(), {
      bad_sig: 1,
      unknown_kind: 1,
      future: 1,
      too_many_tags: 1,
    });
    // Garbage gets a NOTICE and the connection stays usable.
    const raw = await openWs(s.url);
    for (const junk of ["not json", "{}", '["EVENT"]', "[42]", '["REQ"]', '["HELLO"]']) {
      raw.sendRaw(junk);
      const m = await raw.next((m) => m[0] === "NOTICE" || m[0] === "CLOSED", junk);
      assert.ok(String(m.at(-1)).length > 0);
    }
    raw.sendRaw(new Uint8Array([1, 2, 3]));
    await raw.next((m) => m[0] === "NOTICE" && /binary/.test(String(m[1])), "binary notice");
    raw.send(["REQ", "bad", { kinds: "all" }]);
    const closed = await raw.next((m) => m[0] === "CLOSED", "CLOSED");
    assert.deepEqual(closed.slice(0, 2), ["CLOSED", "bad"]);
    assert.match(String(closed[2]), /^invalid: /);
    await raw.close();
    assert.equal(await relay.publish(good), "");
    assert.equal(s.store.count(), 1);
  } finally {
    relay.close();
    await s.cleanup();
  }
});

Deno.test("REQ returns stored matches newest first, then EOSE, then live matching events", async () => {
  const s = await setup();
  const reader = await openWs(s.url);
  const writer = await Relay.connect(s.url);
  try {
    const t = nowSec();
    const old = [
      signed(alice, "ask", "one", { createdAt: t - 30, title: "one" }),
      signed(alice, "note", "two", { createdAt: t - 20 }),
      signed(bob, "ask", "three", { createdAt: t - 10, title: "three" }),
    ];
    s.store.insert(old);
    const history = await fetchAll(reader, "asks", { kinds: [NOSTR_KINDS[0]] });
    assert.deepEqual(history.map((e) => e.content), ["three", "one"]);
    // Live: a matching post arrives, a non-matching one does not.
    const note = signed(bob, "note", "not an ask");
    const ask = signed(bob, "ask", "live ask", { title: "live" });
    await writer.publish(note);
    await writer.publish(ask);
    const live = await reader.next((m) => m[0] === "EVENT" && m[1] === "asks", "live event");
    assert.equal((live[2] as NostrEvent).id, ask.id);
    assert.ok(
      !reader.messages.some((m) => m[0] === "EVENT" && (m[2] as NostrEvent).id === note.id),
    );
    // After CLOSE nothing more comes for that subscription.
    reader.send(["CLOSE", "asks"]);
    const after = signed(alice, "ask", "after close", { title: "after" });
    await writer.publish(after);
    const probe = await fetchAll(reader, "probe", { ids: [after.id] });
    assert.equal(probe.length, 1);
    assert.ok(
      !reader.messages.some((m) => m[1] === "asks" && (m[2] as NostrEvent)?.id === after.id),
    );
  } finally {
    writer.close();
    await reader.close();
    await s.cleanup();
  }
});

Deno.test("a nostr-tools subscription sees history, EOSE and then live posts", async () => {
  const s = await setup();
  const sub = await Relay.connect(s.url);
  const pub = await Relay.connect(s.url);
  try {
    s.store.insert([signed(alice, "note", "stored before")]);
    const got: string[] = [];
    let eose = false;
    sub.subscribe([{ kinds: [...NOSTR_KINDS] }], {
      onevent: (e) => got.push(`${eose ? "live" : "stored"}:${e.content}`),
      oneose: () => eose = true,
    });
    await waitFor(() => eose, "EOSE");
    await pub.publish(signed(bob, "note", "published after"));
    await waitFor(() => got.length === 2, "the live event");
    assert.deepEqual(got, ["stored:stored before", "live:published after"]);
  } finally {
    sub.close();
    pub.close();
    await s.cleanup();
  }
});

// ---- a client that does not read -------------------------------------------

/** A WebSocket client on a raw TCP connection: it reads only when told to. */
async function lazyClient(port: number) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const enc = new TextEncoder();
  await conn.write(enc.encode(
    "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  ));
  let buf = new Uint8Array(0);
  const fill = async (): Promise<boolean> => {
    const chunk = new Uint8Array(64 * 1024);
    const n = await conn.read(chunk);
    if (n === null) return false;
    const next = new Uint8Array(buf.length + n);
    next.set(buf);
    next.set(chunk.subarray(0, n), buf.length);
    buf = next;
    return true;
  };
  // The handshake's answer.
  for (;;) {
    const text = new TextDecoder().decode(buf);
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      assert.match(text, /^HTTP\/1\.1 101/);
      buf = buf.slice(end + 4);
      break;
    }
    if (!await fill()) throw new Error("closed during the handshake");
  }
  return {
    /** Sends one masked text frame. */
    async send(msg: unknown) {
      const payload = enc.encode(JSON.stringify(msg));
      const mask = crypto.getRandomValues(new Uint8Array(4));
      const len = payload.length;
      const head = len < 126 ? [0x81, 0x80 | len] : [0x81, 0x80 | 126, len >> 8, len & 255];
      const frame = new Uint8Array(head.length + 4 + len);
      frame.set(head);
      frame.set(mask, head.length);
      for (let i = 0; i < len; i++) frame[head.length + 4 + i] = payload[i] ^ mask[i % 4];
      await conn.write(frame);
    },
    /** Reads text frames until `stop` says so or the connection ends. */
    async readUntil(stop: (m: unknown[]) => boolean): Promise<unknown[][]> {
      const out: unknown[][] = [];
      for (;;) {
        while (buf.length >= 2) {
          let len = buf[1] & 127;
          let at = 2;
          if (len === 126) {
            if (buf.length < 4) break;
            len = (buf[2] << 8) | buf[3];
            at = 4;
          } else if (len === 127) {
            if (buf.length < 10) break;
            len = Number(new DataView(buf.buffer, buf.byteOffset + 2, 8).getBigUint64(0));
            at = 10;
          }
          if (buf.length < at + len) break;
          const opcode = buf[0] & 15;
          const body = buf.slice(at, at + len);
          buf = buf.slice(at + len);
          if (opcode === 8) return out;
          if (opcode !== 1) continue;
          const m = JSON.parse(new TextDecoder().decode(body));
          out.push(m);
          if (stop(m)) return out;
        }
        if (!await fill()) return out;
      }
    },
    close: () => conn.close(),
  };
}

Deno.test("a subscriber that does not read is cut off with CLOSED, not buffered forever", async () => {
  const maxQueue = 512 * 1024;
  const s = await setup({ maxQueue });
  const lazy = await lazyClient(s.server.port);
  const healthy = await openWs(s.url);
  try {
    await lazy.send(["REQ", "firehose", { kinds: [...NOSTR_KINDS] }]);
    await healthy.send(["REQ", "watch", { kinds: [...NOSTR_KINDS], limit: 0 }]);
    await healthy.next((m) => m[0] === "EOSE", "EOSE");
    await waitFor(() => s.server.connections() === 2, "two connections");
    // 600 posts of ~24 KiB: more than the kernel's socket buffers and the cap hold,
    // in bursts a reading client keeps up with (the pause lets the pump run).
    const text = "x".repeat(24 * 1024);
    const total = 600;
    for (let i = 0; i < total; i += 10) {
      s.store.insert(
        Array.from({ length: 10 }, (_, j) => signed(alice, "note", `${i + j} ${text}`)),
      );
      await new Promise((r) => setTimeout(r, 40));
    }
    // The healthy client, which reads, got every one of them.
    await waitFor(
      () => healthy.messages.filter((m) => m[0] === "EVENT").length === total,
      "every event on the healthy client",
    );
    // The lazy one now reads: it finds CLOSED … slow consumer, and not every event.
    const got = await lazy.readUntil((m) => m[0] === "CLOSED");
    const closed = got.at(-1)!;
    assert.equal(closed[0], "CLOSED", "the lazy subscription was closed");
    assert.equal(closed[1], "firehose");
    assert.match(String(closed[2]), /^error: slow consumer/);
    const events = got.filter((m) => m[0] === "EVENT").length;
    assert.ok(events < total, `${events} of ${total} events were queued for the lazy client`);
    // Nothing more is queued for the closed subscription.
    s.store.insert([signed(alice, "note", "after the cut")]);
    await lazy.send(["REQ", "ping", { ids: ["0".repeat(64)] }]);
    const rest = await lazy.readUntil((m) => m[0] === "EOSE" && m[1] === "ping");
    assert.ok(!rest.some((m) => m[1] === "firehose"));
  } finally {
    lazy.close();
    await healthy.close();
    await s.cleanup();
  }
});

Deno.test("the endpoint answers plain HTTP with a hint and NIP-11 with its limits", async () => {
  const s = await setup();
  try {
    const http = `http://127.0.0.1:${s.server.port}/`;
    const text = await (await fetch(http)).text();
    assert.match(text, /connect with a WebSocket/);
    const info = await (await fetch(http, { headers: { accept: "application/nostr+json" } }))
      .json();
    assert.deepEqual(info.supported_nips, [1, 11]);
    assert.equal(info.limitation.max_event_tags, 64);
  } finally {
    await s.cleanup();
  }
});
