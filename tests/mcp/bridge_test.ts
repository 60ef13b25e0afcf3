/**
 * `wats mcp`, the stdio bridge: its argument parser, its behaviour with an
 * injected world (no node, a node that will not start, a refusal, a node that
 * goes away), and the real program as a subprocess between the SDK's stdio
 * client and a socket server running in this test process.
 *
 * @module
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import { type BridgeConn, type BridgeIO, parseMcpArgs, runBridge } from "../../src/cli/mcp.ts";
import { UsageError } from "../../src/errors.ts";
import { serveMcpSocket } from "../../src/mcp/socket_server.ts";
import { LAUNCHER_FLAGS } from "../../src/cli/permissions.ts";
import { FakeService } from "./fake_service.ts";

const REPO = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const enc = new TextEncoder();
const dec = new TextDecoder();

// ---- parseMcpArgs ------------------------------------------------------------

Deno.test("parseMcpArgs reads --profile in both spellings and --help", () => {
  assert.deepEqual(parseMcpArgs([]), { help: false });
  assert.deepEqual(parseMcpArgs(["--profile", "alice"]), { help: false, profile: "alice" });
  assert.deepEqual(parseMcpArgs(["--profile=bob"]), { help: false, profile: "bob" });
  assert.deepEqual(parseMcpArgs(["-h"]), { help: true });
  assert.deepEqual(parseMcpArgs(["--help", "--profile", "x"]), { help: true, profile: "x" });
});

Deno.test("parseMcpArgs refuses what it does not know, saying where its help is", () => {
  const cases: [string[], RegExp][] = [
    [["--profile"], /^--profile needs a value \(see wats mcp --help\)$/],
    [["--profile", "--help"], /^--profile needs a value \(see wats mcp --help\)$/],
    [["--profile", "a", "--profile", "b"], /given twice/],
    [["--agent", "claude"], /^unknown flag --agent for wats mcp \(see wats mcp --help\)$/],
    [["serve"], /^unexpected argument "serve" for wats mcp \(see wats mcp --help\)$/],
  ];
  for (const [argv, expected] of cases) {
    assert.throws(
      () => parseMcpArgs(argv),
      (e: unknown) => e instanceof UsageError && expected.test(e.message),
    );
  }
});

// ---- runBridge with an injected world ---------------------------------------

const absent = () => Promise.reject(new Deno.errors.NotFound("no such file"));

/** A fake world with a fake clock: sleeping advances it at once. */
function fakeIO(over: Partial<BridgeIO> & { stdinText?: string } = {}) {
  let clock = 0;
  const stderr: string[] = [];
  const stdout: Uint8Array[] = [];
  let starts = 0;
  let groupEnds = 0;
  const io: BridgeIO = {
    connect: absent,
    startNode: () => {
      starts++;
      return { exited: new Promise<number>(() => {}) };
    },
    // A plain sleep advances the clock at once; a deadline (a sleep with a
    // signal) never passes, so the racing read always wins.
    sleep: (ms, signal) => {
      if (signal) return new Promise((r) => signal.addEventListener("abort", () => r()));
      clock += ms;
      return Promise.resolve();
    },
    now: () => clock,
    stdin: new Blob([over.stdinText ?? ""]).stream(),
    stdout: {
      write: (p) => {
        stdout.push(p.slice());
        return Promise.resolve(p.length);
      },
    },
    stderr: (line) => stderr.push(line),
    endOwnGroup: () => {
      groupEnds++;
      return Promise.resolve();
    },
    ...over,
  };
  return {
    io,
    stderr,
    stdout,
    starts: () => starts,
    clock: () => clock,
    groupEnds: () => groupEnds,
  };
}

/**
 * A scripted node connection: answers the hello with `reply`, then sends
 * `after`. With `hangUp` it then ends at once (a node going away); otherwise it
 * ends when the bridge half-closes, as the real node does.
 */
