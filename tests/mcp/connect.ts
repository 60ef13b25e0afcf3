/**
 * Test helper: an SDK `Client` connected to `createMcpServer` over the SDK's
 * in-memory transport pair, and a shortcut to a tool's text.
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMcpServer, type McpLog } from "../../src/mcp/server.ts";
import type { NodeService } from "../../src/mcp/service.ts";
import type { SessionIdentity } from "../../src/contracts/session.ts";
import { fakePubkey } from "./fake_service.ts";

/** An interactive session of `profile`. */
export function interactive(profile = "alice"): SessionIdentity {
  return { profile, pubkey: fakePubkey(profile), runner: false };
}

/** A runner session (presented a per-run token). */
export function runner(runId = "run-1"): SessionIdentity {
  return { profile: "alice-agent", pubkey: fakePubkey("alice-agent"), runner: true, runId };
}

/** A connected client; close it when done. */
export async function connect(
  service: NodeService,
  session: SessionIdentity,
  log?: McpLog,
): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer(service, session, { log, now: () => 1_800_000_100 });
  await server.connect(serverSide);
  const client = new Client({ name: "wats-test", version: "0.0.0" });
  await client.connect(clientSide);
  return client;
}

/** What a tool call returned, as text plus the error flag. */
export interface ToolText {
  text: string;
  isError: boolean;
}

/** Calls a tool and joins its text content. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolText> {
  const r = await client.callTool({ name, arguments: args });
  const content = r.content as { type: string; text?: string }[];
  return {
    text: content.filter((c) => c.type === "text").map((c) => c.text).join("\n"),
    isError: r.isError === true,
  };
}
