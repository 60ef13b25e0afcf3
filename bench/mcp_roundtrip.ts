/**
 * MCP tool-call round trip (issue 3): how long one `tools/call` takes against a
 * real daemon, as ratios to a raw unix-socket echo measured in the same run (the
 * machines are shared and noisy, so absolute numbers mean little).
 *
 * Measured paths, interleaved in small blocks so load changes hit each alike:
 *
 * - `echo.xproc`  — a line echoed by a second `deno run` process: THE baseline
 *   of the ratios, since the daemon is always another process;
 * - `echo.inproc` — a line echoed by a server in this process (lower bound);
 * - `echo.pump`   — the cross-process echo through a stdio byte-pump process:
 *   the bridge's topology (pipe → process → socket) without any MCP;
 * - `direct.*`    — MCP SDK Client over the socket (`connectDaemon`);
 * - `bridge.*`    — MCP SDK Client + StdioClientTransport spawning `wats mcp`;
 * - `http.*`      — MCP SDK Client + StreamableHTTPClientTransport on the same daemon's
 *   `mcp.listen` with a bearer token (issue 32: goal http ≤ 1.5× bridge at p50);
 *
 * for the tools `status`, `feed` (cheap reads) and `ask` (a write: sign, verify,
 * insert). Diagnostics split the time: hand-written JSON-RPC on both paths
 * (`raw.*`, no client SDK), the daemon's socket server with a stub service in a
 * plain process (`raw.stubsock`), the daemon's real service and tools in this
 * process over the SDK's in-memory transport (`inmem.real.*`) or with a stub
 * service (`inmem.stub`), the service methods alone (`svc.*`), and the CPU each
 * process spends per call (from /proc, Linux only).
 *
 * Then, on the same daemon, `--http-sessions` HTTP sessions (each its own token and profile)
 * post `--http-posts` asks each, all at once: every acknowledged post must be stored exactly
 * once (its `post_stored` line, and the feed read by cursor), as bench/mcp_concurrency.ts
 * checks for the socket; posts/s beside the same posts from one HTTP session in turn.
 *
 * Run: deno run -A bench/mcp_roundtrip.ts [--calls 2000] [--http-sessions 50] [--http-posts 40]
 * (It starts itself again as the echo server, the pump and the stub server.)
 *
 * @module
 */

import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createToken } from "../src/mcp/http_tokens.ts";
import { freePort } from "../tests/support/free_port.ts";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { connectDaemon } from "../src/mcp/socket_client.ts";
import { dataPaths } from "../src/config/paths.ts";
import { createMcpServer } from "../src/mcp/server.ts";
import type { NodeService } from "../src/mcp/service.ts";
import type { NodeStatus } from "../src/contracts/views.ts";
import type { SessionIdentity } from "../src/contracts/session.ts";
import { serveMcpSocket } from "../src/mcp/socket_server.ts";
import { KnownAgents } from "../src/node/presence.ts";
import { LocalNodeService } from "../src/node/node_service.ts";
import { Profiles } from "../src/node/profiles.ts";
import { ReviewQueue } from "../src/node/review_queue.ts";
import { safetyNotices } from "../src/safety/notices.ts";
import { Store } from "../src/store/store.ts";
import { denoDir, startWats, tempDataDir, watsCommand } from "../tests/support/cli.ts";
import { splitArgv } from "./argv.ts";

const SELF = fileURLToPath(import.meta.url);
const enc = new TextEncoder();
const dec = new TextDecoder();

const { values } = parseArgs({
  args: Deno.args,
  options: {
    calls: { type: "string", default: "2000" },
    "http-sessions": { type: "string", default: "50" },
    "http-posts": { type: "string", default: "40" },
    "echo-server": { type: "string" },
    pump: { type: "string" },
    "stub-server": { type: "string" },
  },
});

// ---- helper process modes -----------------------------------------------------------

async function writeAll(w: { write(p: Uint8Array): Promise<number> }, data: Uint8Array) {
  let off = 0;
  while (off < data.length) off += await w.write(data.subarray(off));
}

/** Echoes every byte back until the peer goes away. */
async function echoConn(conn: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  try {
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      await writeAll(conn, buf.subarray(0, n));
    }
  } catch {
    // The client went away.
  }
  conn.close();
}

