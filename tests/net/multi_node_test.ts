/**
 * Several real daemons (`wats node` subprocesses with their own data dirs) on
 * loopback: posts made through MCP on one machine reach the other, directly through
 * a node's relay endpoint and through an independent relay, including after one
 * of them was down.
 *
 * @module
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  denoDir,
  type RunningWats,
  runWats,
  startWats,
  tempDataDir,
  watsCommand,
} from "../support/cli.ts";
import { RECONNECT_MAX_MS } from "../../src/net/relay_link.ts";
import { waitFor } from "./net_support.ts";
import { type NodeRelay, RELAY_HELPER, startNodeRelay } from "./node_relay.ts";
import { recordingProxy } from "./recording_proxy.ts";
import { decode } from "nostr-tools/nip19";
import { NOSTR_KINDS } from "../../src/posts/kinds.ts";
import { freePort } from "../support/free_port.ts";

/** A daemon under test and a way to post through MCP on it. */
interface TestNode {
  dataDir: string;
  proc: RunningWats;
  /** Calls an MCP posting tool through `wats mcp` and returns the new post's id. */
  post(tool: string, args: Record<string, unknown>): Promise<string>;
  /** Waits for the `post_stored` line of `id` and returns it parsed. */
  stored(id: string): Promise<Record<string, unknown>>;
  /** How many (event, relay) pairs wait in its outbox, read from its store. */
  outbox(): number;
  /** The saved catch-up cursor of `relay`, read from its store. */
  cursor(relay: string): number | undefined;
  stop(): Promise<void>;
}

/**
 * A daemon lives as long as its test, which a loaded machine makes long: its
 * safety kill (a leaked process) must not come first, as the default 120 s can.
 */
const DAEMON_SAFETY_MS = 30 * 60_000;

