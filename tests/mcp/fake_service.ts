/**
 * An in-memory `NodeService` for the MCP tests: posts in an array, ids from a
 * hash of the content, profiles from a fixed list, run tokens from a map. It
 * checks what the real node checks that matters to the tools (the draft, with the
 * node's own `judgeDraft`; unknown parent; known profile; valid token) and records
 * every call.
 *
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { WatsError } from "../../src/errors.ts";
import { judgeDraft, noSuchPost } from "../../src/posts/draft.ts";
import type { Hello, SessionIdentity } from "../../src/contracts/session.ts";
import type { NodeService } from "../../src/mcp/service.ts";
import type {
  AgentReach,
  KnownAgent,
  NodeStatus,
  PendingDraft,
  PostOutcome,
  PostRequest,
  PostView,
} from "../../src/contracts/views.ts";

/** A fake npub for a hex key: recognisable, not bech32. */
export function fakeNpub(pubkey: string): string {
  return `npub1${pubkey.slice(0, 58)}`;
}

/** The fake key of a profile name. */
export function fakePubkey(profile: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(`profile:${profile}`)));
}

/** Options of {@linkcode FakeService}. */
export interface FakeServiceOptions {
  /** Profiles that may connect (default: alice, alice-agent, bob). */
  profiles?: string[];
  /** Valid run tokens and their run ids. */
  tokens?: Record<string, string>;
  /** Hold posts of runner sessions for review. */
  review?: boolean;
}

/** The in-memory node. */
export class FakeService implements NodeService {
  readonly posts: PostView[] = [];
  readonly drafts: PendingDraft[] = [];
  readonly rejected: { id: string; reason: string }[] = [];
  readonly calls: string[] = [];
  readonly profiles: string[];
  readonly tokens: Record<string, string>;
  review: boolean;
  /** The agents `agents` lists and `reach` counts, as the test sets them. */
  knownAgents: KnownAgent[] = [];
  /** The arguments of each `reach` call. */
  readonly reaches: { caps: readonly string[]; to: readonly string[] }[] = [];
  /** When set, the next service call throws it (a node-side failure). */
  failNext: Error | null = null;
  #clock = 1_800_000_000;

  constructor(opts: FakeServiceOptions = {}) {
    this.profiles = opts.profiles ?? ["alice", "alice-agent", "bob"];
    this.tokens = opts.tokens ?? {};
    this.review = opts.review ?? false;
  }

