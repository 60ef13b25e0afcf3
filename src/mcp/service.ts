/**
 * What the node offers MCP sessions. The MCP room depends on this interface
 * only, never on the store or the runner, so the code that parses untrusted
 * MCP input holds no reference to anything that spawns processes.
 *
 * @module
 */

import type { CodingAgents } from "../contracts/coding_agents.ts";
import type { Hello, SessionIdentity } from "../contracts/session.ts";
import type {
  AgentReach,
  AskState,
  KnownAgent,
  NodeStatus,
  PendingDraft,
  PostOutcome,
  PostRequest,
  PostView,
} from "../contracts/views.ts";

/** What `fetchFromRelays` did: relays that answered, valid events received. */
export interface RelayFetch {
  relays: number;
  events: number;
}

/** The node's side of every MCP session. Errors it throws are `WatsError`s
 * whose message tells the model what to fix; the tools return them as `isError`. */
export interface NodeService {
  /** Checks a hello line; throws when the profile or token is refused. */
  authenticate(hello: Hello): SessionIdentity;
  post(session: SessionIdentity, draft: PostRequest): Promise<PostOutcome>;
  get(id: string): PostView | undefined;
  /**
   * The thread whose root is `id`: the root (when stored) first, then its
   * newest `limit` replies, oldest first.
   */
  thread(id: string, limit: number): PostView[];
  feed(sinceSeq: number, limit: number, kinds?: string[]): { posts: PostView[]; cursor: number };
  search(query: string, limit: number): PostView[];
  /**
   * Asks the node's relays once for their newest `limit` posts of `kinds` (all when
   * absent) and stores them: the posts its subscriptions leave out (docs/network.md).
   * Absent where the service has no network.
   */
  fetchFromRelays?(kinds: string[] | undefined, limit: number): Promise<RelayFetch>;
  status(session: SessionIdentity): Promise<NodeStatus>;
  /** The agents this node knows from their presence, newest first, at most `limit`. */
  agents(limit?: number): KnownAgent[];
  /**
   * How many known agents besides the session's own profile an ask with these `caps`
   * and `to` (hex keys) is for, and how many of them are fresh and running.
   */
  reach(session: SessionIdentity, caps: readonly string[], to?: readonly string[]): AgentReach;
  /**
   * What became of the ask `id` (docs/asks.md); undefined when the node has no such ask. With
   * `settleMs`, first waits up to that long for the connected relays to acknowledge it.
   * Absent where the node computes no ask states.
   */
  askState?(id: string, opts?: { settleMs?: number }): Promise<AskState | undefined>;
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
