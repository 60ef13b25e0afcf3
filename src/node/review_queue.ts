/**
 * The review queue (agent.review, ADR 0011): drafts by the agent wait in
 * `<data dir>/agent/pending/<id>.json` until a person approves or rejects them.
 * Drafts are kept unsigned so `approve --edit` can change them; the node signs
 * at approval. Rejection reasons wait in `agent/rejections.jsonl` for the next
 * run's prompt. Only the daemon writes here; the CLI asks it over the socket.
 *
 * @module
 */

import { bytesToHex } from "@noble/hashes/utils.js";
import { PostError } from "../errors.ts";
import type { PendingDraft } from "../mcp/service.ts";

/** A draft as held: what `PendingDraft` shows plus what publishing needs. */
export interface HeldDraft extends PendingDraft {
  caps?: string[];
  /** The post it answers, as it was when the draft was held (for `pending show`). */
  parentSummary?: { author: string; kind: string; title?: string; text: string };
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
    for (const d of this.read()) {
      if (this.#now() - d.createdAt * 1000 > this.#ttlMs) {
        this.reject(d.id, `expired after agent.review_ttl without review`);
        continue;
      }
      out.push(d);
    }
    return out;
  }

  /**
   * Every draft on disk, oldest first, without changing anything: what
   * `wats agent pending` shows (it may only read). Requires `--allow-read` on
   * the pending folder.
   */
  read(): HeldDraft[] {
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
        if (!this.#warned.has(name)) this.#warn((err as Error).message);
        this.#warned.add(name);
        continue;
      }
      if (d !== undefined) out.push(d);
    }
    return out.sort((a, b) => a.createdAt - b.createdAt);
  }

  /** The draft `id`, or a `PostError` saying how to find the right one. */
  get(id: string): HeldDraft {
    const d = this.#read(this.#path(id));
    if (d === undefined) {
      throw new PostError(
        "review.unknown",
        `no draft ${id} is waiting: see \`wats agent pending\``,
      );
    }
    return d;
  }

  /** Removes and returns a draft, for publishing. */
  take(id: string): HeldDraft {
    const d = this.get(id);
    Deno.removeSync(this.#path(id));
    return d;
  }

  /** Replaces a draft's text (approve --edit). */
  edit(id: string, text: string): HeldDraft {
    const d = { ...this.get(id), text };
    writeAtomically(this.#path(id), JSON.stringify(d, null, 2) + "\n");
    return d;
  }

  /** Drops a draft and keeps the reason for the next run's prompt. */
  reject(id: string, reason: string): void {
    const d = this.take(id);
    const r: Rejection = { id, kind: d.kind, text: d.text, reason, at: this.#now() };
    Deno.writeTextFileSync(this.#rejections, JSON.stringify(r) + "\n", { append: true });
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
        `draft ${path} is unreadable (${(err as Error).message}): fix or remove the file`,
      );
    }
  }
}

function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  Deno.writeTextFileSync(tmp, text, { mode: 0o600 });
  Deno.renameSync(tmp, path);
}
