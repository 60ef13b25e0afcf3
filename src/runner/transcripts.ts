/**
 * Run transcripts (docs/decisions/runner.md, "Observability"): each run leaves
 * `<data dir>/agent/runs/<id>.jsonl` = a `wats_run` header line, then the CLI's
 * output lines as they came, then a `wats_end` footer. The index
 * `agent/runs.jsonl` has one line per finished run (the header's summary and the
 * footer's fields) and feeds `wats agent runs` and the budget at start.
 * Retention keeps the newest 200 runs and at most 30 days.
 *
 * Requires `--allow-read` and `--allow-write` on the runs directory and index.
 *
 * @module
 */

import { WatsError } from "../errors.ts";
import { writeAllSync } from "../io/write_all.ts";
import type { RunIndexEntry, RunStatus, RunTrigger } from "../contracts/runs.ts";
import type { RetryMark } from "./retry.ts";

/** The first line of a transcript. */
export interface RunHeader {
  type: "wats_run";
  id: string;
  trigger: RunTrigger;
  /** The ids of the new events the run was woken for. */
  events: string[];
  /** The ids of feedback posts listed in the prompt. */
  feedback?: string[];
  /** The decisions that woke it (a person decided a coding agent's request). */
  decided?: string[];
  /** The thread the run is about, when it is about one. */
  thread?: string;
  /** ISO 8601, UTC. */
  started_at: string;
  /** The harness name (`claude`). */
  harness: string;
  profile?: string;
  /** `agent.max_turns`, when the harness enforces it (not Codex). */
  max_turns?: number;
  /** What was left of the budget at the start, when the harness reports a cost (not Codex). */
  max_budget_usd?: number;
}

/** The last line of a transcript. */
export interface RunFooter {
  type: "wats_end";
  status: RunStatus;
  /** The process's exit code; null when it was killed by a signal or never ran. */
  exit_code: number | null;
  duration_ms: number;
  turns?: number;
  /** Present only when the harness reported a cost. */
  cost_usd?: number;
  error?: string;
  /** The run ended before the agent could act: what became of its events (src/runner/retry.ts). */
  retry?: RetryMark;
}

/** What retention keeps. */
export interface Retention {
  runs: number;
  maxAgeMs: number;
}

/** docs/decisions/runner.md: the newest 200 runs, at most 30 days. */
export const DEFAULT_RETENTION: Retention = { runs: 200, maxAgeMs: 30 * 24 * 3_600_000 };

const RUN_ID = /^\d{8}T\d{9}Z-[0-9a-f]{6}$/;

/**
 * A new run id, sortable by time: `20261015T120000123Z-a1b2c3` (UTC, to the
 * millisecond, then 6 random hex digits).
 */
export function newRunId(nowMs: number, random: () => number = Math.random): string {
  const iso = new Date(nowMs).toISOString(); // 2026-10-15T12:00:00.123Z
  const stamp = iso.slice(0, 23).replace(/[-:.]/g, "") + "Z";
  const suffix = Math.floor(random() * 0x1000000).toString(16).padStart(6, "0");
  return `${stamp}-${suffix}`;
}

/** True for a string shaped like a run id (safe to use in a path). */
export function isRunId(s: string): boolean {
  return RUN_ID.test(s);
}

/** An open transcript, written line by line. */
export interface TranscriptWriter {
  readonly id: string;
  /** Appends one output line of the CLI, as it came. */
  line(text: string): void;
  /** Writes the footer, closes the file and adds the run to the index. */
  end(footer: Omit<RunFooter, "type">, endedAtMs: number): RunIndexEntry;
}

/** Where transcripts go. */
export interface TranscriptPaths {
  /** `<data dir>/agent/runs`. */
  runsDir: string;
  /** `<data dir>/agent/runs.jsonl`. */
  runsIndex: string;
  /**
   * The spend of runs retention removed while they still count in this UTC
   * month; `spend.json` beside the index when unset.
   */
  spendCarry?: string;
}

/** One run as the budget counts it: when it ended, and its cost when reported. */
export interface SpendLine {
  at: number;
  costUsd?: number;
}

interface CarryFile {
  /** `YYYY-MM`, UTC. */
  month: string;
  /** Per UTC day: the summed cost, and one line per run without a cost. */
  lines: { at: number; cost_usd?: number }[];
}

/** The transcripts of one data directory. */
export class Transcripts {
  readonly #paths: TranscriptPaths;

  readonly #carry: string;

  constructor(paths: TranscriptPaths) {
    this.#paths = paths;
    this.#carry = paths.spendCarry ??
      `${paths.runsIndex.slice(0, paths.runsIndex.lastIndexOf("/") + 1)}spend.json`;
  }

