/**
 * Why wats keeps its own relay client (docs/network.md): the round trip of one
 * published event (`EVENT` → `OK`) through nostr-tools 2.25.2's `Relay` (on the
 * runtime's WebSocket, as the library uses it) against the same through wats'
 * `WsClient`, to a relay stand-in on `Deno.serve` that answers every EVENT with
 * OK at once. Each event is sent alone; 200 B and 4 KiB contents, the paths
 * interleaved event by event; p50 and p90 in ms.
 *
 * Run: deno run -A bench/relay_client.ts [--events 40]
 */

import { parseArgs } from "node:util";
import { Relay } from "nostr-tools/relay";
import { WsClient } from "../src/net/ws_client.ts";
import { deriveProfileKey } from "../src/identity/profile_key.ts";
import { buildPost, type NostrEvent } from "../src/posts/post.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { events: { type: "string", default: "40" } },
});
const n = Number(values.events);
const key = deriveProfileKey(new Uint8Array(32).fill(5), "bench");

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  const { socket, response } = Deno.upgradeWebSocket(req);
  socket.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m[0] === "EVENT") socket.send(JSON.stringify(["OK", m[1].id, true, ""]));
  };
  return response;
});
const url = `ws://127.0.0.1:${server.addr.port}`;

const relay = await Relay.connect(url);
const ws = new WsClient(url);
await new Promise<void>((r) => ws.onopen = r);
let answered: ((id: string) => void) | undefined;
ws.onmessage = (e) => answered?.(JSON.parse(e.data)[1]);

async function viaWsClient(event: NostrEvent): Promise<number> {
  const t0 = performance.now();
  const ok = new Promise<void>((r) => answered = (id) => id === event.id && r());
  ws.send(JSON.stringify(["EVENT", event]));
  await ok;
  return performance.now() - t0;
}

async function viaNostrTools(event: NostrEvent): Promise<number> {
  const t0 = performance.now();
  await relay.publish(event);
  return performance.now() - t0;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))]!;
console.log(`EVENT → OK round trip, ${n} events each, sent alone (ms)`);
console.log("| client | content | p50 | p90 |\n| --- | --- | --- | --- |");
for (const size of [200, 4096]) {
  const times = { wats: [] as number[], nostr: [] as number[] };
  for (let i = 0; i < n; i++) {
    const mk = (tag: string) =>
      buildPost(
        { kind: "note", text: `${tag}${i} `.padEnd(size, "x"), createdAt: 1 + i },
        key.secret,
      );
    times.wats.push(await viaWsClient(mk("w")));
    times.nostr.push(await viaNostrTools(mk("n")));
    await new Promise((r) => setTimeout(r, 20));
  }
  for (const [name, xs] of Object.entries(times)) {
    const label = name === "wats" ? "wats WsClient" : "nostr-tools Relay";
    console.log(
      `| ${label} | ${size} B | ${pct(xs, 0.5).toFixed(2)} | ${pct(xs, 0.9).toFixed(2)} |`,
    );
  }
}
relay.close();
ws.close();
await server.shutdown();
