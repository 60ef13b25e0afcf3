/**
 * `wats mcp [--profile P]`: the stdio entry point MCP hosts start (Claude
 * Code, Codex, OpenClaw). It connects to the daemon's `mcp.sock`, says which
 * profile it speaks for (and the runner's per-run token from `WATS_RUN_TOKEN`),
 * then passes bytes both ways. When no daemon answers it starts one in the
 * background with `--agent none`, so a node started this way never runs agents
 * (it stops once idle, and a foreground `wats` takes over from it: src/node/idle.ts,
 * src/cli/daemon.ts).
 *
 * stdout carries MCP bytes only; everything else goes to stderr.
 *
 * A runner session (its run token was accepted) that loses the node ends its
 * own run: it kills its process group, which the runner created for that run
 * alone, so a run never outlives its daemon (docs/runner.md, "Killing a run").
 *
 * Requires read on the data dir, the socket grants (net `unix:<socket>`, read,
 * write) and run on this program's own executable.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import {
  type Hello,
  HELLO_ANSWER_TIMEOUT_MS,
  RUN_TOKEN_ENV,
  sessionLine,
} from "../contracts/session.ts";
import { writeAll, writeAllSync } from "../io/write_all.ts";
import { terminalSafe } from "../io/terminal_text.ts";
import { type FlagValue, loadSettings } from "../config/settings.ts";
import { UsageError } from "../errors.ts";
import type { Command, CommandContext } from "./context.ts";
import { killOwnGroup, startBackgroundNode } from "./bridge_processes.ts";
import { needsValue, unexpectedArgument, unknownFlag } from "./usage.ts";

/** The help text of `wats mcp`. */
export const MCP_HELP = `Usage: wats mcp [--profile P]

The stdio entry point for MCP hosts (Claude Code, Codex, OpenClaw): it connects
to the running node through <data dir>/mcp.sock and passes MCP messages both
ways. When no node runs, it starts one in the background that never runs agents
and stops after 10 minutes with no session; \`wats\` takes over from it.

Options:
  --profile P   the profile this session posts as (default: the profile
                setting, else the OS user name)
  -h, --help    this help

Environment:
  WATS_RUN_TOKEN   the per-run token the runner passes to its own sessions

Register it in a host with \`wats setup claude\` or \`wats setup codex\`.
MCP over HTTP (mcp.listen) takes tokens instead: \`wats mcp token --help\`.
`;

/** What `wats mcp` was asked. */
export interface McpArgs {
  profile?: string;
  help: boolean;
}

/** Parses the arguments of `wats mcp` (after the command word). */
export function parseMcpArgs(argv: string[]): McpArgs {
  const out: McpArgs = { help: false };
  const words = argv.values();
  for (const a of words) {
    if (a === "-h" || a === "--help") {
      out.help = true;
    } else if (a === "--profile" || a.startsWith("--profile=")) {
      const value = a === "--profile" ? words.next().value : a.slice("--profile=".length);
      if (value === undefined || value === "" || value.startsWith("-")) {
        throw needsValue("wats mcp", "--profile");
      }
      if (out.profile !== undefined) throw new UsageError("--profile is given twice; give it once");
      out.profile = value;
    } else if (a.startsWith("-")) {
      throw unknownFlag("wats mcp", a.split("=")[0]!);
    } else {
      throw unexpectedArgument("wats mcp", a);
    }
  }
  return out;
}

/** How long to wait for a node started in the background to open its socket. */
export const START_TIMEOUT_MS = 15_000;
/** How long to keep looking after the started node exited (another may have won the lock). */
export const EXITED_GRACE_MS = 3_000;
/** After stdin ends, how long to let the node's last bytes through. */
export const DRAIN_MS = 2_000;

/** A socket connection as the bridge uses it. */
export interface BridgeConn {
  read(p: Uint8Array): Promise<number | null>;
  write(p: Uint8Array): Promise<number>;
  closeWrite(): Promise<void>;
  close(): void;
}

/** The world the bridge touches, injected so tests can replace it. */
export interface BridgeIO {
  /** Connects to the socket; throws `NotFound`/`ConnectionRefused` when no node listens. */
  connect(path: string): Promise<BridgeConn>;
  /** Starts a node in the background; resolves `exited` with its code if it stops. */
  startNode(): { exited: Promise<number> };
  /** Resolves after `ms`, or at once when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Milliseconds, monotonic enough for deadlines. */
  now(): number;
  stdin: ReadableStream<Uint8Array>;
  stdout: { write(p: Uint8Array): Promise<number> };
  stderr(line: string): void;
  /** Kills this process's own process group (a runner session whose node went away). */
  endOwnGroup(): Promise<void>;
}

/** What the bridge needs to know. */
export interface BridgeOptions {
  socket: string;
  dataDir: string;
  profile: string;
  token?: string;
  signal?: AbortSignal;
}