  /**
   * Every run that counts in the UTC month of `nowMs`: the indexed ones, plus
   * the spend of runs retention already removed (so a restart never forgets
   * spend, even after more than 200 runs in a month).
   */
  spend(nowMs: number): SpendLine[] {
    const month = monthKey(nowMs);
    const carried = this.#readCarry();
    const out: SpendLine[] = carried?.month === month
      ? carried.lines.map((l) => ({
        at: l.at,
        ...(l.cost_usd !== undefined ? { costUsd: l.cost_usd } : {}),
      }))
      : [];
    for (const e of this.index()) {
      const at = Date.parse(e.ended_at);
      if (monthKey(at) === month) {
        out.push({ at, ...(e.cost_usd !== undefined ? { costUsd: e.cost_usd } : {}) });
      }
    }
    return out;
  }

  /** The transcript file of run `id`. */
  path(id: string): string {
    if (!isRunId(id)) {
      throw new WatsError("runs.bad_id", `"${id}" is not a run id: see \`wats agent runs\``);
    }
    return `${this.#paths.runsDir}/${id}.jsonl`;
  }

  /** Starts the transcript of a run by writing its header. */
  begin(header: Omit<RunHeader, "type">): TranscriptWriter {
    Deno.mkdirSync(this.#paths.runsDir, { recursive: true, mode: 0o700 });
    const file = Deno.openSync(this.path(header.id), {
      write: true,
      createNew: true,
      mode: 0o600,
    });
    const enc = new TextEncoder();
    const write = (s: string) => writeAllSync(file, enc.encode(s.endsWith("\n") ? s : s + "\n"));
    const full: RunHeader = { type: "wats_run", ...header };
    write(JSON.stringify(full));
    let open = true;
    return {
      id: header.id,
      line: (text) => {
        if (open) write(text);
      },
      end: (footer, endedAtMs) => {
        if (open) {
          write(JSON.stringify({ type: "wats_end", ...footer }));
          file.close();
          open = false;
        }
        const entry = indexEntry(full, footer, endedAtMs);
        this.#appendIndex(entry);
        return entry;
      },
    };
  }

  /**
   * Adds a line after an ended run's footer: what a coding agent the run called
   * did after the run ended (a parked call a person answered later,
   * docs/acp.md). Only to a transcript that exists (a pruned run stays gone).
   */
  appendAfterEnd(id: string, line: string): void {
    Deno.writeTextFileSync(this.path(id), line.endsWith("\n") ? line : line + "\n", {
      append: true,
      create: false,
    });
  }

  /** Every indexed run, oldest first. Lines that do not parse are skipped. */
  index(): RunIndexEntry[] {
    const text = readOrEmpty(this.#paths.runsIndex);
    const out: RunIndexEntry[] = [];
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      try {
        const e = JSON.parse(line) as RunIndexEntry;
        if (typeof e.id === "string" && typeof e.started_at === "string") out.push(e);
      } catch {
        // A line cut short by a crash; the transcript itself is still there.
      }
    }
    return out.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }

  /** The lines of run `id`'s transcript. */
  read(id: string): string[] {
    let text: string;
    try {
      text = Deno.readTextFileSync(this.path(id));
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) {
        throw new WatsError("runs.unknown", `no transcript for run ${id}: see \`wats agent runs\``);
      }
      throw err;
    }
    return text.split("\n").filter((l) => l !== "");
  }