function scriptedConn(reply: string | null, after = "", hangUp = false) {
  const written: string[] = [];
  let out = enc.encode((reply === null ? "" : reply + "\n") + after);
  let ended!: () => void;
  const end = new Promise<null>((r) => ended = () => r(null));
  const conn: BridgeConn = {
    read(p) {
      if (out.length === 0) return hangUp ? Promise.resolve(null) : end;
      const n = Math.min(p.length, out.length);
      p.set(out.subarray(0, n));
      out = out.slice(n);
      return Promise.resolve(n);
    },
    write(p) {
      written.push(dec.decode(p));
      return Promise.resolve(p.length);
    },
    closeWrite: () => Promise.resolve(ended()),
    close: () => ended(),
  };
  return { conn, written };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

const OPTS = { socket: "/d/mcp.sock", dataDir: "/d", profile: "alice" };

Deno.test("with no node, a started node that stops makes the bridge exit 1 and say what to do", async () => {
  const w = fakeIO({ startNode: () => ({ exited: Promise.resolve(3) }) });
  assert.equal(await runBridge(OPTS, w.io), 1);
  assert.equal(w.stderr.length, 1);
  assert.match(
    w.stderr[0]!,
    /no node runs on \/d\/mcp\.sock, and the node started in the background stopped \(exit code 3\)/,
  );
  assert.match(w.stderr[0]!, /Start it yourself with `wats --data-dir \/d`/);
  assert.deepEqual(w.stdout, [], "stdout must carry MCP bytes only");
});

Deno.test("a node that never opens its socket makes the bridge give up after the start timeout", async () => {
  const w = fakeIO();
  assert.equal(await runBridge(OPTS, w.io), 1);
  assert.equal(w.starts(), 1);
  assert.ok(w.clock() >= 15_000 && w.clock() < 16_000, `gave up at ${w.clock()} ms`);
  assert.match(w.stderr[0]!, /did not open \/d\/mcp\.sock within 15 s\. Start it yourself/);
});

Deno.test("the bridge connects once the node it started opens the socket", async () => {
  let tries = 0;
  const { conn, written } = scriptedConn(
    '{"wats":"ready","profile":"alice"}',
    '{"jsonrpc":"2.0"}\n',
  );
  const w = fakeIO({
    connect: () =>
      ++tries < 4
        ? Promise.reject(new Deno.errors.ConnectionRefused("refused"))
        : Promise.resolve(conn),
    stdinText: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
  });
  assert.equal(await runBridge({ ...OPTS, token: "tok" }, w.io), 0);
  assert.equal(w.starts(), 1);
  assert.deepEqual(JSON.parse(written[0]!), { wats: "hello", profile: "alice", token: "tok" });
  assert.equal(written[1], '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  assert.equal(dec.decode(w.stdout[0]), '{"jsonrpc":"2.0"}\n', "the ready line leaked to stdout");
  assert.deepEqual(w.stderr, []);
});

Deno.test("a refused hello is printed on stderr and exits 1", async () => {
  const { conn } = scriptedConn('{"wats":"error","message":"unknown profile \\"zed\\""}');
  const w = fakeIO({ connect: () => Promise.resolve(conn) });
  assert.equal(await runBridge(OPTS, w.io), 1);
  assert.deepEqual(w.stderr, ['wats mcp: the node refused the session: unknown profile "zed"']);
  assert.equal(w.starts(), 0);
});

Deno.test("a node that goes away mid-session makes the bridge exit 1 and say so", async () => {
  const { conn } = scriptedConn('{"wats":"ready","profile":"alice"}', "", true);
  const w = fakeIO({
    connect: () => Promise.resolve(conn),
    stdin: new ReadableStream<Uint8Array>({ start() {} }), // the host keeps stdin open
  });
  assert.equal(await runBridge(OPTS, w.io), 1);
  assert.match(w.stderr[0]!, /the node closed the connection on \/d\/mcp\.sock/);
  assert.equal(w.groupEnds(), 0, "a person's session never kills its host");
});

Deno.test("a runner session whose node goes away ends its run's process group", async () => {
  const { conn } = scriptedConn('{"wats":"ready","profile":"helper"}', "", true);
  const w = fakeIO({
    connect: () => Promise.resolve(conn),
    stdin: new ReadableStream<Uint8Array>({ start() {} }),
  });
  assert.equal(await runBridge({ ...OPTS, token: "t".repeat(64) }, w.io), 1);
  assert.equal(w.groupEnds(), 1);
  assert.match(w.stderr[0]!, /the node went away during this run; ending the run's processes/);
});

Deno.test("a runner session whose host ends normally leaves its group alone", async () => {
  const { conn } = scriptedConn('{"wats":"ready","profile":"helper"}');
  const w = fakeIO({ connect: () => Promise.resolve(conn) });
  assert.equal(await runBridge({ ...OPTS, token: "t".repeat(64) }, w.io), 0);
  assert.equal(w.groupEnds(), 0);
});

/** A node connection a test drives: what the bridge wrote, and lines to send back. */
function drivenConn() {
  const written: string[] = [];
  const queue: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  const conn: BridgeConn = {
    async read(p) {
      while (queue.length === 0 && !closed) await new Promise<void>((r) => wake = r);
      if (queue.length === 0) return null;
      const head = queue[0]!;
      const n = Math.min(p.length, head.length);
      p.set(head.subarray(0, n));
      if (n === head.length) queue.shift();
      else queue[0] = head.slice(n);
      return n;
    },
    write(p) {
      if (closed) return Promise.reject(new Deno.errors.BrokenPipe("closed"));
      written.push(dec.decode(p));
      return Promise.resolve(p.length);
    },
    // As the real node does, it ends the session when the bridge half-closes.
    closeWrite: () => Promise.resolve(conn.close()),
    close: () => {
      closed = true;
      wake?.();
    },
  };
  return {
    conn,
    written,
    send(line: string) {
      queue.push(enc.encode(line + "\n"));
      wake?.();
    },
    /** The node goes away. */
    hangUp: () => conn.close(),
  };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; !check(); i++) {
    if (i > 2_000) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 1));
  }
}