/** Runs `wats mcp` with the process's real stdio, socket and spawn. */
export const mcpCommand: Command = async (ctx: CommandContext): Promise<number> => {
  const args = parseMcpArgs(ctx.argv);
  if (args.help) {
    await writeAll(Deno.stdout, new TextEncoder().encode(MCP_HELP));
    return 0;
  }
  const flags: Record<string, FlagValue> = {};
  if (args.profile !== undefined) flags.profile = { flag: "--profile", value: args.profile };
  const settings = await loadSettings(ctx.paths, ctx.env, flags, ctx.user);
  const token = ctx.env[RUN_TOKEN_ENV];
  return await runBridge(
    {
      socket: ctx.paths.socket,
      dataDir: ctx.paths.dataDir,
      profile: settings.values.profile,
      token: token !== undefined && token !== "" ? token : undefined,
      signal: ctx.signal,
    },
    realIO(ctx),
  );
};

/** The real world: Deno's socket, spawn, stdio. */
function realIO(ctx: CommandContext): BridgeIO {
  const encoder = new TextEncoder();
  return {
    connect: (path) => Deno.connect({ transport: "unix", path }),
    startNode: () => startBackgroundNode(ctx.self, ctx.paths.dataDir),
    sleep: (ms, signal) =>
      new Promise((resolve) => {
        const t = setTimeout(resolve, ms);
        signal?.addEventListener("abort", () => {
          clearTimeout(t);
          resolve();
        }, { once: true });
      }),
    now: () => performance.now(),
    endOwnGroup: killOwnGroup,
    stdin: Deno.stdin.readable,
    stdout: Deno.stdout,
    // Synchronous: the process may exit right after an error line.
    stderr: (line) => {
      try {
        writeAllSync(Deno.stderr, encoder.encode(`${terminalSafe(line)}\n`));
      } catch { /* stderr closed: nothing to tell */ }
    },
  };
}

/**
 * Connects (starting a node when none answers), says hello, then passes bytes
 * both ways until either side ends. Returns the exit code: 0 when stdin ends
 * or the user stops it, 1 when the node cannot be reached or goes away.
 */
export async function runBridge(opts: BridgeOptions, io: BridgeIO): Promise<number> {
  const conn = await reach(opts, io);
  if (conn === null) return 1;
  if (!(await greet(conn, opts, io))) return 1;
  return await pump(conn, opts, io);
}

/** Says hello and waits for `ready`; false (the connection closed) after saying why. */
async function greet(conn: BridgeConn, opts: BridgeOptions, io: BridgeIO): Promise<boolean> {
  const hello: Hello = {
    wats: "hello",
    profile: opts.profile,
    ...(opts.token !== undefined ? { token: opts.token } : {}),
  };
  try {
    await writeAll(conn, new TextEncoder().encode(sessionLine(hello)));
    const answer = await withDeadline(readLineBytewise(conn), HELLO_ANSWER_TIMEOUT_MS, io);
    const reply = answer === null ? null : parseReply(answer);
    if (reply?.wats !== "ready") {
      io.stderr(
        reply?.wats === "error"
          ? `wats mcp: the node refused the session: ${reply.message}`
          : `wats mcp: the node at ${opts.socket} did not answer the hello; is it a wats node of this version? Restart it with \`wats\`.`,
      );
      closeQuietly(conn);
      return false;
    }
  } catch (err) {
    io.stderr(
      `wats mcp: the connection to ${opts.socket} failed during hello: ${errorMessage(err)}`,
    );
    closeQuietly(conn);
    return false;
  }
  return true;
}

/** Connects to the node's socket, starting a node when none listens; null after saying why. */
async function reach(opts: BridgeOptions, io: BridgeIO): Promise<BridgeConn | null> {
  try {
    return await io.connect(opts.socket);
  } catch (err) {
    if (!isAbsent(err)) {
      io.stderr(`wats mcp: cannot connect to ${opts.socket}: ${errorMessage(err)}`);
      return null;
    }
  }
  let exitCode: number | null = null;
  let exitedAt = 0;
  try {
    const node = io.startNode();
    node.exited.then((code) => {
      exitCode = code;
      exitedAt = io.now();
    }, () => {});
  } catch (err) {
    io.stderr(
      `wats mcp: no node runs on ${opts.socket} and starting one failed: ${errorMessage(err)}. ` +
        `Start it yourself with \`wats --data-dir ${opts.dataDir}\`.`,
    );
    return null;
  }
  const deadline = io.now() + START_TIMEOUT_MS;
  let wait = 25;
  while (!opts.signal?.aborted) {
    await io.sleep(wait);
    wait = Math.min(wait * 2, 500);
    try {
      return await io.connect(opts.socket);
    } catch (err) {
      if (!isAbsent(err)) {
        io.stderr(`wats mcp: cannot connect to ${opts.socket}: ${errorMessage(err)}`);
        return null;
      }
    }
    if (exitCode !== null && io.now() - exitedAt >= EXITED_GRACE_MS) {
      io.stderr(
        `wats mcp: no node runs on ${opts.socket}, and the node started in the background ` +
          `stopped (exit code ${exitCode}). Start it yourself with \`wats --data-dir ${opts.dataDir}\` ` +
          "in a terminal to see why.",
      );
      return null;
    }
    if (io.now() >= deadline) {
      io.stderr(
        `wats mcp: started a node in the background, but it did not open ${opts.socket} within ` +
          `${
            START_TIMEOUT_MS / 1000
          } s. Start it yourself with \`wats --data-dir ${opts.dataDir}\` ` +
          "in a terminal to see why.",
      );
      return null;
    }
  }
  return null;
}