  #fail(): void {
    const err = this.failNext;
    if (err) {
      this.failNext = null;
      throw err;
    }
  }

  authenticate(hello: Hello): SessionIdentity {
    this.calls.push("authenticate");
    if (hello.token !== undefined) {
      const runId = this.tokens[hello.token];
      if (runId === undefined) {
        throw new WatsError(
          "session.token",
          "this run token is not valid (the run ended or was never started)",
        );
      }
      return { profile: "alice-agent", pubkey: fakePubkey("alice-agent"), runner: true, runId };
    }
    const profile = hello.profile ?? "alice";
    if (!this.profiles.includes(profile)) {
      throw new WatsError(
        "profile.invalid",
        `unknown profile "${profile}": use one of ${this.profiles.join(", ")}`,
      );
    }
    return { profile, pubkey: fakePubkey(profile), runner: false };
  }

  /** Adds a post as if it arrived from `author` (another node when not a local profile). */
  add(author: string, draft: PostRequest, local = true): PostView {
    const parent = draft.parent !== undefined ? this.get(draft.parent) : undefined;
    const createdAt = this.#clock++;
    const pubkey = fakePubkey(author);
    const id = bytesToHex(
      sha256(new TextEncoder().encode(JSON.stringify([pubkey, createdAt, draft]))),
    );
    const post: PostView = {
      id,
      seq: this.posts.length + 1,
      author: pubkey,
      authorNpub: fakeNpub(pubkey),
      localProfile: local ? author : undefined,
      kind: draft.kind,
      title: draft.title,
      text: draft.text,
      root: parent ? (parent.root ?? parent.id) : undefined,
      parent: parent?.id,
      grafted: false,
      caps: draft.caps ?? [],
      createdAt,
    };
    this.posts.push(post);
    return post;
  }

  post(session: SessionIdentity, draft: PostRequest): Promise<PostOutcome> {
    this.calls.push(`post:${draft.kind}`);
    this.#fail();
    draft = judgeDraft(draft);
    if (draft.parent !== undefined && this.get(draft.parent) === undefined) {
      throw noSuchPost(draft.parent);
    }
    if (this.review && session.runner) {
      const parent = draft.parent !== undefined ? this.get(draft.parent) : undefined;
      const id = `draft-${this.drafts.length + 1}`;
      const thread = parent ? (parent.root ?? parent.id) : undefined;
      this.drafts.push({
        id,
        kind: draft.kind,
        title: draft.title,
        text: draft.text,
        parent: draft.parent,
        thread,
        profile: session.profile,
        runId: session.runId,
        createdAt: this.#clock,
      });
      return Promise.resolve({ id, thread: thread ?? id, held: true });
    }
    const p = this.add(session.profile, draft);
    return Promise.resolve({ id: p.id, thread: p.root ?? p.id, held: false });
  }

  get(id: string): PostView | undefined {
    return this.posts.find((p) => p.id === id);
  }

  /** As the store answers: the root first, then the newest `limit` replies, oldest first. */
  thread(id: string, limit: number): PostView[] {
    this.calls.push("thread");
    this.#fail();
    const root = this.posts.filter((p) => p.id === id);
    const replies = this.posts.filter((p) => p.root === id && p.id !== id);
    return [...root, ...replies.slice(Math.max(0, replies.length - limit))];
  }

  feed(sinceSeq: number, limit: number, kinds?: string[]): { posts: PostView[]; cursor: number } {
    this.calls.push("feed");
    this.#fail();
    const posts = this.posts
      .filter((p) => p.seq > sinceSeq && (kinds === undefined || kinds.includes(p.kind)))
      .slice(0, limit);
    return { posts, cursor: posts.length > 0 ? posts[posts.length - 1]!.seq : sinceSeq };
  }

  search(query: string, limit: number): PostView[] {
    this.calls.push("search");
    this.#fail();
    const words = query.toLowerCase().split(/\s+/);
    return this.posts
      .filter((p) => words.every((w) => `${p.title ?? ""} ${p.text}`.toLowerCase().includes(w)))
      .slice(0, limit);
  }

  status(session: SessionIdentity): Promise<NodeStatus> {
    this.calls.push("status");
    this.#fail();
    return Promise.resolve({
      node: "node-test",
      profile: { name: session.profile, npub: fakeNpub(session.pubkey) },
      dataDir: "/tmp/wats-test",
      relays: [],
      agent: { runtime: "claude", profile: "alice-agent" },
      pendingDrafts: this.drafts.length,
      safetyNotices: [
        "agent.review changed from true to false (not acknowledged: run wats config ack)",
      ],
      halted: null,
      budget: {
        usdToday: 0.5,
        usdPerDay: 2,
        usdMonth: 3,
        usdPerMonth: 20,
        runsToday: 4,
        runsPerDay: 48,
      },
      storedPosts: this.posts.length,
    });
  }

  agents(limit?: number): KnownAgent[] {
    this.calls.push("agents");
    return this.knownAgents.slice(0, limit);
  }

  reach(
    _session: SessionIdentity,
    caps: readonly string[],
    to: readonly string[] = [],
  ): AgentReach {
    this.calls.push("reach");
    this.reaches.push({ caps, to });
    const matching = this.knownAgents.filter((a) =>
      caps.length === 0 || caps.some((c) => a.caps.includes(c))
    );
    return { matching: matching.length, reachable: matching.filter((a) => a.reachable).length };
  }

  pending(): PendingDraft[] {
    this.calls.push("pending");
    return [...this.drafts];
  }

  approve(id: string, _by: SessionIdentity, text?: string): Promise<PostOutcome> {
    this.calls.push("approve");
    const i = this.drafts.findIndex((d) => d.id === id);
    if (i < 0) throw new WatsError("review.unknown", `no draft ${id}: list drafts with pending`);
    const d = this.drafts[i]!;
    const draft = judgeDraft({
      kind: d.kind,
      text: text ?? d.text,
      title: d.title,
      parent: d.parent,
    });
    this.drafts.splice(i, 1);
    const p = this.add(d.profile, draft);
    return Promise.resolve({ id: p.id, thread: p.root ?? p.id, held: false });
  }

  reject(id: string, reason: string, _by: SessionIdentity): void {
    this.calls.push("reject");
    const i = this.drafts.findIndex((d) => d.id === id);
    if (i < 0) throw new WatsError("review.unknown", `no draft ${id}: list drafts with pending`);
    this.drafts.splice(i, 1);
    this.rejected.push({ id, reason });
  }
}