Deno.test("when the node goes away mid-session and another takes its place, the bridge replays the handshake there and carries on", async () => {
  const init = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}';
  const initialized = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
  const list = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
  const old = drivenConn();
  const next = drivenConn();
  const conns = [old, next];
  let connects = 0;
  let host!: ReadableStreamDefaultController<Uint8Array>;
  const w = fakeIO({
    // The first connect finds the old node; then none while it is replaced.
    connect: () => {
      connects++;
      if (connects === 1) return Promise.resolve(old.conn);
      if (connects < 4) return absent();
      return Promise.resolve(conns[1]!.conn);
    },
    stdin: new ReadableStream<Uint8Array>({ start: (c) => void (host = c) }),
  });
  old.send('{"wats":"ready","profile":"alice"}');
  next.send('{"wats":"ready","profile":"alice"}');
  const bridge = runBridge(OPTS, w.io);
  host.enqueue(enc.encode(init + "\n"));
  await until(() => old.written.some((l) => l.includes('"initialize"')));
  old.send('{"jsonrpc":"2.0","id":0,"result":{"from":"old"}}');
  host.enqueue(enc.encode(initialized + "\n"));
  await until(() => old.written.some((l) => l.includes("initialized")));
  old.hangUp();
  // The new node gets the hello, then the replayed initialize; it answers.
  await until(() => next.written.some((l) => l.includes('"initialize"')));
  next.send('{"jsonrpc":"2.0","id":0,"result":{"from":"new"}}');
  await until(() => next.written.some((l) => l.includes("initialized")));
  host.enqueue(enc.encode(list + "\n"));
  await until(() => next.written.some((l) => l.includes("tools/list")));
  next.send('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}');
  await until(() => dec.decode(concat(w.stdout)).includes('"id":1'));
  host.close();
  assert.equal(await bridge, 0);

  const toHost = dec.decode(concat(w.stdout));
  assert.equal(toHost.match(/"id":0/g)?.length, 1, "the host saw one answer to initialize");
  assert.ok(toHost.includes('"from":"old"') && !toHost.includes('"from":"new"'));
  assert.ok(toHost.includes('"tools":[]'));
  assert.deepEqual(next.written.join("").trimEnd().split("\n"), [
    '{"wats":"hello","profile":"alice"}',
    init,
    initialized,
    list,
  ]);
  assert.match(w.stderr.join("\n"), /went away; waiting up to 15 s/);
  assert.match(w.stderr.join("\n"), /moved to the new node on \/d\/mcp\.sock/);
});

