/**
 * The heartbeat runner's core (docs/decisions/runner.md): it hears every new post, decides which
 * ones wake the agent, and when to start a run: one at a time, within the limits.
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
 * - What is owed to a future run (queued events, the events of the run in
 *   progress, feedback) is kept in store meta and queued again at start; a
 *   run that does not complete (interrupted, stopped, halted) gives its events
 *   back, and only a completed run moves the feed cursor.
 *
 * Running one run (the spawn, `agent.timeout` killing its whole process group,
 * the transcript) is execute.ts's.
 *
 * No polling: an idle runner holds at most one timer, set for its next deadline
 * (debounce end, heartbeat, hourly-cap release or budget reset). The clock,
 * timers, store, harness, spawn function and transcripts are injected.
 *
 * @module
 */

import type { Settings } from "../config/schema.ts";
import { usd, usdOf } from "../money.ts";
import { BudgetLedger, type BudgetState, limitsTurns, reportsCost } from "./budget.ts";
import { denoRunnerFs, executeRun, type RunnerFs } from "./execute.ts";
import type { Harness, RunContext, RunningProcess, SelfCommand } from "./harness.ts";
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
import type { SpawnFn } from "./spawn.ts";
import type { RunRecorder } from "./state_file.ts";
import {
  DEFAULT_RETENTION,
  isRunId,
  newRunId,
  type Retention,
  type Transcripts,
  type TranscriptWriter,
} from "./transcripts.ts";
import type { RunIndexEntry, RunStatus, RunTrigger } from "../contracts/runs.ts";
import { classifyPost, normalizeAllow, WakeLimiter } from "./wake_rules.ts";
import { type SkipDecision, SkipLog } from "./skips.ts";
import { formatDuration, formatElapsed, HOUR_MS } from "../duration.ts";
import type { ProcessRow } from "./process_watch.ts";
import type { AgentHost } from "../contracts/agent_host.ts";

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

/** The meta key of the feed cursor given to the next run (moved by completed runs only). */
export const CURSOR_META_KEY = "runner.cursor";

/** The meta key of what is owed to a future run: queued events and feedback (JSON). */
export const PENDING_META_KEY = "runner.pending";

/** Everything the runner is given. */
export interface RunnerOptions {
  clock: Clock;
  timers: Timers;
  /** Where decisions go; messages are passed as literal text (braces escaped). */
  log: RunnerLog;
  store: RunnerStore;
  harness: Harness;
  spawn: SpawnFn;
  transcripts: Pick<
    Transcripts,
    "begin" | "index" | "recoverInterrupted" | "prune" | "spend" | "appendAfterEnd"
  >;
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
  /** Where the run in progress is recorded (its process group, alive each second). */
  recorder?: RunRecorder;
  /** The start time `ps` gives a pid, recorded so a reused pid is never taken for the run. */
  identify?: (pid: number) => Promise<number | undefined>;
  /**
   * The machine's processes (process_watch.ts `listProcesses`): a run whose harness has a
   * `processRule` is ended as "lock broken" when a process it must not have appears.
   */
  listProcesses?: () => Promise<ProcessRow[]>;
  /**
   * When a run a previous daemon left unfinished was last seen alive (ms), if
   * known: its recorded duration ends there rather than at its last output.
   */
  lastSeen?: (runId: string) => number | undefined;
  retention?: Retention;
  random?: () => number;
  /**
   * Each run is about one thread (the ACP runtime keeps one session per
   * thread): a run takes the queued events of one thread, the oldest first,
   * and the others wait for the runs right after it.
   */
  threadPerRun?: boolean;
}

/** The run in progress. */
export interface CurrentRun {
  id: string;
  trigger: RunTrigger;
  startedAt: number;
  events: number;
  /** The thread (root id) the run is about, when its events and decisions are all of one. */
  thread?: string;
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
  /** Threads the loop detector holds, with why. */
  pausedThreads: Array<{ thread: string; reason: string }>;
  /** Feedback posts waiting for the next run. */
  feedback: number;
  /** The next deadline the runner waits for, if any. */
  nextAt?: number;
  budget: BudgetState;
  /** The last run that ended, from the index. */
  lastRun?: RunIndexEntry;
  /** The newest posts a setting kept from waking the agent, oldest first (src/runner/skips.ts). */
  skipped: SkipDecision[];
}

