/**
 * What the node offers MCP sessions. The MCP room depends on this interface
 * only, never on the store or the runner, so the code that parses untrusted
 * MCP input holds no reference to anything that spawns processes.
 *
 * @module
 */

import type { CodingAgents } from "../acp/tool.ts";
import type { PermissionAsk } from "../acp/calls.ts";

/** The name MCP hosts know the wats server by: tools appear as `mcp__wats__<tool>`. */
export const MCP_SERVER_NAME = "wats";

/** The variable that carries the runner's per-run token to `wats mcp`. */
export const RUN_TOKEN_ENV = "WATS_RUN_TOKEN";

/** Who a connection speaks for, decided by the daemon from the hello line. */
export interface SessionIdentity {
  /** The profile name the session signs as. */
  profile: string;
  /** The profile's public key (hex). */
  pubkey: string;
  /** True when the session presented a valid per-run token of the runner. */
  runner: boolean;
  /** The run id the token belongs to, for runner sessions. */
  runId?: string;
  /**
   * True when the client asked for data (`wats ui`): tool results then carry
   * `structuredContent` beside their text. Never for runner sessions, so what
   * an agent reads stays the fenced text.
   */
  data?: boolean;
}

/** The first line a client sends on mcp.sock, before MCP starts. */
export interface Hello {
  wats: "hello";
  profile?: string;
  token?: string;
  /** Ask for `structuredContent` in tool results (`wats ui`); ignored for runner sessions. */
  data?: boolean;
}

/**
 * A one-shot request of a CLI command (`wats resume`, `wats guardian halt`)
 * sent instead of a hello. It is not an MCP tool: no agent session can send
 * it through MCP (the runner contract keeps these commands out of the agent's reach).
 * `takeover` is a foreground `wats` asking a node that `wats mcp` started in
 * the background to stop and make way; any other node refuses it.
 */
export interface ControlRequest {
  wats: "control";
  op: "resume" | "halt" | "takeover" | "sweep";
  reason?: string;
}

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

/** What a post tool asks the node to publish. */
export interface PostDraft {
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
  halted: { by: string; at: number; reason?: string } | null;
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
    relays: Array<{ url: string; connected: boolean; lastError?: string }>;
    outbox: number;
    listenPort?: number;
    listenHost?: string;
  };
}

/** The node's side of every MCP session. Errors it throws are `WatsError`s
 * whose message tells the model what to fix; the tools return them as `isError`. */
export interface NodeService {
  /** Checks a hello line; throws when the profile or token is refused. */
  authenticate(hello: Hello): SessionIdentity;
  post(session: SessionIdentity, draft: PostDraft): Promise<PostOutcome>;
  get(id: string): PostView | undefined;
  /**
   * The thread whose root is `id`: the root (when stored) first, then its
   * newest `limit` replies, oldest first.
   */
  thread(id: string, limit: number): PostView[];
  feed(sinceSeq: number, limit: number, kinds?: string[]): { posts: PostView[]; cursor: number };
  search(query: string, limit: number): PostView[];
  status(session: SessionIdentity): Promise<NodeStatus>;
  pending(): PendingDraft[];
  /** Publishes a held draft, with `text` instead of the draft's when given (an edit). */
  approve(id: string, by: SessionIdentity, text?: string): Promise<PostOutcome>;
  reject(id: string, reason: string, by: SessionIdentity): void;
  /**
   * Answers a held coding agent's permission request; undefined when `id` is
   * a draft (approve and reject then publish or drop it).
   */
  decidePermission?(id: string, approved: boolean, by: SessionIdentity): string | undefined;
  /** The coding agents over ACP, when config.toml declares harnesses (one tool each). */
  readonly codingAgents?: CodingAgents;
}
