/**
 * The node's event stream: one record for each thing that happens (a post
 * stored or rejected, a run started or ended, a halt, a coding agent's step).
 * The node, the network and the runner emit them into an
 * {@linkcode EventSink}; the command decides where they go (`wats node` prints
 * them as JSON lines, the bare daemon drops them). The union is closed: a new
 * event is a new member here, so every reader sees every shape.
 *
 * @module
 */

import type { SweepReport } from "./coding_agents.ts";
import type { RunIndexEntry } from "./runs.ts";

/** A coding agent's session update, as the ACP layer relays it (docs/acp.md). */
export type AcpUpdateEvent = {
  event: "acp_update";
  type: "acp_update";
  harness: string;
  agent: string;
  call: string;
  /** The ACP `session/update` payload, passed through as the agent sent it. */
  update: unknown;
};

/** A coding agent's permission request and what the policy answered. */
export type AcpPermissionEvent = {
  event: "acp_permission";
  type: "acp_permission";
  harness: string;
  agent: string;
  call: string;
  id: string;
  request: string;
  /** An execute request's command line. */
  command?: string;
  locations: string[];
  verdict: "allow" | "deny" | "ask";
  answer: string;
  reason: string;
  labels: string[];
};

/**
 * A coding agent's work changed (docs/acp.md "Works"): a call on it ended, or
 * its branch moved during one (the coding agent committed). A work's page
 * redraws on it; nothing in it is the coding agent's text.
 */
export type WorkChangedEvent = {
  event: "work_changed";
  type: "work_changed";
  harness: string;
  agent: string;
  call: string;
  /** The run that called, if one. */
  run?: string;
  checkout: string;
  branch: string;
  /** The work's id: `wats work show ID`, the dashboard's `/works/ID`. */
  work: string;
  /** What changed, in a few words (`committed`, `call ended: ok`). */
  what: string;
  /** On a call's end: the work's commits the base lacks (a `work_ready` notice when some). */
  commits?: number;
};

/**
 * Something now waits in the review queue for a person: a draft, a coding
 * agent's parked permission request, or a call left in doubt by a stop.
 */
export type HeldEvent = {
  event: "held";
  /** The pending id `wats agent approve` / `reject` take. */
  id: string;
  what: "draft" | "permission" | "in_doubt";
  /** One line: what it is (src/node/notify.ts `heldNotice`). */
  summary: string;
};

/**
 * An ask of this node's profiles turned (docs/asks.md): an answer by another author arrived
 * (`by` its npub), or nobody answered or claimed it by `since` (ms, agent.ask_timeout).
 */
export type AskEvent =
  | { event: "ask_answered"; ask: string; answer: string; by: string }
  | { event: "ask_no_taker"; ask: string; title: string; since: number };

/** One event. */
export type NodeEvent =
  | {
    event: "started";
    node: string;
    dataDir: string;
    socket: string;
    profiles: Record<string, string>;
    pid: number;
  }
  | { event: "post_stored"; id: string; seq: number; kind: string; author: string; source: string }
  | { event: "post_rejected"; id?: string; code: string; reason: string; source: string }
  | { event: "halted"; id: string; by: string; reason: string }
  | HeldEvent
  | AskEvent
  | { event: "budget_paused"; reason: string; until: number }
  | { event: "resumed" }
  | { event: "run_started"; run: string }
  | ({ event: "run_ended"; run: string } & RunIndexEntry)
  | AcpUpdateEvent
  | AcpPermissionEvent
  | WorkChangedEvent
  | ({ event: "acp_sweep" } & SweepReport)
  | { event: "stopped"; reason: string };

/** Where node events go. */
export type EventSink = (e: NodeEvent) => void;

/** A sink that drops everything: the bare daemon. */
export const noEvents: EventSink = () => {};
