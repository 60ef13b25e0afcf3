/**
 * Shared pieces of the network tests: temp stores, signed posts dated now, an event
 * sink that records, a WebSocket client that reads NIP-01 messages in order, and a
 * wait that polls a condition (with a generous safety limit, not a speed test).
 *
 * @module
 */

import { getLogger, type Logger } from "@logtape/logtape";
import { deriveProfileKey, type ProfileKey } from "../../src/identity/profile_key.ts";
import type { NodeEvent } from "../../src/contracts/node_events.ts";
import { signAuth } from "../../src/net/auth_event.ts";
import { createIngest, type Ingest } from "../../src/net/ingest.ts";
import { type RelayServerOptions, serveRelay } from "../../src/net/relay_server.ts";
import type { WatsKind } from "../../src/posts/kinds.ts";
import { buildPost, type NostrEvent, type PostDraft } from "../../src/posts/post.ts";
import { Store } from "../../src/store/store.ts";

const NODE_A = new Uint8Array(32).fill(7);
const NODE_B = new Uint8Array(32).fill(9);
/** An author of "node A". */
export const alice: ProfileKey = deriveProfileKey(NODE_A, "alice");
/** An author of "node B". */
export const bob: ProfileKey = deriveProfileKey(NODE_B, "bob");
/** An author of a third node, that the members-only relays of the auth tests do not list. */
export const carol: ProfileKey = deriveProfileKey(new Uint8Array(32).fill(3), "carol");

/** The logger tests hand to the network code (no sink configured: silent). */
export const testLog: Logger = getLogger(["wats", "net-test"]);

/** Seconds since the epoch, now. */
export function nowSec(): number {
  return Math.floor(Date.now() / 1000);
}

/** A signed post dated now (or `createdAt`). */
export function signed(
  who: ProfileKey,
  kind: WatsKind,
  text: string,
  more: Partial<PostDraft> = {},
): NostrEvent {
  return buildPost({ kind, text, createdAt: nowSec(), ...more }, who.secret);
}

/** A store in a new temp dir; `cleanup` closes it and removes the dir. */
export function tempStore(
  relays: readonly string[] = [],
): { store: Store; dir: string; path: string; cleanup: () => void } {
  const dir = Deno.makeTempDirSync({ prefix: "wats-net-" });
  const path = `${dir}/store.db`;
  const store = Store.open(path, { relays });
  return {
    store,
    dir,
    path,
    cleanup: () => {
      store.close();
      Deno.removeSync(dir, { recursive: true });
    },
  };
}

/** A node event as a plain record, for assertions. */
export type SeenEvent = { event: string; [field: string]: unknown };

/** An event sink that keeps what it is given. */
export function recordingSink(): { sink: (e: NodeEvent) => void; seen: SeenEvent[] } {
  const seen: SeenEvent[] = [];
  return { sink: (e) => seen.push(e as SeenEvent), seen };
}

/** A node's side of the network tests: a temp store and an ingest into it. */
export type IngestStore = ReturnType<typeof tempStore> & ReturnType<typeof recordingSink> & {
  ingest: Ingest;
};

/**
 * A temp store (its local posts queued for `relays`) and an ingest into it that records its
 * events in `seen`, accepting clocks `maxSkewMs` off (10 minutes unless said).
 */
export function ingestStore(
  o: { relays?: readonly string[]; maxSkewMs?: number } = {},
): IngestStore {
  const t = tempStore(o.relays);
  const rec = recordingSink();
  const ingest = createIngest({
    store: t.store,
    events: rec.sink,
    log: testLog,
    now: Date.now,
    maxSkewMs: o.maxSkewMs ?? 10 * 60_000,
  });
  return { ...t, ...rec, ingest };
}

/**
 * This code's relay endpoint on a free loopback port, over an {@linkcode ingestStore};
 * `options` adds to (or overrides) the server's. `cleanup` closes the server, lets the
 * ingest settle and removes the store.
 */
export async function servedStore(options: Partial<RelayServerOptions> = {}) {
  const t = ingestStore();
  const server = await serveRelay({
    hostname: "127.0.0.1",
    port: 0,
    store: t.store,
    ingest: t.ingest,
    log: testLog,
    ...options,
  });
  return {
    ...t,
    server,
    url: `ws://127.0.0.1:${server.port}`,
    async cleanup() {
      await server.close();
      await t.ingest.settle();
      t.cleanup();
    },
  };
}

/**
 * Polls `check` every 10 ms until it returns true. Throws, naming `what` (a
 * function: what it says at that moment), after `limitMs` (a safety net against
 * a hang, default 60 s).
 */