Deno.test("when the node goes away mid-session and none takes its place, the bridge exits 1 and says so", async () => {
  const old = drivenConn();
  let connects = 0;
  let host!: ReadableStreamDefaultController<Uint8Array>;
  const w = fakeIO({
    connect: () => connects++ === 0 ? Promise.resolve(old.conn) : absent(),
    stdin: new ReadableStream<Uint8Array>({ start: (c) => void (host = c) }),
  });
  old.send('{"wats":"ready","profile":"alice"}');
  const bridge = runBridge(OPTS, w.io);
  host.enqueue(enc.encode('{"jsonrpc":"2.0","id":0,"method":"initialize"}\n'));
  host.enqueue(enc.encode('{"jsonrpc":"2.0","method":"notifications/initialized"}\n'));
  await until(() => old.written.some((l) => l.includes("initialized")));
  old.hangUp();
  assert.equal(await bridge, 1);
  assert.ok(w.clock() >= 15_000, "it waited the whole start-up time");
  assert.match(w.stderr.at(-1)!, /no node took the place of the one on \/d\/mcp\.sock/);
  assert.equal(w.starts(), 0, "no node is started while waiting for a replacement");
});

Deno.test("a runner session (with a run token) ends with its node: it waits for no other", async () => {
  const old = drivenConn();
  let connects = 0;
  let host!: ReadableStreamDefaultController<Uint8Array>;
  const w = fakeIO({
    connect: () => connects++ === 0 ? Promise.resolve(old.conn) : absent(),
    stdin: new ReadableStream<Uint8Array>({ start: (c) => void (host = c) }),
  });
  old.send('{"wats":"ready","profile":"alice-agent"}');
  const bridge = runBridge({ ...OPTS, token: "run-token" }, w.io);
  host.enqueue(enc.encode('{"jsonrpc":"2.0","id":0,"method":"initialize"}\n'));
  host.enqueue(enc.encode('{"jsonrpc":"2.0","method":"notifications/initialized"}\n'));
  await until(() => old.written.some((l) => l.includes("initialized")));
  old.hangUp();
  assert.equal(await bridge, 1);
  assert.equal(connects, 1, "no attempt to reach another node");
  assert.equal(w.clock(), 0, "no wait");
  assert.match(w.stderr.at(-1)!, /the node went away during this run; ending the run's processes/);
  assert.equal(w.groupEnds(), 1, "the run's processes are ended instead");
});

Deno.test("a socket error other than absence is reported, and no node is started", async () => {
  const w = fakeIO({ connect: () => Promise.reject(new Deno.errors.PermissionDenied("denied")) });
  assert.equal(await runBridge(OPTS, w.io), 1);
  assert.equal(w.starts(), 0);
  assert.match(w.stderr[0]!, /cannot connect to \/d\/mcp\.sock: denied/);
});

// ---- the real program as a subprocess -----------------------------------------

function bridgeArgs(dataDir: string, ...extra: string[]): string[] {
  return [
    "run",
    "--quiet",
    ...LAUNCHER_FLAGS,
    "--config",
    `${REPO}/deno.json`,
    `${REPO}/main.ts`,
    "--data-dir",
    dataDir,
    "mcp",
    ...extra,
  ];
}

async function withServer(
  svc: FakeService,
  fn: (dir: string, server: Awaited<ReturnType<typeof serveMcpSocket>>) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "wats-bridge-" });
  const server = await serveMcpSocket({ path: `${dir}/mcp.sock`, service: svc });
  try {
    await fn(dir, server);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

function textOf(r: unknown): string {
  return (r as { content: { text: string }[] }).content.map((c) => c.text).join("\n");
}

Deno.test("an SDK stdio client uses the tools through the real wats mcp", async () => {
  const svc = new FakeService();
  await withServer(svc, async (dir, server) => {
    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: bridgeArgs(dir, "--profile", "alice"),
      env: getDefaultEnvironment(),
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Uint8Array) => stderr += dec.decode(d));
    const client = new Client({ name: "bridge-test", version: "0.0.0" });
    await client.connect(transport);
    const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
    assert.ok(tools.includes("post") && tools.includes("approve"));
    assert.match(
      textOf(await client.callTool({ name: "status", arguments: {} })),
      /^profile: alice /m,
    );
    const posted = textOf(
      await client.callTool({
        name: "ask",
        arguments: { title: "Through the bridge", text: "hello" },
      }),
    );
    assert.match(posted, /^Posted ask [0-9a-f]{64}\./);
    const feed = textOf(await client.callTool({ name: "feed", arguments: {} }));
    assert.ok(feed.includes("title: Through the bridge"));
    assert.ok(feed.includes("(alice, this node)"));
    assert.equal(server.sessions(), 1);
    await client.close();
    for (let i = 0; i < 500 && server.sessions() > 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(server.sessions(), 0, "the bridge left its session open");
    assert.equal(stderr, "");
  });
});

