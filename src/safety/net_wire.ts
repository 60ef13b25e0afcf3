/**
 * The bytes of the model-only network that both ends share: `host:port`, one HTTP/1 head,
 * and a two-way copy. Its own small module because the relay inside each sandbox loads it
 * before its agent starts (src/safety/net_relay.ts): nothing here imports more than
 * src/io/write_all.ts.
 *
 * @module
 */

import { writeAll } from "../io/write_all.ts";

/** A request head longer than this is no proxy request a model client sends. */
const MAX_HEAD = 16 * 1024;

/** `host:port` → its parts; `[::1]:80` keeps its brackets. Undefined when the port is bad. */
export function splitHostPort(hostPort: string): { host: string; port: number } | undefined {
  const colon = hostPort.lastIndexOf(":");
  if (colon <= 0) return undefined;
  const port = Number(hostPort.slice(colon + 1));
  if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host: hostPort.slice(0, colon).toLowerCase(), port };
}

/**
 * Reads up to the blank line that ends a request head. `raw` is the head's bytes, `rest` what
 * came after it in the same reads; undefined when the peer closed or the head is too long.
 */
export async function readHead(
  conn: Deno.Conn,
): Promise<{ head: string; raw: Uint8Array; rest: Uint8Array } | undefined> {
  let buf: Uint8Array = new Uint8Array(0);
  const chunk = new Uint8Array(4096);
  while (buf.length < MAX_HEAD) {
    const n = await conn.read(chunk).catch(() => null);
    if (n === null) return undefined;
    buf = concat(buf, chunk.subarray(0, n));
    const end = indexOfBlankLine(buf);
    if (end >= 0) {
      const raw = buf.slice(0, end + 4);
      return { head: new TextDecoder().decode(raw), raw, rest: buf.slice(end + 4) };
    }
  }
  return undefined;
}

/**
 * Copies bytes both ways until both sides are done; one side's end of input ends the other's
 * output only (a half-close), so an answer still in flight arrives. Plain reads, not
 * `readable`: a conn's readable closes the whole conn when its input ends.
 */
export async function splice(a: Deno.Conn, b: Deno.Conn): Promise<void> {
  const pump = async (from: Deno.Conn, to: Deno.Conn) => {
    const buf = new Uint8Array(64 * 1024);
    try {
      for (let n = await from.read(buf); n !== null; n = await from.read(buf)) {
        await writeAll(to, buf.subarray(0, n));
      }
    } catch {
      // Reset by either side.
    }
    try {
      await to.closeWrite();
    } catch {
      // Already closed.
    }
  };
  await Promise.all([pump(a, b), pump(b, a)]);
}

/** `a` then `b`, in a new array. */
export function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function indexOfBlankLine(buf: Uint8Array): number {
  for (let i = 0; i + 3 < buf.length; i++) {
    if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i;
  }
  return -1;
}