/** `--pump PATH`: stdin → socket and socket → stdout, copied the way `wats mcp` copies. */
async function pump(path: string): Promise<void> {
  const conn = await Deno.connect({ transport: "unix", path });
  const fromSocket = (async () => {
    const buf = new Uint8Array(64 * 1024);
    while (true) {
      const n = await conn.read(buf);
      if (n === null) return;
      await writeAll(Deno.stdout, buf.subarray(0, n));
    }
  })();
  const reader = Deno.stdin.readable.getReader();
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    await writeAll(conn, value);
  }
  await conn.closeWrite();
  await fromSocket;
}

/** A node service that answers `status` from memory: the SDK's and transport's cost alone. */
function stubService(): NodeService {
  const status: NodeStatus = {
    node: "0".repeat(16),
    profile: { name: "bench", npub: "npub1" + "q".repeat(58) },
    dataDir: "/tmp/wats-bench",
    relays: [],
    agent: null,
    pendingDrafts: 0,
    safetyNotices: [],
    halted: null,
    budget: null,
    storedPosts: 0,
  };
  const unused = () => {
    throw new Error("not used by the bench");
  };
  return {
    authenticate: (hello) => ({
      profile: hello.profile ?? "bench",
      pubkey: "0".repeat(64),
      runner: false,
    }),
    post: unused,
    get: unused,
    thread: unused,
    feed: unused,
    search: unused,
    status: () => Promise.resolve(status),
    agents: unused,
    reach: unused,
    pending: unused,
    approve: unused,
    reject: unused,
  };
}

if (values["echo-server"] !== undefined) {
  const listener = Deno.listen({ transport: "unix", path: values["echo-server"] });
  await writeAll(Deno.stdout, enc.encode("ready\n"));
  for await (const conn of listener) void echoConn(conn);
  Deno.exit(0);
}
if (values["stub-server"] !== undefined) {
  await serveMcpSocket({ path: values["stub-server"], service: stubService() });
  await writeAll(Deno.stdout, enc.encode("ready\n"));
  await new Promise(() => {}); // Serve until killed.
}
if (values.pump !== undefined) {
  await pump(values.pump);
  Deno.exit(0);
}

// ---- small clients --------------------------------------------------------------------

/** Reads `\n`-terminated lines from a source of chunks. */
class Lines {
  #read: () => Promise<Uint8Array | null>;
  #buf = new Uint8Array(0);

  constructor(read: () => Promise<Uint8Array | null>) {
    this.#read = read;
  }

