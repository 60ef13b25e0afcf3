/**
 * The node's network side, composed: one ingest (validation and batched inserts) shared
 * by a sync per relay in `infra` and, when `listen` is set, the node's own relay
 * endpoint. With no relay and no listen address it starts nothing: a local-only node.
 * Given the node's interest (interest.ts), the syncs ask the relays for that only;
 * without, for every wats post.
 *
 * Requires `--allow-net` on the listen address and on each relay's host and port.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import type { Logger } from "@logtape/logtape";
import { BusyError, ConfigError } from "../errors.ts";
import type { EventSink } from "../contracts/node_events.ts";
import type { Store } from "../store/store.ts";
import type { Filter } from "nostr-tools/filter";
import { createIngest, type Ingest } from "./ingest.ts";
import { addedFilters, type Interest, interestSubscriptions } from "./interest.ts";
import { type RelayServer, serveRelay } from "./relay_server.ts";
import type { AuthKey } from "./relay_auth.ts";
import { type RelayStatus, type RelaySync, startRelaySync } from "./relay_sync.ts";
import { createVerifyPool } from "./verify_pool.ts";

/** The settings the network reads (`infra`, `listen`, `net.max_skew`, `net.max_connections`). */
export interface NetworkSettings {
  /** Relay URLs (ws:// or wss://); empty: no relay. */
  infra: readonly string[];
  /** `host:port` of the relay endpoint to serve; empty: none. */
  listen: string;
  /** How far in the future a post may be dated; also the catch-up overlap. */
  maxSkewMs: number;
  /** `net.max_connections`: clients of the relay endpoint at once. Default 256. */
  maxConnections?: number;
  /** `net.auth`: who the endpoint serves. Default open. */
  auth?: "open" | "required";
  /** `net.members` (hex): with auth required, the authors the endpoint serves. */
  members?: readonly string[];
  /** `net.max_connections_per_ip`. Default 16. */
  maxConnectionsPerIp?: number;
  /** `net.max_messages_per_ip`. Default 200. */
  maxMessagesPerIp?: number;
  /** `net.trust_forwarded`. Default false. */
  trustForwarded?: boolean;
}

/** Options of {@linkcode startNetwork}. */
export interface NetworkOptions {
  settings: NetworkSettings;
  store: Store;
  /** The node's event stream (`post_stored`, `post_rejected`). */
  events: EventSink;
  log: Logger;
  /** Milliseconds since the epoch. Default `Date.now`. */
  now?: () => number;
  /** Relay endpoint limits, for tests (see `serveRelay`). */
  relayLimits?: { maxQueue?: number; maxTotalQueue?: number; stallMs?: number };
  /** Signature-check workers; 0: check on this thread. Default: one per core. */
  verifyWorkers?: number;
  /** Reconnect delays, for tests (see `startRelaySync`). */
  backoff?: { baseMs?: number; maxMs?: number };
  /** What the node asks its relays for; absent: every wats post (the firehose). */
  interest?: Interest;
  /** The key that answers relays' NIP-42 AUTH (the person's; docs/decisions/relay_auth.md). */
  authKey?: AuthKey;
}

/** What `status()` reports. */
export interface NetworkStatus {
  relays: RelayStatus[];
  /** (event, relay) pairs not yet acknowledged. */
  outbox: number;
  /** The relay endpoint's port, when one is served. */
  listenPort?: number;
  /** The address the endpoint is bound to (`wats try` connects there; 0.0.0.0 is any). */
  listenHost?: string;
  /** `net.auth` of the endpoint, when one is served. */
  listenAuth?: "open" | "required";
  /** Clients of the endpoint now, and of them those authenticated as a member. */
  listenClients?: { connected: number; members: number };
  /** Events refused so far, by reason code. */
  rejected: Record<string, number>;
  /** Workers checking signatures (0: on the daemon's thread). */
  verifyWorkers: number;
}

/** The running network side of a node. */
export interface Network {
  /** The shared ingest (also for any other door events come through). */
  ingest: Ingest;
  /** The port of the relay endpoint, when `listen` is set. */
  relayPort?: number;
  status(): NetworkStatus;
  /**
   * Asks the relays for `interest` from now on (and catches up on what it adds).
   * Ignored when the network was started without an interest.
   */
  setInterest(interest: Interest): void;
  /**
   * Asks each connected relay once for `filter` and stores what they send (`feed`
   * with `relays`); resolves with how many relays answered and the events received.
   */
  fetchOnce(filter: Filter): Promise<{ relays: number; events: number }>;
  /** The relays that refused the local post `id` and why, while it waits for them. */
  refusals(id: string): Array<{ relay: string; reason: string }>;
  /** Stops the endpoint and every sync, and waits for events still being stored. */
  close(): Promise<void>;
}

/**
 * Starts syncing with `infra` and serving `listen`. Resolves once the endpoint
 * listens (relays connect in the background).
 *
 * @throws {BusyError} code `net.listen` when the listen address cannot be bound.
 * @throws {ConfigError} code `config.listen` when `listen` is not `host:port`.
 */
