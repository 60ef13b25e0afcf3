/**
 * The relay inside each sandbox whose network is `model-only` (docs/decisions/sandbox.md,
 * "The network"): `wats sandbox-relay`, the sandbox's first process. Inside the sandbox's own
 * network namespace only loopback exists; the relay listens there and carries each connection
 * over the socket bound at {@linkcode MODEL_SOCKET_INSIDE} to the daemon's model proxy
 * (src/safety/net_proxy.ts), which opens only the model API. It starts the agent as its child
 * with `HTTPS_PROXY` pointing at itself, passes SIGINT and SIGTERM on, and exits with the
 * agent's code.
 *
 * Two listeners: an HTTP proxy on an ephemeral port (the agents honour `HTTPS_PROXY`,
 * measured: Claude Code 2.1.197, Codex), whose bytes go to the daemon as they are; and, for
 * each model host on loopback (a local model server, the tests' mock), the same port inside,
 * which the relay itself tunnels with `CONNECT`, so a base URL of `http://127.0.0.1:PORT`
 * works unchanged.
 *
 * Every agent start waits for this module, so it and what it imports stay few and small
 * (main.ts loads them without the launcher; tests/architecture/imports_test.ts keeps it so).
 * It runs in the process main.ts starts, without a Worker: the sandbox around it is the
 * boundary (docs/decisions/sandbox.md says why).
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { writeAll } from "../io/write_all.ts";
import { readHead, splice, splitHostPort } from "./net_wire.ts";

/** Where the daemon's model proxy socket is bound inside every model-only sandbox. */
export const MODEL_SOCKET_INSIDE = "/tmp/.wats-model.sock";

/** The hidden command that relays the sandbox's loopback to the model proxy. */
export const RELAY_COMMAND = "sandbox-relay";

/** What the relay's command line says. */
export interface RelayArgs {
  /** The model proxy's socket, as the sandbox sees it. */
  socket: string;
  /** Loopback model hosts (`127.0.0.1:PORT`) served on the same port inside. */
  forwards: string[];
  program: string;
  args: string[];
}

/**
 * Reads `--socket PATH [--forward HOST:PORT]… -- PROGRAM ARGS…`.
 *
 * @throws {UsageError} on anything else.
 */
export function parseRelayArgs(argv: readonly string[]): RelayArgs {
  let socket: string | undefined;
  const forwards: string[] = [];
  let i = 0;
  const bad = (what: string) =>
    new UsageError(`wats ${RELAY_COMMAND}: ${what} (wats starts it inside a sandbox; not for use)`);
  for (; i < argv.length && argv[i] !== "--"; i++) {
    const flag = argv[i]!;
    const value = argv[i + 1];
    if (value === undefined) throw bad(`${flag} needs a value`);
    if (flag === "--socket") socket = value;
    else if (flag === "--forward") {
      if (splitHostPort(value) === undefined) throw bad(`--forward ${value} is not host:port`);
      forwards.push(value);
    } else throw bad(`unknown flag ${flag}`);
    i++;
  }
  const program = argv[i + 1];
  if (socket === undefined) throw bad("--socket is missing");
  if (program === undefined) throw bad("no program after --");
  return { socket, forwards, program, args: argv.slice(i + 2) };
}

/** The agent's proxy variables: every request but loopback's goes through the relay. */
export function proxyEnv(proxyUrl: string): Record<string, string> {
  const noProxy = "localhost,127.0.0.1,::1";
  return {
    HTTPS_PROXY: proxyUrl,
    https_proxy: proxyUrl,
    HTTP_PROXY: proxyUrl,
    http_proxy: proxyUrl,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
  };
}

/**
 * Runs the relay and the agent behind it until the agent exits, and resolves with the
 * agent's exit code. Each SIGINT and SIGTERM this process gets goes on to the agent.
 *
 * Requires `--allow-net` on 127.0.0.1 (its ports) and `unix:` of the socket, `--allow-read`
 * and `--allow-write` on the socket, `--allow-run` on the agent's program.
 */
export async function runRelay(a: RelayArgs): Promise<number> {
  const listeners: Deno.Listener[] = [];
  const conns = new Set<Deno.Conn>();
  const track = (c: Deno.Conn) => {
    conns.add(c);
    return () => {
      conns.delete(c);
      closeQuietly(c);
    };
  };
  const serve = (l: Deno.Listener, handle: (c: Deno.Conn) => Promise<void>) => {
    listeners.push(l);
    (async () => {
      try {
        for await (const c of l) {
          const done = track(c);
          handle(c).catch(() => {}).finally(done);
        }
      } catch {
        // Closed.
      }
    })();
  };
  const toDaemon = () => Deno.connect({ transport: "unix", path: a.socket });
  const signals: Array<[Deno.Signal, () => void]> = [];
  try {
    // The proxy the agent's HTTPS_PROXY names: its bytes go to the daemon as they are.
    const proxy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    serve(proxy, async (c) => {
      const up = await toDaemon();
      const done = track(up);
      try {
        await splice(c, up);
      } finally {
        done();
      }
    });
    for (const target of a.forwards) {
      const { port } = splitHostPort(target)!;
      serve(
        Deno.listen({ hostname: "127.0.0.1", port }),
        (c) => tunnel(c, target, toDaemon, track),
      );
    }
    const proxyUrl = `http://127.0.0.1:${(proxy.addr as Deno.NetAddr).port}`;
    const child = new Deno.Command(a.program, {
      args: a.args,
      // A wats from source inside (the run's `wats mcp`) would ask dl.deno.land for updates
      // through the proxy, to be refused and logged at each start.
      env: { ...proxyEnv(proxyUrl), DENO_NO_UPDATE_CHECK: "1" },
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      const pass = () => {
        try {
          child.kill(signal);
        } catch {
          // Already gone.
        }
      };
      Deno.addSignalListener(signal, pass);
      signals.push([signal, pass]);
    }
    return (await child.status).code;
  } finally {
    for (const [signal, pass] of signals) Deno.removeSignalListener(signal, pass);
    for (const l of listeners) closeQuietly(l);
    for (const c of [...conns]) closeQuietly(c);
  }
}

/** Carries one connection to `target` through the daemon's proxy (`CONNECT`). */
async function tunnel(
  c: Deno.Conn,
  target: string,
  toDaemon: () => Promise<Deno.Conn>,
  track: (c: Deno.Conn) => () => void,
): Promise<void> {
  const up = await toDaemon();
  const done = track(up);
  try {
    await writeAll(
      up,
      new TextEncoder().encode(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`),
    );
    const answer = await readHead(up);
    if (answer === undefined) return;
    if (!/^HTTP\/1\.[01] 200 /.test(answer.head)) {
      // A refusal: the agent sees it as the answer to its own request.
      await writeAll(c, answer.raw);
      await writeAll(c, answer.rest);
      return;
    }
    await writeAll(c, answer.rest);
    await splice(c, up);
  } finally {
    done();
  }
}

function closeQuietly(c: { close(): void }): void {
  try {
    c.close();
  } catch {
    // Already closed.
  }
}