  /** The ids of every transcript file, oldest first. */
  transcriptIds(): string[] {
    const ids: string[] = [];
    try {
      for (const e of Deno.readDirSync(this.#paths.runsDir)) {
        const id = e.name.replace(/\.jsonl$/, "");
        if (e.isFile && e.name.endsWith(".jsonl") && isRunId(id)) ids.push(id);
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    return ids.sort();
  }

  /**
   * Closes the transcripts of runs a previous daemon left unfinished (it crashed
   * or was killed): adds an `interrupted` footer and indexes them, so their
   * runs count against the budget. Returns their ids. A run ends when it was
   * last seen alive (`lastSeen`, from the runner's state file), else at its
   * transcript's last write, whichever is later.
   */
  recoverInterrupted(
    nowMs: number,
    lastSeen: (id: string) => number | undefined = () => undefined,
  ): string[] {
    const indexed = new Set(this.index().map((e) => e.id));
    const recovered: string[] = [];
    for (const id of this.transcriptIds()) {
      if (indexed.has(id)) continue;
      const lines = this.read(id);
      const header = parseJsonLine(lines[0]);
      const last = parseJsonLine(lines[lines.length - 1]);
      if (header?.type !== "wats_run") continue;
      const h = header as unknown as RunHeader;
      const started = Date.parse(h.started_at);
      let endedAt = nowMs;
      try {
        endedAt = Deno.statSync(this.path(id)).mtime?.getTime() ?? nowMs;
      } catch { /* keep now */ }
      const seen = lastSeen(id);
      if (seen !== undefined && seen > endedAt) endedAt = Math.min(seen, nowMs);
      let footer: Omit<RunFooter, "type">;
      if (last?.type === "wats_end") {
        // Ended but not indexed: the index line was lost; index it as it was.
        const { type: _t, ...rest } = last as unknown as RunFooter;
        footer = rest;
      } else {
        footer = {
          status: "interrupted",
          exit_code: null,
          duration_ms: Math.max(0, endedAt - started),
          error: "the node stopped during this run",
        };
        Deno.writeTextFileSync(
          this.path(id),
          JSON.stringify({ type: "wats_end", ...footer }) + "\n",
          {
            append: true,
          },
        );
      }
      this.#appendIndex(indexEntry(h, footer, endedAt));
      recovered.push(id);
    }
    return recovered;
  }

  /**
   * Retention: keeps the newest `keep.runs` runs that started within
   * `keep.maxAgeMs`; deletes the other transcripts and index lines. Returns the
   * ids removed.
   */
  prune(nowMs: number, keep: Retention = DEFAULT_RETENTION): string[] {
    const cutoff = nowMs - keep.maxAgeMs;
    const entries = this.index();
    const young = entries.filter((e) => Date.parse(e.started_at) >= cutoff);
    const kept = young.slice(Math.max(0, young.length - keep.runs));
    const keptIds = new Set(kept.map((e) => e.id));
    const removed: string[] = [];
    const indexed = new Set(entries.map((e) => e.id));
    for (const id of this.transcriptIds()) {
      // A transcript not (yet) indexed belongs to the run in progress: keep it.
      if (!indexed.has(id) || keptIds.has(id)) continue;
      try {
        Deno.removeSync(this.path(id));
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
      removed.push(id);
    }
    for (const e of entries) if (!keptIds.has(e.id) && !removed.includes(e.id)) removed.push(e.id);
    if (kept.length !== entries.length) {
      this.#carrySpend(entries.filter((e) => !keptIds.has(e.id)), nowMs);
      const tmp = `${this.#paths.runsIndex}.tmp`;
      Deno.writeTextFileSync(tmp, kept.map((e) => JSON.stringify(e) + "\n").join(""), {
        mode: 0o600,
      });
      Deno.renameSync(tmp, this.#paths.runsIndex);
    }
    return removed;
  }

  /** Folds the spend of removed runs of this month into the carry file, summed per day. */
  #carrySpend(removed: RunIndexEntry[], nowMs: number): void {
    const month = monthKey(nowMs);
    const counted = removed.filter((e) => monthKey(Date.parse(e.ended_at)) === month);
    const before = this.#readCarry();
    if (counted.length === 0 && before?.month === month) return;
    const lines = before?.month === month ? [...before.lines] : [];
    for (const e of counted) lines.push({ at: Date.parse(e.ended_at), cost_usd: e.cost_usd });
    // One line per day for the costs; runs without a cost stay one line each.
    const perDay = new Map<number, number>();
    const noCost: { at: number }[] = [];
    for (const l of lines) {
      const day = Math.floor(l.at / 86_400_000) * 86_400_000;
      if (l.cost_usd === undefined) noCost.push({ at: day });
      else perDay.set(day, (perDay.get(day) ?? 0) + l.cost_usd);
    }
    const file: CarryFile = {
      month,
      lines: [...[...perDay].map(([at, cost_usd]) => ({ at, cost_usd })), ...noCost],
    };
    const tmp = `${this.#carry}.tmp`;
    Deno.writeTextFileSync(tmp, JSON.stringify(file) + "\n", { mode: 0o600 });
    Deno.renameSync(tmp, this.#carry);
  }

  #readCarry(): CarryFile | undefined {
    const text = readOrEmpty(this.#carry);
    if (text.trim() === "") return undefined;
    try {
      const f = JSON.parse(text) as CarryFile;
      return typeof f.month === "string" && Array.isArray(f.lines) ? f : undefined;
    } catch {
      return undefined;
    }
  }

  #appendIndex(entry: RunIndexEntry): void {
    Deno.writeTextFileSync(this.#paths.runsIndex, JSON.stringify(entry) + "\n", {
      append: true,
      mode: 0o600,
    });
  }
}

function indexEntry(h: RunHeader, f: Omit<RunFooter, "type">, endedAtMs: number): RunIndexEntry {
  return {
    id: h.id,
    trigger: h.trigger,
    events: h.events.length,
    ...(h.decided !== undefined && h.decided.length > 0 ? { decided: h.decided } : {}),
    started_at: h.started_at,
    ended_at: new Date(endedAtMs).toISOString(),
    harness: h.harness,
    status: f.status,
    exit_code: f.exit_code,
    duration_ms: f.duration_ms,
    ...(f.turns !== undefined ? { turns: f.turns } : {}),
    ...(f.cost_usd !== undefined ? { cost_usd: f.cost_usd } : {}),
    ...(f.error !== undefined ? { error: f.error } : {}),
    ...(f.retry !== undefined ? { retry: f.retry } : {}),
  };
}

function monthKey(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** One transcript line as a JSON object; undefined for anything else (CLI noise, a cut line). */
export function parseJsonLine(line: string | undefined): Record<string, unknown> | undefined {
  const t = line?.trim();
  if (t === undefined || !t.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(t);
    return typeof v === "object" && v !== null ? v as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

function readOrEmpty(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return "";
    throw err;
  }
}
