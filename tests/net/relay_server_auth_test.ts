/**
 * The relay endpoint with `net.auth = "required"` (src/net/relay_auth_gate.ts) against
 * an independent client, nostr-tools' `Relay` authenticating with its `onauth`/`auth`:
 * a member reads and writes; an unauthenticated client and a non-member read nothing
 * and store nothing (checked in the store), with NIP-42's reasons. Then hostile AUTH
 * events (wrong challenge, wrong relay, old, replayed from another connection, a
 * flood) and the per-address limits, on raw sockets.
 */

import assert from "node:assert/strict";
import { Relay } from "nostr-tools/relay";
import { finalizeEvent } from "nostr-tools/pure";
import type { EventTemplate, VerifiedEvent } from "nostr-tools/core";
import type { Filter } from "nostr-tools/filter";
import { AUTH_KIND, signAuth } from "../../src/net/auth_event.ts";
import { listenWarning, type NetworkSettings, parseListen } from "../../src/net/network.ts";
import { MAX_AUTH_ATTEMPTS } from "../../src/net/relay_auth_gate.ts";
import type { RelayServerOptions } from "../../src/net/relay_server.ts";
import type { ProfileKey } from "../../src/identity/profile_key.ts";
import {
  alice,
  bob,
  carol,
  openWs,
  servedStore,
  signed,
  waitFor,
  type WsClient,
} from "./net_support.ts";

async function setup(more: Partial<RelayServerOptions> = {}) {
  const s = await servedStore({
    auth: { required: true, members: new Set([alice.pubkey, bob.pubkey]) },
    ...more,
  });
  // A post the members can read.
  const stored = signed(bob, "ask", "members only", { title: "private" });
  s.store.insert([stored], { origin: "local" });
  return { ...s, stored };
}

const signer = (who: ProfileKey) => (t: EventTemplate): Promise<VerifiedEvent> =>
  Promise.resolve(finalizeEvent(t, who.secret));

/**
 * nostr-tools connected and authenticated as `who`: by `onauth` when the answer is
 * expected to be accepted (nostr-tools rethrows a refused `onauth` unhandled), else
 * by `auth`. Resolves with the AUTH's outcome.
 */
async function nostrTools(url: string, who: ProfileKey): Promise<{ relay: Relay; auth: string }> {
  const relay = new Relay(url);
  if (who !== carol) relay.onauth = signer(who);
  await relay.connect();
  await waitFor(
    () => (relay as unknown as { challenge?: string }).challenge !== undefined,
    "the challenge",
  );
  // With onauth, it answered already: this waits for that answer's OK.
  const auth = await relay.auth(signer(who)).then(() => "ok", (err: Error) => err.message);
  return { relay, auth };
}

/** What a subscription got: its events, and how it ended (`eose` or the CLOSED reason). */
function read(relay: Relay, filter: Filter) {
  const events: string[] = [];
  return new Promise<{ events: string[]; end: string }>((resolve) => {
    const sub = relay.subscribe([filter], {
      onevent: (e) => events.push(e.id),
      oneose: () => {
        resolve({ events, end: "eose" });
        sub.close();
      },
      onclose: (reason) => resolve({ events, end: reason }),
    });
  });
}

const publish = (relay: Relay, e: VerifiedEvent | ReturnType<typeof signed>) =>
  relay.publish(e).then((r) => `accepted${r ? ` ${r}` : ""}`, (err: Error) => err.message);

Deno.test("nostr-tools as a member: AUTH accepted, reads the stored and the live, writes", async () => {
  const s = await setup();
  const { relay, auth } = await nostrTools(s.url, alice);
  try {
    assert.equal(auth, "ok");
    const first = await read(relay, { kinds: [s.stored.kind] });
    assert.deepEqual(first, { events: [s.stored.id], end: "eose" });
    const live: string[] = [];
    relay.subscribe([{ kinds: [4471, s.stored.kind] }], { onevent: (e) => live.push(e.id) });
    const mine = signed(alice, "ask", "a member writes", { title: "member" });
    assert.equal(await publish(relay, mine), "accepted");
    assert.equal(s.store.has(mine.id), true);
    await waitFor(() => live.includes(mine.id), "the member's live event");
    // The endpoint counts who is connected as a member.
    assert.deepEqual(s.server.authenticated(), [[alice.pubkey]]);
  } finally {
    relay.close();
    await s.cleanup();
  }
});

