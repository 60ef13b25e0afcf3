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

/** What the `status` tool reports. */
export interface NodeStatus {
  node: string;
  profile: { name: string; npub: string };
  /** Where the node's files are; left out for runner sessions. */
  dataDir?: string;
  relays: string[];
  agent: { runtime: string; profile: string } | null;
  pendingDrafts: number;
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
  } | null;
  /** Why agent runs wait: a reached budget, and each thread the loop detector holds. */
  pauses?: {
    budget?: { reason: string; until: number };
    threads: Array<{ thread: string; reason: string }>;
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
  /** The network side: relay connections, the outbox, the relay endpoint. */
  network?: {
    /** `bytesReceived`: as on the wire, all connections since the node started. */
    relays: Array<{ url: string; connected: boolean; lastError?: string; bytesReceived?: number }>;
    outbox: number;
    listenPort?: number;
    listenHost?: string;
  };
}
