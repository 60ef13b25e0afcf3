/**
 * A byte-level HTTP/1.1 proxy on 127.0.0.1 that adds `Authorization: Bearer <token>` to every
 * request head and passes everything else through: the way to run a client that sends no token
 * (the official MCP conformance suite in server mode) against wats's token-protected endpoint.
 *
 * It works at the byte level because `fetch` cannot send a Host of the caller's choosing (Deno
 * replaces it), and the suite's DNS rebinding scenario must reach the node with a foreign Host.
 * A Host or Origin naming the proxy's own address is rewritten to the node's, as a reverse proxy
 * does; any other Host or Origin reaches the node as sent. Each request it passes asks the node
 * to close the connection after its answer, so every request's head is one the proxy rewrote.
 *
 * Test-only: nothing in src/ can start it, and the node itself has no way to skip the token.
 *
 * @module
 */

/** A running proxy. */
export interface AuthProxy extends AsyncDisposable {
  /** `http://127.0.0.1:PORT/mcp`: the URL to give the client. */
  url: string;
  /** How many connections it carried. */
  connections(): number;
  close(): Promise<void>;
}

/** Starts a proxy to `upstream` (`http://host:port/...`) that adds `token`. */
export function startAuthProxy(upstream: string, token: string): AuthProxy {
  const target = new URL(upstream);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const own = `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  const ownNames = new Set([own, `localhost:${(listener.addr as Deno.NetAddr).port}`]);
  let carried = 0;
  const conns = new Set<Deno.Conn>();
  const work = new Set<Promise<void>>();

  const rewrite = (head: string): string => {
    const [line, ...fields] = head.split("\r\n");
    const out = [line];
    for (const f of fields) {
      const colon = f.indexOf(":");
      const name = f.slice(0, colon).trim().toLowerCase();
      const value = f.slice(colon + 1).trim();
      if (name === "authorization" || name === "connection") continue;
      if (name === "host" && ownNames.has(value.toLowerCase())) out.push(`host: ${target.host}`);
      else if (name === "origin" && [...ownNames].some((n) => value === `http://${n}`)) {
        out.push(`origin: http://${target.host}`);
      } else out.push(f);
    }
    out.push(`authorization: Bearer ${token}`);
    // One request per connection, so every request's head passes through here.
    out.push("connection: close");
    return out.join("\r\n");
  };

  const carry = async (client: Deno.Conn) => {
    conns.add(client);
    let server: Deno.Conn | undefined;
    try {
      let buf = new Uint8Array(0);
      let end = -1;
      while (end < 0) {
        const chunk = new Uint8Array(16 * 1024);
        const n = await client.read(chunk);
        if (n === null) return;
        const next = new Uint8Array(buf.length + n);
        next.set(buf);
        next.set(chunk.subarray(0, n), buf.length);
        buf = next;
        end = findHeadEnd(buf);
      }
      const head = new TextDecoder("latin1").decode(buf.subarray(0, end));
      const rest = buf.subarray(end + 4);
      server = await Deno.connect({ hostname: target.hostname, port: Number(target.port) });
      conns.add(server);
      carried++;
      await writeAll(server, latin1(rewrite(head) + "\r\n\r\n"));
      if (rest.length > 0) await writeAll(server, rest);
      // The node closes after its answer: then the client's side is done too.
      const upload = pipe(client, server);
      await pipe(server, client);
      client.close();
      await upload;
    } catch {
      // A side went away: the other is closed below.
    } finally {
      for (const c of [client, server]) {
        if (c === undefined) continue;
        conns.delete(c);
        try {
          c.close();
        } catch { /* closed */ }
      }
    }
  };

  const accepting = (async () => {
    for (;;) {
      let c: Deno.Conn;
      try {
        c = await listener.accept();
      } catch {
        return;
      }
      const p = carry(c).finally(() => work.delete(p));
      work.add(p);
    }
  })();

  const close = async () => {
    try {
      listener.close();
    } catch { /* closed */ }
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await accepting;
    await Promise.allSettled([...work]);
  };
  return {
    url: `http://${own}${target.pathname}`,
    connections: () => carried,
    close,
    [Symbol.asyncDispose]: close,
  };
}

function findHeadEnd(b: Uint8Array): number {
  for (let i = 0; i + 3 < b.length; i++) {
    if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
  }
  return -1;
}

function latin1(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);
}

async function writeAll(c: Deno.Conn, b: Uint8Array): Promise<void> {
  let off = 0;
  while (off < b.length) off += await c.write(b.subarray(off));
}

async function pipe(from: Deno.Conn, to: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  for (;;) {
    const n = await from.read(buf).catch(() => null);
    if (n === null) return;
    await writeAll(to, buf.subarray(0, n));
  }
}