Deno.test("nostr-tools unauthenticated and as a non-member: nothing read, nothing stored, NIP-42's reasons", async () => {
  const s = await setup();
  // Unauthenticated: no onauth.
  const anon = new Relay(s.url);
  await anon.connect();
  const { relay: outsider, auth } = await nostrTools(s.url, carol);
  try {
    const before = s.store.count();
    const anonRead = await read(anon, { kinds: [s.stored.kind] });
    assert.deepEqual(anonRead.events, []);
    assert.match(anonRead.end, /^auth-required:/);
    const anonPost = signed(alice, "ask", "posted unauthenticated", { title: "anon" });
    assert.match(await publish(anon, anonPost), /^auth-required:/);

    assert.match(auth, /^restricted:/);
    const outRead = await read(outsider, { kinds: [s.stored.kind] });
    assert.deepEqual(outRead.events, []);
    assert.match(outRead.end, /^restricted:/);
    const outPost = signed(carol, "ask", "posted by an outsider", { title: "outside" });
    assert.match(await publish(outsider, outPost), /^restricted:/);

    assert.equal(s.store.count(), before, "nothing stored");
    assert.equal(s.store.has(anonPost.id) || s.store.has(outPost.id), false);
  } finally {
    anon.close();
    outsider.close();
    await s.cleanup();
  }
});

