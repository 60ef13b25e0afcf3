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
  /** The same, reported before the first request (a reply made before it asks). */
  costBefore?: number;
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
  /** How many `session/cancel` notifications it got. */
  cancels: number;
}

const OPTIONS: acp.PermissionOption[] = [
  { optionId: "yes", name: "Allow", kind: "allow_once" },
  { optionId: "always", name: "Always allow", kind: "allow_always" },
  { optionId: "no", name: "Reject", kind: "reject_once" },
];

/** An agent that plays `turns`, one per prompt (an empty turn once they run out). */
export function fakeAcpAgent(turns: FakeTurn[]): FakeAgent {
  const fake: FakeAgent = { connect, outcomes: [], prompts: [], starts: 0, cancels: 0 };
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
        const usage = (amount: number) =>
          client.notify("session/update", {
            sessionId,
            update: {
              sessionUpdate: "usage_update",
              used: 0,
              size: 1000,
              cost: { amount, currency: "USD" },
            },
          });
        if (turn.costBefore !== undefined) await usage(turn.costBefore);
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
        if (turn.cost !== undefined) await usage(turn.cost);
        return { stopReason: "end_turn" };
      })
      .onNotification("session/cancel", () => {
        fake.cancels++;
      });
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

/** One prompt of a {@linkcode meteredAcpAgent}, as it went. */
export interface MeteredPrompt {
  sessionId: string;
  text: string;
  /** Replies made (each a `usage_update` with the session's cumulative cost). */
  replies: number;
  /** Replies made when the client's `session/cancel` arrived; undefined: never cancelled. */
  cancelledAt?: number;
  stopReason?: acp.StopReason;
}

/** A metered agent, and what it did. */
export interface MeteredAgent {
  connect: Connect;
  prompts: MeteredPrompt[];
  /** What every session spent, in USD. */
  spent(): number;
}

/**
 * An agent that, to each prompt, makes model replies one after another, each
 * costing `costPerReply` (reported as the session's cumulative cost, as Claude
 * does), until it is cancelled or has made `replies(n)` of them for its n-th
 * prompt (0-based; Infinity: it never ends by itself). A cancel that arrives
 * while a reply is under way lets that reply finish and be paid, as a model
 * request in flight is. `gate`, when given, holds every prompt before its first
 * reply until it resolves.
 */
export function meteredAcpAgent(o: {
  costPerReply: number;
  replies: (prompt: number) => number;
  gate?: Promise<void>;
  /** Told after each reply is reported. */
  onReply?: (p: MeteredPrompt) => void;
}): MeteredAgent {
  const cost = new Map<string, number>();
  const live = new Map<string, MeteredPrompt>();
  const prompts: MeteredPrompt[] = [];
  let sessions = 0;
  const metered: MeteredAgent = {
    connect,
    prompts,
    spent: () => [...cost.values()].reduce((a, b) => a + b, 0),
  };
  function connect(): AgentLink {
    const app = acp.agent({ name: "metered" })
      .onRequest("initialize", () => ({
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {},
        agentInfo: { name: "metered-agent", version: "0" },
      }))
      .onRequest("session/new", () => {
        const sessionId = `m${++sessions}`;
        cost.set(sessionId, 0);
        return { sessionId };
      })
      .onRequest("session/prompt", async ({ params, client }) => {
        const { sessionId } = params;
        const p: MeteredPrompt = {
          sessionId,
          text: params.prompt.map((b) => b.type === "text" ? b.text : "").join("\n"),
          replies: 0,
        };
        const limit = o.replies(prompts.filter((x) => x.sessionId === sessionId).length);
        prompts.push(p);
        live.set(sessionId, p);
        await o.gate;
        for (;;) {
          // The model's reply: a turn of the event loop, in which a cancel may arrive.
          await new Promise((r) => setTimeout(r, 0));
          const total = (cost.get(sessionId) ?? 0) + o.costPerReply;
          cost.set(sessionId, total);
          p.replies++;
          await client.notify("session/update", {
            sessionId,
            update: {
              sessionUpdate: "usage_update",
              used: p.replies,
              size: 1_000_000,
              cost: { amount: total, currency: "USD" },
            },
          });
          o.onReply?.(p);
          if (p.cancelledAt !== undefined || p.replies >= limit) break;
        }
        live.delete(sessionId);
        p.stopReason = p.cancelledAt !== undefined ? "cancelled" : "end_turn";
        return { stopReason: p.stopReason };
      })
      .onNotification("session/cancel", ({ params }) => {
        const p = live.get(params.sessionId);
        if (p !== undefined && p.cancelledAt === undefined) p.cancelledAt = p.replies;
      });
    return linkTo(app);
  }
  return metered;
}
