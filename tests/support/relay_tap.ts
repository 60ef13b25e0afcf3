/**
 * A WebSocket tap in front of a relay: one node connects to the tap's URL
 * instead of the relay's, and the tap passes every message both ways while it
 * counts what the relay sends down and keeps the frames the node sends up
 * (its `REQ`s). Independent of the node's code, so the routing tests and
 * bench/network_wakes.ts read what any wats version subscribes to and
 * downloads, without a counter inside the node.
 *
 * One tap per node: its numbers are that node's.
 *
 * @module
 */

/** A running tap. */
export interface RelayTap extends AsyncDisposable {
  /** `ws://127.0.0.1:<port>`: give it to the node as its relay. */
  url: string;
  /** UTF-8 bytes of the messages the relay sent down to the node, over all its connections. */
  bytesDown(): number;
  /** Messages the relay sent down, by their first element (`EVENT`, `EOSE`, `OK`, …). */
  downByType(): Record<string, number>;
  /** The JSON arrays the node sent up, in order (`["REQ", sub, ...filters]`, `["EVENT", …]`). */
  up(): unknown[][];
  /** The filters of every `REQ` the node sent. */
  reqFilters(): Record<string, unknown>[];
  /** When a message last went either way (ms since the epoch; 0: none yet). */
  lastActivity(): number;
  /** Resets the counters (bytes, types), not the frames. */
  resetCounts(): void;
  close(): Promise<void>;
}

const encoder = new TextEncoder();

/** Starts a tap on 127.0.0.1 (a free port) that forwards to `relayUrl`. */
export function startRelayTap(relayUrl: string): RelayTap {
  let down = 0;
  let last = 0;
  let types: Record<string, number> = {};
  const up: unknown[][] = [];
  const sockets = new Set<WebSocket>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return new Response("a relay tap: connect with WebSocket", { status: 426 });
    }
    const { socket: client, response } = Deno.upgradeWebSocket(req);
    // As a reverse proxy does: the host the node dialed, for a relay that checks a
    // NIP-42 AUTH's relay tag against it (and trusts the header: net.trust_forwarded).
    const relay = new WebSocket(relayUrl, {
      headers: { "x-forwarded-host": `127.0.0.1:${server.addr.port}` },
    });
    sockets.add(client);
    sockets.add(relay);
    // What the node sends before the relay's socket opens waits for it.
    const queued: string[] = [];
    const early: string[] = [];
    client.onmessage = (m) => {
      last = Date.now();
      const text = typeof m.data === "string" ? m.data : new TextDecoder().decode(m.data);
      try {
        const v = JSON.parse(text);
        if (Array.isArray(v)) up.push(v);
      } catch {
        // Not JSON: forwarded as is, not recorded.
      }
      if (relay.readyState === WebSocket.OPEN) relay.send(text);
      else queued.push(text);
    };
    relay.onopen = () => {
      for (const t of queued.splice(0)) relay.send(t);
    };
    relay.onmessage = (m) => {
      last = Date.now();
      const text = typeof m.data === "string" ? m.data : new TextDecoder().decode(m.data);
      down += encoder.encode(text).length;
      const type = /^\s*\[\s*"([A-Z]+)"/.exec(text)?.[1] ?? "?";
      types[type] = (types[type] ?? 0) + 1;
      // What the relay sends before the node's socket opens (a NIP-42 challenge) waits for it.
      if (client.readyState === WebSocket.OPEN) client.send(text);
      else if (client.readyState === WebSocket.CONNECTING) early.push(text);
    };
    client.onopen = () => {
      for (const t of early.splice(0)) client.send(t);
    };
    const closeBoth = () => {
      for (const s of [client, relay]) {
        sockets.delete(s);
        try {
          s.close();
        } catch {
          // Already closing.
        }
      }
    };
    client.onclose = closeBoth;
    relay.onclose = closeBoth;
    client.onerror = closeBoth;
    relay.onerror = closeBoth;
    return response;
  });
  const close = async () => {
    for (const s of sockets) {
      try {
        s.close();
      } catch {
        // Already closing.
      }
    }
    await server.shutdown();
  };
  return {
    url: `ws://127.0.0.1:${server.addr.port}`,
    bytesDown: () => down,
    downByType: () => ({ ...types }),
    up: () => [...up],
    reqFilters: () =>
      up.filter((f) => f[0] === "REQ").flatMap((f) => f.slice(2) as Record<string, unknown>[]),
    lastActivity: () => last,
    resetCounts: () => {
      down = 0;
      types = {};
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
