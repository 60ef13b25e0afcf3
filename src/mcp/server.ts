/**
 * Builds the MCP server of one session: the tools that session may use, over
 * the node's {@linkcode NodeService}. Transport-agnostic: the socket server
 * connects it to a unix socket connection, tests to an in-memory pair.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { VERSION } from "../version.ts";
import { WatsError } from "../errors.ts";
import { instructionsFor } from "./instructions.ts";
import type { NodeService } from "./service.ts";
import type { SessionIdentity } from "../contracts/session.ts";
import { inputSchema, toolsFor } from "./tools.ts";
import type { ToolContext, ToolSpec } from "./tool_spec.ts";

/** A log function: level, message, structured fields. */
export type McpLog = (
  level: "debug" | "info" | "warn" | "error",
  message: string,
  fields?: Record<string, unknown>,
) => void;

/** Options of {@linkcode createMcpServer}. */
export interface McpServerOptions {
  /** Where unexpected tool failures are logged (default: nowhere). */
  log?: McpLog;
  /** Unix seconds now (default: the system clock). */
  now?: () => number;
}

/** Creates the MCP server of one session; connect it to a transport. */
export function createMcpServer(
  service: NodeService,
  session: SessionIdentity,
  options: McpServerOptions = {},
): McpServer {
  const server = new McpServer(
    { name: "wats", version: VERSION },
    { instructions: instructionsFor(session.runner), capabilities: { tools: {} } },
  );
  const ctx: ToolContext = {
    service,
    session,
    now: options.now ?? (() => Math.floor(Date.now() / 1000)),
  };
  for (const tool of toolsFor(session, service.codingAgents)) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: inputSchema(tool),
        annotations: { title: tool.title, ...tool.annotations },
      },
      (args: Record<string, unknown>, extra: ToolExtra) =>
        callTool(tool, { ...ctx, signal: extra.signal, ...progressOf(extra) }, args, options.log),
    );
  }
  return server;
}

/** What the SDK gives a tool's handler that wats uses. */
interface ToolExtra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification(n: ServerNotification): Promise<void>;
}

/**
 * The call's progress notifications, when its request carries a `_meta.progressToken`: each
 * note one step further (the spec asks `progress` to grow). A note that cannot be sent (the
 * client went away) is dropped; the call goes on.
 */
function progressOf(extra: ToolExtra): Pick<ToolContext, "progress"> {
  const token = extra._meta?.progressToken;
  if (token === undefined) return {};
  let step = 0;
  return {
    progress: (message) => {
      step++;
      extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress: step, message },
      }).catch(() => {});
    },
  };
}

/** Runs a tool; every failure becomes an `isError` result the model can act on. */
async function callTool(
  tool: ToolSpec,
  ctx: ToolContext,
  args: Record<string, unknown>,
  log: McpLog | undefined,
): Promise<CallToolResult> {
  try {
    const out = await tool.run(ctx, args);
    if (typeof out === "string") return { content: [{ type: "text", text: out }] };
    return {
      content: [{ type: "text", text: out.text }],
      ...(ctx.session.data ? { structuredContent: out.data } : {}),
    };
  } catch (err) {
    if (err instanceof WatsError) {
      return { content: [{ type: "text", text: err.message }], isError: true };
    }
    log?.("error", "mcp tool failed", {
      tool: tool.name,
      profile: ctx.session.profile,
      error: errorMessage(err),
    });
    return {
      content: [{
        type: "text",
        text: `The node could not run ${tool.name}: ${
          errorMessage(err)
        }. This is not your mistake; try again later, or carry on without it.`,
      }],
      isError: true,
    };
  }
}
