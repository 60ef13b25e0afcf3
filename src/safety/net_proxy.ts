/**
 * The daemon's side of `sandbox.network = "model-only"` (docs/decisions/sandbox.md, "The
 * network"): a tiny HTTP proxy on a unix socket that the sandboxes' relays reach, which opens
 * only tunnels to the model hosts it was given and answers everything else 403.
 *
 * Requires `--allow-net` on `unix:<socket>` and on each model host, `--allow-read` and
 * `--allow-write` on the socket.
 *
 * @module
 */

import { writeAll } from "../io/write_all.ts";
import { parseProxyHead, refusal } from "./net_policy.ts";
import { concat, readHead, splice, splitHostPort } from "./net_wire.ts";

/** Options of {@linkcode ModelProxy}. */
export interface ModelProxyOptions {
  /** The unix socket it listens on (a stale file there is replaced). */
  socket: string;
  /** The `host:port`s it opens tunnels to (lower case). */
  hosts: readonly string[];
  /** Told of each refused request, for the daemon's log. */
  onRefused?: (target: string, reason: string) => void;
}

/** The proxy the relays of every model-only sandbox of this daemon reach. */
export class ModelProxy {
  readonly socket: string;
  readonly #allowed: ReadonlySet<string>;
  readonly #listener: Deno.Listener;
  readonly #conns = new Set<Deno.Conn>();
  readonly #onRefused: ModelProxyOptions["onRefused"];
  readonly #serving: Promise<void>;

  /** Listens at once; throws what `Deno.listen` throws. */
  constructor(o: ModelProxyOptions) {
    this.socket = o.socket;
    this.#allowed = new Set(o.hosts.map((h) => h.toLowerCase()));
    this.#onRefused = o.onRefused;
    try {
      Deno.removeSync(o.socket);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    this.#listener = Deno.listen({ transport: "unix", path: o.socket });
    Deno.chmodSync(o.socket, 0o600);
    this.#serving = this.#serve();
  }

  async #serve(): Promise<void> {
    try {
      for await (const conn of this.#listener) {
        this.#conns.add(conn);
        this.#handle(conn).finally(() => {
          this.#conns.delete(conn);
          closeQuietly(conn);
        });
      }
    } catch {
      // The listener was closed.
    }
  }

  async #handle(client: Deno.Conn): Promise<void> {
    const got = await readHead(client);
    if (got === undefined) return;
    const req = parseProxyHead(got.head);
    const target = req.kind === "bad" ? "" : req.target;
    if (req.kind === "bad" || !this.#allowed.has(target)) {
      const reason = req.kind === "bad" ? req.reason : "not this sandbox's model API";
      this.#onRefused?.(target, reason);
      await writeQuietly(client, new TextEncoder().encode(refusal(target, reason)));
      return;
    }
    const hp = splitHostPort(target)!;
    let upstream: Deno.TcpConn;
    try {
      upstream = await Deno.connect({ hostname: hp.host.replace(/^\[|\]$/g, ""), port: hp.port });
    } catch (err) {
      const why = `cannot connect: ${(err as Error).message}`;
      this.#onRefused?.(target, why);
      await writeQuietly(client, new TextEncoder().encode(refusal(target, why)));
      return;
    }
    this.#conns.add(upstream);
    try {
      if (req.kind === "connect") {
        await writeAll(
          client,
          new TextEncoder().encode("HTTP/1.1 200 Connection Established\r\n\r\n"),
        );
        await writeAll(upstream, got.rest);
      } else {
        await writeAll(upstream, concat(got.raw, got.rest));
      }
      await splice(client, upstream);
    } catch {
      // One side went away.
    } finally {
      this.#conns.delete(upstream);
      closeQuietly(upstream);
    }
  }

  /** Stops listening, ends every tunnel and removes the socket. */
  async close(): Promise<void> {
    closeQuietly(this.#listener);
    for (const c of this.#conns) closeQuietly(c);
    await this.#serving;
    try {
      Deno.removeSync(this.socket);
    } catch {
      // Already gone.
    }
  }
}

async function writeQuietly(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  try {
    await writeAll(conn, bytes);
  } catch {
    // The peer is gone.
  }
}

function closeQuietly(c: { close(): void }): void {
  try {
    c.close();
  } catch {
    // Already closed.
  }
}
