/**
 * The daemon's implementation of `NodeService`: what MCP sessions may do with
 * this node's store. Posts are signed here with the session's profile key;
 * posts by the agent are held for review when agent.review is on.
 *
 * @module
 */

import type { CodingAgents } from "../contracts/coding_agents.ts";
import { SAFETY_KEYS } from "../config/schema.ts";
import { PostError } from "../errors.ts";
import type { Hello, SessionIdentity } from "../contracts/session.ts";
import type { NodeService, RelayFetch } from "../mcp/service.ts";
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
import { type NostrEvent, readPost, signPost } from "../posts/post.ts";
import { judgeDraft, noSuchPost } from "../posts/draft.ts";
import { validateEvent } from "../posts/validate.ts";
import type { Store, StoredPost } from "../store/store.ts";
import type { EventSink } from "../contracts/node_events.ts";
import { PostViews } from "./post_views.ts";
import type { Profiles } from "./profiles.ts";
import { heldCounts, type ReviewQueue } from "./review_queue.ts";
import { npubEncode } from "nostr-tools/nip19";
import { isWatsKind, NOSTR_KINDS, nostrKindOf, type WatsKind } from "../posts/kinds.ts";
import type { KnownAgents } from "./presence.ts";
import type { PresenceDraft } from "../runner/presence.ts";
import { presenceTags } from "../posts/presence.ts";
import type { AskStates } from "./ask_states.ts";

/** How many of the session's asks `status` lists. */
export const STATUS_ASKS = 5;

/** How many known agents `status` lists (the `agents` tool lists more). */
export const STATUS_AGENTS = 50;

/** What the service needs from the rest of the daemon. */
export interface NodeServiceDeps {
  store: Store;
  profiles: Profiles;
  nodeId: string;
  dataDir: string;
  defaultProfile: string;
  agentProfile: string;
  relays: string[];
  maxSkewMs: number;
  events: EventSink;
  review: ReviewQueue;
  /** True when agent.review holds the agent's posts. */
  reviewOn: boolean;
  now: () => number;
  /** Called when a draft is held for review (agent.notify). */
  onHeld?: (draft: PendingDraft) => void;
  /** The run a per-run token belongs to, if it is live. */
  runOfToken: (token: string) => string | undefined;
  /** Runner view for status; null when no runner runs. */
  runnerStatus: () => Pick<
    NodeStatus,
    "agent" | "budget" | "halted" | "pauses" | "skipped" | "runs"
  >;
  /** Read from the files at each call: no live reload, but status sees changes. */
  safetyNotices: () => Promise<string[]>;
  /** The network's state, once it runs. */
  networkStatus?: () => NodeStatus["network"];
  /** Asks the relays once for a NIP-01 filter and stores the answer, once the network runs. */
  fetchOnce?: (filter: { kinds: number[]; limit: number }) => Promise<RelayFetch>;
  /** Which agents run in the OS sandbox, for status. */
  sandboxStatus?: () => NodeStatus["sandbox"];
  /** The coding agents over ACP (src/acp), when config.toml declares harnesses. */
  codingAgents?: CodingAgents;
  /** The agents known from their presence (src/node/presence.ts). */
  knownAgents: KnownAgents;
  /** What became of asks (src/node/ask_states.ts). */
  askStates?: AskStates;
}

/** The node's side of every MCP session. */
export class LocalNodeService implements NodeService {
  readonly #deps: NodeServiceDeps;
  /** Drafts whose approval is under way: a second approve must not sign another post. */
  readonly #approving = new Set<string>();
  readonly #posts: PostViews;

  constructor(deps: NodeServiceDeps) {
    this.#deps = deps;
    this.#posts = new PostViews(deps.store);
  }

  get codingAgents(): CodingAgents | undefined {
    return this.#deps.codingAgents;
  }

  authenticate(hello: Hello): SessionIdentity {
    if (hello.token !== undefined) {
      const runId = this.#deps.runOfToken(hello.token);
      if (runId === undefined) {
        throw new PostError(
          "session.token",
          "this run token is not valid (the run ended or was never started)",
        );
      }
      // A runner session always speaks as the agent profile, whatever it asks for.
      const key = this.#deps.profiles.key(this.#deps.agentProfile);
      return { profile: key.name, pubkey: key.pubkey, runner: true, runId };
    }
    const key = this.#deps.profiles.key(hello.profile ?? this.#deps.defaultProfile);
    return { profile: key.name, pubkey: key.pubkey, runner: false };
  }

