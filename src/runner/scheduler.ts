/**
 * The heartbeat runner's core (ADR 0011): it hears every new post, decides which
 * ones wake the agent, and starts one run at a time within the limits.
 *
 * - Events of interest (wake_rules.ts) are queued; the first one starts a
 *   debounce of `agent.every`, and everything queued meanwhile joins that run.
 *   Events arriving during a run wait for the next one.
 * - A heartbeat run comes `agent.heartbeat` after the last run started (or after
 *   start), even with nothing new; 0 turns it off.
 * - `agent.max_runs_per_hour` skips a due run (logged: hourly cap); queued events
 *   then wait until the oldest run of the hour leaves the window.
 * - The loop detector holds a thread's events while it is paused.
 * - Budgets (budget.ts): when one is reached the runner pauses until the window
 *   resets, logged once; each run gets what is left as `--max-budget-usd`.
 * - `agent.timeout` kills the run's whole process group.
 *
 * No polling: an idle runner holds at most one timer, set for its next deadline
 * (debounce end, heartbeat, hourly-cap release or budget reset). The clock,
 * timers, store, harness, spawn function and transcripts are injected.
 *
 * @module
 */

import type { Settings } from "../config/schema.ts";
import { BudgetLedger, type BudgetState, usd } from "./budget.ts";
import type { Harness, HarnessCommand, RunContext, RunEvent, SelfCommand } from "./harness.ts";
import { checkThread, loopPausedMessage } from "./loop_detector.ts";
import {
  type Clock,
  literalLog,
  type RunnerLog,
  type RunnerPost,
  type RunnerStore,
  threadOf,
  type Timers,
} from "./ports.ts";
import {
  buildPrompt,
  type PostReader,
  type PromptEvent,
  type PromptFeedback,
  type PromptRejection,
} from "./prompt.ts";
import type { RunningProcess, SpawnFn } from "./spawn.ts";
import {
  DEFAULT_RETENTION,
  newRunId,
  type Retention,
  type RunFooter,
  type RunIndexEntry,
  type RunStatus,
  type RunTrigger,
  type Transcripts,
  type TranscriptWriter,
} from "./transcripts.ts";
import { classifyPost, normalizeAllow, WakeLimiter } from "./wake_rules.ts";

/** The settings the runner reads (values as the daemon started with: no live reload). */
export type RunnerSettings = Pick<
  Settings,
  | "agent.profile"
  | "agent.every"
  | "agent.heartbeat"
  | "agent.max_runs_per_hour"
  | "agent.timeout"
  | "agent.max_turns"
  | "agent.max_usd_per_day"
  | "agent.max_usd_per_month"
  | "agent.max_runs_per_day"
  | "agent.ignore_local"
  | "agent.allow"
  | "agent.about"
  | "agent.loop_max_exchanges"
  | "agent.wakes_per_author_per_hour"
>;

/** The meta key of the feed cursor given to the next run. */
export const CURSOR_META_KEY = "runner.cursor";

/** The file operations a run needs (its generated files, its empty directory). */
export interface RunnerFs {
  mkdir(path: string): void;
  writeFile(path: string, text: string, mode: number): void;
  remove(path: string): void;
}

