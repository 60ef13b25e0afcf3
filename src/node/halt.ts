/**
 * Halting this node's agent (docs/decisions/runner.md safety, docs/safety.md). A `halt` post from
 * an accepted author stops new runs and cancels the current one until
 * `wats resume`, and likewise every coding agent's call: none starts, however
 * started (the agent's tool, a person's send back or decision), and the running
 * ones are stopped (src/acp/calls.ts). Accepted: the keys in `halt.accept`, and the node's own
 * person profile (a person may always halt their own agent). A halt with `p`
 * tags halts only the agents it names; one without halts every agent that
 * accepts its author. The state lives in the store, so it survives a restart.
 *
 * A halt and a resume are ordered by arrival: a halt the store received after
 * the last `wats resume` (a higher store seq) holds, whatever its sender's
 * clock says; one received before it was ended by it. A late copy of a halt
 * already received is not stored again, so it cannot re-halt.
 *
 * A halt record that cannot be read is read as a halt, with a notice: when the
 * node cannot tell, it stops the agent and lets the person decide.
 *
 * @module
 */

import type { StoredPost } from "../store/store.ts";
import type { MetaStore } from "../runner/ports.ts";

/** What halting reads and writes in the store: its meta table, and the newest seq. */
export interface HaltStore extends MetaStore {
  /** The highest seq stored so far (0 when empty). */
  maxSeq(): number;
}

/** The halt in force. */
export interface HaltRecord {
  /** The halt post's id. */
  id: string;
  /** Its author (hex). */
  by: string;
  /** Its created_at, seconds. */
  at: number;
  reason?: string;
  /** True when the record in the store could not be read (`reason` says so). */
  unreadable?: true;
}

const HALT_KEY = "halt.current";
/** The store's seq at the last `wats resume`: halts received after it hold. */
const RESUMED_SEQ_KEY = "halt.resumed_seq";

/** What halting acts on: the runner, when one runs, and the coding agents' layer. */
export interface Haltable {
  halt(reason: string): void;
  resume(): void;
}

/** The node's halt state. */
export class HaltState {
  readonly #meta: HaltStore;
  readonly #accepted: ReadonlySet<string>;
  readonly #agentKey: string;
  readonly #warn: (message: string) => void;
  readonly #targets: Haltable[] = [];
  #warnedUnreadable = false;

  constructor(
    opts: {
      meta: HaltStore;
      accepted: Iterable<string>;
      agentKey: string;
      /** Told once when the halt record cannot be read. */
      warn?: (message: string) => void;
    },
  ) {
    this.#meta = opts.meta;
    this.#accepted = new Set(opts.accepted);
    this.#agentKey = opts.agentKey;
    this.#warn = opts.warn ?? (() => {});
  }

  /** The halt in force, or null. An unreadable record is a halt (see the module doc). */
  current(): HaltRecord | null {
    const raw = this.#meta.getMeta(HALT_KEY);
    if (raw === undefined || raw === "") return null;
    const rec = parseRecord(raw);
    if (rec !== undefined) return rec;
    const reason =
      `the halt record in the store is unreadable, so the agent stays halted: run \`wats resume\` once you have checked why`;
    if (!this.#warnedUnreadable) {
      this.#warn(`${reason} (record: ${JSON.stringify(raw.slice(0, 200))})`);
    }
    this.#warnedUnreadable = true;
    return { id: "", by: "", at: 0, reason, unreadable: true };
  }

  /**
   * Connects what a halt stops (the runner, the coding agents); a halt
   * recorded before a restart applies at once.
   */
  attach(target: Haltable): void {
    this.#targets.push(target);
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
      for (const t of this.#targets) t.halt(describe(rec));
      applied = rec;
    }
    return applied;
  }

  /**
   * True when `post` (a halt) is from an accepted author, for this agent, and
   * arrived after the last resume.
   */
  applies(post: Pick<StoredPost, "author" | "seq" | "tags">): boolean {
    if (!this.#accepted.has(post.author)) return false;
    const targets = post.tags.filter((t) => t[0] === "p").map((t) => t[1]);
    if (targets.length > 0 && !targets.includes(this.#agentKey)) return false;
    const resumedSeq = Number(this.#meta.getMeta(RESUMED_SEQ_KEY) ?? "0");
    // An unreadable mark must not let an old halt through nor block a new one:
    // the halt holds (halting is the safe side).
    return !(post.seq <= resumedSeq);
  }

  /** `wats resume`: ends the halt. Returns what it ended, or null when nothing was halted. */
  resume(): HaltRecord | null {
    const h = this.current();
    this.#meta.setMeta(HALT_KEY, "");
    this.#meta.setMeta(RESUMED_SEQ_KEY, String(this.#meta.maxSeq()));
    this.#warnedUnreadable = false;
    for (const t of this.#targets) t.resume();
    return h;
  }
}

/** A stored halt record, or undefined when it is not one. */
function parseRecord(raw: string): HaltRecord | undefined {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null) return undefined;
  const r = v as Record<string, unknown>;
  if (typeof r.id !== "string" || typeof r.by !== "string" || typeof r.at !== "number") {
    return undefined;
  }
  if (r.reason !== undefined && typeof r.reason !== "string") return undefined;
  return {
    id: r.id,
    by: r.by,
    at: r.at,
    ...(typeof r.reason === "string" ? { reason: r.reason } : {}),
  };
}

function describe(h: HaltRecord): string {
  if (h.unreadable) return h.reason ?? "the halt record is unreadable";
  return `halt ${h.id.slice(0, 12)} by ${h.by.slice(0, 12)}${h.reason ? `: ${h.reason}` : ""}; ` +
    "run `wats resume` to end it";
}
