/**
 * The daemon's implementation of `NodeService`: what MCP sessions may do with
 * this node's store. Posts are signed here with the session's profile key;
 * posts by the agent are held for review when agent.review is on.
 *
 * @module
 */

import type { CodingAgents } from "../acp/tool.ts";
import { SAFETY_KEYS } from "../config/schema.ts";
import { PostError } from "../errors.ts";
import type {
  Hello,
  NodeService,
  NodeStatus,
  PendingDraft,
  PostDraft,
  PostOutcome,
  PostView,
  SessionIdentity,
} from "../mcp/service.ts";
import { MAX_TEXT_BYTES, type NostrEvent, readPost, signPost } from "../posts/post.ts";
import { validateEvent } from "../posts/validate.ts";
import type { Store, StoredPost } from "../store/store.ts";
import type { EventSink } from "../events.ts";
import { type Profiles, shownProfileName } from "./profiles.ts";
import type { ReviewQueue } from "./review_queue.ts";
import { npubEncode } from "nostr-tools/nip19";
import { isPostable, isWatsKind, POSTABLE, type WatsKind } from "../posts/kinds.ts";

/** Kinds that start a thread when they have no parent. */
const MAY_START_THREAD: ReadonlySet<string> = new Set(["ask", "offer", "note"]);

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
  runnerStatus: () => Pick<NodeStatus, "agent" | "budget" | "halted" | "pauses">;
  /** Read from the files at each call: no live reload, but status sees changes. */
  safetyNotices: () => Promise<string[]>;
  /** The network's state, once it runs. */
  networkStatus?: () => NodeStatus["network"];
  /** The coding agents over ACP (src/acp), when config.toml declares harnesses. */
  codingAgents?: CodingAgents;
}

/** The node's side of every MCP session. */
export class LocalNodeService implements NodeService {
  readonly #d: NodeServiceDeps;
  /** Drafts whose approval is under way: a second approve must not sign another post. */
  readonly #approving = new Set<string>();

  constructor(deps: NodeServiceDeps) {
    this.#d = deps;
  }

  get codingAgents(): CodingAgents | undefined {
    return this.#d.codingAgents;
  }

  authenticate(hello: Hello): SessionIdentity {
    if (hello.token !== undefined) {
      const runId = this.#d.runOfToken(hello.token);
      if (runId === undefined) {
        throw new PostError(
          "session.token",
          "this run token is not valid (the run ended or was never started)",
        );
      }
      // A runner session always speaks as the agent profile, whatever it asks for.
      const key = this.#d.profiles.key(this.#d.agentProfile);
      return { profile: key.name, pubkey: key.pubkey, runner: true, runId };
    }
    const key = this.#d.profiles.key(hello.profile ?? this.#d.defaultProfile);
    return { profile: key.name, pubkey: key.pubkey, runner: false };
  }

  async post(session: SessionIdentity, draft: PostDraft): Promise<PostOutcome> {
    this.#checkDraft(draft);
    const parent = draft.parent !== undefined ? this.#d.store.get(draft.parent) : undefined;
    if (draft.parent !== undefined && parent === undefined) {
      throw new PostError(
        "post.unknown_parent",
        `unknown parent ${draft.parent}: reply to an id shown by the thread, feed or search tools`,
      );
    }
    const held = this.#d.reviewOn &&
      (session.runner || session.profile === this.#d.agentProfile);
    if (held) {
      const pending = this.#d.review.hold({
        kind: draft.kind,
        text: draft.text,
        title: draft.title,
        parent: draft.parent,
        thread: parent ? (parent.root ?? parent.id) : undefined,
        caps: draft.caps,
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
        createdAt: Math.floor(this.#d.now() / 1000),
      });
      this.#d.onHeld?.(pending);
      return { id: pending.id, thread: pending.thread ?? pending.id, held: true };
    }
    return await this.publishAs(session.profile, draft, parent);
  }

  /**
   * Signs and stores a post as `profile`, with no check of who may post which
   * kind: the node's own posts (the runner's announce, a guardian's halt) and
   * checked drafts come through here.
   */
  async publishAs(profile: string, draft: PostDraft, parent?: StoredPost): Promise<PostOutcome> {
    return this.#store(await this.#sign(profile, draft, parent));
  }