/** Real file operations. Requires `--allow-write` on the agent directory. */
export const denoRunnerFs: RunnerFs = {
  mkdir: (path) => Deno.mkdirSync(path, { recursive: true, mode: 0o700 }),
  writeFile: (path, text, mode) => Deno.writeTextFileSync(path, text, { mode }),
  remove: (path) => {
    try {
      Deno.removeSync(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  },
};

/** Everything the runner is given. */
export interface RunnerOptions {
  clock: Clock;
  timers: Timers;
  /** Where decisions go; messages are passed as literal text (braces escaped). */
  log: RunnerLog;
  store: RunnerStore;
  harness: Harness;
  spawn: SpawnFn;
  transcripts: Pick<Transcripts, "begin" | "index" | "recoverInterrupted" | "prune" | "spend">;
  settings: RunnerSettings;
  /** The agent profile's author key (hex). */
  agentKey: string;
  /** The person's name for {user}. */
  user: string;
  /** Every author key this node signs for (for `agent.ignore_local`). */
  localAuthors: () => ReadonlySet<string>;
  /** The HEARTBEAT.md text. */
  template: string;
  /** `dataDir`; `runDir`, the run's working directory; `configDir`, for generated files. */
  paths: { dataDir: string; runDir: string; configDir: string };
  /** How to start `wats` itself (for the generated MCP config). */
  selfCommand: SelfCommand;
  /** A validated `--settings` file of deny rules, passed to the harness. */
  settingsFile?: string;
  /**
   * Called before each run's command is built: the daemon writes and validates
   * the run's deny-rules settings file and applies the access plan here. A
   * throw fails the run with that message (no harness is started).
   */
  prepare?: (
    ctx: RunContext,
  ) => Promise<Partial<Pick<RunContext, "settingsFile" | "access" | "cwd">>>;
  /** Called as a run starts; returns the per-run token the daemon minted for it. */
  onRunStart?: (runId: string) => string | undefined;
  /** Called when a run has ended and is indexed (revoke its token here). */
  onRunEnd?: (entry: RunIndexEntry) => void;
  /** Review rejections not yet told to a run; drained at each run start. */
  rejections?: () => PromptRejection[];
  /** Reads the events' threads into the prompt; without it the prompt lists ids only. */
  posts?: PostReader;
  fs?: RunnerFs;
  retention?: Retention;
  random?: () => number;
}

/** The run in progress. */
export interface CurrentRun {
  id: string;
  trigger: RunTrigger;
  startedAt: number;
  events: number;
}

/** What `status()` reports. */
export interface RunnerStatus {
  state: "stopped" | "idle" | "running" | "paused" | "halted";
  /** Why runs are paused (budget) or halted. */
  reason?: string;
  /** When a budget pause ends. */
  resumesAt?: number;
  current?: CurrentRun;
  /** Queued events, paused threads' included. */
  queued: number;
  /** Threads the loop detector holds. */
  pausedThreads: string[];
  /** Feedback posts waiting for the next run. */
  feedback: number;
  /** The next deadline the runner waits for, if any. */
  nextAt?: number;
  budget: BudgetState;
  /** The last run that ended, from the index. */
  lastRun?: RunIndexEntry;
}

interface Queued {
  post: RunnerPost;
  reason: string;
  thread: string;
}

interface Active extends CurrentRun {
  kill: (why: RunStatus) => void;
  done: Promise<void>;
}

const HOUR_MS = 3_600_000;

/** The heartbeat runner. */
export class Runner {
  readonly #o: RunnerOptions;
  readonly #s: RunnerSettings;
  readonly #fs: RunnerFs;
  readonly #ledger: BudgetLedger;
  readonly #limiter: WakeLimiter;
  readonly #allow: ReadonlySet<string>;
  readonly #queue = new Map<string, Queued>();
  readonly #feedback = new Map<string, PromptFeedback>();
  /** Threads held by the loop detector (only those holding queued events). */
  readonly #paused = new Set<string>();
  #runStarts: number[] = [];
  #debounceAt: number | undefined;
  #heartbeatAt: number | undefined;
  #capUntil: number | undefined;
  #budgetPause: string | undefined;
  #halted: string | undefined;
  #timer: unknown;
  #timerAt: number | undefined;
  #current: Active | undefined;
  #lastRun: RunIndexEntry | undefined;
  #state: "new" | "started" | "stopped" = "new";

  constructor(opts: RunnerOptions) {
    this.#o = { ...opts, log: literalLog(opts.log) };
    this.#s = opts.settings;
    this.#fs = opts.fs ?? denoRunnerFs;
    this.#allow = normalizeAllow(opts.settings["agent.allow"]);
    this.#limiter = new WakeLimiter(opts.settings["agent.wakes_per_author_per_hour"]);
    this.#ledger = new BudgetLedger({
      usdPerDay: opts.settings["agent.max_usd_per_day"],
      usdPerMonth: opts.settings["agent.max_usd_per_month"],
      runsPerDay: opts.settings["agent.max_runs_per_day"],
    });
  }

  /**
   * Restores spend and the hour's runs from the runs index (closing transcripts a
   * crash left open), applies retention, and starts waiting.
   */
  start(): void {
    if (this.#state !== "new") return;
    const now = this.#o.clock.now();
    const t = this.#o.transcripts;
    for (const id of t.recoverInterrupted(now)) {
      this.#o.log.warn(`run ${id} was interrupted by a restart; recorded as interrupted`);
    }
    this.#prune(now);
    const entries = t.index();
    this.#ledger.restore(t.spend(now));
    this.#runStarts = entries.map((e) => Date.parse(e.started_at)).filter((s) => now - s < HOUR_MS);
    this.#lastRun = entries.at(-1);
    const hb = this.#s["agent.heartbeat"];
    this.#heartbeatAt = hb > 0 ? now + hb : undefined;
    this.#state = "started";
    this.#schedule();
  }

  /** Stops: no new runs; the current run is killed and recorded as stopped. */
  async stop(): Promise<void> {
    this.#state = "stopped";
    this.#clearTimer();
    const cur = this.#current;
    if (cur) {
      cur.kill("stopped");
      await cur.done;
    }
  }

  /** Halts (a halt post): no runs until `resume()`, and the current run is cancelled. */
  halt(reason: string): void {
    this.#halted = reason;
    this.#clearTimer();
    this.#o.log.warn(`agent runs halted: ${reason}`);
    this.#current?.kill("halted");
  }

  /** Ends a halt. */
  resume(): void {
    if (this.#halted === undefined) return;
    this.#halted = undefined;
    this.#o.log.info("agent runs resumed");
    this.#schedule();
  }

  /**
   * Resolves when the run in progress, if any, has ended and been recorded (a
   * run that starts right after it is not waited for).
   */
  async whenIdle(): Promise<void> {
    await this.#current?.done;
  }

  /** New posts from the store, in seq order (wire `Store.onInsert` here). */
  onPosts(posts: readonly RunnerPost[]): void {
    const now = this.#o.clock.now();
    const check = new Set<string>();
    const ctx = {
      agentKey: this.#o.agentKey,
      localAuthors: this.#o.localAuthors,
      ignoreLocal: this.#s["agent.ignore_local"],
      allow: this.#allow,
      get: (id: string) => this.#o.store.get(id),
    };
    for (const post of posts) {
      const thread = threadOf(post);
      // Any post in a held thread may be the third author that releases it.
      if (this.#paused.has(thread)) check.add(thread);
      const d = classifyPost(post, ctx);
      if (d.action === "ignore") {
        this.#o.log.debug(`ignored: ${d.reason}`, { id: post.id });
      } else if (d.action === "feedback") {
        this.#feedback.set(post.id, {
          id: post.id,
          kind: post.kind,
          author: post.author,
          parent: post.parent ?? thread,
        });
        this.#o.log.info(`remembered for the next run: ${d.reason}`, { id: post.id });
      } else if (!this.#limiter.take(post.author, now)) {
        this.#o.log.info(
          `not queued: ${d.reason}, but its author reached agent.wakes_per_author_per_hour = ${
            this.#s["agent.wakes_per_author_per_hour"]
          }`,
          { id: post.id, author: post.author },
        );
      } else {
        this.#queue.set(post.id, { post, reason: d.reason, thread: d.thread });
        this.#o.log.info(`queued: ${d.reason}`, { id: post.id, thread: d.thread });
        check.add(d.thread);
      }
    }
    for (const thread of check) this.#checkThread(thread);
    this.#armDebounce(now);
    this.#schedule();
  }

  /** The runner's state, budget and queue. */
  status(): RunnerStatus {
    const now = this.#o.clock.now();
    const budget = this.#ledger.state(now);
    const cur = this.#current;
    const base = {
      queued: this.#queue.size,
      pausedThreads: [...this.#paused],
      feedback: this.#feedback.size,
      budget,
      ...(this.#lastRun ? { lastRun: this.#lastRun } : {}),
      ...(this.#timerAt !== undefined ? { nextAt: this.#timerAt } : {}),
    };
    if (this.#state !== "started") return { state: "stopped", ...base };
    if (this.#halted !== undefined) return { state: "halted", reason: this.#halted, ...base };
    if (cur) {
      const { id, trigger, startedAt, events } = cur;
      return { state: "running", current: { id, trigger, startedAt, events }, ...base };
    }
    if (budget.blocked) {
      return {
        state: "paused",
        reason: budget.blocked.reason,
        resumesAt: budget.blocked.resetsAt,
        ...base,
      };
    }
    return { state: "idle", ...base };
  }

  // ------------------------------------------------------------- deciding

  /** Recomputes the loop detector for a thread holding queued events. */
  #checkThread(thread: string): void {
    const max = this.#s["agent.loop_max_exchanges"];
    const holding = [...this.#queue.values()].some((q) => q.thread === thread);
    if (!holding) {
      this.#paused.delete(thread);
      return;
    }
    const v = checkThread(this.#o.store, thread, this.#o.agentKey, max);
    if (v.paused && !this.#paused.has(thread)) {
      this.#paused.add(thread);
      this.#o.log.info(loopPausedMessage(thread, max), { thread, turns: v.turns, other: v.other });
    } else if (!v.paused && this.#paused.has(thread)) {
      this.#paused.delete(thread);
      this.#o.log.info(`agent wake resumed: a third author posted in thread ${thread}`, { thread });
    }
  }

  #runnable(): Queued[] {
    return [...this.#queue.values()].filter((q) => !this.#paused.has(q.thread));
  }

  /** Starts the debounce when runnable events wait and no window is open. */
  #armDebounce(now: number): void {
    if (this.#debounceAt === undefined && this.#runnable().length > 0) {
      this.#debounceAt = now + this.#s["agent.every"];
    }
  }

  /** Runs what is due, or sets the one timer for the next deadline. */
  #schedule(): void {
    if (this.#state !== "started" || this.#halted !== undefined || this.#current) {
      this.#clearTimer();
      return;
    }
    const now = this.#o.clock.now();
    const budget = this.#ledger.state(now);
    if (budget.blocked) {
      if (this.#budgetPause !== budget.blocked.reason) {
        this.#budgetPause = budget.blocked.reason;
        this.#o.log.warn(
          `agent runs paused: ${budget.blocked.reason}; they resume at ${
            new Date(budget.blocked.resetsAt).toISOString()
          }`,
        );
      }
      this.#arm(budget.blocked.resetsAt, now);
      return;
    }
    if (this.#budgetPause !== undefined) {
      this.#budgetPause = undefined;
      this.#o.log.info(`agent runs resumed: the budget window reset (${usd(budget.usdLeft)} left)`);
    }
    const deadlines: number[] = [];
    if (this.#debounceAt !== undefined && this.#runnable().length > 0) {
      deadlines.push(Math.max(this.#debounceAt, this.#capUntil ?? -Infinity));
    }
    if (this.#heartbeatAt !== undefined) deadlines.push(this.#heartbeatAt);
    const next = Math.min(...deadlines.filter(Number.isFinite));
    if (!Number.isFinite(next)) {
      this.#clearTimer();
      return;
    }
    if (next > now) {
      this.#arm(next, now);
      return;
    }
    this.#due(now);
  }

  #due(now: number): void {
    // Loop state may have changed since the events were queued (the agent posted).
    for (const thread of new Set([...this.#queue.values()].map((q) => q.thread))) {
      this.#checkThread(thread);
    }
    const runnable = this.#runnable();
    if (runnable.length === 0) this.#debounceAt = undefined;
    const eventsDue = runnable.length > 0 && this.#debounceAt !== undefined &&
      this.#debounceAt <= now && (this.#capUntil ?? -Infinity) <= now;
    const heartbeatDue = this.#heartbeatAt !== undefined && this.#heartbeatAt <= now;
    if (!eventsDue && !heartbeatDue) {
      this.#schedule();
      return;
    }
    const max = this.#s["agent.max_runs_per_hour"];
    this.#runStarts = this.#runStarts.filter((s) => now - s < HOUR_MS);
    if (this.#runStarts.length >= max) {
      const release = this.#runStarts.length > 0
        ? Math.min(...this.#runStarts) + HOUR_MS
        : Infinity;
      const what = eventsDue ? `${runnable.length} queued event(s) wait` : "heartbeat skipped";
      this.#o.log.info(
        `run skipped: hourly cap (agent.max_runs_per_hour = ${max}); ${what}` +
          (Number.isFinite(release) ? ` until ${new Date(release).toISOString()}` : ""),
      );
      if (eventsDue) this.#capUntil = release;
      if (heartbeatDue) this.#heartbeatAt = now + this.#s["agent.heartbeat"];
      this.#schedule();
      return;
    }
    this.#startRun(eventsDue ? "events" : "heartbeat", runnable, now);
  }

  #arm(at: number, now: number): void {
    if (this.#timer !== undefined && this.#timerAt === at) return;
    this.#clearTimer();
    this.#timerAt = at;
    this.#timer = this.#o.timers.setTimer(at - now, () => {
      this.#timer = undefined;
      this.#timerAt = undefined;
      this.#schedule();
    });
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#o.timers.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#timerAt = undefined;
  }

  // -------------------------------------------------------------- running

  #startRun(trigger: RunTrigger, events: Queued[], now: number): void {
    this.#clearTimer();
    const o = this.#o;
    const id = newRunId(now, o.random);
    for (const q of events) this.#queue.delete(q.post.id);
    const feedback = [...this.#feedback.values()];
    this.#feedback.clear();
    this.#debounceAt = undefined;
    this.#capUntil = undefined;
    const hb = this.#s["agent.heartbeat"];
    this.#heartbeatAt = hb > 0 ? now + hb : undefined;
    this.#runStarts.push(now);

    const stored = o.store.getMeta(CURSOR_META_KEY);
    const firstSeq = Math.min(...events.map((q) => q.post.seq));
    const cursor = stored !== undefined
      ? Number(stored)
      : Number.isFinite(firstSeq)
      ? firstSeq - 1
      : 0;
    o.store.setMeta(CURSOR_META_KEY, String(Math.max(cursor, o.store.maxSeq())));

    const budget = this.#ledger.state(now);
    const rejections = o.rejections?.() ?? [];
    const token = o.onRunStart?.(id);
    const promptEvents: PromptEvent[] = events.map((q) => ({
      id: q.post.id,
      kind: q.post.kind,
      author: q.post.author,
      thread: q.thread,
      reason: q.reason,
    }));
    const reasons = trigger === "heartbeat"
      ? [`heartbeat (agent.heartbeat = ${formatMs(hb)})`]
      : [...new Set(events.map((q) => q.reason))];
    if (trigger === "heartbeat" && events.length > 0) reasons.push(`${events.length} new event(s)`);
    const prompt = buildPrompt(o.template, {
      agentProfile: this.#s["agent.profile"],
      user: o.user,
      about: this.#s["agent.about"],
      reasons,
      cursor,
      events: promptEvents,
      feedback,
      rejections,
      posts: o.posts,
    });
    const ctx: RunContext = {
      runId: id,
      prompt,
      maxTurns: this.#s["agent.max_turns"],
      maxBudgetUsd: budget.usdLeft,
      token,
      agentProfile: this.#s["agent.profile"],
      dataDir: o.paths.dataDir,
      cwd: o.paths.runDir,
      configDir: o.paths.configDir,
      selfCommand: o.selfCommand,
      settingsFile: o.settingsFile,
    };
    o.log.info(
      `run ${id} started (${trigger}${events.length > 0 ? `, ${events.length} event(s)` : ""}; ` +
        `budget left ${usd(budget.usdLeft)})`,
      { run: id, events: events.map((q) => q.post.id) },
    );
    let killWith: RunStatus | undefined;
    let proc: RunningProcess | undefined;
    const active: Active = {
      id,
      trigger,
      startedAt: now,
      events: events.length,
      kill: (why) => {
        killWith ??= why;
        proc?.kill();
      },
      done: Promise.resolve(),
    };
    this.#current = active;
    const header = {
      id,
      trigger,
      events: events.map((q) => q.post.id),
      ...(feedback.length > 0 ? { feedback: feedback.map((f) => f.id) } : {}),
      started_at: new Date(now).toISOString(),
      harness: o.harness.name,
      profile: this.#s["agent.profile"],
      max_turns: this.#s["agent.max_turns"],
      max_budget_usd: budget.usdLeft,
    };
    active.done = this.#execute(ctx, header, (p) => {
      proc = p;
      if (killWith !== undefined) p.kill();
    }, () => killWith)
      .catch((err) => o.log.error(`run ${id} could not be recorded: ${(err as Error).message}`))
      .finally(() => {
        this.#current = undefined;
        this.#armDebounce(o.clock.now());
        this.#schedule();
      });
  }

  async #execute(
    ctx: RunContext,
    header: Parameters<RunnerOptions["transcripts"]["begin"]>[0],
    started: (p: RunningProcess) => void,
    killedWith: () => RunStatus | undefined,
  ): Promise<void> {
    const o = this.#o;
    const startedAt = o.clock.now();
    const writer: TranscriptWriter = o.transcripts.begin(header);
    let cmd: HarnessCommand | undefined;
    let timeout: unknown;
    let footer: Omit<RunFooter, "type">;
    let timedOut = false;
    try {
      if (o.prepare) ctx = { ...ctx, ...(await o.prepare(ctx)) };
      cmd = o.harness.command(ctx);
      // Only the locked run directory is the runner's to create; a workspace
      // is the user's folder, which the daemon may read but never write.
      if (ctx.cwd === o.paths.runDir) this.#fs.mkdir(ctx.cwd);
      for (const f of cmd.files) {
        this.#fs.mkdir(f.path.slice(0, f.path.lastIndexOf("/")) || "/");
        this.#fs.writeFile(f.path, f.text, f.mode);
      }
      const proc = o.spawn({
        program: cmd.program,
        args: cmd.args,
        env: cmd.env,
        cwd: cmd.cwd,
        stdin: cmd.stdin,
      });
      started(proc);
      timeout = o.timers.setTimer(this.#s["agent.timeout"], () => {
        timedOut = true;
        o.log.warn(
          `run ${ctx.runId} timed out after agent.timeout = ${
            formatMs(this.#s["agent.timeout"])
          }; killing it`,
        );
        proc.kill();
      });
      const parser = o.harness.parser();
      for await (const line of proc.lines) {
        writer.line(line);
        for (const ev of parser.push(line)) this.#logEvent(ctx.runId, ev);
      }
      const st = await proc.status;
      o.timers.clearTimer(timeout);
      timeout = undefined;
      const result = parser.finish(st.code);
      const killed = timedOut ? "timeout" : killedWith();
      const status: RunStatus = killed ?? (result.ok ? "ok" : "error");
      let error = result.error;
      if (killed === "timeout") {
        error = `timed out after agent.timeout = ${formatMs(this.#s["agent.timeout"])}`;
      } else if (killed !== undefined) error = `the run was ${killed}`;
      else if (!result.ok && st.code !== 0 && proc.stderrTail().trim() !== "") {
        error = `${error ?? "failed"} (stderr: ${proc.stderrTail().trim().slice(-500)})`;
      }
      footer = {
        status,
        exit_code: st.code,
        duration_ms: o.clock.now() - startedAt,
        ...(result.turns !== undefined ? { turns: result.turns } : {}),
        ...(result.costUsd !== undefined ? { cost_usd: result.costUsd } : {}),
        ...(status !== "ok" && error !== undefined ? { error } : {}),
      };
    } catch (err) {
      footer = {
        status: killedWith() ?? "error",
        exit_code: null,
        duration_ms: o.clock.now() - startedAt,
        error: (err as Error).message,
      };
    } finally {
      if (timeout !== undefined) o.timers.clearTimer(timeout);
      for (const f of cmd?.files ?? []) {
        try {
          this.#fs.remove(f.path);
        } catch (err) {
          o.log.warn(`cannot remove ${f.path}: ${(err as Error).message}`);
        }
      }
    }
    const endedAt = o.clock.now();
    const entry = writer.end(footer, endedAt);
    this.#lastRun = entry;
    this.#ledger.record({ at: endedAt, costUsd: entry.cost_usd });
    const b = this.#ledger.state(endedAt);
    const cost = entry.cost_usd !== undefined ? usd(entry.cost_usd) : "no cost reported";
    const line = `run ${entry.id} ended: ${entry.status} in ${formatMs(entry.duration_ms)}, ` +
      `${entry.turns ?? "?"} turn(s), ${cost}; today ${usd(b.usdToday)} of ${
        usd(b.limits.usdPerDay)
      }, ` +
      `month ${usd(b.usdMonth)} of ${usd(b.limits.usdPerMonth)}`;
    if (entry.status === "ok") o.log.info(line, { run: entry.id });
    else o.log.warn(`${line}: ${entry.error ?? ""}`, { run: entry.id });
    try {
      o.onRunEnd?.(entry);
    } finally {
      this.#prune(endedAt);
    }
  }

  #logEvent(runId: string, ev: RunEvent): void {
    const log = this.#o.log;
    switch (ev.type) {
      case "tool_call":
        log.debug(`run ${runId}: tool ${ev.name}`, { run: runId, args: ev.args });
        break;
      case "init": {
        const failed = ev.mcpServers.filter((s) => s.status !== "connected");
        if (failed.length > 0) {
          const which = failed.map((s) => `${s.name} (${s.status})`).join(", ");
          log.warn(`run ${runId}: MCP server ${which} did not connect`);
        }
        break;
      }
      case "error":
        log.debug(`run ${runId}: ${ev.message}`, { run: runId });
        break;
      default:
        break;
    }
  }

  #prune(now: number): void {
    try {
      this.#o.transcripts.prune(now, this.#o.retention ?? DEFAULT_RETENTION);
    } catch (err) {
      this.#o.log.warn(`transcript retention failed: ${(err as Error).message}`);
    }
  }
}

/** `90000` → `1m30s`; `0` → `0`. */
export function formatMs(ms: number): string {
  if (ms <= 0) return "0";
  if (ms < 1000) return `${ms}ms`;
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return (h ? `${h}h` : "") + (m ? `${m}m` : "") + (r || (!h && !m) ? `${r}s` : "");
}
