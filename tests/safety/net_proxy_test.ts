/**
 * The daemon's model proxy on a real unix socket: a tunnel to an allowed host carries bytes
 * both ways; any other host, an origin-form request, or garbage gets 403 and no connection.
 */

import { deepStrictEqual as assertEquals, match } from "node:assert/strict";
import { ModelProxy } from "../../src/safety/net_proxy.ts";
import { readHead } from "../../src/safety/net_wire.ts";
import { writeAll } from "../../src/io/write_all.ts";

/** An echo server on 127.0.0.1 that counts its connections. */
function echo(): { port: number; accepted: () => number; close(): Promise<void> } {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let accepted = 0;
  const serving = (async () => {
    for await (const c of l) {
      accepted++;
      // read/write, not pipeTo: a readable that ends closes the conn before the echo is written.
      (async () => {
        const buf = new Uint8Array(4096);
        for (let n = await c.read(buf); n !== null; n = await c.read(buf)) {
          await writeAll(c, buf.subarray(0, n));
        }
        c.close();
      })().catch(() => {});
    }
  })().catch(() => {});
  return {
    port: (l.addr as Deno.NetAddr).port,
    accepted: () => accepted,
    close: async () => {
      l.close();
      await serving;
    },
  };
}

async function ask(
  socket: string,
  bytes: string,
): Promise<{ conn: Deno.Conn; head: string; rest: string }> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  await writeAll(conn, new TextEncoder().encode(bytes));
  const got = await readHead(conn);
  return { conn, head: got?.head ?? "", rest: new TextDecoder().decode(got?.rest) };
}

async function readAll(conn: Deno.Conn): Promise<string> {
  return await new Response(conn.readable).text();
}

Deno.test("the model proxy tunnels to its model hosts only and answers the rest 403", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-np-" });
  const model = echo();
  const other = echo();
  const refused: string[] = [];
  const socket = `${dir}/model.sock`;
  // A stale file from a crashed daemon is replaced.
  await Deno.writeTextFile(socket, "stale");
  const proxy = new ModelProxy({
    socket,
    hosts: [`127.0.0.1:${model.port}`],
    onRefused: (t) => refused.push(t),
  });
  try {
    assertEquals((await Deno.stat(socket)).mode! & 0o777, 0o600);
    const t = await ask(socket, `CONNECT 127.0.0.1:${model.port} HTTP/1.1\r\n\r\n`);
    match(t.head, /^HTTP\/1\.1 200 /);
    await writeAll(t.conn, new TextEncoder().encode("ping"));
    await t.conn.closeWrite();
    assertEquals(await readAll(t.conn), "ping");

    // Absolute form: the head itself goes on to the model host.
    const f = await Deno.connect({ transport: "unix", path: socket });
    const req = `POST http://127.0.0.1:${model.port}/v1 HTTP/1.1\r\n\r\nbody`;
    await writeAll(f, new TextEncoder().encode(req));
    await f.closeWrite();
    assertEquals(await readAll(f), req);

    for (
      const bad of [
        `CONNECT 127.0.0.1:${other.port} HTTP/1.1\r\n\r\n`,
        `GET http://127.0.0.1:${other.port}/ HTTP/1.1\r\n\r\n`,
        `GET / HTTP/1.1\r\nHost: 127.0.0.1:${model.port}\r\n\r\n`,
        "CONNECT example.com:443 HTTP/1.1\r\n\r\n",
        "garbage\r\n\r\n",
      ]
    ) {
      const r = await ask(socket, bad);
      match(r.head, /^HTTP\/1\.1 403 /, bad);
      match(r.rest + await readAll(r.conn), /wats refused .*sandbox\.network open/, bad);
    }
    assertEquals(other.accepted(), 0);
    assertEquals(model.accepted(), 2);
    assertEquals(refused, [
      `127.0.0.1:${other.port}`,
      `127.0.0.1:${other.port}`,
      "",
      "example.com:443",
      "",
    ]);
  } finally {
    await proxy.close();
    await model.close();
    await other.close();
    await Deno.remove(dir, { recursive: true });
  }
});