  async post(session: SessionIdentity, asked: PostRequest): Promise<PostOutcome> {
    const draft = judgeDraft(asked);
    const parent = this.#parentOf(draft);
    const held = this.#deps.reviewOn &&
      (session.runner || session.profile === this.#deps.agentProfile);
    if (held) {
      const pending = this.#deps.review.hold({
        kind: draft.kind,
        text: draft.text,
        title: draft.title,
        parent: draft.parent,
        thread: parent ? (parent.root ?? parent.id) : undefined,
        caps: draft.caps,
        to: draft.to,
        ...(parent
          ? {
            parentSummary: {
              author: npubEncode(parent.author),
              kind: parent.kind,
              ...(parent.title ? { title: parent.title } : {}),
              text: parent.text.slice(0, 2000),
            },
          }
          : {}),
        profile: session.profile,
        runId: session.runId,
        createdAt: Math.floor(this.#deps.now() / 1000),
      });
      this.#deps.onHeld?.(pending);
      return { id: pending.id, thread: pending.thread ?? pending.id, held: true };
    }
    return await this.publishAs(session.profile, draft, parent);
  }

  /**
   * Signs and stores a post as `profile`, with no check of who may post which
   * kind: the node's own posts (the runner's announce, a guardian's halt) and
   * checked drafts come through here.
   */
  async publishAs(profile: string, draft: PostRequest, parent?: StoredPost): Promise<PostOutcome> {
    return this.#store(await this.#sign(profile, draft, parent));
  }

  /**
   * Signs and stores the agent's presence as `profile` (src/runner/presence.ts
   * decides when); the store keeps only the newest and queues it for the relays.
   *
   * @throws {PostError} when the signed presence does not validate.
   */
  async publishPresence(profile: string, draft: PresenceDraft): Promise<PostOutcome> {
    const key = this.#deps.profiles.key(profile);
    const event = await signPost({
      kind: "presence",
      text: "",
      title: draft.title,
      caps: draft.caps,
      extraTags: presenceTags(draft),
      createdAt: draft.createdAt,
    }, key.secret);
    const checked = await validateEvent(event, {
      nowMs: this.#deps.now(),
      maxSkewMs: this.#deps.maxSkewMs,
    });
    if (!checked.ok) throw new PostError(`post.${checked.code}`, checked.reason);
    // Stored and queued like any local post, but not printed as `post_stored`: a refresh
    // every few minutes is not news for `wats node`'s readers (a received one is).
    this.#deps.store.insert([checked.event], { origin: "local" });
    return { id: checked.event.id, thread: checked.event.id, held: false };
  }

  /** Signs `draft` as `profile` now, and checks the result as any received post is checked. */
  async #sign(profile: string, draft: PostRequest, parent?: StoredPost): Promise<NostrEvent> {
    const key = this.#deps.profiles.key(profile);
    const event = await signPost({
      kind: draft.kind as WatsKind,
      text: draft.text,
      title: draft.title,
      root: parent ? (parent.root ?? parent.id) : undefined,
      parent: parent?.id,
      parentAuthor: parent?.author,
      caps: draft.caps,
      mentions: draft.to,
      createdAt: Math.floor(this.#deps.now() / 1000),
    }, key.secret);
    const checked = await validateEvent(event, {
      nowMs: this.#deps.now(),
      maxSkewMs: this.#deps.maxSkewMs,
    });
    if (!checked.ok) throw new PostError(`post.${checked.code}`, checked.reason);
    return checked.event;
  }

