/**
 * A tiny stdio MCP server for tests: one tool, `echo`, that appends its `text`
 * argument (and a newline) to the file named by `ECHO_MCP_OUT`, and returns it.
 * It proves the harness-plus-mock pipeline independently of wats's own MCP server.
 *
 * Run: `deno run --allow-all --config <repo>/deno.json tests/support/echo_mcp_server.ts`
 *
 * @module
 */

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { fileURLToPath } from "node:url";

/** The environment variable naming the file `echo` appends to. */
export const ECHO_OUT_ENV = "ECHO_MCP_OUT";

/** This server's path, for building the command that starts it. */
export const ECHO_SERVER_PATH: string = fileURLToPath(import.meta.url);

/** The project's deno.json (the import map this server needs). */
export const REPO_CONFIG: string = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** The command and arguments that start this server over stdio. */
export function echoServerCommand(): { command: string; args: string[] } {
  return {
    command: Deno.execPath(),
    args: ["run", "--allow-all", "--quiet", "--config", REPO_CONFIG, ECHO_SERVER_PATH],
  };
}

/** Builds the server; `append` does the write (injected so it can be tested in memory). */
export function echoServer(append: (line: string) => Promise<void>): McpServer {
  const server = new McpServer({ name: "echo", version: "1.0.0" });
  server.registerTool("echo", {
    description: "Echoes the text back and records it.",
    inputSchema: { text: z.string().describe("The text to echo.") },
  }, async ({ text }: { text: string }) => {
    await append(text);
    return { content: [{ type: "text", text }] };
  });
  return server;
}

if (import.meta.main) {
  const out = Deno.env.get(ECHO_OUT_ENV);
  if (!out) {
    console.error(`error: set ${ECHO_OUT_ENV} to the file the echo tool should append to`);
    Deno.exit(2);
  }
  const server = echoServer((line) => Deno.writeTextFile(out, line + "\n", { append: true }));
  await server.connect(new StdioServerTransport());
}
