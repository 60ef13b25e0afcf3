/**
 * The node's own NIP-01 relay endpoint (the `listen` setting), on wats' own
 * WebSocket server (`ws_server.ts`: it counts half-sent messages, which Deno's server
 * WebSocket hides), so two nodes can peer directly with no third-party relay.
 *
 * - `EVENT` goes through the node's ingest (validation, store) and is answered with
 *   `OK` (`duplicate:`, `invalid:`, `error:` prefixes as NIP-01 says);
 * - `REQ` answers with the stored matches, newest first, then `EOSE`, then every new
 *   event that matches, as the store inserts it (`store.onInsert`);
 * - `CLOSE` ends a subscription; anything unreadable gets a `NOTICE`.
 *
 * Memory stays bounded whatever clients do. A WebSocket's `send` has no
 * backpressure (it always buffers), so every message to a client goes through
 * that client's queue, written only while the socket's `bufferedAmount` is low. The
 * stored answer of a REQ is read from the store a page at a time as the socket takes
 * it, never built whole. Per connection, `maxQueue` bytes may wait (queue, answer
 * page, socket and the client's half-sent message together): a client already
 * behind that a live event would take past it has that subscription closed (`CLOSED` … `error: slow consumer`). Past
 * `maxTotalQueue` for all clients together, the slowest readers are
 * disconnected. A client that reads nothing for `stallMs` is disconnected, and one
 * that sends without reading its answers past twice the cap. At most
 * `maxConnections` clients at once; more get HTTP 503.
 *
 * This file accepts clients (HTTP 503 past `maxConnections`) and keeps the caps
 * across all of them; the rest is one concern a file: `relay_connection.ts` (one
 * client: its subscriptions and send queue), `relay_messages.ts` (what a client's
 * EVENT, REQ and CLOSE mean), `relay_answer.ts` (a REQ's stored answer, paged),
 * `relay_caps.ts` (the caps and the shared answer rate), `relay_info.ts` (NIP-11),
 * `relay_auth_gate.ts` (`net.auth`: NIP-42 AUTH and members; per-IP limits).
 *
 * Requires `--allow-net` on the listen address.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { Store } from "../store/store.ts";
import type { Ingest } from "./ingest.ts";
import { DEFAULT_ANSWER_RATE, MAX_MESSAGE_CHARS, Rate, resolveLimits } from "./relay_caps.ts";
import { hostOf } from "./auth_event.ts";
import { AuthGate, clientIp, type EndpointAuth, IpLimits } from "./relay_auth_gate.ts";
import { Connection } from "./relay_connection.ts";
import { infoResponse } from "./relay_info.ts";
import { serveWebSockets } from "./ws_server.ts";

/** Options of {@linkcode serveRelay}. */
export interface RelayServerOptions {
  /** The interface to listen on, e.g. `127.0.0.1`. */
  hostname: string;
  /** The port; 0 picks a free one (read it back from the result). */
  port: number;
  store: Store;
  ingest: Ingest;
  log: Logger;
  /**
   * Bytes one client may have waiting (its queue, the page of a stored answer being
   * written, and what its socket holds) before a live subscription of its that needs
   * more is closed as a slow consumer. Default 4 MiB.
   */
  maxQueue?: number;
  /**
   * Bytes all clients together may have waiting; past it, the slowest reader (of
   * those with something waiting, the one whose socket took nothing for the longest)
   * is disconnected, then the next, until under. Default 64 MiB.
   */
  maxTotalQueue?: number;
  /** Clients connected at once (`net.max_connections`); more get HTTP 503. Default 256. */
  maxConnections?: number;
  /** Open subscriptions per connection. Default 20. */
  maxSubscriptions?: number;
  /** Filters per REQ. Default 10. */
  maxFilters?: number;
  /** Stored events per filter in a REQ's first answer. Default 500. */
  maxLimit?: number;
  /** Disconnect a client whose queue has not moved for this long. Default 60 s. */
  stallMs?: number;
  /** Characters per second of stored answers, all clients together. Default 4 Mi. */
  answerRate?: number;
  /** `net.auth` and `net.members` (relay_auth_gate.ts). Default: open to anyone. */
  auth?: EndpointAuth;
  /** `net.max_connections_per_ip`; more from one address get HTTP 429. Default: no cap. */
  maxConnectionsPerIp?: number;
  /** `net.max_messages_per_ip`: messages a second read from one address. Default: no cap. */
  maxMessagesPerIp?: number;
  /** `net.trust_forwarded`: the client's address is X-Forwarded-For's last hop. */
  trustForwarded?: boolean;
}

/** A running relay endpoint. */
export interface RelayServer {
  /** The port it listens on (the real one when 0 was asked). */
  readonly port: number;
  readonly hostname: string;
  /** How many WebSocket clients are connected. */
  connections(): number;
  /** The keys each connected client proved with NIP-42 AUTH (hex), one list a client. */
  authenticated(): string[][];
  /**
   * Bytes held for clients now, all connections together: queued messages, pages of
   * stored answers being written, and what the sockets hold.
   */
  buffered(): number;
  /** Stops listening, closes every connection and waits until the server is down. */
  close(): Promise<void>;
}