async function startNode(
  args: string[],
  dataDir = tempDataDir(),
  env: Record<string, string> = {},
): Promise<TestNode> {
  const proc = startWats(["node", ...args], { dataDir, env, timeoutMs: DAEMON_SAFETY_MS });
  await proc.waitForLine((l) => l.includes('"event":"started"'));
  const [cmd, ...rest] = watsCommand();
  const transport = new StdioClientTransport({
    command: cmd,
    args: [...rest, "mcp"],
    env: {
      ...getDefaultEnvironment(),
      HOME: proc.home,
      DENO_DIR: denoDir(),
      WATS_DATA_DIR: dataDir,
      NO_COLOR: "1",
    },
    stderr: "pipe",
  });
  transport.stderr?.on("data", () => {});
  const client = new Client({ name: "net-test", version: "0.0.0" });
  await client.connect(transport);
  const storeDb = `${dataDir}/store.db`;
  const read = <T>(fn: (db: DatabaseSync) => T): T => {
    const db = new DatabaseSync(storeDb, { readOnly: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  return {
    dataDir,
    proc,
    async post(tool, toolArgs) {
      // `ask` is its own tool; every reply kind goes through `post` with its kind (issue 30).
      const r = tool === "ask"
        ? await client.callTool({ name: "ask", arguments: toolArgs })
        : await client.callTool({ name: "post", arguments: { kind: tool, ...toolArgs } });
      const text = (r.content as { type: string; text: string }[])[0]!.text;
      const m = /^Posted \w+ ([0-9a-f]{64})\./.exec(text);
      assert.ok(m, `the ${tool} tool answered: ${text}`);
      return m[1]!;
    },
    async stored(id) {
      const match = (l: string) => l.includes('"event":"post_stored"') && l.includes(id);
      // Lines read while waiting for another post count too: arrival order is free.
      const line = proc.stdoutLines.find(match) ?? await proc.waitForLine(match);
      return JSON.parse(line);
    },
    outbox: () =>
      read((db) => (db.prepare("SELECT count(*) AS n FROM outbox").get() as { n: number }).n),
    cursor: (relay) =>
      read((db) =>
        (db.prepare("SELECT since FROM cursors WHERE relay = ?").get(relay) as
          | { since: number }
          | undefined)?.since
      ),
    async stop() {
      await client.close();
      const r = await proc.stop();
      assert.equal(r.code, 0, `wats node exited ${r.code}:\n${r.stderr}`);
    },
  };
}

/** What a daemon logged about its relays (for a failed wait's message). */
function relayLog(n: TestNode): string {
  return n.proc.stderr().split("\n").filter((l) => l.includes("relay")).join("\n");
}

Deno.test("a post on A reaches B through A's relay endpoint, and B's answer reaches A", async () => {
  const port = freePort();
  const url = `ws://127.0.0.1:${port}`;
  const nodes: TestNode[] = [];
  try {
    const a = await startNode(["--listen", `127.0.0.1:${port}`]);
    nodes.push(a);
    const b = await startNode(["--infra", url]);
    nodes.push(b);
    const ask = await a.post("ask", { title: "Direct peering", text: "Can B see this?" });
    const onB = await b.stored(ask);
    assert.equal(onB.source, url);
    assert.equal(onB.kind, "ask");
    const answer = await b.post("answer", { parent: ask, text: "Yes, B sees it." });
    const onA = await a.stored(answer);
    assert.match(String(onA.source), /^listen:127\.0\.0\.1:\d+$/);
    assert.equal(onA.kind, "answer");
    await waitFor(() => b.outbox() === 0, "B's outbox to empty");
    // `wats status` tells each side how it is connected.
    const statusOf = async (n: TestNode) =>
      (await runWats(["--data-dir", n.dataDir, "status"], { home: n.proc.home })).stdout;
    assert.match(await statusOf(b), new RegExp(`relay: ${url} connected`));
    assert.match(await statusOf(a), new RegExp(`relay endpoint: 127\\.0\\.0\\.1:${port}`));
    // Both checked the other's posts in their verify workers, started from the daemon.
    for (const n of nodes) assert.doesNotMatch(n.proc.stderr(), /verify worker|cannot start/);
  } finally {
    for (const n of nodes.reverse()) await n.stop();
  }
});

Deno.test({
  name: "two daemons talk through an independent relay; one down catches up from its cursor",
  ignore: RELAY_HELPER === null,
  async fn() {
    const relayDir = Deno.makeTempDirSync({ prefix: "wats-relay-" });
    let relay: NodeRelay | undefined = await startNodeRelay({ db: `${relayDir}/relay.db` });
    const url = relay.url;
    const port = relay.port;
    const nodes: TestNode[] = [];
    try {
      const a = await startNode(["--infra", url]);
      nodes.push(a);
      let b = await startNode(["--infra", url]);
      nodes.push(b);

      // (b) Both ways through the relay.
      const ask = await a.post("ask", { title: "Through a relay", text: "Hello from A" });
      assert.equal((await b.stored(ask)).source, url);
      const answer = await b.post("answer", { parent: ask, text: "Hello from B" });
      assert.equal((await a.stored(answer)).source, url);
      await waitFor(() => a.outbox() === 0 && b.outbox() === 0, "both outboxes to empty");

      // (c) B goes down, having saved where it was.
      await waitFor(() => b.cursor(url) !== undefined, "B's cursor");
      const bDir = b.dataDir;
      await b.stop();
      nodes.pop();

      // The relay goes down too: A's posts wait in its outbox…
      await relay.stop();
      relay = undefined;
      const missed1 = await a.post("ask", { title: "While B was away", text: "first" });
      // B subscribes to what it follows (docs/network.md): every ask (agent.open_asks
      // is on), and the thread it answered in, not to every note.
      const missed2 = await a.post("note", { parent: ask, text: "second, a note in B's thread" });
      assert.equal(a.outbox(), 2);
      // …until the relay is back and acknowledges them.
      relay = await startNodeRelay({ port, db: `${relayDir}/relay.db` });
      // A tries again on its own backoff, which grew while the relay was away, and the
      // relay is away longer on a loaded machine: A may wait up to RECONNECT_MAX_MS
      // before it even tries, so the wait covers that (measured: a relay away 35 s was
      // tried again 14-15 s after it was back).
      await waitFor(
        () => a.outbox() === 0,
        () => `A's outbox to empty after the relay is back; A's relay log:\n${relayLog(a)}`,
        RECONNECT_MAX_MS + 60_000,
      );

      // B comes back and catches up with what it missed.
      b = await startNode(["--infra", url], bDir);
      nodes.push(b);
      for (const id of [missed1, missed2]) assert.equal((await b.stored(id)).source, url);
    } finally {
      for (const n of nodes.reverse()) await n.stop();
      await relay?.stop();
      Deno.removeSync(relayDir, { recursive: true });
    }
  },
});

Deno.test("a daemon asks its relay for what it follows: its profiles and caps, not every post; an ask for caps it lacks never reaches it", async () => {
  const port = freePort();
  const nodes: TestNode[] = [];
  const proxy = recordingProxy(`ws://127.0.0.1:${port}`);
  try {
    const a = await startNode(["--listen", `127.0.0.1:${port}`]);
    nodes.push(a);
    const b = await startNode(["--infra", proxy.url], tempDataDir(), {
      WATS_AGENT_OPEN_ASKS: "false",
      WATS_AGENT_CAPS: "deno",
    });
    nodes.push(b);
    const started = JSON.parse(b.proc.stdoutLines.find((l) => l.includes('"event":"started"'))!);
    const keys = Object.values(started.profiles as Record<string, string>)
      .map((npub) => decode(npub).data as string);
    await waitFor(() => proxy.reqFilters("wats-live-").length > 0, "B's live REQ");
    const live = proxy.reqFilters("wats-live-");
    assert.deepEqual(
      new Set(live.find((f) => f["#p"])?.["#p"] as string[]),
      new Set(keys),
      "#p: B's person and agent",
    );
    assert.ok(live.some((f) => JSON.stringify(f["#t"]) === '["cap:deno"]'), "#t: B's cap");
    const firehose = (f: Record<string, unknown>) =>
      Object.keys(f).every((k) => ["kinds", "limit", "since", "until"].includes(k)) &&
      JSON.stringify(f.kinds) === JSON.stringify(NOSTR_KINDS);
    assert.ok(
      !proxy.sent.some((m) =>
        m[0] === "REQ" && m.slice(2).some((f) => firehose(f as Record<string, unknown>))
      ),
    );

    // A's endpoint sends B's connection its matches in the order A stored them: once
    // the deno ask is on B, the two before it would be too, had they matched.
    const rust = await a.post("ask", { title: "Rust?", text: "borrowck", caps: ["rust"] });
    const open = await a.post("ask", { title: "Anyone?", text: "an open ask" });
    const deno = await a.post("ask", { title: "Deno?", text: "permissions", caps: ["deno"] });
    assert.equal((await b.stored(deno)).kind, "ask");
    for (const id of [rust, open]) assert.ok(!b.proc.stdoutLines.some((l) => l.includes(id)));
    // B answers: A gets it (B's outbox), and B now follows that thread.
    const answer = await b.post("answer", { parent: deno, text: "use --allow-net" });
    await a.stored(answer);
  } finally {
    for (const n of nodes.reverse()) await n.stop();
    await proxy.close();
  }
});