/**
 * Passes bytes stdin → socket and socket → stdout until either side ends. When
 * the node goes away mid-session and another takes its place on the socket
 * within {@linkcode START_TIMEOUT_MS} (a foreground `wats` taking over from a
 * node `wats mcp` started), the bridge moves to the new node: it replays the
 * host's MCP handshake there, drops the new node's answer to it (the host has
 * had one), and carries on. Requests in flight at that moment get no answer.
 * A runner session (one with a run token) never moves: it ends with its node.
 */
async function pump(first: BridgeConn, opts: BridgeOptions, io: BridgeIO): Promise<number> {
  let conn = first;
  let stopped = false;
  let hostDone = false;
  let lost = false;
  const handshake = new Handshake();
  // Resolves when `conn` changes or is lost for good; host bytes wait on it.
  let switched = Promise.withResolvers<void>();
  const onAbort = () => {
    stopped = true;
    closeQuietly(conn);
  };
  opts.signal?.addEventListener("abort", onAbort, { once: true });

  const fromNode = (async () => {
    const buf = new Uint8Array(64 * 1024);
    while (true) {
      let n: number | null;
      try {
        n = await conn.read(buf);
      } catch {
        n = null; // closed under us (stop, or the node went away)
      }
      if (n !== null) {
        try {
          await writeAll(io.stdout, buf.subarray(0, n));
        } catch {
          return; // the host is gone
        }
        continue;
      }
      // A run's session (it has a run token) ends with its node: the token
      // means nothing to another node, and a run must not outlive its daemon.
      if (stopped || hostDone || opts.token !== undefined || !handshake.complete()) return;
      const gone = conn;
      io.stderr(
        `wats mcp: the node on ${opts.socket} went away; waiting up to ${
          START_TIMEOUT_MS / 1000
        } s for the node that takes its place`,
      );
      const next = await takeOver(handshake, opts, io);
      closeQuietly(gone);
      const done = switched;
      switched = Promise.withResolvers<void>();
      if (next === null) {
        lost = true;
        done.resolve();
        return;
      }
      conn = next;
      done.resolve();
      io.stderr(`wats mcp: moved to the new node on ${opts.socket}`);
    }
  })();

  const stdinReader = io.stdin.getReader();
  const fromHost = (async () => {
    try {
      while (true) {
        const { value, done } = await stdinReader.read();
        if (done) return;
        handshake.see(value);
        while (true) {
          const target = conn;
          const waitFor = switched.promise;
          try {
            await writeAll(target, value);
            break;
          } catch {
            // The node went away while we wrote: without a handshake to
            // replay, fromNode reports it; else wait for the new node.
            if (!handshake.complete() || opts.token !== undefined) return;
            if (conn === target) await waitFor;
            if (lost || stopped) return;
          }
        }
      }
    } catch {
      // stdin failed: the host is gone.
    }
  })();

  const firstDone = await Promise.race([
    fromHost.then(() => "host" as const),
    fromNode.then(() => "node" as const),
  ]);
  opts.signal?.removeEventListener("abort", onAbort);
  if (firstDone === "host" && !stopped && !lost) {
    // The host is done: let the node see the end and flush what it still sends.
    hostDone = true;
    await conn.closeWrite().catch(() => {});
    await withDeadline(fromNode, DRAIN_MS, io).catch(() => {});
    closeQuietly(conn);
    return 0;
  }
  closeQuietly(conn);
  stdinReader.cancel().catch(() => {});
  if (stopped) return 0;
  if (opts.token !== undefined) {
    // A run without its node has no tools, no timeout and no budget over it.
    io.stderr("wats mcp: the node went away during this run; ending the run's processes");
    await io.endOwnGroup().catch((err) =>
      io.stderr(`wats mcp: cannot end the run's processes: ${errorMessage(err)}`)
    );
    return 1;
  }
  io.stderr(
    lost
      ? `wats mcp: no node took the place of the one on ${opts.socket}. ` +
        `Start it again with \`wats --data-dir ${opts.dataDir}\`.`
      : `wats mcp: the node closed the connection on ${opts.socket} (did it stop?). ` +
        `Start it again with \`wats --data-dir ${opts.dataDir}\`.`,
  );
  return 1;
}