  /** Signs `draft` as `profile` now, and checks the result as any received post is checked. */
  async #sign(profile: string, draft: PostDraft, parent?: StoredPost): Promise<NostrEvent> {
    const key = this.#d.profiles.key(profile);
    const event = await signPost({
      kind: draft.kind as WatsKind,
      text: draft.text,
      title: draft.title,
      root: parent ? (parent.root ?? parent.id) : undefined,
      parent: parent?.id,
      parentAuthor: parent?.author,
      caps: draft.caps,
      createdAt: Math.floor(this.#d.now() / 1000),
    }, key.secret);
    const checked = await validateEvent(event, {
      nowMs: this.#d.now(),
      maxSkewMs: this.#d.maxSkewMs,
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
    const [result] = this.#d.store.insert([event]);
    if (this.#d.relays.length > 0) this.#d.store.outboxAdd(event.id, this.#d.relays);
    if (result.seq !== undefined) {
      this.#d.events({
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

  #checkDraft(draft: PostDraft): void {
    if (!isPostable(draft.kind)) {
      throw new PostError(
        "post.kind",
        `kind "${draft.kind}" cannot be posted from MCP; use one of ${POSTABLE.join(", ")}`,
      );
    }
    if (draft.text.trim() === "") {
      throw new PostError("post.empty", "the text is empty: write what you want to say");
    }
    const bytes = new TextEncoder().encode(draft.text).length;
    if (bytes > MAX_TEXT_BYTES) {
      throw new PostError(
        "post.too_long",
        `the text is ${bytes} bytes; the limit is ${MAX_TEXT_BYTES}: shorten it or split it into several posts`,
      );
    }
    if (draft.parent === undefined && !MAY_START_THREAD.has(draft.kind)) {
      throw new PostError(
        "post.needs_parent",
        `a ${draft.kind} replies to a post: give the id of the post it answers as parent`,
      );
    }
  }

  get(id: string): PostView | undefined {
    const p = this.#d.store.get(id);
    return p ? this.#view(p, this.#localNames()) : undefined;
  }

  thread(id: string, limit: number): PostView[] {
    const p = this.#d.store.get(id);
    if (!p) {
      throw new PostError(
        "thread.unknown",
        `unknown post ${id}: use an id shown by the feed or search tools`,
      );
    }
    return this.#views(this.#d.store.thread(p.root ?? p.id, { limit }));
  }

  feed(sinceSeq: number, limit: number, kinds?: string[]): { posts: PostView[]; cursor: number } {
    const r = this.#d.store.feed({ sinceSeq, limit, kinds: kinds?.filter(isWatsKind) });
    return { posts: this.#views(r.posts), cursor: r.cursor };
  }

  search(query: string, limit: number): PostView[] {
    return this.#views(this.#d.store.search(query, { limit, plain: true }));
  }

  async status(session: SessionIdentity): Promise<NodeStatus> {
    const runner = this.#d.runnerStatus();
    const notices = await this.#d.safetyNotices();
    return {
      node: this.#d.nodeId,
      profile: { name: session.profile, npub: npubEncode(session.pubkey) },
      // A runner session reads neither where the node's files are nor how to
      // acknowledge a change (docs/decisions/runner.md keeps `wats config ack` out of its reach).
      ...(session.runner ? {} : { dataDir: this.#d.dataDir }),
      relays: this.#d.relays,
      agent: runner.agent,
      pendingDrafts: this.#d.review.list().length,
      safetyNotices: session.runner ? toldNotices(notices) : notices,
      halted: runner.halted,
      budget: runner.budget,
      ...(runner.pauses ? { pauses: runner.pauses } : {}),
      storedPosts: this.#d.store.count(),
      ...(this.#d.networkStatus ? { network: this.#d.networkStatus() } : {}),
    };
  }

  pending(): PendingDraft[] {
    return this.#d.review.list();
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
      const held = this.#d.review.get(id);
      let signed = held.signed;
      if (signed !== undefined) {
        // Recorded by an earlier attempt: checked again, as the file could have been changed.
        const checked = await validateEvent(signed, {
          nowMs: this.#d.now(),
          maxSkewMs: this.#d.maxSkewMs,
        });
        if (!checked.ok) {
          throw new PostError(
            `review.${checked.code}`,
            `draft ${id} holds a signed post that is not valid (${checked.reason}): remove the draft file`,
          );
        }
        signed = checked.event;
      } else {
        const draft = text === undefined ? held : { ...held, text };
        this.#checkDraft(draft);
        const parent = draft.parent !== undefined ? this.#d.store.get(draft.parent) : undefined;
        signed = await this.#sign(draft.profile, draft, parent);
        this.#d.review.markSigned(id, signed);
      }
      const out = this.#store(signed);
      this.#d.review.remove(id);
      return out;
    } finally {
      this.#approving.delete(id);
    }
  }

  reject(id: string, reason: string, by: SessionIdentity): void {
    this.#mayReview(by, "reject");
    this.#d.review.reject(id, reason);
  }

  decidePermission(id: string, approved: boolean, by: SessionIdentity): string | undefined {
    this.#mayReview(by, approved ? "approve" : "reject");
    const held = this.#d.review.get(id);
    if (held.permission === undefined) return undefined;
    const agents = this.#d.codingAgents;
    if (agents?.answer === undefined) {
      throw new PostError(
        "review.no_agents",
        `request ${id} is a coding agent's, but this node has no enabled harness to answer it: ` +
          "enable it in config.toml and restart, or reject it",
      );
    }
    // Removed first: the answer goes once, even when sending it fails.
    this.#d.review.remove(id);
    return agents.answer(id, approved, held.permission);
  }

  /**
   * Review is a person's decision. The tools are never offered to runner
   * sessions; this refuses them here too, and any session of the agent profile.
   */
  #mayReview(by: SessionIdentity, what: "approve" | "reject"): void {
    if (by.runner || by.profile === this.#d.agentProfile) {
      throw new PostError(
        "review.refused",
        `the agent cannot ${what} drafts held for review: a person reviews them`,
      );
    }
  }

  /** pubkey → local profile name, read once per tool call. */
  #localNames(): Map<string, string> {
    return new Map(this.#d.store.profiles().map((r) => [r.pubkey, shownProfileName(r.name)]));
  }

  #views(posts: StoredPost[]): PostView[] {
    const names = this.#localNames();
    return posts.map((p) => this.#view(p, names));
  }

  #view(p: StoredPost, names: Map<string, string>): PostView {
    const local = names.get(p.author);
    return {
      id: p.id,
      seq: p.seq,
      author: p.author,
      authorNpub: npubEncode(p.author),
      localProfile: local,
      kind: p.kind,
      title: p.title,
      text: p.text,
      root: p.root,
      parent: p.parent,
      grafted: p.grafted,
      caps: p.caps,
      createdAt: p.createdAt,
    };
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