  async next(): Promise<string | null> {
    while (true) {
      const nl = this.#buf.indexOf(10);
      if (nl >= 0) {
        const line = dec.decode(this.#buf.subarray(0, nl));
        this.#buf = this.#buf.slice(nl + 1);
        return line;
      }
      const chunk = await this.#read();
      if (chunk === null) return null;
      const next = new Uint8Array(this.#buf.length + chunk.length);
      next.set(this.#buf);
      next.set(chunk, this.#buf.length);
      this.#buf = next;
    }
  }
}

/** Two ends of a byte stream: a socket, or a child's stdin and stdout. */
interface Duplex {
  write(p: Uint8Array): Promise<void>;
  read(): Promise<Uint8Array | null>;
  close(): void;
}

function socketDuplex(conn: Deno.Conn): Duplex {
  const buf = new Uint8Array(64 * 1024);
  return {
    write: (p) => writeAll(conn, p),
    read: async () => {
      const n = await conn.read(buf);
      return n === null ? null : buf.subarray(0, n);
    },
    close: () => conn.close(),
  };
}

function childDuplex(child: Deno.ChildProcess): Duplex {
  const w = child.stdin.getWriter();
  const r = child.stdout.getReader();
  return {
    write: (p) => w.write(p),
    read: async () => {
      const { value, done } = await r.read();
      return done ? null : value;
    },
    close: () => {
      w.close().catch(() => {});
      r.cancel().catch(() => {});
    },
  };
}

/** Sends `line` and waits until as many bytes came back. */
async function echoOnce(d: Duplex, line: Uint8Array): Promise<void> {
  await d.write(line);
  let got = 0;
  while (got < line.length) {
    const chunk = await d.read();
    if (chunk === null) throw new Error("the echo peer closed the connection");
    got += chunk.length;
  }
}

/** JSON-RPC written by hand, one line each way: no client SDK. */
class RawRpc {
  #conn: Duplex;
  #lines: Lines;
  #id = 0;
  /** Bytes of the last request and response lines, for the report. */
  lastSizes = { request: 0, response: 0 };

  constructor(d: Duplex) {
    this.#conn = d;
    this.#lines = new Lines(() => d.read());
  }

  /** Says the wats hello on a raw socket and waits for the ready line. */
  async hello(profile: string): Promise<void> {
    await this.#conn.write(enc.encode(JSON.stringify({ wats: "hello", profile }) + "\n"));
    const answer = await this.#lines.next();
    if (answer === null || JSON.parse(answer).wats !== "ready") {
      throw new Error(`the daemon refused the session: ${answer}`);
    }
  }

  async request(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = ++this.#id;
    const line = enc.encode(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    await this.#conn.write(line);
    while (true) {
      const answer = await this.#lines.next();
      if (answer === null) throw new Error(`the peer closed during ${method}`);
      const msg = JSON.parse(answer);
      if (msg.id !== id) continue;
      if (msg.error) throw new Error(`${method}: ${JSON.stringify(msg.error)}`);
      this.lastSizes = { request: line.length, response: answer.length + 1 };
      return msg.result;
    }
  }

  async initialize(): Promise<void> {
    await this.request("initialize", {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "bench-raw", version: "1" },
    });
    await this.#conn.write(
      enc.encode(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n"),
    );
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<void> {
    const r = await this.request("tools/call", { name, arguments: args });
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  }

  close(): void {
    this.#conn.close();
  }
}

/** An SDK client over MCP over HTTP with a bearer token. */
async function httpClient(url: URL, token: string): Promise<Client> {
  const c = new Client({ name: "bench-http", version: "1" });
  await c.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return c;
}

async function sdkCall(client: Client, name: string, args: Record<string, unknown>) {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
}

/** The daemon's own service over a fresh store in `dir`, as daemon.ts builds it. */
function localService(dir: string, profile: string) {
  const paths = dataPaths(dir);
  Deno.mkdirSync(paths.agentDir, { recursive: true });
  const store = Store.open(paths.store);
  const notices = () => safetyNotices(paths, {}, profile);
  const service = new LocalNodeService({
    store,
    profiles: new Profiles(crypto.getRandomValues(new Uint8Array(32)), store),
    nodeId: "0".repeat(16),
    dataDir: paths.dataDir,
    defaultProfile: profile,
    agentProfile: `${profile}-agent`,
    relays: [],
    maxSkewMs: 600_000,
    events: () => {},
    review: new ReviewQueue({
      dir: paths.pendingDir,
      rejectionsFile: `${paths.agentDir}/rejections.jsonl`,
      ttlMs: 86_400_000,
      now: Date.now,
    }),
    reviewOn: false,
    now: Date.now,
    runOfToken: () => undefined,
    runnerStatus: () => ({ agent: null, budget: null, halted: null }),
    safetyNotices: notices,
    knownAgents: new KnownAgents({ store, now: Date.now, everyMs: 900_000 }),
  });
  return { service, store, notices };
}

// ---- statistics and CPU ---------------------------------------------------------------

interface Summary {
  p50: number;
  p99: number;
  mean: number;
}

function summarize(xs: number[]): Summary {
  const s = [...xs].sort((a, b) => a - b);
  const q = (f: number) => {
    const v = s[Math.min(s.length - 1, Math.floor(f * s.length))];
    if (v === undefined) {
      throw new Error("error: no samples were taken; run at least one iteration");
    }
    return v;
  };
  return { p50: q(0.5), p99: q(0.99), mean: xs.reduce((a, b) => a + b, 0) / xs.length };
}

/** CPU milliseconds (user + system, all threads) a process has used so far. */
function cpuMs(pid: number | "self"): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10; // CLK_TCK is 100 on Linux.
}

// ---- the run ----------------------------------------------------------------------

const calls = Number(values.calls);
if (!Number.isInteger(calls) || calls < 100) {
  throw new Error(`--calls must be a whole number of at least 100, not ${values.calls}`);
}
const BLOCK = 25;
const WARMUP = 100;
const PROFILE = "bench";
const FEED = { since: 0, limit: 3 };
const SEED_POSTS = 3;

const tmp = await Deno.makeTempDir({ prefix: "wats-bench-rt-" });
const dataDir = tempDataDir();
const cleanups: Array<() => unknown> = [];
let daemonStderr = () => "(the daemon had not started)";
const load0 = Deno.loadavg();
const started = performance.now();

function spawnSelf(args: string[], stdin: "null" | "piped"): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", SELF, ...args],
    stdin,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
}

/** Spawns a helper mode of this script and waits for its "ready" line. */
async function spawnReady(args: string[]): Promise<Deno.ChildProcess> {
  const child = spawnSelf(args, "null");
  cleanups.push(() => killChild(child));
  const out = child.stdout.getReader();
  const first = await new Lines(() => out.read().then((r) => r.done ? null : r.value)).next();
  if (first !== "ready") throw new Error(`${args[0]} did not start`);
  await out.cancel();
  return child;
}

async function killChild(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGTERM");
  } catch {
    // Already gone.
  }
  await child.status;
}

try {
  // ---- baselines: echo servers here, in another process, and behind a pump.
  const inprocPath = `${tmp}/echo-in.sock`;
  const inprocListener = Deno.listen({ transport: "unix", path: inprocPath });
  cleanups.push(() => inprocListener.close());
  (async () => {
    for await (const conn of inprocListener) void echoConn(conn);
  })().catch(() => {});
  const xprocPath = `${tmp}/echo-x.sock`;
  const echoChild = await spawnReady(["--echo-server", xprocPath]);
  const pumpChild = spawnSelf(["--pump", xprocPath], "piped");
  cleanups.push(() => killChild(pumpChild));
  const inprocEcho = socketDuplex(await Deno.connect({ transport: "unix", path: inprocPath }));
  const xprocEcho = socketDuplex(await Deno.connect({ transport: "unix", path: xprocPath }));
  const pumpEcho = childDuplex(pumpChild);
  cleanups.push(() => inprocEcho.close(), () => xprocEcho.close());

  // ---- the daemon, with a few posts for `feed` to return, serving MCP over HTTP too.
  const httpPort = freePort();
  Deno.writeTextFileSync(
    `${dataDir}/config.toml`,
    `[mcp]\nlisten = "127.0.0.1:${httpPort}"\nrate_limit = 1000000\n`,
  );
  const httpUrl = new URL(`http://127.0.0.1:${httpPort}/mcp`);
  const tokensFile = dataPaths(dataDir).mcpTokens;
  const benchToken = (await createToken(tokensFile, { profile: PROFILE })).token;
  // Longer than the whole run: startWats kills its process after its default timeout.
  const node = startWats(["--data-dir", dataDir, "node", "--agent", "none"], {
    timeoutMs: 3_600_000,
  });
  daemonStderr = () => node.stderr();
  cleanups.push(() => node.stop());
  await node.waitForLine((l) => l.includes('"event":"started"'));
  const socket = `${dataDir}/mcp.sock`;

  const direct = await connectDaemon(socket, PROFILE);
  cleanups.push(() => direct.close());
  for (let i = 0; i < SEED_POSTS; i++) {
    await sdkCall(direct.client, "ask", {
      title: `seed ${i}`,
      text: `a seed post the feed calls read back (${i})`,
    });
  }

  // ---- `wats mcp`, as an MCP host starts it and by hand.
  const bridgeEnv = {
    HOME: node.home,
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    DENO_DIR: denoDir(),
    NO_COLOR: "1",
  };
  const wats = splitArgv(watsCommand());
  const bridgeArgs = [
    ...wats.args,
    "--data-dir",
    dataDir,
    "mcp",
    "--profile",
    PROFILE,
  ];
  const bridgeTransport = new StdioClientTransport({
    command: wats.command,
    args: bridgeArgs,
    env: bridgeEnv,
    stderr: "inherit",
  });
  const bridge = new Client({ name: "bench-bridge", version: "1" });
  await bridge.connect(bridgeTransport);
  cleanups.push(() => bridge.close());

  const http = await httpClient(httpUrl, benchToken);
  cleanups.push(() => http.close());

  const rawDirect = new RawRpc(
    socketDuplex(await Deno.connect({ transport: "unix", path: socket })),
  );
  await rawDirect.hello(PROFILE);
  await rawDirect.initialize();
  cleanups.push(() => rawDirect.close());

  const rawBridgeChild = new Deno.Command(wats.command, {
    args: bridgeArgs,
    env: bridgeEnv,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const rawBridge = new RawRpc(childDuplex(rawBridgeChild));
  cleanups.push(() => killChild(rawBridgeChild), () => rawBridge.close());
  await rawBridge.initialize();

  // ---- diagnostics: the daemon's socket server with a stub service, in a plain process;
  // the daemon's real service and tools in this process, without socket or process hop.
  const stubPath = `${tmp}/stub.sock`;
  const stubChild = await spawnReady(["--stub-server", stubPath]);
  const rawStub = new RawRpc(
    socketDuplex(await Deno.connect({ transport: "unix", path: stubPath })),
  );
  await rawStub.hello(PROFILE);
  await rawStub.initialize();
  cleanups.push(() => rawStub.close());

  const identity: SessionIdentity = { profile: PROFILE, pubkey: "0".repeat(64), runner: false };
  const [stubClientT, stubServerT] = InMemoryTransport.createLinkedPair();
  await createMcpServer(stubService(), identity).connect(stubServerT);
  const inmemStub = new Client({ name: "bench-inmem-stub", version: "1" });
  await inmemStub.connect(stubClientT);
  cleanups.push(() => inmemStub.close());

  const local = localService(`${tmp}/local`, PROFILE);
  cleanups.push(() => local.store.close());
  const localSession = local.service.authenticate({ wats: "hello", profile: PROFILE });
  for (let i = 0; i < SEED_POSTS; i++) {
    await local.service.post(localSession, {
      kind: "ask",
      title: `seed ${i}`,
      text: `a seed post the feed calls read back (${i})`,
    });
  }
  const [realClientT, realServerT] = InMemoryTransport.createLinkedPair();
  await createMcpServer(local.service, localSession).connect(realServerT);
  const inmemReal = new Client({ name: "bench-inmem-real", version: "1" });
  await inmemReal.connect(realClientT);
  cleanups.push(() => inmemReal.close());

  // The echo line is a real `tools/call status` request line.
  const echoLine = enc.encode(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1000,
      method: "tools/call",
      params: { name: "status", arguments: {} },
    }) + "\n",
  );
  const sizes: Record<string, { request: number; response: number }> = {};
  for (const tool of ["status", "feed"]) {
    await rawDirect.callTool(tool, tool === "feed" ? FEED : {});
    sizes[tool] = rawDirect.lastSizes;
  }
  await rawDirect.callTool("ask", { title: "size probe", text: "a probe of the ask line sizes" });
  sizes.ask = rawDirect.lastSizes;

  let asks = 0;
  const askArgs = (via: string) => ({
    title: `bench ask ${via} ${++asks}`,
    text: `round-trip bench question number ${asks}, posted ${via}`,
  });

  const paths: Array<[string, () => Promise<unknown>]> = [
    ["echo.xproc", () => echoOnce(xprocEcho, echoLine)],
    ["echo.inproc", () => echoOnce(inprocEcho, echoLine)],
    ["echo.pump", () => echoOnce(pumpEcho, echoLine)],
    ["direct.status", () => sdkCall(direct.client, "status", {})],
    ["bridge.status", () => sdkCall(bridge, "status", {})],
    ["direct.feed", () => sdkCall(direct.client, "feed", FEED)],
    ["bridge.feed", () => sdkCall(bridge, "feed", FEED)],
    ["direct.ask", () => sdkCall(direct.client, "ask", askArgs("direct"))],
    ["bridge.ask", () => sdkCall(bridge, "ask", askArgs("bridge"))],
    ["http.status", () => sdkCall(http, "status", {})],
    ["http.feed", () => sdkCall(http, "feed", FEED)],
    ["http.ask", () => sdkCall(http, "ask", askArgs("http"))],
    ["raw.direct.status", () => rawDirect.callTool("status", {})],
    ["raw.bridge.status", () => rawBridge.callTool("status", {})],
    ["raw.direct.feed", () => rawDirect.callTool("feed", FEED)],
    ["raw.stubsock.status", () => rawStub.callTool("status", {})],
    ["inmem.stub.status", () => sdkCall(inmemStub, "status", {})],
    ["inmem.real.status", () => sdkCall(inmemReal, "status", {})],
    ["inmem.real.feed", () => sdkCall(inmemReal, "feed", FEED)],
    ["inmem.real.ask", () => sdkCall(inmemReal, "ask", askArgs("inmem"))],
    ["svc.status", () => local.service.status(localSession)],
    ["svc.safetyNotices", () => local.notices()],
    ["svc.feed", () => Promise.resolve(local.service.feed(FEED.since, FEED.limit))],
  ];

  for (const [, fn] of paths) for (let i = 0; i < WARMUP; i++) await fn();
  const samples = new Map<string, number[]>(paths.map(([name]) => [name, []]));
  for (let done = 0; done < calls; done += BLOCK) {
    const n = Math.min(BLOCK, calls - done);
    for (const [name, fn] of paths) {
      const out = samples.get(name)!;
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await fn();
        out.push(performance.now() - t0);
      }
    }
  }

  // ---- CPU per call: each path alone, back to back, read from /proc. Columns: this
  // process, the middle process (pump or bridge) and the serving process.
  const cpuCalls = Math.max(500, Math.floor(calls / 2));
  const daemonPid = node.process.pid;
  const bridgePid = bridgeTransport.pid ?? NaN;
  const cpuPaths: Array<[string, number | null, number]> = [
    ["echo.xproc", null, echoChild.pid],
    ["echo.pump", pumpChild.pid, echoChild.pid],
    ["raw.stubsock.status", null, stubChild.pid],
    ["raw.direct.status", null, daemonPid],
    ["direct.status", null, daemonPid],
    ["raw.bridge.status", rawBridgeChild.pid, daemonPid],
    ["bridge.status", bridgePid, daemonPid],
    ["direct.feed", null, daemonPid],
  ];
  const cpu = new Map<string, { wall: number; client: number; middle: number; server: number }>();
  for (const [name, middle, server] of cpuPaths) {
    const fn = paths.find(([n]) => n === name)![1];
    const c0 = cpuMs("self"), m0 = middle === null ? 0 : cpuMs(middle), s0 = cpuMs(server);
    const t0 = performance.now();
    for (let i = 0; i < cpuCalls; i++) await fn();
    cpu.set(name, {
      wall: (performance.now() - t0) / cpuCalls,
      client: (cpuMs("self") - c0) / cpuCalls,
      middle: middle === null ? 0 : (cpuMs(middle) - m0) / cpuCalls,
      server: (cpuMs(server) - s0) / cpuCalls,
    });
  }

  const expectedStored = SEED_POSTS + 1 + 3 * (WARMUP + calls);
  const storedLines = () =>
    node.stdoutLines.filter((l) => l.includes('"event":"post_stored"')).length;
  // The event lines travel through a pipe: give the last ones a moment to arrive.
  for (let waited = 0; storedLines() < expectedStored && waited < 10_000; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const stored = storedLines();

  // ---- report ----------------------------------------------------------------------
  const s = new Map([...samples].map(([k, v]) => [k, summarize(v)]));
  const get = (k: string) => s.get(k)!;
  const p = (k: string) => get(k).p50;
  const num = (v: number, w = 8) => v.toFixed(3).padStart(w);
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`.padStart(8);

  console.log(
    `MCP round trip: ${calls} calls per path, interleaved in blocks of ${BLOCK} after ${WARMUP} warm-up calls`,
  );
  console.log(
    `load average ${load0.map((l) => l.toFixed(2)).join(" ")} before, ${
      Deno.loadavg().map((l) => l.toFixed(2)).join(" ")
    } after; ${Math.round((performance.now() - started) / 1000)} s`,
  );
  console.log(
    `line bytes (request/response): echo ${echoLine.length}/${echoLine.length}, ` +
      Object.entries(sizes).map(([k, v]) => `${k} ${v.request}/${v.response}`).join(", "),
  );
  console.log(`posts the daemon reported stored: ${stored} (expected ${expectedStored})`);
  console.log("");
  console.log(
    `${"path".padEnd(20)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"mean ms".padStart(8)}`,
  );
  for (const [name] of paths) {
    const v = get(name);
    console.log(`${name.padEnd(20)} ${num(v.p50)} ${num(v.p99)} ${num(v.mean)}`);
  }

  const echo = get("echo.xproc");
  console.log("");
  console.log(`ratios to echo.xproc (the cross-process echo)        p50      p99`);
  for (const tool of ["status", "feed", "ask"]) {
    const d = get(`direct.${tool}`), b = get(`bridge.${tool}`);
    console.log(
      `  ${tool.padEnd(7)} direct/echo                     ${ratio(d.p50, echo.p50)} ${
        ratio(d.p99, echo.p99)
      }`,
    );
    console.log(
      `  ${tool.padEnd(7)} bridge/echo                     ${ratio(b.p50, echo.p50)} ${
        ratio(b.p99, echo.p99)
      }`,
    );
    console.log(
      `  ${tool.padEnd(7)} bridge/direct                   ${ratio(b.p50, d.p50)} ${
        ratio(b.p99, d.p99)
      }`,
    );
  }
  console.log(`other baselines, p50 of bridge.status over:`);
  console.log(
    `  echo.inproc (same process, no hop)                 ${
      ratio(p("bridge.status"), p("echo.inproc"))
    }`,
  );
  console.log(
    `  echo.pump (the bridge's topology, no MCP)          ${
      ratio(p("bridge.status"), p("echo.pump"))
    }`,
  );

  console.log("");
  for (const tool of ["status", "feed"]) {
    const r = p(`bridge.${tool}`) / echo.p50;
    console.log(
      `goal "bridge <= 3x the echo" (p50, echo.xproc), ${tool}: ${r.toFixed(2)}x, ${
        r <= 3 ? "met" : "NOT met"
      }`,
    );
  }

  console.log("");
  for (const tool of ["status", "feed", "ask"]) {
    const r = p(`http.${tool}`) / p(`bridge.${tool}`);
    console.log(
      `goal "http <= 1.5x the socket through wats mcp" (p50, http/bridge), ${tool}: ${
        r.toFixed(2)
      }x, ${r <= 1.5 ? "met" : "NOT met"} (http/direct ${
        (p(`http.${tool}`) / p(`direct.${tool}`)).toFixed(2)
      }x)`,
    );
  }

  console.log("");
  console.log("where the time of bridge.status goes (differences of p50s, ms):");
  const rows: Array<[string, number]> = [
    ["one cross-process hop, bare (echo.xproc)", p("echo.xproc")],
    [
      "daemon transport + SDK, stub service (raw.stubsock - echo.xproc)",
      p("raw.stubsock.status") - p("echo.xproc"),
    ],
    ["  of which SDK client+server with no I/O (inmem.stub)", p("inmem.stub.status")],
    [
      "status handler (inmem.real.status - inmem.stub.status)",
      p("inmem.real.status") - p("inmem.stub.status"),
    ],
    ["  service.status() alone (svc.status)", p("svc.status")],
    ["  of which safetyNotices() (svc.safetyNotices)", p("svc.safetyNotices")],
    [
      "daemon's Worker etc. (raw.direct - raw.stubsock - handler)",
      p("raw.direct.status") - p("raw.stubsock.status") -
      (p("inmem.real.status") - p("inmem.stub.status")),
    ],
    [
      "client SDK over the socket (direct - raw.direct)",
      p("direct.status") - p("raw.direct.status"),
    ],
    [
      "the bridge's extra hop (raw.bridge - raw.direct)",
      p("raw.bridge.status") - p("raw.direct.status"),
    ],
    ["  a bare pump's extra hop (echo.pump - echo.xproc)", p("echo.pump") - p("echo.xproc")],
    ["client SDK over stdio (bridge - raw.bridge)", p("bridge.status") - p("raw.bridge.status")],
    ["total bridge.status", p("bridge.status")],
  ];
  for (const [label, v] of rows) console.log(`  ${label.padEnd(66)} ${num(v, 7)}`);
  console.log("feed and ask (p50 ms):");
  console.log(
    `  ${"feed handler (inmem.real.feed - inmem.stub.status)".padEnd(66)} ${
      num(p("inmem.real.feed") - p("inmem.stub.status"), 7)
    }`,
  );
  console.log(`  ${"  service.feed() alone (svc.feed)".padEnd(66)} ${num(p("svc.feed"), 7)}`);
  console.log(
    `  ${"ask in process: sign + verify + insert + SDK (inmem.real.ask)".padEnd(66)} ${
      num(p("inmem.real.ask"), 7)
    }`,
  );

  console.log("");
  console.log(`CPU per call, each path alone over ${cpuCalls} calls (ms; 10 ms tick resolution):`);
  console.log(
    `  ${"path".padEnd(20)} ${
      ["wall", "client", "middle", "server"].map((h) => h.padStart(7)).join(" ")
    }   (middle: pump or bridge; server: echo, stub or daemon)`,
  );
  for (const [name, c] of cpu) {
    console.log(
      `  ${name.padEnd(20)} ${
        [c.wall, c.client, c.middle, c.server].map((v) => num(v, 7)).join(" ")
      }`,
    );
  }

  if (stored !== expectedStored) {
    throw new Error(
      `the daemon reported ${stored} stored posts, but ${expectedStored} were posted`,
    );
  }

  // ---- many HTTP sessions at once, each its own token and profile; then the same posts from
  // one session in turn, as the baseline of posts/s.
  const httpSessions = Number(values["http-sessions"]);
  const httpPosts = Number(values["http-posts"]);
  const storedIds = () =>
    node.stdoutLines.filter((l) => l.includes('"event":"post_stored"'))
      .map((l) => JSON.parse(l).id as string);
  const before = storedIds().length;
  // Made one after another: `wats mcp token create` is one writer at a time.
  const tokens: string[] = [];
  for (let i = 0; i < httpSessions; i++) {
    const profile = `http${String(i).padStart(3, "0")}`;
    tokens.push((await createToken(tokensFile, { profile })).token);
  }
  const clients: Client[] = await Promise.all(tokens.map((t) => httpClient(httpUrl, t)));
  cleanups.push(() => Promise.all(clients.map((c) => c.close())));
  const acked = new Map<string, number>();
  const errors: string[] = [];
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(clients.map(async (c, s) => {
    for (let i = 0; i < httpPosts; i++) {
      const start = performance.now();
      try {
        const r = await c.callTool({
          name: "ask",
          arguments: { title: `http session ${s} post ${i}`, text: `concurrent http ${s}/${i}` },
        });
        latencies.push(performance.now() - start);
        const text = (r.content as Array<{ text?: string }>).map((x) => x.text ?? "").join("");
        const id = text.match(/\b([0-9a-f]{64})\b/)?.[1];
        if (r.isError || id === undefined) errors.push(text.slice(0, 160));
        else acked.set(id, (acked.get(id) ?? 0) + 1);
      } catch (err) {
        errors.push(err instanceof Error ? err.message : String(err));
      }
    }
  }));
  const concurrentS = (performance.now() - t0) / 1000;
  const want = httpSessions * httpPosts;
  for (let waited = 0; storedIds().length < before + acked.size && waited < 20_000; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const storedNow = storedIds().slice(before);
  const storedCount = new Map<string, number>();
  for (const id of storedNow) storedCount.set(id, (storedCount.get(id) ?? 0) + 1);
  const storedOnce = [...acked.keys()].filter((id) => storedCount.get(id) === 1).length;
  const twice = [...acked.values()].filter((n) => n > 1).length +
    [...storedCount.values()].filter((n) => n > 1).length;
  // The feed, read by cursor through one HTTP session, must hold every acknowledged post.
  const inFeed = new Set<string>();
  let since = 0;
  for (;;) {
    const r = await http.callTool({ name: "feed", arguments: { since, limit: 200 } });
    const text = (r.content as Array<{ text?: string }>).map((x) => x.text ?? "").join("");
    const page = [...text.matchAll(/^----- post ([0-9a-f]{64}) ·/gm)].map((m) => m[1]!);
    if (page.length === 0) break;
    for (const id of page) inFeed.add(id);
    since = Number(text.match(/Next cursor: (\d+)/)?.[1] ?? NaN);
  }
  const missingInFeed = [...acked.keys()].filter((id) => !inFeed.has(id)).length;
  // Baseline: the same number of posts from one HTTP session, one after another.
  const t1 = performance.now();
  for (let i = 0; i < want; i++) {
    await sdkCall(http, "ask", { title: `http sequential ${i}`, text: `sequential http ${i}` });
  }
  const sequentialS = (performance.now() - t1) / 1000;
  const lat = summarize(latencies);
  console.log("");
  console.log(
    `MCP over HTTP, ${httpSessions} sessions x ${httpPosts} asks at once (each its own token):`,
  );
  console.log(
    `  acknowledged ${acked.size}/${want}, errors ${errors.length}, stored exactly once ` +
      `${storedOnce}/${acked.size}, stored or acknowledged twice ${twice}, missing in the feed ` +
      `${missingInFeed}`,
  );
  console.log(
    `  ${(want / concurrentS).toFixed(0)} posts/s at once vs ${
      (want / sequentialS).toFixed(0)
    } posts/s from one session in turn (${
      ((want / concurrentS) / (want / sequentialS)).toFixed(2)
    }x); ` +
      `latency p50 ${lat.p50.toFixed(1)} ms, p99 ${lat.p99.toFixed(1)} ms`,
  );
  if (errors.length > 0) console.log(`  first errors: ${errors.slice(0, 3).join(" | ")}`);
  const allOnce = acked.size === want && storedOnce === want && twice === 0 &&
    missingInFeed === 0 && errors.length === 0;
  console.log(`goal "every acknowledged post stored once": ${allOnce ? "met" : "NOT met"}`);
  if (!allOnce) throw new Error("some HTTP posts were lost, doubled or refused (see above)");
} catch (err) {
  // Said before the cleanup, whose own failures could hide it.
  console.error(`error: the bench failed: ${err instanceof Error ? err.stack : String(err)}`);
  console.error(
    `the daemon's stderr, last lines:\n${daemonStderr().split("\n").slice(-40).join("\n")}`,
  );
  throw err;
} finally {
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch {
      // Best effort: the rest must still be cleaned up.
    }
  }
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
}