export async function waitFor(
  check: () => boolean,
  what: string | (() => string),
  limitMs = 60_000,
): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > limitMs) {
      throw new Error(`gave up waiting for ${typeof what === "string" ? what : what()}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A WebSocket client that keeps every NIP-01 message it receives, in order. */
export interface WsClient {
  /** Every message so far, parsed. */
  messages: unknown[][];
  send(msg: unknown): void;
  sendRaw(text: string | Uint8Array): void;
  /** Waits for the next unread message matching `match` and returns it. */
  next(match: (m: unknown[]) => boolean, what?: string): Promise<unknown[]>;
  close(): Promise<void>;
}

/** Opens a WebSocket to `url` and resolves once it is open. */
export async function openWs(url: string): Promise<WsClient> {
  const ws = new WebSocket(url);
  const messages: unknown[][] = [];
  let read = 0;
  const closed = new Promise<void>((r) => ws.addEventListener("close", () => r()));
  ws.onmessage = (e) => {
    try {
      messages.push(JSON.parse(e.data));
    } catch {
      messages.push(["(unparseable)", e.data]);
    }
  };
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`cannot connect to ${url}`));
  });
  return {
    messages,
    send: (msg) => ws.send(JSON.stringify(msg)),
    sendRaw: (text) => ws.send(text),
    async next(match, what = "a message") {
      let found: unknown[] | undefined;
      await waitFor(() => {
        while (read < messages.length) {
          const m = messages[read++]!;
          if (match(m)) {
            found = m;
            return true;
          }
        }
        return false;
      }, `${what} from ${url}`);
      return found!;
    },
    async close() {
      if (ws.readyState !== WebSocket.CLOSED) ws.close();
      await closed;
    },
  };
}

/** A raw client authenticated (NIP-42) as `who`: it waits for the relay's challenge. */
export async function authedWs(url: string, who: ProfileKey): Promise<WsClient> {
  const ws = await openWs(url);
  const [, challenge] = await ws.next((m) => m[0] === "AUTH", "the AUTH challenge");
  const auth = signAuth({
    secret: who.secret,
    relayUrl: url,
    challenge: challenge as string,
    now: Date.now(),
  });
  ws.send(["AUTH", auth]);
  const ok = await ws.next((m) => m[0] === "OK" && m[1] === auth.id, "the AUTH's OK");
  if (ok[2] !== true) throw new Error(`the relay refused the AUTH of ${who.npub}: ${ok[3]}`);
  return ws;
}

/** Publishes `events` over `client` and waits for every `OK`; returns them by id. */
export async function publishAll(
  client: WsClient,
  events: readonly NostrEvent[],
): Promise<Map<string, unknown[]>> {
  const ids = new Set(events.map((e) => e.id));
  const oks = new Map<string, unknown[]>();
  for (const e of events) client.send(["EVENT", e]);
  while (oks.size < ids.size) {
    const m = await client.next((m) => m[0] === "OK" && ids.has(m[1] as string), "OK");
    oks.set(m[1] as string, m);
  }
  return oks;
}

/** Sends a REQ and collects its stored events up to EOSE. */
export async function fetchAll(
  client: WsClient,
  subId: string,
  ...filters: Record<string, unknown>[]
): Promise<NostrEvent[]> {
  client.send(["REQ", subId, ...filters]);
  const got: NostrEvent[] = [];
  for (;;) {
    const m = await client.next((m) => m[1] === subId, `answer to ${subId}`);
    if (m[0] === "EOSE") return got;
    if (m[0] === "EVENT") got.push(m[2] as NostrEvent);
    if (m[0] === "CLOSED") throw new Error(`${subId} closed: ${m[2]}`);
  }
}

/** A WebSocket client on a raw TCP connection: it reads only when told to. */
export async function lazyClient(port: number) {
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
      if (!/^HTTP\/1\.1 101/.test(text)) throw new Error(`no upgrade: ${text.slice(0, 80)}`);
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
      for (let i = 0; i < len; i++) frame[head.length + 4 + i] = payload[i]! ^ mask[i % 4]!;
      await conn.write(frame);
    },
    /** Reads text frames until `stop` says so or the connection ends. */
    async readUntil(stop: (m: unknown[]) => boolean): Promise<unknown[][]> {
      const out: unknown[][] = [];
      for (;;) {
        while (buf.length >= 2) {
          let len = buf[1]! & 127;
          let at = 2;
          if (len === 126) {
            if (buf.length < 4) break;
            len = (buf[2]! << 8) | buf[3]!;
            at = 4;
          } else if (len === 127) {
            if (buf.length < 10) break;
            len = Number(new DataView(buf.buffer, buf.byteOffset + 2, 8).getBigUint64(0));
            at = 10;
          }
          if (buf.length < at + len) break;
          const opcode = buf[0]! & 15;
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
