/**
 * How the ACP client reaches an agent: the options of a start, the link to a
 * started agent (its byte streams and its end), and the function that makes
 * one. Below both the client (src/acp/client.ts) and the default process
 * connection (src/acp/agent_process.ts), so neither imports the other's types.
 *
 * @module
 */

import type { HarnessConfig } from "../config/acp_tables.ts";

/** How an agent's process is started. */
export interface SpawnOptions {
  /** In a process group of its own (see `spawn`). */
  detached?: boolean;
  /** What runs instead of the harness's command and args: the same, wrapped in the OS sandbox. */
  command?: { program: string; args: string[] };
  /** How the agent is reached; default: its process (src/acp/agent_process.ts `spawnAgentProcess`). */
  connect?: Connect;
}

/** A connection to a started agent: its byte streams, and its end. */
export interface AgentLink {
  /** Bytes to the agent (newline-delimited JSON-RPC). */
  input: WritableStream<Uint8Array>;
  /** Bytes from the agent. */
  output: ReadableStream<Uint8Array>;
  /** Settles when the agent has ended. */
  exited: Promise<Deno.CommandStatus>;
  /** The process id, for logs and process groups. */
  pid: number;
  /** The last of what the agent wrote to stderr (for error messages). */
  stderrTail(): string;
  /** Ends the agent (a process: stdin closed, then SIGTERM, then SIGKILL) and waits for it. */
  end(): Promise<void>;
}

/** Starts an agent for a harness in `cwd` and links to it. */
export type Connect = (
  harness: HarnessConfig,
  cwd: string,
  env: Record<string, string>,
  opts: SpawnOptions,
) => AgentLink;
