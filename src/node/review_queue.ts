/**
 * The review queue (agent.review, docs/decisions/runner.md): drafts by the agent wait in
 * `<data dir>/agent/pending/<id>.json` until a person approves or rejects them.
 * Drafts are kept unsigned so `approve --edit` can change them; the node signs
 * at approval. Rejection reasons wait in `agent/rejections.jsonl` for the next
 * run's prompt. Only the daemon writes here; the CLI asks it over the socket.
 *
 * Approval publishes before it removes, and never twice: the signed post is
 * written into the draft's file first (`signed`), then stored, then the file is
 * removed. A crash or a failure anywhere in between leaves the draft with its
 * signed post, and approving it again stores that same event, which the store
 * takes once (a post's id is the hash of its content).
 *
 * Besides drafts it holds coding agents' permission requests (kind
 * `permission`, docs/acp.md): approving or rejecting one answers the request
 * instead of publishing.
 *
 * Expiry (agent.review_ttl) applies on every read, approval included; a draft
 * whose publishing has started is approved already and no longer expires.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { bytesToHex } from "@noble/hashes/utils.js";
import { PostError } from "../errors.ts";
import type { PendingDraft } from "../contracts/views.ts";
import type { NostrEvent } from "../posts/post.ts";

/** A draft as held: what `PendingDraft` shows plus what publishing needs. */
export interface HeldDraft extends PendingDraft {
  caps?: string[];
  /** The authors (hex keys) an ask is for. */
  to?: string[];
  /** The post it answers, as it was when the draft was held (for `pending show`). */
  parentSummary?: { author: string; kind: string; title?: string; text: string };
  /**
   * The post as signed when a person approved the draft, written before it is
   * stored: approving again publishes this same event, so a retry after a
   * crash or a failed store cannot publish a second post.
   */
  signed?: NostrEvent;
}

/**
 * What waits for a person, counted the one way every surface counts it
 * (`wats status`, the overview, the review page): drafted posts, and coding
 * agents' permission requests, which are held in the same queue but are no drafts.
 */
export function heldCounts(
  held: readonly PendingDraft[],
): { pendingDrafts: number; pendingRequests: number } {
  const pendingRequests = held.filter((d) => d.permission !== undefined).length;
  return { pendingDrafts: held.length - pendingRequests, pendingRequests };
}

/** A rejection waiting to be told to the next run. */
export interface Rejection {
  id: string;
  kind: string;
  text: string;
  reason: string;
  at: number;
}

/** The review queue on disk. */
export class ReviewQueue {
  readonly #dir: string;
  readonly #rejections: string;
  readonly #ttlMs: number;
  readonly #now: () => number;

  readonly #warn: (message: string) => void;
  readonly #warned = new Set<string>();

  constructor(
    opts: {
      dir: string;
      rejectionsFile: string;
      ttlMs: number;
      now: () => number;
      warn?: (message: string) => void;
    },
  ) {
    this.#warn = opts.warn ?? (() => {});
    this.#dir = opts.dir;
    this.#rejections = opts.rejectionsFile;
    this.#ttlMs = opts.ttlMs;
    this.#now = opts.now;
  }

  /** Holds a draft and returns it with its id. */
  hold(draft: Omit<HeldDraft, "id">): HeldDraft {
    Deno.mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    const id = bytesToHex(crypto.getRandomValues(new Uint8Array(6)));
    const held: HeldDraft = { id, ...draft };
    writeAtomically(`${this.#dir}/${id}.json`, JSON.stringify(held, null, 2) + "\n");
    return held;
  }

