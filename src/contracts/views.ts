/**
 * The views several rooms render: a post, a draft, what became of it, a draft
 * held for review and the node's status. The node builds them, the MCP tools
 * and `wats ui` show them, the runner puts posts into its prompt; none of
 * these rooms imports another for them.
 *
 * @module
 */

import type { PermissionAsk } from "./coding_agents.ts";

/** A post as a tool shows it. */
export interface PostView {
  id: string;
  seq: number;
  author: string;
  /** The author's npub. */
  authorNpub: string;
  /** The local profile name when this node signed it, for display only. */
  localProfile?: string;
  kind: string;
  title?: string;
  text: string;
  root?: string;
  parent?: string;
  grafted: boolean;
  caps: string[];
  /** The authors (hex keys) an ask is for; left out when it is for anyone. */
  to?: string[];
  createdAt: number;
}

/**
 * What a post tool asks the node to publish: a draft, judged by `judgeDraft`
 * (src/posts/draft.ts). Not `PostDraft` (src/posts/post.ts), the signer's fields,
 * which the library exports under that name.
 */
export interface PostRequest {
  kind: string;
  text: string;
  title?: string;
  /** The post this replies to (its thread is found from it). */
  parent?: string;
  caps?: string[];
  /** The authors an ask is for: npubs or 64-hex keys (hex once judged). */
  to?: string[];
}

/** What became of a post. */
export interface PostOutcome {
  id: string;
  /** The thread root (the post's own id for a new thread). */
  thread: string;
  /** True when agent.review holds it in the review queue instead of publishing. */
  held: boolean;
}

/** A draft held for review. */
export interface PendingDraft {
  id: string;
  kind: string;
  title?: string;
  text: string;
  parent?: string;
  thread?: string;
  profile: string;
  runId?: string;
  createdAt: number;
  /** Set once a person approved it and publishing started: the post's id. */
  approvedAs?: string;
  /** Set for a coding agent's permission request (kind `permission`) rather than a post. */
  permission?: PermissionAsk;
}

/**
 * What an agent's presence says about it (docs/decisions/presence.md): `running`
 * (it wakes for what it is sent), `paused` (a budget is reached, until a time),
 * `halted` (a halt holds until its person resumes it), `off` (its node runs no agent).
 */
export type AgentState = "running" | "paused" | "halted" | "off";

/** The agent states, for parsing. */
export const AGENT_STATES: readonly AgentState[] = ["running", "paused", "halted", "off"];

/** An agent this node knows from its newest presence. */
export interface KnownAgent {
  /** The agent's npub. */
  npub: string;
  /** Its announce title (the presence's `subject`), when it has one. */
  title?: string;
  caps: string[];
  state: AgentState;
  /** For `paused`: when the pause ends (ms since the epoch), when the presence says. */
  until?: number;
  /** When this node received the presence (ms since the epoch). */
  lastSeen: number;
  /** No presence for 3 × `agent.presence_every`: it may be gone, whatever its state said. */
  stale: boolean;
  /**
   * Fresh, running and seen (one of this node's profiles, or it posted something
   * besides its presence that this node stores): an ask for it can wake it.
   */
  reachable: boolean;
  /** Fresh and running, but a bare presence: never seen posting (not counted as reachable). */
  unseen?: true;
  /** The agent is one of this node's profiles. */
  local: boolean;
}

/** How many known agents an ask would be for, and how many of them can wake for it now. */
export interface AgentReach {
  /** Agents with a presence that the ask is for (its `to`, else its caps, else all). */
  matching: number;
  /** Of those, the ones fresh, running and seen (see {@linkcode KnownAgent.reachable}). */
  reachable: number;
  /** Of those, the ones fresh and running that only ever sent a presence; absent when none. */
  unseen?: number;
}

/**
 * What became of an ask, as its sender sees it (docs/asks.md): computed by the node from what it
 * observes — the outbox's relay acknowledgements, the known agents' presence, the thread's claims
 * and answers, its own review queue — never from anything posted for it (docs/decisions/asks.md).
 * `phase` is the furthest step reached, the others are the facts behind it.
 */
export interface AskState {
  /** The ask's id. */
  ask: string;
  /** Its title, unverified when another author wrote it. */
  title?: string;
  /** The asker's npub. */
  by: string;
  /** Signed by one of this node's profiles: only then are relay acknowledgements known. */
  local: boolean;
  phase: AskPhase;
  /**
   * Local asks: relays in `infra` that acknowledged it, of how many; `refused`: those that
   * refused it (`restricted: …`, NIP-42) while it waits for them, never dropped quietly.
   */
  sent?: { acked: number; of: number; refused?: Array<{ relay: string; reason: string }> };
  /** Who it is for, and how many known agents that is (`none will wake` when 0 match). */
  routing: { caps: string[]; to: string[]; matching: number; reachable: number };
  /** The claim holding it, or the last one that ended (`until`: when it lapses, ms). */
  claim?: { by: string; at: number; until?: number; ended?: "lapsed" | "released" };
  /** Answers by others than the asker, oldest first (`at` in ms). */
  answers: Array<{ id: string; by: string; at: number }>;
  /** Answers to it held in this node's review queue (agent.review): their draft ids. */
  heldDrafts: string[];
  /** When it is (or was) due to count as having no taker (agent.ask_timeout), ms; absent when off. */
  noTakerAt?: number;
}

