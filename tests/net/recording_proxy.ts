/**
 * A WebSocket proxy on 127.0.0.1 in front of a relay that keeps every message its
 * clients send, parsed: what a node asks a relay for (its REQ frames), checked at
 * the relay's door.
 *
 * @module
 */

/** A running recording proxy. */
export interface RecordingProxy {
  url: string;
  /** Every message a client sent, parsed, in order. */
  sent: unknown[][];
  /** Every message the relay sent its clients, parsed, in order. */
  received: unknown[][];
  /** The filters of the REQs sent so far whose subscription id starts with `prefix`. */
  reqFilters(prefix: string): Record<string, unknown>[];
  close(): Promise<void>;
}

/** Starts a proxy in front of `upstream` (a ws:// URL). */
export function recordingProxy(upstream: string): RecordingProxy {
  const sent: unknown[][] = [];
  const received: unknown[][] = [];
  const sockets = new Set<WebSocket>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    const up = new WebSocket(upstream);
    sockets.add(socket).add(up);
    const early: string[] = [];
    up.onopen = () => early.splice(0).forEach((m) => up.send(m));
    up.onmessage = (e) => {
      received.push(JSON.parse(e.data));
      if (socket.readyState === WebSocket.OPEN) socket.send(e.data);
    };
    up.onclose = () => socket.readyState === WebSocket.OPEN && socket.close();
    socket.onmessage = (e) => {
      sent.push(JSON.parse(e.data));
      if (up.readyState === WebSocket.OPEN) up.send(e.data);
      else early.push(e.data);
    };
    socket.onclose = () => up.readyState <= WebSocket.OPEN && up.close();
    return response;
  });
  return {
    url: `ws://127.0.0.1:${server.addr.port}`,
    sent,
    received,
    reqFilters(prefix: string): Record<string, unknown>[] {
      return sent.filter((m) => m[0] === "REQ" && String(m[1]).startsWith(prefix))
        .flatMap((m) => m.slice(2) as Record<string, unknown>[]);
    },
    async close() {
      for (const s of sockets) if (s.readyState <= WebSocket.OPEN) s.close();
      await server.shutdown();
    },
  };
}
