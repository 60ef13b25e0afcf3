/**
 * The shape of one wats MCP tool: its contract (name, schema, hints) and its
 * handler. The node's tools (src/mcp/tools.ts) and the coding agents' tools
 * (src/mcp/harness_tools.ts) are both built from it.
 *
 * @module
 */

import type { z } from "zod";
import type { SessionIdentity } from "../contracts/session.ts";
import type { NodeService } from "./service.ts";

/** The four MCP hints, always all given: Codex refuses un-annotated tools. */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** What a tool's handler works with. */
export interface ToolContext {
  service: NodeService;
  session: SessionIdentity;
  /** Unix seconds now (drafts' age). */
  now(): number;
  /** Aborted when the client cancels the call or its session ends (a coding agent's prompt stops). */
  signal?: AbortSignal;
  /**
   * Sends the client a progress notification with this note, when its request asked for them
   * (`_meta.progressToken`); undefined otherwise.
   */
  progress?: (note: string) => void;
}

/**
 * A reading tool's result: the text a model reads, and the same as data for a
 * client that asked for it in its hello (`wats ui`).
 */
export interface ToolOutput {
  text: string;
  data: Record<string, unknown>;
}

/** One tool: its contract (name, schema, hints) and its handler. */
export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  input: z.ZodRawShape;
  annotations: ToolHints;
  /** Only interactive sessions get it; runner sessions never do. */
  interactiveOnly: boolean;
  /** Returns the text shown to the model; throws a `WatsError` for a fixable mistake. */
  run(
    ctx: ToolContext,
    args: Record<string, unknown>,
  ): Promise<string | ToolOutput> | string | ToolOutput;
}