export async function startNetwork(opts: NetworkOptions): Promise<Network> {
  const { settings, store, log } = opts;
  const now = opts.now ?? Date.now;
  const serving = settings.listen !== "" || settings.infra.length > 0;
  // Signatures are checked off this thread, in parallel (only when events can come).
  const pool = serving && opts.verifyWorkers !== 0
    ? createVerifyPool(opts.verifyWorkers, (message) => {
      log.warn("{message}; checking signatures on the daemon's thread instead", { message });
    })
    : undefined;
  const ingest = createIngest({
    store,
    events: opts.events,
    log,
    now,
    maxSkewMs: settings.maxSkewMs,
    verify: pool?.verify,
  });
  let server: RelayServer | undefined;
  let listenHost: string | undefined;
  if (settings.listen !== "") {
    const { hostname, port } = parseListen(settings.listen);
    listenHost = hostname;
    const warning = listenWarning(settings, hostname);
    if (warning) log.warn("{warning}", { warning });
    try {
      server = await serveRelay({
        hostname,
        port,
        store,
        ingest,
        log,
        maxConnections: settings.maxConnections,
        auth: {
          required: settings.auth === "required",
          members: new Set(settings.members ?? []),
        },
        maxConnectionsPerIp: settings.maxConnectionsPerIp,
        maxMessagesPerIp: settings.maxMessagesPerIp,
        trustForwarded: settings.trustForwarded,
        ...opts.relayLimits,
      });
    } catch (err) {
      const inUse = err instanceof Deno.errors.AddrInUse;
      throw new BusyError(
        "net.listen",
        `Cannot serve the relay endpoint on ${settings.listen}: ${errorMessage(err)}. ` +
          (inUse
            ? "Another program (another wats node?) uses that port: stop it, or choose another with --listen or wats config set listen."
            : "Check the listen setting (wats config get listen)."),
        { cause: err },
      );
    }
  }
  const syncs: RelaySync[] = [...new Set(settings.infra)].map((url) =>
    startRelaySync({
      url,
      store,
      ingest,
      log,
      now,
      maxSkewMs: settings.maxSkewMs,
      backoffBaseMs: opts.backoff?.baseMs,
      backoffMaxMs: opts.backoff?.maxMs,
      ...(opts.authKey ? { authKey: opts.authKey } : {}),
      ...(opts.interest ? { subscriptions: interestSubscriptions(opts.interest) } : {}),
    })
  );
  let interest = opts.interest;
  let closing: Promise<void> | undefined;
  return {
    ingest,
    ...(server ? { relayPort: server.port } : {}),
    status: () => ({
      relays: syncs.map((s) => s.status()),
      outbox: store.outbox.size(),
      ...(server
        ? {
          listenPort: server.port,
          listenHost,
          listenAuth: settings.auth ?? "open",
          listenClients: clientsOf(server, new Set(settings.members ?? [])),
        }
        : {}),
      rejected: ingest.rejected(),
      verifyWorkers: pool?.size ?? 0,
    }),
    setInterest(next) {
      if (!interest) return;
      const subscriptions = interestSubscriptions(next);
      const added = addedFilters(interest, next);
      interest = next;
      for (const s of syncs) s.setInterest(subscriptions, added);
    },
    async fetchOnce(filter) {
      const connected = syncs.filter((s) => s.status().connected);
      const counts = await Promise.all(connected.map((s) => s.fetch(filter)));
      return { relays: connected.length, events: counts.reduce((a, b) => a + b, 0) };
    },
    refusals(id) {
      return syncs.flatMap((s) => {
        const reason = s.refusal(id);
        return reason === undefined ? [] : [{ relay: s.url, reason }];
      });
    },
    close() {
      closing ??= (async () => {
        await Promise.all([...syncs.map((s) => s.close()), server?.close()]);
        await ingest.settle();
        pool?.close();
      })();
      return closing;
    },
  };
}

/**
 * What the node says at start about who its endpoint serves, when it is worth a
 * warning: open on an address other than loopback, or required with no member.
 */
export function listenWarning(
  settings: Pick<NetworkSettings, "listen" | "auth" | "members">,
  hostname: string,
): string | undefined {
  if (settings.auth !== "required" && !isLoopback(hostname)) {
    return `the relay endpoint listens on ${settings.listen} with net.auth = open: anyone who ` +
      "reaches it reads every post and can post; set net.auth = required and net.members " +
      "(docs/team.md)";
  }
  if (settings.auth === "required" && (settings.members ?? []).length === 0) {
    return "net.auth = required and net.members is empty: the relay endpoint serves no one; " +
      "add the team's keys with wats config set net.members (docs/team.md)";
  }
  return undefined;
}

/** Whether `hostname` is a loopback address (or `localhost`). */
export function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "::1" || /^127\./.test(hostname);
}

function clientsOf(
  server: RelayServer,
  members: ReadonlySet<string>,
): { connected: number; members: number } {
  const keys = server.authenticated();
  return {
    connected: keys.length,
    members: keys.filter((ks) => ks.some((k) => members.has(k))).length,
  };
}

/**
 * Splits a `listen` value (`host:port`, `[v6]:port`) into hostname and port.
 *
 * @throws {ConfigError} code `config.listen` when it is not `host:port`.
 */
export function parseListen(listen: string): { hostname: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(listen.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) {
    throw new ConfigError(
      "config.listen",
      `listen must be host:port, such as "127.0.0.1:7447"; got "${listen}"`,
    );
  }
  return { hostname: m[1] ?? m[2]!, port }; // one of the two alternatives matched
}
