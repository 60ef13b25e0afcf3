/**
 * What a hostile relay in `infra` costs a daemon: RSS of a real `wats node --infra
 * ws://<this relay>` while the relay attacks for --seconds, against the same
 * daemon connected to the same relay, quiet, just before (the baseline of the same
 * run). The relay is a raw WebSocket server on 127.0.0.1 (it must send frames a
 * well-behaved server library would not). Attacks, each on a fresh daemon:
 *
 * - `pings`: 125-byte pings as fast as the daemon reads them; the relay never reads
 *   the pongs (before the fix, one pong was queued per ping);
 * - `junk`: the catch-up page's REQ is answered with EVENTs whose ids are fresh
 *   ~200 KB strings (under the client's 256 KiB message cap), and never an EOSE
 *   (before, every id was kept and each page of junk asked for another);
 * - `bigjunk`: the same with ~900 KB ids, the repro (now over the cap: each
 *   such message closes the connection, and the sync reconnects with backoff).
 *
 * Run: deno run -A bench/hostile_relay.ts [--seconds 60] [--attack pings,junk]
 *      [--before DIR]   (DIR: an older checkout, e.g. `git archive <commit>` unpacked,
 *                        measured the same way after this tree)
 * Linux only (reads /proc).
 */

import { parseArgs } from "node:util";
import { LAUNCHER_FLAGS } from "../src/cli/permissions.ts";
import { denoDir, MAIN_TS, tempDataDir } from "../tests/support/cli.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seconds: { type: "string", default: "60" },
    attack: { type: "string", default: "pings,junk,bigjunk" },
    before: { type: "string" },
  },
});
const seconds = Number(values.seconds);
type Attack = "pings" | "junk" | "bigjunk";
const attacks = values.attack.split(",") as Attack[];

function rssMiB(pid: number): number {
  const m = Deno.readTextFileSync(`/proc/${pid}/status`).match(/VmRSS:\s+(\d+)/);
  return m ? Number(m[1]) / 1024 : NaN;
}

const enc = new TextEncoder();

/** One unmasked server frame. */
function frame(opcode: number, payload: Uint8Array): Uint8Array {
  const len = payload.length;
  const ext = len < 126 ? 0 : len < 65536 ? 2 : 8;
  const out = new Uint8Array(2 + ext + len);
  out[0] = 0x80 | opcode;
  out[1] = ext === 0 ? len : ext === 2 ? 126 : 127;
  const view = new DataView(out.buffer);
  if (ext === 2) view.setUint16(2, len);
  if (ext === 8) view.setBigUint64(2, BigInt(len));
  out.set(payload, 2 + ext);
  return out;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
}

/**
 * The hostile relay. `attacking` turns the attack on; until then it completes the
 * handshake, reads the daemon's messages (REQs) and answers nothing.
 */
