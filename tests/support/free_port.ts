/**
 * A TCP port on 127.0.0.1 that was free a moment ago: for a server the test
 * starts in another process (`wats ui --listen`, a daemon's `--listen`), which
 * must be told its port before it binds.
 */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}
