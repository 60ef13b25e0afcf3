/**
 * Tests of the echo MCP server used by the harness tests: in memory, and as
 * the stdio process the harnesses start.
 *
 * @module
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ECHO_OUT_ENV, echoServer, echoServerCommand } from "./echo_mcp_server.ts";
import { denoDir } from "./cli.ts";
import { inspectorBin, requireCli } from "./clis.ts";

Deno.test("echo tool returns its text and records it", async () => {
  const seen: string[] = [];
  const server = echoServer((line) => {
    seen.push(line);
    return Promise.resolve();
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1" });
  await Promise.all([server.connect(a), client.connect(b)]);
  try {
    const tools = await client.listTools();
    assert.deepEqual(tools.tools.map((t: { name: string }) => t.name), ["echo"]);
    const r = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    assert.deepEqual(r.content, [{ type: "text", text: "hi" }]);
    assert.deepEqual(seen, ["hi"]);
  } finally {
    await client.close();
    await server.close();
  }
});

Deno.test("echo server started over stdio appends each call to the file in its env", async () => {
  const dir = Deno.makeTempDirSync();
  const out = `${dir}/out.txt`;
  const { command, args } = echoServerCommand();
  const client = new Client({ name: "test", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command,
      args,
      env: {
        [ECHO_OUT_ENV]: out,
        DENO_DIR: denoDir(),
        HOME: dir,
        PATH: Deno.env.get("PATH") ?? "",
      },
      stderr: "ignore",
    }),
  );
  try {
    await client.callTool({ name: "echo", arguments: { text: "one" } });
    await client.callTool({ name: "echo", arguments: { text: "two" } });
    assert.equal(Deno.readTextFileSync(out), "one\ntwo\n");
  } finally {
    await client.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

const inspector = requireCli("inspector");

Deno.test({
  name: "the pinned MCP inspector CLI calls the echo server's tool",
  ignore: inspector === null,
  async fn() {
    const dir = Deno.makeTempDirSync();
    const out = `${dir}/out.txt`;
    const { command, cwd } = inspectorBin();
    const server = echoServerCommand();
    const r = await new Deno.Command(command[0]!, {
      args: [
        ...command.slice(1),
        server.command,
        ...server.args,
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        "--tool-arg",
        "text=from the inspector",
      ],
      cwd,
      env: { [ECHO_OUT_ENV]: out, DENO_DIR: denoDir() },
      stdout: "piped",
      stderr: "piped",
    }).output();
    try {
      const stderr = new TextDecoder().decode(r.stderr);
      assert.equal(r.code, 0, stderr);
      const result = JSON.parse(new TextDecoder().decode(r.stdout));
      assert.deepEqual(result.content, [{ type: "text", text: "from the inspector" }]);
      assert.equal(Deno.readTextFileSync(out), "from the inspector\n");
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
