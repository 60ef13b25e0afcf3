/**
 * A scripted ACP agent in the test's own process, reached over a pair of
 * in-memory streams (as the ACP SDK's own tests connect client and agent):
 * a {@linkcode Connect} for `AcpLayer`, so that what a call does with the
 * agent's permission requests is tested without a coding agent's process.
 *
 * Each prompt plays the next turn: for each request, a `tool_call` update, then
 * `session/request_permission` (the client's outcome is recorded), then the
 * turn's message and cost, then `end_turn`.
 */

import * as acp from "@agentclientprotocol/sdk";
import type { AgentLink, Connect } from "../../src/acp/agent_link.ts";

/** One permission request the agent makes. */
export interface FakeRequest {
  toolCallId: string;
  kind: acp.ToolKind;
  title?: string;
  locations?: string[];
  rawInput?: Record<string, unknown>;
  /** Default: allow_once, allow_always, reject_once. */
  options?: acp.PermissionOption[];
}

/** What the agent does in answer to one prompt. */
export interface FakeTurn {
  requests: FakeRequest[];
  message?: string;
  /** The session's cumulative cost in USD (a `usage_update`). */
  cost?: number;
}

/** The agent, and what it saw. */
export interface FakeAgent {
  connect: Connect;
  /** The client's answer to each request, in order: the chosen option's id, or `cancelled`. */
  outcomes: Array<{ toolCallId: string; answer: string }>;
  /** The text of each prompt. */
  prompts: string[];
  /** How many times the agent was started. */
  starts: number;
}

const OPTIONS: acp.PermissionOption[] = [
  { optionId: "yes", name: "Allow", kind: "allow_once" },
  { optionId: "always", name: "Always allow", kind: "allow_always" },
  { optionId: "no", name: "Reject", kind: "reject_once" },
];

/** An agent that plays `turns`, one per prompt (an empty turn once they run out). */
export function fakeAcpAgent(turns: FakeTurn[]): FakeAgent {
  const fake: FakeAgent = { connect, outcomes: [], prompts: [], starts: 0 };
  let sessions = 0;
  let next = 0;
  function connect(): AgentLink {
    fake.starts++;
    const app = acp.agent({ name: "fake" })
      .onRequest("initialize", () => ({
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {},
        agentInfo: { name: "fake-agent", version: "0" },
      }))
      .onRequest("session/new", () => ({ sessionId: `s${++sessions}` }))
      .onRequest("session/prompt", async ({ params, client }) => {
        fake.prompts.push(
          params.prompt.map((b) => b.type === "text" ? b.text : "").join("\n"),
        );
        const turn = turns[next++] ?? { requests: [] };
        const sessionId = params.sessionId;
        for (const r of turn.requests) {
          const locations = (r.locations ?? []).map((path) => ({ path }));
          await client.notify("session/update", {
            sessionId,
            update: {
              sessionUpdate: "tool_call",
              toolCallId: r.toolCallId,
              title: r.title ?? r.toolCallId,
              kind: r.kind,
              locations,
              rawInput: r.rawInput,
            },
          });
          const answer = await client.request("session/request_permission", {
            sessionId,
            toolCall: { toolCallId: r.toolCallId },
            options: r.options ?? OPTIONS,
          });
          fake.outcomes.push({
            toolCallId: r.toolCallId,
            answer: answer.outcome.outcome === "selected" ? answer.outcome.optionId : "cancelled",
          });
        }
        if (turn.message !== undefined) {
          await client.notify("session/update", {
            sessionId,
            update: {
              sessionUpdate: "agent_message_chunk",
              content: { type: "text", text: turn.message },
            },
          });
        }
        if (turn.cost !== undefined) {
          await client.notify("session/update", {
            sessionId,
            update: {
              sessionUpdate: "usage_update",
              used: 0,
              size: 1000,
              cost: { amount: turn.cost, currency: "USD" },
            },
          });
        }
        return { stopReason: "end_turn" };
      })
      .onNotification("session/cancel", () => {});
    return linkTo(app);
  }
  return fake;
}

/** Links an agent app in this process to a client, over a pair of in-memory streams. */
export function linkTo(app: acp.AgentApp): AgentLink {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const toClient = new TransformStream<Uint8Array, Uint8Array>();
  const conn = app.connect(acp.ndJsonStream(toClient.writable, toAgent.readable));
  let ended!: (s: Deno.CommandStatus) => void;
  const exited = new Promise<Deno.CommandStatus>((r) => ended = r);
  return {
    input: toAgent.writable,
    output: toClient.readable,
    exited,
    pid: 0,
    stderrTail: () => "",
    end: () => {
      conn.close();
      ended({ success: true, code: 0, signal: null });
      return Promise.resolve();
    },
  };
}