Deno.test("a runner token from WATS_RUN_TOKEN makes a runner session through the bridge", async () => {
  const svc = new FakeService({ tokens: { "tok-run": "run-42" } });
  await withServer(svc, async (dir) => {
    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: bridgeArgs(dir, "--profile", "alice-agent"),
      env: { ...getDefaultEnvironment(), WATS_RUN_TOKEN: "tok-run" },
      stderr: "pipe",
    });
    const client = new Client({ name: "bridge-test", version: "0.0.0" });
    await client.connect(transport);
    const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
    assert.ok(tools.includes("post"));
    assert.ok(
      !tools.includes("approve") && !tools.includes("pending") && !tools.includes("reject"),
    );
    await client.close();
  });
});

Deno.test("wats mcp exits 0 when stdin closes, and its stdout holds only JSON-RPC", async () => {
  await withServer(new FakeService(), async (dir) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: bridgeArgs(dir, "--profile", "bob"),
      env: getDefaultEnvironment(),
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      },
    };
    await writer.write(enc.encode(JSON.stringify(init) + "\n"));
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let got = "";
    while (!got.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) break;
      got += value;
    }
    await writer.close();
    while (true) {
      const { value, done } = await lines.read();
      if (done) break;
      got += value;
    }
    const status = await child.status;
    const stderr = dec.decode((await new Response(child.stderr).arrayBuffer()) as ArrayBuffer);
    assert.equal(status.code, 0, stderr);
    const out = got.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
    assert.equal(out.length, 1);
    assert.equal(out[0].id, 1);
    assert.equal(out[0].result.serverInfo.name, "wats");
    assert.equal(stderr, "");
  });
});

Deno.test("wats mcp with a refused profile exits 1 and says why on stderr", async () => {
  await withServer(new FakeService(), async (dir) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: bridgeArgs(dir, "--profile", "mallory"),
      env: getDefaultEnvironment(),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 1);
    assert.equal(dec.decode(out.stdout), "");
    assert.match(dec.decode(out.stderr), /the node refused the session: unknown profile "mallory"/);
  });
});

Deno.test("wats mcp --help prints usage and exits 0", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-bridge-" });
  const out = await new Deno.Command(Deno.execPath(), {
    args: bridgeArgs(dir, "--help"),
    env: getDefaultEnvironment(),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  await Deno.remove(dir, { recursive: true });
  assert.equal(out.code, 0);
  assert.match(dec.decode(out.stdout), /^Usage: wats mcp \[--profile P\]/);
});

Deno.test("with no node and none that can start, wats mcp exits 1 with what to do, without hanging", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-bridge-" });
  // A directory where the socket should be: nothing answers there, and a node
  // started in the background cannot listen there either.
  await Deno.mkdir(`${dir}/mcp.sock`);
  await Deno.writeTextFile(`${dir}/mcp.sock/keep`, "");
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: bridgeArgs(dir, "--profile", "alice"),
      env: getDefaultEnvironment(),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = dec.decode(out.stderr);
    assert.equal(out.code, 1, stderr);
    assert.equal(dec.decode(out.stdout), "");
    assert.match(
      stderr,
      /wats mcp: no node runs on .*mcp\.sock, and the node started in the background stopped/,
    );
    assert.match(stderr, /Start it yourself with `wats --data-dir /);
  } finally {
    killLeftovers(dir);
    await Deno.remove(dir, { recursive: true });
  }
});

/** Stops any process this test started whose command line names `dir` (a stray node). */
function killLeftovers(dir: string): void {
  if (Deno.build.os !== "linux") return;
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      if (cmd.includes(dir)) Deno.kill(Number(entry.name), "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}
