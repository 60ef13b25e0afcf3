/**
 * What coding agents' calls cost, kept in `<data>/agent/acp_spend.jsonl` (one
 * line a call that reported a cost, or that prompted its agent and reported
 * none: it counts as a run without a cost) so that the budget still counts it
 * after a restart (issue 10, item 8; issue 30). Only the current UTC month
 * matters: older lines are dropped when the file is next written. What a call
 * in flight reported so far is kept apart, in one note per call
 * ({@linkcode SpendNote}), until its line is added.
 *
 * @module
 */

import { utcMonthStart } from "../duration.ts";

/** One call's cost. */
export interface AcpSpend {
  /** When the call ended, ms since the epoch. */
  at: number;
  /** Absent: the call reported no cost. */
  usd?: number;
  harness: string;
  call: string;
}

/** The spend file of one data directory. */
export class AcpSpendFile {
  readonly path: string;
  constructor(agentDir: string) {
    this.path = `${agentDir}/acp_spend.jsonl`;
  }

  /** The lines of the UTC month of `now` (a missing or damaged line is skipped). */
  month(now: number): AcpSpend[] {
    let text: string;
    try {
      text = Deno.readTextFileSync(this.path);
    } catch {
      return [];
    }
    const start = utcMonthStart(now);
    const out: AcpSpend[] = [];
    for (const line of text.split("\n")) {
      try {
        const v = JSON.parse(line);
        const usd = v?.usd === undefined || typeof v.usd === "number";
        if (typeof v?.at === "number" && usd && v.at >= start) out.push(v);
      } catch {
        // Blank or cut short by a crash.
      }
    }
    return out;
  }

  /** Where the open note of the call `call` of `harness` is kept ({@linkcode SpendNote}). */
  openPath(harness: string, call: string): string {
    const name = `${harness}.${call}`.replace(/[^A-Za-z0-9._-]/g, "_");
    return `${this.#openDir}/${name}.json`;
  }

  get #openDir(): string {
    return `${this.path.slice(0, this.path.lastIndexOf("/"))}/acp_spend_open`;
  }

  /**
   * At start: the notes of calls a killed daemon left in flight become their
   * lines (at the time of their last report), unless the call's line is there
   * already (the daemon was killed between adding it and removing the note).
   * Returns how many were added.
   */
  recoverOpen(now: number): number {
    let names: string[];
    try {
      names = [...Deno.readDirSync(this.#openDir)].filter((e) => e.isFile).map((e) => e.name);
    } catch {
      return 0;
    }
    const seen = new Set(this.month(now).map((x) => `${x.harness}\n${x.call}`));
    let added = 0;
    for (const name of names) {
      const path = `${this.#openDir}/${name}`;
      try {
        if (name.endsWith(".json")) {
          const v = JSON.parse(Deno.readTextFileSync(path));
          const whole = typeof v?.at === "number" && typeof v.usd === "number" &&
            typeof v.harness === "string" && typeof v.call === "string";
          if (whole && !seen.has(`${v.harness}\n${v.call}`)) {
            this.add({ at: v.at, usd: v.usd, harness: v.harness, call: v.call });
            added++;
          }
        }
      } catch {
        // A damaged note: nothing can be counted from it.
      }
      Deno.removeSync(path);
    }
    return added;
  }

  /** Adds a call's cost; rewrites the file without last month's lines when it holds any. */
  add(spend: AcpSpend): void {
    const kept = this.month(spend.at);
    const line = JSON.stringify(spend) + "\n";
    let stale = false;
    try {
      const first = Deno.readTextFileSync(this.path).split("\n", 1)[0];
      stale = first !== "" && !kept.some((k) => JSON.stringify(k) === first);
    } catch {
      // No file yet.
    }
    if (stale) {
      Deno.writeTextFileSync(this.path, kept.map((k) => JSON.stringify(k) + "\n").join("") + line);
    } else {
      Deno.mkdirSync(this.path.slice(0, this.path.lastIndexOf("/")), { recursive: true });
      Deno.writeTextFileSync(this.path, line, { append: true });
    }
  }
}

/** At most one write of a call's open note a second, however often it reports. */
export const SPEND_NOTE_EVERY_MS = 1000;

/** What a {@linkcode SpendNote} writes to and when. */
export interface SpendNoteOptions {
  file: AcpSpendFile;
  harness: string;
  call: string;
  /** Each write also notes where the session's cumulative cost stands (its work's state file). */
  session?: (total: number) => void;
  /** The clock, ms since the epoch (tests: a fake one). */
  now?: () => number;
  /** Runs `fn` after `ms`; returns how to cancel it (tests: fake timers). */
  later?: (ms: number, fn: () => void) => () => void;
}

/**
 * What one call in flight has spent so far, kept in
 * `<agentDir>/acp_spend_open/` as the call reports it, so that a daemon killed
 * mid-call (SIGKILL, a power cut) loses none of it: the next start turns the
 * note into the call's line ({@linkcode AcpSpendFile.recoverOpen}). A note is
 * written when the reported cost changes, at most once a second (the last
 * change within the second is written at its end). When the call ends its
 * line is added and the note removed, so nothing is counted twice.
 */
export class SpendNote {
  readonly #options: SpendNoteOptions;
  readonly #path: string;
  #usd = 0;
  #total = 0;
  #written = 0;
  #lastWrite = -Infinity;
  #pending: (() => void) | undefined;

  constructor(o: SpendNoteOptions) {
    this.#options = o;
    this.#path = o.file.openPath(o.harness, o.call);
  }

  /** The call has spent `usd` so far; the session's cumulative cost is `total`. */
  report(usd: number, total: number): void {
    if (usd === this.#usd) return;
    this.#usd = usd;
    this.#total = total;
    if (this.#pending !== undefined) return;
    const wait = this.#lastWrite + SPEND_NOTE_EVERY_MS - this.#now();
    if (wait <= 0) return this.#write();
    const later = this.#options.later ?? ((ms, fn) => {
      const t = setTimeout(fn, ms);
      return () => clearTimeout(t);
    });
    this.#pending = later(wait, () => {
      this.#pending = undefined;
      this.#write();
    });
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  #write(): void {
    if (this.#usd === this.#written) return;
    this.#lastWrite = this.#now();
    this.#written = this.#usd;
    const { harness, call } = this.#options;
    try {
      Deno.mkdirSync(this.#path.slice(0, this.#path.lastIndexOf("/")), { recursive: true });
      // Written whole, then renamed: a kill mid-write leaves the last note, not half of one.
      const tmp = `${this.#path}.tmp`;
      Deno.writeTextFileSync(
        tmp,
        JSON.stringify({ at: this.#lastWrite, usd: this.#usd, harness, call }),
      );
      Deno.renameSync(tmp, this.#path);
      this.#options.session?.(this.#total);
    } catch {
      // The note is a safeguard against a crash; the call goes on without it.
    }
  }

  /** The call's line was added (or it reported nothing): the note goes. */
  drop(): void {
    this.#pending?.();
    this.#pending = undefined;
    try {
      Deno.removeSync(this.#path);
    } catch {
      // Never written.
    }
  }

  /** The call ended without a final count (its agent died): what it reported becomes its line. */
  settle(): void {
    if (this.#usd > 0) {
      this.#options.file.add({
        at: this.#now(),
        usd: this.#usd,
        harness: this.#options.harness,
        call: this.#options.call,
      });
    }
    this.drop();
  }
}