/**
 * Starts the relay endpoint. Resolves once it listens (at once: `Deno.listen`
 * binds before it returns, and a port already taken throws here).
 *
 * Requires `--allow-net` on `hostname:port`.
 */
export function serveRelay(opts: RelayServerOptions): Promise<RelayServer> {
  const limits = resolveLimits(opts);
  const { store, ingest, log } = opts;
  const conns = new Set<Connection>();
  const answerRate = new Rate(opts.answerRate ?? DEFAULT_ANSWER_RATE);
  /** Upgraded sockets not yet closed (open ones and those still opening). */
  let sockets = 0;
  const policy: EndpointAuth = opts.auth ?? { required: false, members: new Set() };
  const ips = new IpLimits({
    maxConnections: opts.maxConnectionsPerIp ?? Infinity,
    messagesPerSecond: opts.maxMessagesPerIp ?? Infinity,
  });
  const ipOf = (remote: Deno.NetAddr, headers: Headers) =>
    clientIp(remote.hostname, headers, opts.trustForwarded ?? false);

  const buffered = () => {
    let total = 0;
    for (const c of conns) total += c.buffered();
    return total;
  };
  // Memory stays bounded whatever the clients do: past the total cap, the slowest
  // readers go first: those whose socket has taken nothing for the longest.
  const trim = () => {
    let total = buffered();
    while (total > limits.maxTotalQueue) {
      let worst: Connection | undefined;
      for (const c of conns) {
        if (c.buffered() === 0) continue;
        if (!worst || c.lastMoved < worst.lastMoved) worst = c;
      }
      if (!worst) return;
      total -= worst.buffered();
      log.info("disconnecting {source}: the slowest reader while clients hold too much", {
        source: worst.source,
      });
      conns.delete(worst);
      worst.shutdown(1008, "slow consumer");
    }
  };

  const unlisten = store.onInsert((posts) => {
    for (const c of conns) c.live(posts);
    trim();
  });

  const server = serveWebSockets({
    hostname: opts.hostname,
    port: opts.port,
    // Past MAX_MESSAGE_CHARS a message gets a NOTICE; past three times that (the
    // most UTF-8 bytes so many characters take) the connection closes (1009).
    maxMessageBytes: 3 * MAX_MESSAGE_CHARS,
    handler: (head, remote) => {
      if (head.headers.get("upgrade")?.toLowerCase() !== "websocket") {
        return infoResponse(head, limits, policy.required);
      }
      const ip = ipOf(remote, head.headers);
      if (!ips.canConnect(ip)) {
        log.info("refused {ip}: net.max_connections_per_ip clients from it already", { ip });
        return {
          status: 429,
          headers: { "retry-after": "10" },
          body: "error: too many connections from your address; close some and try again\n",
        };
      }
      if (sockets >= limits.maxConnections) {
        log.info("refused {source}: {max} clients already connected (net.max_connections)", {
          source: `listen:${remote.hostname}:${remote.port}`,
          max: limits.maxConnections,
        });
        return {
          status: 503,
          headers: { "retry-after": "10" },
          body:
            `error: this relay endpoint already has ${limits.maxConnections} clients; try again later\n`,
        };
      }
      sockets++;
      ips.opened(ip);
      return "upgrade";
    },
    onSocket: (socket, remote, head) => {
      const ip = ipOf(remote, head.headers);
      const source = `listen:${ip}:${remote.port}`;
      // Behind a proxy of the operator's, the host the client dialed is the proxy's.
      const forwardedHost = opts.trustForwarded ? head.headers.get("x-forwarded-host") : null;
      const gate = {
        auth: new AuthGate({ policy, host: hostOf(forwardedHost ?? head.headers.get("host")) }),
        take: () => ips.take(ip),
      };
      const conn = new Connection(socket, source, {
        store,
        ingest,
        log,
        limits,
        trim,
        answerRate,
      }, gate);
      socket.onopen = () => conns.add(conn);
      socket.onclose = () => {
        sockets--;
        ips.closed(ip);
        conns.delete(conn);
        conn.dispose();
      };
      socket.onerror = (e) => {
        log.debug("relay endpoint socket error from {source}: {error}", {
          source: conn.source,
          error: e.message,
        });
      };
      socket.onmessage = (e) => {
        conn.receive(e.data);
      };
      // Half-sent messages count in the caps like answers waiting to be read.
      socket.onheld = trim;
    },
  });
  const addr = server.addr;
  log.info("relay endpoint listening on ws://{hostname}:{port}", {
    hostname: addr.hostname,
    port: addr.port,
  });

  let closing: Promise<void> | undefined;
  return Promise.resolve({
    port: addr.port,
    hostname: addr.hostname,
    connections: () => conns.size,
    authenticated: () => [...conns].map((c) => c.keys),
    buffered,
    close() {
      closing ??= (async () => {
        unlisten();
        for (const c of conns) c.shutdown();
        conns.clear();
        await server.close();
      })();
      return closing;
    },
  });
}
