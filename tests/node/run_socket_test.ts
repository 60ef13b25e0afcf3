/**
 * A sandboxed run's own socket (src/node/run_socket.ts) serves that run's MCP session under its
 * token and nothing else: every other first line — a hello without the token, with another
 * token, for another profile, every control op, a watch — gets one error line and the
 * connection closes, with nothing done on the node.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ConnTransport, LineReader } from "../../src/mcp/conn_transport.ts";
import { CONTROL_OPS } from "../../src/contracts/session.ts";
import { removeStaleRunSocket, serveRunSocket } from "../../src/node/run_socket.ts";
import { FakeService } from "../mcp/fake_service.ts";

const enc = new TextEncoder();
const TOKEN = "a".repeat(64);
const RUN = { id: "run-7", token: TOKEN };

async function firstAnswer(path: string, line: string): Promise<Record<string, unknown>> {
  const conn = await Deno.connect({ transport: "unix", path });
  try {
    await conn.write(enc.encode(line + "\n"));
    const reader = new LineReader(conn);
    const answer = JSON.parse((await reader.readLine())!);
    // Refused: the node closed the connection after its one line.
    if (answer.wats === "error") assert.equal(await reader.readLine(), null, line);
    return answer;
  } finally {
    try {
      conn.close();
    } catch { /* closed by the node */ }
  }
}

Deno.test("a run's socket refuses every control op, a watch, and every hello but its run's token as the agent", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-run-sock-" });
  const path = `${dir}/run.sock`;
  const service = new FakeService({ tokens: { [TOKEN]: "run-7", ["b".repeat(64)]: "run-6" } });
  // It cannot be given the node's control table: every op speaks for the person
  // (docs/decisions/run_socket.md), so passing one does not compile.
  const handled: string[] = [];
  const control = Object.fromEntries(
    CONTROL_OPS.map((op) => [op, () => (handled.push(op), Promise.resolve("done"))]),
  );
  const server = await serveRunSocket(
    // @ts-expect-error: a run's socket takes no control table.
    { path, service, agentProfile: "alice-agent", control },
    RUN,
  );
  try {
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const refused = [
      '{"wats":"hello"}',
      '{"wats":"hello","profile":"alice"}',
      '{"wats":"hello","profile":"alice-agent"}',
      '{"wats":"hello","profile":"bob","data":true}',
      `{"wats":"hello","token":"${"b".repeat(64)}"}`,
      `{"wats":"hello","token":"${TOKEN.slice(1)}"}`,
      `{"wats":"hello","profile":"alice","token":"${TOKEN}"}`,
      `{"wats":"hello","profile":"bob","token":"${TOKEN}"}`,
      '{"wats":"watch"}',
      ...CONTROL_OPS.map((op) => JSON.stringify({ wats: "control", op, work: "w1", reason: "x" })),
      "not json",
    ];
    for (const line of refused) {
      const answer = await firstAnswer(path, line);
      assert.equal(answer.wats, "error", `${line} got ${JSON.stringify(answer)}`);
    }
    // Nothing was asked of the node but to look the agent up.
    assert.deepEqual(service.calls.filter((c) => c !== "authenticate"), []);
    assert.deepEqual(handled, []);
    assert.equal(service.posts.length, 0);

    // The run's own session works, as the agent, with its tools.
    for (const hello of [`{"wats":"hello","token":"${TOKEN}"}`]) {
      const conn = await Deno.connect({ transport: "unix", path });
      await conn.write(enc.encode(hello + "\n"));
      const reader = new LineReader(conn);
      assert.deepEqual(JSON.parse((await reader.readLine())!), {
        wats: "ready",
        profile: "alice-agent",
      });
      const client = new Client({ name: "t", version: "0" });
      await client.connect(new ConnTransport(conn, reader));
      const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
      assert.ok(tools.includes("ask") && tools.includes("post"), tools.join(","));
      assert.ok(!tools.includes("approve"), tools.join(","));
      await client.close();
    }
    const asAgent = await firstAnswer(
      path,
      `{"wats":"hello","profile":"alice-agent","token":"${TOKEN}"}`,
    );
    assert.equal(asAgent.wats, "ready");
  } finally {
    await server.close();
  }
  // Closed: the file is gone, nobody can connect.
  await assert.rejects(Deno.lstat(path), Deno.errors.NotFound);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a run socket a crashed daemon left is removed at start; anything else there is left alone", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-run-sock-" });
  try {
    const path = `${dir}/run.sock`;
    // A socket file nobody serves, as a killed daemon leaves it (Deno removes its own on close).
    const bound = await new Deno.Command("python3", {
      args: ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", path],
    }).output();
    assert.equal(bound.code, 0, new TextDecoder().decode(bound.stderr));
    assert.ok((await Deno.lstat(path)).isSocket);
    await removeStaleRunSocket(path);
    await assert.rejects(Deno.lstat(path), Deno.errors.NotFound);
    await removeStaleRunSocket(path);
    Deno.writeTextFileSync(path, "not a socket");
    await removeStaleRunSocket(path);
    assert.equal(Deno.readTextFileSync(path), "not a socket");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
