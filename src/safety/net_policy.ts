/**
 * `sandbox.network = "model-only"` (docs/decisions/sandbox.md, "The network"): the hosts an
 * agent's model API needs, the relay command that runs first inside the sandbox, and the
 * proxy's reading of one request head. Pure: the daemon's proxy is src/safety/net_proxy.ts,
 * the relay src/safety/net_relay.ts.
 *
 * @module
 */

import type { AgentProfile } from "./sandbox.ts";
import { MODEL_SOCKET_INSIDE, RELAY_COMMAND } from "./net_relay.ts";
import { splitHostPort } from "./net_wire.ts";

/**
 * `host:port` of an http(s) URL, the form Deno's net permission and a CONNECT line take;
 * undefined for anything else.
 */
export function hostPortOf(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
  const port = u.port || (u.protocol === "https:" ? "443" : "80");
  return `${u.hostname}:${port}`;
}

/** Whether `hostPort` names this machine's loopback (reached inside by a same-port forward). */
export function isLoopback(hostPort: string): boolean {
  const host = splitHostPort(hostPort)?.host ?? "";
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** One agent whose model hosts are asked for. */
export interface ModelAgent {
  /** What its runtime's facts or its `[harnesses.NAME]` declare; unset: an agent nobody declared. */
  agent?: AgentProfile;
  /** The environment it starts with. */
  env: Readonly<Record<string, string>>;
  /** Its command line, which may name a base URL (Codex's `model_providers.*.base_url=…`). */
  args?: readonly string[];
  /** Every agent wats knows: their base URL variables are read from `env`. */
  known: readonly AgentProfile[];
}

/**
 * The `host:port`s the model API of an agent needs: each base URL in its environment (the
 * known agents' variables, `ANTHROPIC_BASE_URL`…) and on its command line, and its vendor's
 * own hosts unless its own base URL variable replaces them. An agent nobody declared gets only
 * what its environment and command line name: no vendor's host.
 */
export function modelHosts(m: ModelAgent): string[] {
  const out: string[] = [];
  let replaced = false;
  const vars = new Set([...m.known.flatMap((k) => k.baseUrlEnv ?? []), m.agent?.baseUrlEnv]);
  for (const name of vars) {
    const value = name === undefined ? undefined : m.env[name];
    const hp = value ? hostPortOf(value) : undefined;
    if (hp === undefined) continue;
    out.push(hp);
    if (name === m.agent?.baseUrlEnv) replaced = true;
  }
  for (const arg of m.args ?? []) {
    for (const match of arg.matchAll(/https?:\/\/[^\s"',}\]]+/g)) {
      const hp = hostPortOf(match[0]);
      if (hp !== undefined) out.push(hp);
    }
  }
  if (!replaced) out.push(...m.agent?.hosts ?? []);
  return [...new Set(out.map((h) => h.toLowerCase()))];
}

/**
 * The command that runs `program args` behind the relay: the relay forwards each loopback
 * model host on its own port and proxies the rest (docs/decisions/sandbox.md).
 */
export function relayCommand(
  self: readonly string[],
  hosts: readonly string[],
  program: string,
  args: readonly string[],
): { program: string; args: string[] } {
  const forwards = hosts.filter(isLoopback).flatMap((h) => ["--forward", h]);
  return {
    program: self[0]!,
    args: [
      ...self.slice(1),
      RELAY_COMMAND,
      "--socket",
      MODEL_SOCKET_INSIDE,
      ...forwards,
      "--",
      program,
      ...args,
    ],
  };
}

/**
 * bubblewrap's arguments of the model-only network: a network namespace of its own (only
 * loopback) and the proxy's socket at `MODEL_SOCKET_INSIDE`. They go just before the `--`
 * that ends bubblewrap's options, after every other mount, so no later tmpfs covers the socket.
 */
export function withModelOnly(bwrapCommand: readonly string[], socket: string): string[] {
  const end = bwrapCommand.indexOf("--");
  if (end < 0) throw new Error("a bubblewrap command without -- cannot be given a network");
  return [
    ...bwrapCommand.slice(0, end),
    "--unshare-net",
    "--bind",
    socket,
    MODEL_SOCKET_INSIDE,
    ...bwrapCommand.slice(end),
  ];
}

/** What the proxy makes of one request head. */
export type ProxyRequest =
  /** `CONNECT host:port`: a tunnel, answered 200 before the bytes flow. */
  | { kind: "connect"; target: string }
  /** `GET http://host:port/…` (absolute form): the head goes on to the host as it is. */
  | { kind: "forward"; target: string }
  | { kind: "bad"; reason: string };

/** Reads the request line of a proxy request's head (the bytes up to the blank line). */
export function parseProxyHead(head: string): ProxyRequest {
  const line = head.slice(0, head.indexOf("\r\n") < 0 ? head.length : head.indexOf("\r\n"));
  const m = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/.exec(line);
  if (!m) return { kind: "bad", reason: "not an HTTP/1 request line" };
  const [, method, uri] = m as unknown as [string, string, string];
  if (method === "CONNECT") {
    const hp = splitHostPort(uri);
    return hp ? { kind: "connect", target: `${hp.host}:${hp.port}` } : {
      kind: "bad",
      reason: "CONNECT needs host:port",
    };
  }
  if (!/^https?:\/\//i.test(uri)) return { kind: "bad", reason: "not a proxy request" };
  const target = hostPortOf(uri);
  return target ? { kind: "forward", target: target.toLowerCase() } : {
    kind: "bad",
    reason: "bad URL",
  };
}

/** The proxy's refusal, an HTTP response whose body says what to do. */
export function refusal(target: string, reason: string): string {
  const body = `wats refused ${target || "this request"}: ${reason}. ` +
    "The sandbox reaches only its model API (sandbox.network = model-only); " +
    "to reach other hosts, wats config set sandbox.network open\n";
  return `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${
    new TextEncoder().encode(body).length
  }\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * Every model host of a node's agents (src/runner/runtimes/agents.ts `nodeAgents`): the
 * daemon's model proxy opens these and no other.
 */
export function nodeModelHosts(agents: readonly ModelAgent[]): string[] {
  return [...new Set(agents.flatMap((a) => modelHosts(a)))];
}