interface Queued {
  post: RunnerPost;
  reason: string;
  thread: string;
}

interface Active extends CurrentRun {
  /** The events and feedback it was given, owed back if it does not complete. */
  queued: Queued[];
  feedback: PromptFeedback[];
  settled?: boolean;
  kill: (why: RunStatus) => void;
  done: Promise<void>;
  /** Its transcript, once open. */
  writer?: TranscriptWriter;
}

/** The heartbeat runner. */
export class Runner implements AgentHost {
  readonly #o: RunnerOptions;
  readonly #s: RunnerSettings;
  readonly #fs: RunnerFs;
  readonly #ledger: BudgetLedger;
  readonly #limiter: WakeLimiter;
  readonly #skips: SkipLog;
  readonly #allow: ReadonlySet<string>;
  readonly #queue = new Map<string, Queued>();
  /** Decisions on coding agents' parked requests not yet told to a run, with their thread. */
  #decided: Decided[] = [];
  readonly #feedback = new Map<string, PromptFeedback>();
  /** Threads held by the loop detector (only those holding queued events). */
  readonly #paused = new Map<string, string>();
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
    this.#skips = new SkipLog(this.#o.log);
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
    for (const id of t.recoverInterrupted(now, this.#o.lastSeen)) {
      this.#o.log.warn(`run ${id} was interrupted by a restart; recorded as interrupted`);
    }
    this.#prune(now);
    const entries = t.index();
    this.#ledger.restore(t.spend(now));
    this.#runStarts = entries.map((e) => Date.parse(e.started_at)).filter((s) => now - s < HOUR_MS);
    this.#lastRun = entries.at(-1);
    const hb = this.#s["agent.heartbeat"];
    this.#heartbeatAt = hb > 0 ? now + hb : undefined;
    this.#restore();
    this.#state = "started";
    this.#armDebounce(now);
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

  /**
   * A person decided a coding agent's parked request (docs/acp.md): wakes the
   * agent so it continues the work, with `reason` among the run's reasons.
   * Counted against the caps and budgets like any wake.
   */
  permissionDecided(reason: string, thread?: string): void {
    this.#decided.push({ reason, ...(thread !== undefined ? { thread } : {}) });
    this.#o.log.info(`queued: ${reason}`);
    this.#schedule();
  }

  /**
   * Adds what a coding agent the run `runId` called did (an ACP session update
   * or permission decision, docs/acp.md) to that run's transcript, as a
   * `wats_acp` line: in place while the run is the current one, after its
   * footer once it ended (a parked call a person answered later goes on), so
   * `wats agent logs` shows it either way.
   */
  noteAcp(runId: string, event: Record<string, unknown>): void {
    const line = JSON.stringify({ ...event, type: "wats_acp" });
    const cur = this.#current;
    if (cur?.id === runId && cur.writer !== undefined && !cur.settled) {
      cur.writer.line(line);
      return;
    }
    if (!isRunId(runId)) return;
    try {
      this.#o.transcripts.appendAfterEnd(runId, line);
    } catch (err) {
      // A run that never began (the call was not a run's) or was pruned: the node's JSON lines have it.
      if (!(err instanceof Deno.errors.NotFound)) {
        this.#o.log.warn(`cannot add to run ${runId}'s transcript: ${(err as Error).message}`);
      }
    }
  }

  /**
   * The thread the run `runId` is about, while it is the current run: the
   * coding agents it calls work under that thread (docs/acp.md).
   */
  threadOfRun(runId: string): string | undefined {
    const cur = this.#current;
    return cur?.id === runId ? cur.thread : undefined;
  }

  /** New posts from the store, in seq order (wire `Store.onInsert` here). */
  onPosts(posts: readonly RunnerPost[]): void {
    const now = this.#o.clock.now();
    const check = new Set<string>();
    const ctx = this.#classifyContext();
    const before = this.#queue.size + this.#feedback.size;
    const queued: Queued[] = [];
    const skip = (post: RunnerPost, setting: string, reason: string) =>
      this.#skips.add({
        at: now,
        post: post.id,
        kind: post.kind,
        author: post.author,
        setting,
        reason: `did not wake the agent: ${reason}`,
      });
    for (const post of posts) {
      const thread = threadOf(post);
      // Any post in a held thread may be the third author that releases it.
      if (this.#paused.has(thread)) check.add(thread);
      const d = classifyPost(post, ctx);
      if (d.action === "ignore") {
        if (d.setting !== undefined) skip(post, d.setting, d.reason);
        else this.#o.log.debug(`ignored: ${d.reason}`, { id: post.id });
      } else if (d.action === "feedback") {
        this.#feedback.set(post.id, {
          id: post.id,
          kind: post.kind,
          author: post.author,
          parent: post.parent ?? thread,
        });
        this.#o.log.info(`remembered for the next run: ${d.reason}`, { id: post.id });
      } else if (!this.#limiter.take(post.author, now)) {
        const max = this.#s["agent.wakes_per_author_per_hour"];
        skip(
          post,
          "agent.wakes_per_author_per_hour",
          `${d.reason}, but its author reached agent.wakes_per_author_per_hour = ${max}`,
        );
      } else {
        const q = { post, reason: d.reason, thread: d.thread };
        this.#queue.set(post.id, q);
        queued.push(q);
        this.#o.log.info(`queued: ${d.reason}`, { id: post.id, thread: d.thread });
        check.add(d.thread);
      }
    }
    for (const thread of check) this.#checkThread(thread);
    // Queued, but held: the post waits for the loop pause or the budget pause to end.
    const blocked = queued.length > 0 ? this.#ledger.state(now).blocked : undefined;
    for (const q of queued) {
      const loop = this.#paused.get(q.thread);
      if (loop !== undefined) {
        skip(
          q.post,
          "agent.loop_max_exchanges",
          `${q.reason} waits: thread ${q.thread} is paused (${loop})`,
        );
      } else if (blocked !== undefined) {
        skip(
          q.post,
          blocked.setting,
          `${q.reason} waits: ${blocked.reason}; runs resume at ${
            new Date(blocked.resetsAt).toISOString()
          }`,
        );
      }
    }
    for (const thread of check) this.#checkThread(thread);
    if (this.#queue.size + this.#feedback.size !== before) this.#persist();
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
      pausedThreads: [...this.#paused].map(([thread, reason]) => ({ thread, reason })),
      feedback: this.#feedback.size,
      budget,
      skipped: this.#skips.recent(),
      ...(this.#lastRun ? { lastRun: this.#lastRun } : {}),
      ...(this.#timerAt !== undefined ? { nextAt: this.#timerAt } : {}),
    };
    if (this.#state !== "started") return { state: "stopped", ...base };
    if (this.#halted !== undefined) return { state: "halted", reason: this.#halted, ...base };
    if (cur) {
      const { id, trigger, startedAt, events, thread } = cur;
      return {
        state: "running",
        current: { id, trigger, startedAt, events, ...(thread ? { thread } : {}) },
        ...base,
      };
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
      this.#paused.set(
        thread,
        `loop detected: ${v.turns} turns between the agent and one other author ` +
          `(agent.loop_max_exchanges = ${max}); a post by a third author resumes it`,
      );
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

  /**
   * Counts spend outside runs: a coding agent's call over ACP (docs/acp.md).
   * It counts in USD, not as a run; the next scheduling sees a reached budget.
   */
  addSpend(at: number, usd: number): void {
    this.#ledger.record({ at, costUsd: usd, run: false });
  }

  /** Why nothing may spend now (a reached budget), or undefined. */
  budgetBlocked(): string | undefined {
    return this.#ledger.state(this.#o.clock.now()).blocked?.reason;
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
    if (this.#decided.length > 0) deadlines.push(Math.max(now, this.#capUntil ?? -Infinity));
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
    const decidedDue = this.#decided.length > 0 && (this.#capUntil ?? -Infinity) <= now;
    if (!eventsDue && !heartbeatDue && !decidedDue) {
      this.#schedule();
      return;
    }
    const max = this.#s["agent.max_runs_per_hour"];
    this.#runStarts = this.#runStarts.filter((s) => now - s < HOUR_MS);
    if (this.#runStarts.length >= max) {
      const release = this.#runStarts.length > 0
        ? Math.min(...this.#runStarts) + HOUR_MS
        : Infinity;
      const what = eventsDue
        ? `${runnable.length} queued event(s) wait`
        : decidedDue
        ? "permission decisions wait"
        : "heartbeat skipped";
      this.#o.log.info(
        `run skipped: hourly cap (agent.max_runs_per_hour = ${max}); ${what}` +
          (Number.isFinite(release) ? ` until ${new Date(release).toISOString()}` : ""),
      );
      if (eventsDue || decidedDue) this.#capUntil = release;
      if (heartbeatDue) this.#heartbeatAt = now + this.#s["agent.heartbeat"];
      this.#schedule();
      return;
    }
    this.#startRun(eventsDue || decidedDue ? "events" : "heartbeat", runnable, now);
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

  #startRun(trigger: RunTrigger, runnable: Queued[], now: number): void {
    this.#clearTimer();
    const o = this.#o;
    const id = newRunId(now, o.random);
    const { events, decided, thread } = this.#take(runnable);
    for (const q of events) this.#queue.delete(q.post.id);
    const feedback = [...this.#feedback.values()];
    this.#feedback.clear();
    // Events left for the next run (one thread per run) have waited their debounce already.
    this.#debounceAt = events.length < runnable.length ? now : undefined;
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
    // The cursor moves when this run completes, not now: a run that does not
    // complete leaves it (and its events) for the next one.
    const cursorAfter = Math.max(cursor, o.store.maxSeq());

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
      ? [`heartbeat (agent.heartbeat = ${formatDuration(hb)})`]
      : [...new Set(events.map((q) => q.reason))];
    reasons.push(...decided.map((d) => d.reason));
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
      ...(thread !== undefined ? { thread } : {}),
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
    const runtime = o.harness.name;
    // What bounds this run, as the runtime applies it: Codex reports no cost (docs/codex.md).
    const left = reportsCost(runtime)
      ? `budget left ${usd(budget.usdLeft)}`
      : `runs today ${budget.runsWithoutCostToday} of ${budget.limits.runsPerDay}`;
    o.log.info(
      `run ${id} started (${trigger}${
        events.length > 0 ? `, ${events.length} event(s)` : ""
      }; ${left})`,
      { run: id, events: events.map((q) => q.post.id) },
    );
    let killWith: RunStatus | undefined;
    let proc: RunningProcess | undefined;
    const active: Active = {
      id,
      trigger,
      startedAt: now,
      events: events.length,
      ...(thread !== undefined ? { thread } : {}),
      queued: events,
      feedback,
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
      ...(thread !== undefined ? { thread } : {}),
      started_at: new Date(now).toISOString(),
      harness: o.harness.name,
      profile: this.#s["agent.profile"],
      ...(limitsTurns(runtime) ? { max_turns: this.#s["agent.max_turns"] } : {}),
      ...(reportsCost(runtime) ? { max_budget_usd: budget.usdLeft } : {}),
    };
    const control = {
      started: (p: RunningProcess) => {
        proc = p;
        if (killWith !== undefined) p.kill();
      },
      killedWith: () => killWith,
    };
    active.done = (async () => {
      const writer = o.transcripts.begin(header);
      active.writer = writer;
      const footer = await executeRun(this.#executeDeps(), ctx, writer, control);
      const entry = writer.end(footer, o.clock.now());
      this.#settle(active, footer.status, cursorAfter);
      this.#ended(entry);
    })()
      .catch((err) => {
        this.#settle(active, "error", cursorAfter);
        o.log.error(`run ${id} could not be recorded: ${(err as Error).message}`);
      })
      .finally(() => {
        this.#current = undefined;
        this.#armDebounce(o.clock.now());
        this.#schedule();
      });
  }

  /**
   * What a run takes: all runnable events and decisions, or with
   * `threadPerRun` those of one thread (the oldest event's, else the first
   * decision's) and the decisions of no thread. The run's thread is the one
   * thread of what it took, if there is one.
   */
  #take(runnable: Queued[]): { events: Queued[]; decided: Decided[]; thread?: string } {
    let events = runnable;
    let decided = this.#decided;
    if (this.#o.threadPerRun) {
      const oldest = runnable.reduce<Queued | undefined>(
        (a, q) => a === undefined || q.post.seq < a.post.seq ? q : a,
        undefined,
      );
      const thread = oldest?.thread ?? this.#decided.find((d) => d.thread)?.thread;
      events = runnable.filter((q) => q.thread === thread);
      decided = this.#decided.filter((d) => d.thread === undefined || d.thread === thread);
    }
    this.#decided = this.#decided.filter((d) => !decided.includes(d));
    const threads = new Set([
      ...events.map((q) => q.thread),
      ...decided.flatMap((d) => d.thread ?? []),
    ]);
    const thread = threads.size === 1 ? [...threads][0] : undefined;
    return { events, decided, ...(thread !== undefined ? { thread } : {}) };
  }

  #executeDeps() {
    const o = this.#o;
    return {
      clock: o.clock,
      timers: o.timers,
      log: o.log,
      harness: o.harness,
      spawn: o.spawn,
      fs: this.#fs,
      runDir: o.paths.runDir,
      timeoutMs: this.#s["agent.timeout"],
      prepare: o.prepare,
      recorder: o.recorder,
      identify: o.identify,
      listProcesses: o.listProcesses,
    };
  }

  /**
   * After a run: a completed run moves the cursor past what it was given and
   * its events are done; the events of a run that did not complete (the node
   * stopped, a halt) go back to the queue for the next run.
   */
  #settle(run: Active, status: RunStatus, cursorAfter: number): void {
    if (run.settled) return;
    run.settled = true;
    if (INCOMPLETE.has(status)) {
      const owed = run.queued.filter((q) => !this.#answered(q.post.id, q.thread));
      for (const q of owed) if (!this.#queue.has(q.post.id)) this.#queue.set(q.post.id, q);
      for (const f of run.feedback) if (!this.#feedback.has(f.id)) this.#feedback.set(f.id, f);
      if (owed.length > 0) {
        this.#o.log.info(
          `run ${run.id} did not complete (${status}): its ${owed.length} event(s) wait for the next run`,
        );
      }
    } else {
      this.#o.store.setMeta(CURSOR_META_KEY, String(cursorAfter));
    }
    this.#current = undefined;
    this.#persist();
  }

  #ended(entry: RunIndexEntry): void {
    const o = this.#o;
    const endedAt = Date.parse(entry.ended_at);
    this.#lastRun = entry;
    this.#ledger.record({ at: endedAt, costUsd: entry.cost_usd });
    const b = this.#ledger.state(endedAt);
    const cost = entry.cost_usd !== undefined ? usd(entry.cost_usd) : "no cost reported";
    const line = `run ${entry.id} ended: ${entry.status} in ${formatElapsed(entry.duration_ms)}, ` +
      `${entry.turns ?? "?"} turn(s), ${cost}; today ${usdOf(b.usdToday, b.limits.usdPerDay)}, ` +
      `month ${usdOf(b.usdMonth, b.limits.usdPerMonth)}`;
    if (entry.status === "ok") o.log.info(line, { run: entry.id });
    else o.log.warn(`${line}: ${entry.error ?? ""}`, { run: entry.id });
    try {
      o.onRunEnd?.(entry);
    } finally {
      this.#prune(endedAt);
    }
  }

  // ---------------------------------------------------------- persistence

  /**
   * Saves what is owed to a future run: the queued events (paused threads'
   * included), those of the run in progress, and the feedback not yet told.
   */
  #persist(): void {
    const cur = this.#current;
    const events = new Set([...this.#queue.keys(), ...(cur?.queued.map((q) => q.post.id) ?? [])]);
    const feedback = new Set([...this.#feedback.keys(), ...(cur?.feedback.map((f) => f.id) ?? [])]);
    const state: PendingState = { events: [...events], feedback: [...feedback] };
    try {
      this.#o.store.setMeta(PENDING_META_KEY, JSON.stringify(state));
    } catch (err) {
      this.#o.log.warn(`cannot save the runner's queue: ${(err as Error).message}`);
    }
  }

  /** Queues again what a previous daemon owed a run (see `#persist`). */
  #restore(): void {
    const o = this.#o;
    let state: PendingState;
    try {
      const v = JSON.parse(o.store.getMeta(PENDING_META_KEY) ?? "null");
      if (!v || !Array.isArray(v.events) || !Array.isArray(v.feedback)) return;
      state = v as PendingState;
    } catch {
      o.log.warn(`the runner's saved queue (${PENDING_META_KEY}) does not parse; it is dropped`);
      return;
    }
    const ctx = this.#classifyContext();
    let events = 0;
    for (const id of [...state.events, ...state.feedback]) {
      const post = typeof id === "string" ? o.store.get(id) : undefined;
      if (!post) continue;
      // Classified again: the settings may have changed since it was queued.
      const d = classifyPost(post, ctx);
      if (d.action === "wake") {
        if (this.#answered(post.id, d.thread)) continue;
        this.#queue.set(post.id, { post, reason: d.reason, thread: d.thread });
        events++;
      } else if (d.action === "feedback") {
        this.#feedback.set(post.id, {
          id: post.id,
          kind: post.kind,
          author: post.author,
          parent: post.parent ?? threadOf(post),
        });
      }
    }
    if (events > 0) {
      o.log.info(`${events} event(s) not handled before the restart wait for the next run`);
    }
    for (const thread of new Set([...this.#queue.values()].map((q) => q.thread))) {
      this.#checkThread(thread);
    }
  }

  /**
   * True when the agent already replied to post `id` (a run that did not
   * complete may have answered before it was cut off): offering it again
   * would make the agent answer twice.
   */
  #answered(id: string, thread: string): boolean {
    return this.#o.store.threadNewest(thread, ANSWERED_LOOKBACK)
      .some((p) => p.author === this.#o.agentKey && p.parent === id);
  }

  #classifyContext() {
    return {
      agentKey: this.#o.agentKey,
      localAuthors: this.#o.localAuthors,
      ignoreLocal: this.#s["agent.ignore_local"],
      allow: this.#allow,
      get: (id: string) => this.#o.store.get(id),
    };
  }

  #prune(now: number): void {
    try {
      this.#o.transcripts.prune(now, this.#o.retention ?? DEFAULT_RETENTION);
    } catch (err) {
      this.#o.log.warn(`transcript retention failed: ${(err as Error).message}`);
    }
  }
}

/** How many of a thread's newest posts are searched for the agent's reply to an event. */
const ANSWERED_LOOKBACK = 200;

/** The statuses of a run that did not complete: its events are offered to the next run. */
const INCOMPLETE: ReadonlySet<RunStatus> = new Set(["interrupted", "stopped", "halted"]);

/** A person's decision on a parked request, waiting to wake the agent. */
interface Decided {
  reason: string;
  /** The thread of the run whose call parked, when it had one. */
  thread?: string;
}

/** What `#persist` saves. */
interface PendingState {
  events: string[];
  feedback: string[];
}