  /** Drafts waiting, oldest first; expired ones are dropped (and a rejection noted). */
  list(): HeldDraft[] {
    const out: HeldDraft[] = [];
    for (const d of this.#all()) {
      if (this.#expired(d)) this.#expire(d);
      else out.push(d);
    }
    return out;
  }

  /**
   * The drafts waiting, oldest first, without changing anything: what
   * `wats agent pending` shows (it may only read). Expired drafts are left out;
   * the daemon drops them at its next read. Requires `--allow-read` on the
   * pending folder.
   */
  read(): HeldDraft[] {
    return this.#all().filter((d) => !this.#expired(d));
  }

  #all(): HeldDraft[] {
    const out: HeldDraft[] = [];
    let names: string[];
    try {
      names = [...Deno.readDirSync(this.#dir)].filter((e) => e.isFile && e.name.endsWith(".json"))
        .map((e) => e.name);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return [];
      throw err;
    }
    for (const name of names) {
      let d: HeldDraft | undefined;
      try {
        d = this.#read(`${this.#dir}/${name}`);
      } catch (err) {
        // One damaged draft must not hide the others, nor break status: it
        // stays on disk for the person, and is reported once.
        if (!this.#warned.has(name)) this.#warn(errorMessage(err));
        this.#warned.add(name);
        continue;
      }
      if (d !== undefined) out.push(d);
    }
    return out.sort((a, b) => a.createdAt - b.createdAt);
  }

  /**
   * The draft `id`, or a `PostError` saying how to find the right one. An
   * expired draft is dropped (the next run hears why) and reported as expired.
   */
  get(id: string): HeldDraft {
    const d = this.#read(this.#path(id));
    if (d === undefined) {
      throw new PostError(
        "review.unknown",
        `no draft ${id} is waiting: see \`wats agent pending\``,
      );
    }
    if (this.#expired(d)) {
      this.#expire(d);
      throw new PostError(
        "review.expired",
        `draft ${id} expired after agent.review_ttl without review and was dropped`,
      );
    }
    return d;
  }

  /**
   * Records the post a person approved, before it is stored (see the module
   * doc). Replaces the file atomically, so the draft is either as it was or
   * carries the whole signed post.
   */
  markSigned(id: string, signed: NostrEvent): HeldDraft {
    const d: HeldDraft = { ...this.get(id), text: signed.content, signed, approvedAs: signed.id };
    writeAtomically(this.#path(id), JSON.stringify(d, null, 2) + "\n");
    return d;
  }

  /** Removes a draft once its post is stored. Removing one already gone is not an error. */
  remove(id: string): void {
    try {
      Deno.removeSync(this.#path(id));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }

  /** Replaces a draft's text (approve --edit). */
  edit(id: string, text: string): HeldDraft {
    const d = { ...this.#unsigned(id), text };
    writeAtomically(this.#path(id), JSON.stringify(d, null, 2) + "\n");
    return d;
  }

  /**
   * Drops a draft and keeps the reason for the next run's prompt. A draft whose
   * publishing has started cannot be dropped: its post may be out already.
   */
  reject(id: string, reason: string): void {
    this.#drop(this.#unsigned(id), reason);
  }

  #drop(d: HeldDraft, reason: string): void {
    // The reason is kept before the file goes: a crash in between leaves the
    // draft, never a draft dropped without its reason.
    const r: Rejection = { id: d.id, kind: d.kind, text: d.text, reason, at: this.#now() };
    Deno.writeTextFileSync(this.#rejections, JSON.stringify(r) + "\n", { append: true });
    this.remove(d.id);
  }

  #expired(d: HeldDraft): boolean {
    // A coding agent's request never expires: its prompt waits on the answer.
    return d.signed === undefined && d.permission === undefined &&
      this.#now() - d.createdAt * 1000 > this.#ttlMs;
  }

  #expire(d: HeldDraft): void {
    this.#drop(d, "expired after agent.review_ttl without review");
  }

  /** The draft, refused once a person approved it and its publishing started. */
  #unsigned(id: string): HeldDraft {
    const d = this.get(id);
    if (d.signed !== undefined) {
      throw new PostError(
        "review.publishing",
        `draft ${id} was approved as post ${d.signed.id} and is being published: approve it again to finish`,
      );
    }
    return d;
  }

  /** Rejections not yet told to a run; clears them. */
  drainRejections(): Rejection[] {
    let text: string;
    try {
      text = Deno.readTextFileSync(this.#rejections);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return [];
      throw err;
    }
    Deno.removeSync(this.#rejections);
    return text.split("\n").filter((l) => l.trim() !== "").flatMap((l) => {
      try {
        return [JSON.parse(l) as Rejection];
      } catch {
        return [];
      }
    });
  }

  #path(id: string): string {
    if (!/^[0-9a-f]{12}$/.test(id)) {
      throw new PostError("review.bad_id", `"${id}" is not a draft id: see \`wats agent pending\``);
    }
    return `${this.#dir}/${id}.json`;
  }

  #read(path: string): HeldDraft | undefined {
    try {
      return JSON.parse(Deno.readTextFileSync(path)) as HeldDraft;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return undefined;
      // A truncated draft stays on disk for the person to look at; it is never
      // deleted silently.
      throw new PostError(
        "review.unreadable",
        `draft ${path} is unreadable (${errorMessage(err)}): fix or remove the file`,
      );
    }
  }
}

function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  Deno.writeTextFileSync(tmp, text, { mode: 0o600 });
  Deno.renameSync(tmp, path);
}