/**
 * Waits for a node to listen on the socket again (without starting one), then
 * opens a session there and replays the host's handshake. Null when none comes
 * in time or the new node will not take the session.
 */
async function takeOver(
  handshake: Handshake,
  opts: BridgeOptions,
  io: BridgeIO,
): Promise<BridgeConn | null> {
  const deadline = io.now() + START_TIMEOUT_MS;
  let wait = 25;
  while (!opts.signal?.aborted && io.now() < deadline) {
    await io.sleep(wait);
    wait = Math.min(wait * 2, 500);
    let conn: BridgeConn;
    try {
      conn = await io.connect(opts.socket);
    } catch (err) {
      if (isAbsent(err)) continue;
      io.stderr(`wats mcp: cannot connect to ${opts.socket}: ${errorMessage(err)}`);
      return null;
    }
    if (!(await greet(conn, opts, io))) return null;
    try {
      const enc = new TextEncoder();
      await writeAll(conn, enc.encode(handshake.initialize + "\n"));
      while (true) {
        const line = await withDeadline(
          readLineBytewise(conn, MAX_LINE),
          HELLO_ANSWER_TIMEOUT_MS,
          io,
        );
        if (line === null) throw new Error("the new node closed the connection");
        if (parseReply(line)?.id === handshake.initializeId) break;
      }
      await writeAll(conn, enc.encode(handshake.initialized + "\n"));
      return conn;
    } catch (err) {
      io.stderr(
        `wats mcp: the new node on ${opts.socket} did not take the session: ${errorMessage(err)}`,
      );
      closeQuietly(conn);
      return null;
    }
  }
  return null;
}

/** The longest line the bridge reads itself (the answer to `initialize` carries the instructions). */
const MAX_LINE = 4 * 1024 * 1024;

/**
 * The host's MCP handshake (the `initialize` request and the `initialized`
 * notification), seen on the way through and kept to replay to a new node.
 */
class Handshake {
  initialize?: string;
  initializeId?: unknown;
  initialized?: string;
  #text = "";
  #decoder = new TextDecoder();
  #looking = true;

  /** Looks at bytes from the host until the handshake has gone by. */
  see(bytes: Uint8Array): void {
    if (!this.#looking) return;
    this.#text += this.#decoder.decode(bytes, { stream: true });
    let nl: number;
    while ((nl = this.#text.indexOf("\n")) >= 0) {
      const line = this.#text.slice(0, nl).replace(/\r$/, "");
      this.#text = this.#text.slice(nl + 1);
      const msg = parseReply(line) as { method?: unknown; id?: unknown } | null;
      if (msg?.method === "initialize" && msg.id !== undefined) {
        this.initialize = line;
        this.initializeId = msg.id;
      } else if (msg?.method === "notifications/initialized") {
        this.initialized = line;
      }
      if (this.complete()) break;
    }
    // Seen, or not MCP as we know it: stop looking (and keep nothing).
    if (this.complete() || this.#text.length > MAX_LINE) {
      this.#looking = false;
      this.#text = "";
    }
  }

  complete(): boolean {
    return this.initialize !== undefined && this.initialized !== undefined;
  }
}

/** Reads one line a byte at a time, so no byte after it is taken from the stream. */
async function readLineBytewise(conn: BridgeConn, max = 64 * 1024): Promise<string | null> {
  const bytes: number[] = [];
  const one = new Uint8Array(1);
  while (bytes.length < max) {
    const n = await conn.read(one);
    if (n === null) return null;
    if (n === 0) continue;
    const [byte = 0] = one; // n is 1: `one` holds the byte just read.
    if (byte === 10) return new TextDecoder().decode(new Uint8Array(bytes));
    bytes.push(byte);
  }
  return null;
}

function parseReply(line: string): { wats?: string; message?: string; id?: unknown } | null {
  try {
    const v = JSON.parse(line);
    return typeof v === "object" && v !== null ? v : null;
  } catch {
    return null;
  }
}

function isAbsent(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.ConnectionRefused;
}

async function withDeadline<T>(p: Promise<T>, ms: number, io: BridgeIO): Promise<T> {
  const done = new AbortController();
  try {
    return await Promise.race([
      p,
      io.sleep(ms, done.signal).then(() => {
        if (!done.signal.aborted) throw new Error(`no answer within ${ms / 1000} s`);
        return p;
      }),
    ]);
  } finally {
    done.abort();
  }
}

function closeQuietly(conn: BridgeConn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}