  /**
   * Stores a signed post and queues it for the relays. Storing the same event
   * again changes nothing (the store keeps one post per id), so a retried
   * approval cannot publish twice.
   */
  #store(event: NostrEvent): PostOutcome {
    const post = readPost(event);
    const [result] = this.#deps.store.insert([event], { origin: "local" });
    if (result?.seq !== undefined) {
      this.#deps.events({
        event: "post_stored",
        id: event.id,
        seq: result.seq,
        kind: post.kind,
        author: event.pubkey,
        source: "local",
      });
    }
    return { id: event.id, thread: post.root ?? event.id, held: false };
  }

  /** The stored parent of a judged draft; a parent this node does not have is refused. */
  #parentOf(draft: PostRequest): StoredPost | undefined {
    if (draft.parent === undefined) return undefined;
    const parent = this.#deps.store.get(draft.parent);
    if (parent === undefined) throw noSuchPost(draft.parent);
    return parent;
  }

  get(id: string): PostView | undefined {
    return this.#posts.get(id);
  }

  thread(id: string, limit: number): PostView[] {
    return this.#posts.thread(id, limit);
  }

  feed(sinceSeq: number, limit: number, kinds?: string[]): { posts: PostView[]; cursor: number } {
    const r = this.#deps.store.feed({ sinceSeq, limit, kinds: kinds?.filter(isWatsKind) });
    return { posts: this.#posts.views(r.posts), cursor: r.cursor };
  }

  async fetchFromRelays(kinds: string[] | undefined, limit: number): Promise<RelayFetch> {
    const names = kinds?.filter(isWatsKind) ?? [];
    const filter = {
      kinds: names.length > 0 ? names.map(nostrKindOf) : [...NOSTR_KINDS],
      limit,
    };
    return await this.#deps.fetchOnce?.(filter) ?? { relays: 0, events: 0 };
  }

  search(query: string, limit: number): PostView[] {
    return this.#posts.views(this.#deps.store.search(query, { limit, plain: true }));
  }

  async status(session: SessionIdentity): Promise<NodeStatus> {
    const runner = this.#deps.runnerStatus();
    const notices = await this.#deps.safetyNotices();
    return {
      node: this.#deps.nodeId,
      profile: { name: session.profile, npub: npubEncode(session.pubkey) },
      // A runner session reads neither where the node's files are nor how to
      // acknowledge a change (docs/decisions/runner.md keeps `wats config ack` out of its reach).
      ...(session.runner ? {} : { dataDir: this.#deps.dataDir }),
      relays: this.#deps.relays,
      agent: runner.agent,
      ...heldCounts(this.#deps.review.list()),
      safetyNotices: session.runner ? toldNotices(notices) : notices,
      halted: runner.halted,
      budget: runner.budget,
      ...(runner.pauses ? { pauses: runner.pauses } : {}),
      ...(runner.skipped && !session.runner ? { skipped: runner.skipped } : {}),
      ...(runner.runs ? { runs: runner.runs } : {}),
      storedPosts: this.#deps.store.count(),
      ...(this.#deps.askStates
        ? { asks: this.#deps.askStates.mine(session.pubkey, STATUS_ASKS) }
        : {}),
      knownAgents: this.#deps.knownAgents.list(STATUS_AGENTS),
      ...knownAgentCounts(this.#deps.knownAgents),
      ...(this.#deps.sandboxStatus ? { sandbox: this.#deps.sandboxStatus() } : {}),
      ...(this.#deps.networkStatus ? { network: this.#deps.networkStatus() } : {}),
    };
  }

  agents(limit?: number): KnownAgent[] {
    return this.#deps.knownAgents.list(limit);
  }

  reach(session: SessionIdentity, caps: readonly string[], to?: readonly string[]): AgentReach {
    return this.#deps.knownAgents.reach(session.pubkey, caps, to);
  }

  async askState(id: string, opts: { settleMs?: number } = {}): Promise<AskState | undefined> {
    const states = this.#deps.askStates;
    if (states === undefined) return undefined;
    if (opts.settleMs) await this.#acknowledged(states, id, opts.settleMs);
    return states.of(id);
  }

  /**
   * Resolves once every connected relay acknowledged the local post `id`, or after `ms`: a relay
   * that is not connected is not waited for (the outbox keeps the post for it).
   */
  #acknowledged(states: AskStates, id: string, ms: number): Promise<void> {
    const connected = new Set(
      (this.#deps.networkStatus?.()?.relays ?? []).filter((r) => r.connected).map((r) => r.url),
    );
    const unacked = () => states.waiting(id).some((r) => connected.has(r));
    if (!unacked()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        off();
        clearTimeout(timer);
        resolve();
      };
      const off = this.#deps.store.outbox.onAck((event) => {
        if (event === id && !unacked()) done();
      });
      const timer = setTimeout(done, ms);
    });
  }

  pending(): PendingDraft[] {
    return this.#deps.review.list();
  }

  /**
   * Publishes a held draft: signs it, records the signed post in the draft,
   * stores it, then removes the draft (ReviewQueue's module doc says why in
   * that order). Approving a draft whose publishing started stores the post
   * recorded then, whatever `text` says.
   */
  async approve(id: string, by: SessionIdentity, text?: string): Promise<PostOutcome> {
    this.#mayReview(by, "approve");
    if (this.#approving.has(id)) {
      throw new PostError("review.busy", `draft ${id} is being approved already`);
    }
    this.#approving.add(id);
    try {
      const held = this.#deps.review.get(id);
      let signed = held.signed;
      if (signed !== undefined) {
        // Recorded by an earlier attempt: checked again, as the file could have been changed.
        const checked = await validateEvent(signed, {
          nowMs: this.#deps.now(),
          maxSkewMs: this.#deps.maxSkewMs,
        });
        if (!checked.ok) {
          throw new PostError(
            `review.${checked.code}`,
            `draft ${id} holds a signed post that is not valid (${checked.reason}): remove the draft file`,
          );
        }
        signed = checked.event;
      } else {
        // Judged again: the person may have edited the text, or the file.
        const draft = judgeDraft({
          kind: held.kind,
          text: text ?? held.text,
          title: held.title,
          parent: held.parent,
          caps: held.caps,
          to: held.to,
        });
        signed = await this.#sign(held.profile, draft, this.#parentOf(draft));
        this.#deps.review.markSigned(id, signed);
      }
      const out = this.#store(signed);
      this.#deps.review.remove(id);
      return out;
    } finally {
      this.#approving.delete(id);
    }
  }

  reject(id: string, reason: string, by: SessionIdentity): void {
    this.#mayReview(by, "reject");
    this.#deps.review.reject(id, reason);
  }

  decidePermission(id: string, approved: boolean, by: SessionIdentity): string | undefined {
    this.#mayReview(by, approved ? "approve" : "reject");
    const held = this.#deps.review.get(id);
    if (held.permission === undefined) return undefined;
    const agents = this.#deps.codingAgents;
    if (agents?.answer === undefined) {
      throw new PostError(
        "review.no_agents",
        `request ${id} is a coding agent's, but this node has no enabled harness to answer it: ` +
          "enable it in config.toml and restart, or reject it",
      );
    }
    // Removed first: the answer goes once, even when sending it fails.
    this.#deps.review.remove(id);
    return agents.answer(id, approved, held.permission);
  }

  /**
   * Review is a person's decision. The tools are never offered to runner
   * sessions; this refuses them here too, and any session of the agent profile.
   */
  #mayReview(by: SessionIdentity, what: "approve" | "reject"): void {
    if (by.runner || by.profile === this.#deps.agentProfile) {
      throw new PostError(
        "review.refused",
        `the agent cannot ${what} drafts held for review: a person reviews them`,
      );
    }
  }
}

/**
 * The safety notices as a runner session reads them: which safety settings
 * changed and that the person has been told, nothing about how to accept the
 * change or where the files are.
 */
function toldNotices(notices: readonly string[]): string[] {
  const changed = (n: string) => SAFETY_KEYS.find((k) => n.startsWith(`${k} changed `));
  const keys = SAFETY_KEYS.filter((k) => notices.some((n) => changed(n) === k));
  const out: string[] = [];
  if (keys.length > 0) {
    out.push(
      `safety settings changed since the person last accepted them: ${
        keys.join(", ")
      }; the person has been told`,
    );
  }
  if (notices.some((n) => changed(n) === undefined)) {
    out.push(
      "the safety settings could not be checked against the ones the person accepted; the person has been told",
    );
  }
  return out;
}

/** The status's agent totals: all, and the bare presences among them when there are any. */
function knownAgentCounts(
  known: KnownAgents,
): { knownAgentsTotal: number; knownAgentsUnseen?: number } {
  const { total, seen } = known.counts();
  return { knownAgentsTotal: total, ...(total > seen ? { knownAgentsUnseen: total - seen } : {}) };
}
