/**
 * Halting this node's agent (ADR 0011 safety, DESIGN §7). A `halt` post from
 * an accepted author stops new runs and cancels the current one until
 * `wats resume`. Accepted: the keys in `halt.accept`, and the node's own
 * person profile (a person may always halt their own agent). A halt with `p`
 * tags halts only the agents it names; one without halts every agent that
 * accepts its author. The state lives in the store, so it survives a restart;
 * a halt signed before the last resume (a late copy from a relay) is ignored.
 *
 * @module
 */

import type { StoredPost } from "../store/store.ts";
import type { MetaStore } from "../runner/ports.ts";

/** The halt in force. */
export interface HaltRecord {
  /** The halt post's id. */
  id: string;
  /** Its author (hex). */
  by: string;
  /** Its created_at, seconds. */
  at: number;
  reason?: string;
}

const HALT_KEY = "halt.current";
const RESUMED_KEY = "halt.resumed_at";

/** What halting acts on: the runner, when one runs. */
export interface Haltable {
  halt(reason: string): void;
  resume(): void;
}

/** The node's halt state. */
export class HaltState {
  readonly #meta: MetaStore;
  readonly #accepted: ReadonlySet<string>;
  readonly #agentKey: string;
  readonly #now: () => number;
  #target: Haltable | undefined;

  constructor(
    opts: { meta: MetaStore; accepted: Iterable<string>; agentKey: string; now: () => number },
  ) {
    this.#meta = opts.meta;
    this.#accepted = new Set(opts.accepted);
    this.#agentKey = opts.agentKey;
    this.#now = opts.now;
  }

  /** The halt in force, or null. */
  current(): HaltRecord | null {
    const raw = this.#meta.getMeta(HALT_KEY);
    if (raw === undefined || raw === "") return null;
    try {
      return JSON.parse(raw) as HaltRecord;
    } catch {
      return null;
    }
  }

  /** Connects the runner; a halt recorded before a restart applies at once. */
  attach(target: Haltable): void {
    this.#target = target;
    const h = this.current();
    if (h) target.halt(describe(h));
  }

  /** Looks at newly stored posts; returns the halt they put in force, if any. */
  onPosts(posts: readonly StoredPost[]): HaltRecord | undefined {
    let applied: HaltRecord | undefined;
    for (const p of posts) {
      if (p.kind !== "halt" || !this.applies(p)) continue;
      const rec: HaltRecord = {
        id: p.id,
        by: p.author,
        at: p.createdAt,
        ...(p.text ? { reason: p.text } : {}),
      };
      this.#meta.setMeta(HALT_KEY, JSON.stringify(rec));
      this.#target?.halt(describe(rec));
      applied = rec;
    }
    return applied;
  }

  /** True when `post` (a halt) is from an accepted author, for this agent, and not stale. */
  applies(post: Pick<StoredPost, "author" | "createdAt" | "tags">): boolean {
    if (!this.#accepted.has(post.author)) return false;
    const targets = post.tags.filter((t) => t[0] === "p").map((t) => t[1]);
    if (targets.length > 0 && !targets.includes(this.#agentKey)) return false;
    const resumedAt = Number(this.#meta.getMeta(RESUMED_KEY) ?? "0");
    return post.createdAt > resumedAt;
  }

  /** `wats resume`: ends the halt. Returns what it ended, or null when nothing was halted. */
  resume(): HaltRecord | null {
    const h = this.current();
    this.#meta.setMeta(HALT_KEY, "");
    this.#meta.setMeta(RESUMED_KEY, String(Math.floor(this.#now() / 1000)));
    this.#target?.resume();
    return h;
  }
}

function describe(h: HaltRecord): string {
  return `halt ${h.id.slice(0, 12)} by ${h.by.slice(0, 12)}${h.reason ? `: ${h.reason}` : ""}; ` +
    "run `wats resume` to end it";
}
