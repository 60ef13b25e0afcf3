/**
 * Test doubles for the runner: a fake clock with timers, an in-memory store, a
 * scripted harness and spawn function, and a log that records what it hears.
 *
 * @module
 */

import type {
  Harness,
  HarnessCommand,
  OutputParser,
  RunContext,
  RunEvent,
  RunResult,
} from "../../src/runner/harness.ts";
import type { Clock, RunnerLog, RunnerPost, RunnerStore, Timers } from "../../src/runner/ports.ts";
import type { SpawnRequest } from "../../src/runner/spawn.ts";
import type { ProcessStatus, RunningProcess } from "../../src/runner/harness.ts";

/** A clock and timers that move only when the test says so. */
export class FakeTime implements Clock, Timers {
  t: number;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #next = 1;

  constructor(start: number) {
    this.t = start;
  }

  now = (): number => this.t;

  setTimer = (ms: number, fn: () => void): unknown => {
    const id = this.#next++;
    this.#timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  };

  clearTimer = (handle: unknown): void => {
    this.#timers.delete(handle as number);
  };

  /** How many timers are pending. */
  pending(): number {
    return this.#timers.size;
  }

  /** The earliest pending deadline. */
  nextAt(): number | undefined {
    const all = [...this.#timers.values()].map((t) => t.at);
    return all.length ? Math.min(...all) : undefined;
  }

  /** Moves time forward by `ms`, firing due timers in order and letting promises settle. */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.t + ms);
  }

  async advanceTo(target: number): Promise<void> {
    await flush();
    for (;;) {
      let first: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.#timers) {
        if (e[1].at <= target && (!first || e[1].at < first[1].at)) first = e;
      }
      if (!first) break;
      this.#timers.delete(first[0]);
      this.t = Math.max(this.t, first[1].at);
      first[1].fn();
      await flush();
    }
    this.t = target;
    await flush();
  }
}

/** Lets pending promise chains settle (a macrotask turn, not a timing wait). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 0));
}

let idCounter = 0;

/** A 64-hex id or key, unique per call, tagged so failures are readable. */
export function hexId(tag = ""): string {
  idCounter++;
  const t = Array.from(new TextEncoder().encode(tag), (b) => b.toString(16).padStart(2, "0")).join(
    "",
  );
  return (idCounter.toString(16).padStart(8, "0") + t).padEnd(64, "0").slice(0, 64);
}

/** Three author keys. */
export const AGENT = "a".repeat(64);
export const BOB = "b".repeat(64);
export const CAROL = "c".repeat(64);
export const PERSON = "d".repeat(64);

/** An in-memory store with the runner's view. */
export class FakeStore implements RunnerStore {
  posts: RunnerPost[] = [];
  meta = new Map<string, string>();
  #seq = 0;

  /** Adds a post (seq assigned in order) and returns it. */
  add(p: Partial<RunnerPost> & { author: string; kind: string }): RunnerPost {
    const post: RunnerPost = {
      id: p.id ?? hexId(p.kind),
      seq: p.seq ?? ++this.#seq,
      author: p.author,
      kind: p.kind,
      root: p.root,
      parent: p.parent ?? p.root,
      grafted: p.grafted ?? false,
      to: p.to ?? [],
      caps: p.caps ?? [],
      createdAt: p.createdAt ?? 1_700_000_000,
    };
    this.#seq = Math.max(this.#seq, post.seq);
    this.posts.push(post);
    return post;
  }

  /** A reply to `parent` in its thread. */
  reply(
    parent: RunnerPost,
    author: string,
    kind: string,
    extra: Partial<RunnerPost> = {},
  ): RunnerPost {
    return this.add({ author, kind, root: parent.root ?? parent.id, parent: parent.id, ...extra });
  }

  get(id: string): RunnerPost | undefined {
    return this.posts.find((p) => p.id === id);
  }

