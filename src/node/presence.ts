/**
 * The agents this node knows (docs/decisions/presence.md): each author's newest
 * presence, as the store keeps it (one per author, a bounded number of authors),
 * with the time this node received it. A presence older than 3 × `agent.presence_every`
 * is stale: the agent may be gone, whatever its state said, so it is not counted
 * as reachable. Nor is an author that sent nothing but its presence (a key costs a
 * flood nothing): it is listed after the seen ones and counted apart. Presence never wakes an agent (src/runner/wake_rules.ts ignores the
 * kind); this table only answers who is out there.
 *
 * @module
 */

import { npubEncode } from "nostr-tools/nip19";
import type { AgentReach, KnownAgent } from "../contracts/views.ts";
import { readPresence } from "../posts/presence.ts";
import type { Store } from "../store/store.ts";
import { PRESENCE_KIND } from "../posts/kinds.ts";
import { CAP_PREFIX, type Post, readPost } from "../posts/post.ts";
import { MAX_PRESENCE_AUTHORS } from "../store/limits.ts";
import { isCapName } from "../cap_name.ts";
import { MAX_CAPS } from "../posts/post.ts";
import { clip, oneLine } from "../posts/fence.ts";

/** The most characters of an agent's title shown. */
export const MAX_TITLE_SHOWN = 80;

/** A presence counts as stale after this many refresh periods without a new one. */
export const STALE_AFTER_PERIODS = 3;

/** What the table needs. */
export interface KnownAgentsOptions {
  store: Store;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** `agent.presence_every`, in ms. */
  everyMs: number;
  /**
   * `agent.ignore_local`: this node's agent takes nothing this node's other
   * profiles post, so it is no taker of their asks (the person's, from `wats ui`).
   */
  ignoreLocal?: boolean;
}

/** The known agents; reads the store, remembers arrival times. */
export class KnownAgents {
  readonly #options: KnownAgentsOptions;
  /** When each author's stored presence arrived here, by author; bounded like the store. */
  readonly #arrived = new Map<string, { id: string; at: number }>();
  readonly #unlisten: () => void;

  constructor(opts: KnownAgentsOptions) {
    this.#options = opts;
    this.#unlisten = opts.store.onInsert((posts) => {
      for (const p of posts) {
        if (p.kind !== "presence") continue;
        this.#arrived.delete(p.author);
        this.#arrived.set(p.author, { id: p.id, at: opts.now() });
        if (this.#arrived.size > MAX_PRESENCE_AUTHORS) {
          this.#arrived.delete(this.#arrived.keys().next().value!);
        }
      }
    });
  }

  /**
   * The known agents, at most `limit` (default all): the seen ones first, each group
   * newest presence first, so a flood of bare presences cannot push a real agent
   * out of a bounded list.
   */
  list(limit?: number): KnownAgent[] {
    const now = this.#options.now();
    const local = this.#options.store.localAuthors();
    return this.#options.store.presence(limit === undefined ? {} : { limit })
      .map((p) => this.#view(p, now, local.has(p.author), p.seen));
  }

  /** How many agents are known. */
  count(): number {
    return this.#options.store.presenceCount();
  }

  /** How many agents are known, and how many of them are seen (not a bare presence). */
  counts(): { total: number; seen: number } {
    return this.#options.store.presenceCounts();
  }

  /**
   * How many known agents other than `author` an ask with `to` (hex keys) and
   * `caps` would be for: the addressees when `to` is given, else the agents that
   * announced at least one of the caps, else every agent (an open ask).
   */
  reach(author: string, caps: readonly string[], to: readonly string[] = []): AgentReach {
    const now = this.#options.now();
    // Only the presences that fit, through the store's indexes: an open ask alone reads them all.
    const maxLimit = MAX_PRESENCE_AUTHORS;
    const candidates = to.length > 0
      ? this.#options.store.query({ kinds: [PRESENCE_KIND], authors: [...to] }, { maxLimit })
      : caps.length > 0
      ? this.#options.store.query(
        { kinds: [PRESENCE_KIND], "#t": caps.map((c) => CAP_PREFIX + c) },
        { maxLimit },
      )
      : this.#options.store.presence().map((p) => p.event);
    const seen = this.#options.store.seenAuthors([...new Set(candidates.map((e) => e.pubkey))]);
    const local = this.#options.ignoreLocal
      ? this.#options.store.localAuthors()
      : new Set<string>();
    const ownAsk = local.has(author);
    let matching = 0;
    let reachable = 0;
    let unseen = 0;
    for (const e of candidates) {
      if (e.pubkey === author || (ownAsk && local.has(e.pubkey))) continue;
      matching++;
      const view = this.#view(readPost(e), now, false, seen.has(e.pubkey));
      if (view.reachable) reachable++;
      else if (view.unseen) unseen++;
    }
    return { matching, reachable, ...(unseen > 0 ? { unseen } : {}) };
  }

  /** Stops listening to the store. */
  close(): void {
    this.#unlisten();
  }

  #view(p: Post, now: number, local: boolean, seen: boolean): KnownAgent {
    const arrived = this.#arrived.get(p.author);
    // Stored before this daemon started: its own date is the best guess, never the future.
    const lastSeen = arrived?.id === p.id ? arrived.at : Math.min(p.createdAt * 1000, now);
    const state = readPresence(p.tags);
    const stale = now - lastSeen > STALE_AFTER_PERIODS * this.#options.everyMs;
    // Another author's tags: shown bounded, and only caps a draft could name.
    const title = p.title === undefined ? "" : clip(oneLine(p.title), MAX_TITLE_SHOWN);
    return {
      npub: npubEncode(p.author),
      ...(title ? { title } : {}),
      caps: [...new Set(p.caps)].filter(isCapName).slice(0, MAX_CAPS),
      ...state,
      lastSeen,
      stale,
      reachable: seen && !stale && state.state === "running",
      ...(!seen && !stale && state.state === "running" ? { unseen: true } : {}),
      local,
    };
  }
}