function hostileRelay(attack: Attack) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const state = { attacking: false, connections: 0, sent: 0 };
  let pageSub: string | undefined;
  const serve = async (conn: Deno.Conn) => {
    let buf = new Uint8Array(0);
    const chunk = new Uint8Array(64 * 1024);
    const fill = async () => {
      const n = await conn.read(chunk);
      if (n === null) throw new Error("closed");
      const next = new Uint8Array(buf.length + n);
      next.set(buf);
      next.set(chunk.subarray(0, n), buf.length);
      buf = next;
    };
    let head = "";
    while (!(head = new TextDecoder().decode(buf)).includes("\r\n\r\n")) await fill();
    buf = new Uint8Array(0);
    const key = head.match(/sec-websocket-key:\s*(\S+)/i)![1];
    const digest = new Uint8Array(
      await crypto.subtle.digest("SHA-1", enc.encode(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")),
    );
    await writeAll(
      conn,
      enc.encode(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          `Sec-WebSocket-Accept: ${btoa(String.fromCharCode(...digest))}\r\n\r\n`,
      ),
    );
    state.connections++;
    // The daemon's messages: REQs name the catch-up page to flood.
    (async () => {
      if (attack === "pings") return; // never read: the pongs back up
      for (;;) {
        while (buf.length < 6) await fill();
        // The waits above and below make the header bytes read here present.
        let len = buf[1]! & 127;
        let at = 2;
        if (len === 126) {
          while (buf.length < 8) await fill();
          [len, at] = [(buf[2]! << 8) | buf[3]!, 4];
        } else if (len === 127) {
          while (buf.length < 14) await fill();
          [len, at] = [Number(new DataView(buf.buffer, 2, 8).getBigUint64(0)), 10];
        }
        while (buf.length < at + 4 + len) await fill();
        const mask = buf.subarray(at, at + 4);
        const text = new TextDecoder().decode(
          buf.slice(at + 4, at + 4 + len).map((b, i) => b ^ mask[i & 3]!),
        );
        buf = buf.slice(at + 4 + len);
        try {
          const m = JSON.parse(text);
          if (m[0] === "REQ" && !String(m[1]).startsWith("wats-live-")) pageSub = m[1];
        } catch { /* a close frame or a pong */ }
      }
    })().catch(() => {});
    while (!state.attacking) await new Promise((r) => setTimeout(r, 50));
    if (attack === "pings") {
      const ping = frame(9, new Uint8Array(125).fill(7));
      const burst = new Uint8Array(ping.length * 512);
      for (let i = 0; i < 512; i++) burst.set(ping, i * ping.length);
      for (;;) {
        await writeAll(conn, burst);
        state.sent += burst.length;
      }
    } else {
      const pad = "x".repeat((attack === "junk" ? 200 : 900) * 1024);
      for (let n = 0;; n++) {
        const sub = pageSub ?? "wats-page-1";
        const msg = enc.encode(
          JSON.stringify(["EVENT", sub, { id: `${n}-${pad}`, created_at: 1, kind: 1 }]),
        );
        await writeAll(conn, frame(1, msg));
        state.sent += msg.length;
      }
    }
  };
  (async () => {
    for await (const conn of listener) serve(conn).catch(() => conn.close());
  })().catch(() => {});
  return { port: (listener.addr as Deno.NetAddr).port, state, close: () => listener.close() };
}

async function measure(name: string, root: string, attack: Attack) {
  const relay = hostileRelay(attack);
  const dir = tempDataDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...LAUNCHER_FLAGS,
      "--quiet",
      "--config",
      `${root}/deno.json`,
      `${root}/main.ts`,
      "node",
      "--agent",
      "none",
      "--infra",
      `ws://127.0.0.1:${relay.port}`,
    ],
    env: {
      ...Deno.env.toObject(),
      NO_COLOR: "1",
      HOME: dir,
      DENO_DIR: denoDir(),
      WATS_DATA_DIR: dir,
    },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const pid = child.pid;
  try {
    while (relay.state.connections === 0) await new Promise((r) => setTimeout(r, 50));
    // Connected and quiet: the baseline.
    await new Promise((r) => setTimeout(r, 3000));
    let base = 0;
    for (let i = 0; i < 20; i++) {
      base = Math.max(base, rssMiB(pid));
      await new Promise((r) => setTimeout(r, 100));
    }
    relay.state.attacking = true;
    let peak = base;
    const t0 = Date.now();
    const every: string[] = [];
    while (Date.now() - t0 < seconds * 1000) {
      await new Promise((r) => setTimeout(r, 100));
      const rss = rssMiB(pid);
      peak = Math.max(peak, rss);
      if (Date.now() - t0 >= (every.length + 1) * 10_000) every.push(rss.toFixed(0));
    }
    const end = rssMiB(pid);
    console.log(
      `${name.padEnd(7)} ${attack.padEnd(6)} base ${base.toFixed(1).padStart(6)} MiB  ` +
        `peak ${peak.toFixed(1).padStart(7)} MiB (+${(peak - base).toFixed(1)})  ` +
        `end ${end.toFixed(1).padStart(7)} MiB  ` +
        `relay sent ${(relay.state.sent / 2 ** 20).toFixed(0)} MiB, ` +
        `${relay.state.connections} connection(s)`,
    );
    if (every.length > 0) console.log(`        RSS every 10 s: ${every.join(", ")} MiB`);
  } finally {
    child.kill("SIGKILL");
    await child.status;
    relay.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const here = MAIN_TS.replace(/\/main\.ts$/, "");
console.log(
  `hostile relay, ${seconds} s per attack; RSS of the daemon (VmRSS sampled every 100 ms)`,
);
for (const attack of attacks) {
  await measure("this", here, attack);
  if (values.before) await measure("before", values.before, attack);
}
Deno.exit(0);