  threadNewest(rootId: string, limit: number): RunnerPost[] {
    return this.posts
      .filter((p) => (p.root ?? p.id) === rootId && !p.grafted)
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit);
  }

  maxSeq(): number {
    return this.posts.reduce((m, p) => Math.max(m, p.seq), 0);
  }

  getMeta(key: string): string | undefined {
    return this.meta.get(key);
  }

  setMeta(key: string, value: string): void {
    this.meta.set(key, value);
  }
}

/** A log that keeps every line. */
export class MemoryLog implements RunnerLog {
  lines: { level: string; message: string }[] = [];
  debug = (message: string) => void this.lines.push({ level: "debug", message });
  info = (message: string) => void this.lines.push({ level: "info", message });
  warn = (message: string) => void this.lines.push({ level: "warn", message });
  error = (message: string) => void this.lines.push({ level: "error", message });

  /** Lines (any level) containing `text`. */
  matching(text: string): string[] {
    return this.lines.filter((l) => l.message.includes(text)).map((l) => l.message);
  }
}

/** A line stream the test writes to. */
class LineQueue implements AsyncIterable<string> {
  #items: string[] = [];
  #ended = false;
  #wake: (() => void) | undefined;

  push(line: string): void {
    this.#items.push(line);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for (;;) {
      if (this.#items.length > 0) {
        yield this.#items.shift()!;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((r) => this.#wake = r);
      this.#wake = undefined;
    }
  }
}

/** A process the test drives: emit lines, then exit. */
let fakePid = 100_000;

export class FakeProcess implements RunningProcess {
  readonly pid: number = ++fakePid;
  readonly request: SpawnRequest;
  readonly lines: LineQueue = new LineQueue();
  readonly status: Promise<ProcessStatus>;
  killed = 0;
  /** False: a kill only counts; the test ends the process (a slow death). */
  exitOnKill = true;
  #resolve!: (s: ProcessStatus) => void;
  #done = false;
  #calls = 0;

  constructor(request: SpawnRequest) {
    this.request = request;
    this.status = new Promise((r) => this.#resolve = r);
  }

  stderrTail(): string {
    return "";
  }

  kill(): void {
    this.killed++;
    if (this.exitOnKill) this.exit(null, "SIGTERM");
  }

  /** Emits a wats tool call and its successful result: the agent acted (src/runner/retry.ts). */
  act(name = "mcp__wats__answer"): void {
    const id = `call-${this.pid}-${++this.#calls}`;
    this.lines.push(JSON.stringify({ event: { type: "tool_call", id, name, args: {} } }));
    this.lines.push(
      JSON.stringify({ event: { type: "tool_result", id, text: "posted", isError: false } }),
    );
  }

  /** Ends with the fake harness's result line: `ok`, a cost, turns. */
  finish(result: Partial<RunResult> = { ok: true }, code = 0): void {
    this.lines.push(JSON.stringify({ result: { ok: true, ...result } }));
    this.exit(code);
  }

  exit(code: number | null, signal: string | null = null): void {
    if (this.#done) return;
    this.#done = true;
    this.lines.end();
    this.#resolve({ code, signal });
  }
}

/** Records every spawn. */
export class FakeSpawner {
  procs: FakeProcess[] = [];
  spawn = (req: SpawnRequest): RunningProcess => {
    const p = new FakeProcess(req);
    this.procs.push(p);
    return p;
  };

  get last(): FakeProcess {
    const p = this.procs.at(-1);
    if (!p) throw new Error("nothing was spawned");
    return p;
  }
}

/** A harness whose output lines are `{"result": RunResult}` or `{"event": RunEvent}`. */
export class FakeHarness implements Harness {
  readonly name = "fake";
  contexts: RunContext[] = [];

  command(ctx: RunContext): HarnessCommand {
    this.contexts.push(ctx);
    return { program: "fake", args: [], env: {}, cwd: ctx.cwd, stdin: ctx.prompt, files: [] };
  }

  parser(): OutputParser {
    let result: RunResult | undefined;
    return {
      push(line) {
        try {
          const v = JSON.parse(line);
          if (v.result) result = v.result;
          if (v.event) return [v.event as RunEvent];
        } catch { /* not ours */ }
        return [];
      },
      finish: () => result ?? { ok: false, error: "no result" },
    };
  }
}