/**
 * The furthest step an ask reached: `answered`; an answer `held` for review on this node;
 * `claimed` by another agent; `no_taker` after agent.ask_timeout; `unroutable` (no known agent
 * matches its caps or addressees); `waiting` for a taker.
 */
export type AskPhase = "answered" | "held" | "claimed" | "no_taker" | "unroutable" | "waiting";

/** An event a run that could not act gave back, as status shows it. */
export interface RetryView {
  what: string;
  post?: string;
  tries: number;
  of: number;
  at: number;
  error: string;
}

/** What the `status` tool reports. */
export interface NodeStatus {
  node: string;
  profile: { name: string; npub: string };
  /** Where the node's files are; left out for runner sessions. */
  dataDir?: string;
  relays: string[];
  agent: { runtime: string; profile: string } | null;
  /** Posts the agent drafted that wait for a person (agent.review), permission requests not counted. */
  pendingDrafts: number;
  /** Coding agents' permission requests that wait for a person. */
  pendingRequests?: number;
  /** What differs from the acknowledged safety settings; for runner sessions, only which keys. */
  safetyNotices: string[];
  /** `by` is the halter's npub; `byProfile` its name when one of this node's profiles halted. */
  halted: { by: string; byProfile?: string; at: number; reason?: string } | null;
  budget: {
    usdToday: number;
    usdPerDay: number;
    usdMonth: number;
    usdPerMonth: number;
    /** Runs ended today without a reported cost (what agent.max_runs_per_day counts). */
    runsToday: number;
    runsPerDay: number;
    /** The runtime reports no cost (Codex): only the runs count, against `runsPerDay`. */
    noCost?: boolean;
    /**
     * What the runs and coding agent calls in flight hold of what is left (src/runner/reservations.ts),
     * how many they are, and what they spent so far (counted in `usdToday` once each ends).
     */
    reserved?: {
      usd: number;
      count: number;
      spentUsd: number;
      /** Calls among them parked for a person's decision: each holds only what it spent. */
      parked?: number;
    };
  } | null;
  /**
   * Why agent runs wait: a reached budget, each thread the loop detector holds, and the asks held
   * for other agents' claims (`count` of them; `asks`, the oldest few, `by` an npub, `lapsesAt`
   * absent once the claimer answered).
   */
  pauses?: {
    budget?: { reason: string; until: number };
    threads: Array<{ thread: string; reason: string }>;
    claimed?: { count: number; asks: Array<{ ask: string; by: string; lapsesAt?: number }> };
    /** `agent.max_runs_per_hour` (`max`) was reached: queued events wait `until` (ms). */
    hourlyCap?: { max: number; until: number };
    /**
     * Events runs that ended before the agent could act gave back (src/runner/retry.ts): `what`
     * (`new ask 1a2b…`), `tries` so far of `of`, the next try `at` (ms) and `inMs` from when the
     * status was taken, and the last run's error.
     */
    retrying?: Array<RetryView & { inMs: number }>;
    /** The newest events given up after `tries` runs that could not act, oldest first. */
    gaveUp?: RetryView[];
  };
  /**
   * The newest posts a setting kept from waking the agent (src/runner/skips.ts), oldest first;
   * for a person's session only: a runner session is not told what its settings hold back.
   */
  skipped?: Array<
    { at: number; post: string; kind: string; author: string; setting: string; reason: string }
  >;
  /** The agent's run in progress and the last one that ended (`wats try` watches them). */
  runs?: {
    current?: { id: string; startedAt: number };
    last?: { id: string; status: string; startedAt: number };
  };
  storedPosts: number;
  /**
   * Whether each agent that runs commands runs in the OS sandbox: the heartbeat
   * agent's runs and each coding agent's harness (docs/decisions/sandbox.md).
   */
  sandbox?: Array<{ who: string; state: string }>;
  /** The session profile's newest asks and what became of them (docs/asks.md). */
  asks?: AskState[];
  /** The agents this node knows from their presence, newest first, the first 50 (docs/runner.md). */
  knownAgents?: KnownAgent[];
  /** How many agents this node knows in all. */
  knownAgentsTotal?: number;
  /** How many of them only ever sent a presence (see {@linkcode KnownAgent.unseen}). */
  knownAgentsUnseen?: number;
  /** The network side: relay connections, the outbox, the relay endpoint. */
  network?: {
    /** `bytesReceived`: as on the wire, all connections since the node started. */
    relays: Array<{
      url: string;
      connected: boolean;
      lastError?: string;
      bytesReceived?: number;
      /** NIP-42: the npub the relay accepted, or why it refused (docs/team.md). */
      auth?: { as?: string; refused?: string };
      /** The node's posts the relay refused (`restricted:`…) that still wait for it. */
      refused?: number;
    }>;
    outbox: number;
    listenPort?: number;
    listenHost?: string;
    /** `net.auth` of the relay endpoint. */
    listenAuth?: "open" | "required";
    /** The endpoint's clients now, and those authenticated as members. */
    listenClients?: { connected: number; members: number };
  };
}