Deno.test("a member's connection cannot post a non-member's event; NIP-11 says auth_required", async () => {
  const s = await setup();
  const { relay } = await nostrTools(s.url, alice);
  try {
    const laundered = signed(carol, "ask", "through a member", { title: "laundered" });
    assert.match(await publish(relay, laundered), /^restricted: the event's author/);
    assert.equal(s.store.has(laundered.id), false);
    const info = await (await fetch(`http://127.0.0.1:${s.server.port}/`, {
      headers: { accept: "application/nostr+json" },
    })).json();
    assert.equal(info.limitation.auth_required, true);
    assert.ok(info.supported_nips.includes(42));
  } finally {
    relay.close();
    await s.cleanup();
  }
});

/** A raw client and the challenge it was sent. */
async function challenged(url: string): Promise<{ ws: WsClient; challenge: string }> {
  const ws = await openWs(url);
  const m = await ws.next((m) => m[0] === "AUTH", "the challenge");
  return { ws, challenge: m[1] as string };
}

/** Sends an AUTH and returns its OK's [accepted, reason]. */
async function tryAuth(ws: WsClient, event: { id: string }): Promise<[unknown, unknown]> {
  ws.send(["AUTH", event]);
  const ok = await ws.next((m) => m[0] === "OK" && m[1] === event.id, "the AUTH's OK");
  return [ok[2], ok[3]];
}

Deno.test("hostile AUTH: wrong challenge, wrong relay, old, replayed from another connection: refused", async () => {
  const s = await setup();
  const a = await challenged(s.url);
  const b = await challenged(s.url);
  try {
    const now = Date.now();
    const good = { secret: alice.secret, relayUrl: s.url, challenge: a.challenge, now };
    const cases: Array<[string, { id: string }, RegExp]> = [
      ["a wrong challenge", signAuth({ ...good, challenge: "not-it" }), /challenge/],
      ["another relay", signAuth({ ...good, relayUrl: "wss://other.example" }), /relay tag/],
      ["an old one", signAuth({ ...good, now: now - 3_600_000 }), /created_at/],
      ["a forged signature", { ...signAuth(good), sig: "ab".repeat(64) }, /signature/],
      [
        "another kind",
        finalizeEvent({
          kind: 1,
          created_at: Math.floor(now / 1000),
          tags: [["relay", s.url], ["challenge", a.challenge]],
          content: "",
        }, alice.secret),
        /kind 22242/,
      ],
    ];
    for (const [what, event, reason] of cases) {
      const [ok, why] = await tryAuth(a.ws, event);
      assert.equal(ok, false, what);
      assert.match(String(why), /^invalid: /, what);
      assert.match(String(why), reason, what);
    }
    // Still unauthenticated after all of them.
    a.ws.send(["REQ", "after", { limit: 1 }]);
    const closed = await a.ws.next((m) => m[1] === "after", "the REQ's answer");
    assert.equal(closed[0], "CLOSED");
    assert.match(String(closed[2]), /^auth-required:/);
    // A valid AUTH for connection A, replayed on connection B, is refused there.
    const forA = signAuth(good);
    assert.deepEqual(await tryAuth(a.ws, forA), [true, ""]);
    const [replayed, why] = await tryAuth(b.ws, forA);
    assert.equal(replayed, false);
    assert.match(String(why), /challenge/);
    b.ws.send(["EVENT", signed(alice, "note", "via a replayed AUTH")]);
    const refused = await b.ws.next((m) => m[0] === "OK", "the EVENT's OK");
    assert.equal(refused[2], false);
    assert.match(String(refused[3]), /^auth-required:/);
    assert.equal(AUTH_KIND, 22242);
  } finally {
    await a.ws.close();
    await b.ws.close();
    await s.cleanup();
  }
});

Deno.test("a flood of AUTH attempts closes the connection after MAX_AUTH_ATTEMPTS", async () => {
  const s = await setup();
  const { ws, challenge } = await challenged(s.url);
  try {
    for (let i = 0; i < MAX_AUTH_ATTEMPTS; i++) {
      const e = signAuth({
        secret: carol.secret,
        relayUrl: s.url,
        challenge: `x${i}`,
        now: Date.now(),
      });
      const [ok] = await tryAuth(ws, e);
      assert.equal(ok, false);
    }
    const last = signAuth({ secret: alice.secret, relayUrl: s.url, challenge, now: Date.now() });
    const [ok, why] = await tryAuth(ws, last);
    assert.equal(ok, false, "even a valid one past the cap");
    assert.match(String(why), /^rate-limited:/);
    await ws.close();
    await waitFor(() => s.server.connections() === 0, "the connection closed");
  } finally {
    await s.cleanup();
  }
});

/** The status line of a WebSocket upgrade from 127.0.0.1 with `headers` added; the socket is kept open. */
async function upgrade(port: number, headers: Record<string, string> = {}) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  await conn.write(new TextEncoder().encode(
    `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
  ));
  const buf = new Uint8Array(1024);
  const n = await conn.read(buf);
  const status = new TextDecoder().decode(buf.subarray(0, n ?? 0)).split("\r\n")[0]!;
  return { status, close: () => conn.close() };
}

Deno.test("per address: connections past net.max_connections_per_ip get 429; X-Forwarded-For counts only when trusted", async () => {
  const untrusted = await setup({ maxConnectionsPerIp: 2 });
  const trusted = await setup({ maxConnectionsPerIp: 2, trustForwarded: true });
  const open: Array<{ close(): void }> = [];
  try {
    for (const ip of ["10.0.0.1", "10.0.0.2"]) {
      const c = await upgrade(untrusted.server.port, { "x-forwarded-for": ip });
      open.push(c);
      assert.match(c.status, / 101 /);
    }
    // A new header does not make a new address when the header is not trusted.
    const third = await upgrade(untrusted.server.port, { "x-forwarded-for": "10.0.0.3" });
    open.push(third);
    assert.match(third.status, / 429 /);
    // Trusted: the last hop (what the operator's proxy appended) is the address.
    for (const xff of ["10.0.0.1", "6.6.6.6, 10.0.0.1", "10.0.0.2"]) {
      const c = await upgrade(trusted.server.port, { "x-forwarded-for": xff });
      open.push(c);
      assert.match(c.status, / 101 /, xff);
    }
    const spoofed = await upgrade(trusted.server.port, { "x-forwarded-for": "10.0.0.9, 10.0.0.1" });
    open.push(spoofed);
    assert.match(spoofed.status, / 429 /, "a client cannot pick its address by prepending one");
  } finally {
    for (const c of open) c.close();
    await untrusted.cleanup();
    await trusted.cleanup();
  }
});

Deno.test("per address: messages past net.max_messages_per_ip are answered rate-limited: and not read", async () => {
  const s = await setup({ maxMessagesPerIp: 1 });
  const ws = await openWs(s.url);
  try {
    await ws.next((m) => m[0] === "AUTH", "the challenge");
    // The burst is twice the rate: 2 go through (refused auth-required:), then rate-limited:
    // but for one a second.
    for (let i = 0; i < 40; i++) ws.send(["REQ", `r${i}`, { limit: 1 }]);
    const answers: unknown[][] = [];
    for (let i = 0; i < 40; i++) {
      answers.push(await ws.next((m) => m[0] === "CLOSED" && m[1] === `r${i}`, `r${i}'s CLOSED`));
    }
    const limited = answers.filter((m) => /^rate-limited:/.test(String(m[2]))).length;
    assert.ok(limited >= 30, `${limited} of 40 rate-limited`);
    assert.ok(limited < 40, "the first ones were read");
  } finally {
    await ws.close();
    await s.cleanup();
  }
});

Deno.test("the node warns at start when its endpoint is open beyond loopback, or required with no member", () => {
  const at = (listen: string, more: Partial<NetworkSettings> = {}) =>
    listenWarning({ listen, ...more }, parseListen(listen).hostname);
  assert.match(at("0.0.0.0:7447") ?? "", /net\.auth = open: anyone who reaches it/);
  assert.match(at("192.168.1.5:7447", { auth: "open" }) ?? "", /anyone who reaches it/);
  assert.equal(at("127.0.0.1:7447"), undefined);
  assert.equal(at("[::1]:7447"), undefined);
  assert.equal(at("0.0.0.0:7447", { auth: "required", members: [alice.pubkey] }), undefined);
  assert.match(at("0.0.0.0:7447", { auth: "required" }) ?? "", /serves no one/);
});
