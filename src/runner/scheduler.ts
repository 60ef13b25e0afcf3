/**
 * The heartbeat runner's core (docs/decisions/runner.md): it hears every new post, decides which
 * ones wake the agent (intake.ts, wake_rules.ts), and starts runs one at a time, when plan.ts
 * says: the debounce of `agent.every`, the heartbeat, the hourly cap and the budget pause. The
 * loop detector holds a thread's events while it is paused (loop_detector.ts). An ask another
 * agent claims leaves the queue until the claim lapses or is released (claims.ts).
 *
 * What is owed to a future run (queued events, the events of the run in progress, feedback) is
 * kept in store meta (pending.ts) and queued again at start; a run that does not complete
 * (interrupted, stopped, halted) gives its events back, one that ended before the agent could act
 * gives them back with a backoff (retry.ts), and only a completed run moves the feed cursor. Running one run (the spawn, `agent.timeout` killing its whole process group, the
 * transcript) is execute.ts's; what it starts with is run_setup.ts's.
 *
 * No polling: an idle runner holds at most one timer, set for its next deadline. Everything it
 * uses is injected (runner_options.ts).
 *
 * @module
 */

import type { BudgetState } from "./budget.ts";
import { BudgetDesk } from "./reservations.ts";
import { BudgetWaits } from "./budget_waits.ts";
import type { BudgetHold, NodeBudget } from "../contracts/budget.ts";
import { denoRunnerFs, type ExecuteDeps, executeRun, type RunOutcome } from "./execute.ts";
import { type Decided, gaveUpLine, Retries, retryLine, type RetryMark } from "./retry.ts";
import { type ActiveRun, activeRun, noteAcpLine } from "./active_run.ts";
import { ThreadPauses } from "./loop_detector.ts";
import { literalLog, type RunnerPost, threadOf } from "./ports.ts";
import { claimNote, type PromptFeedback } from "./prompt.ts";
import {
  type Claim,
  type ClaimState,
  claimStateIn,
  HELD_MAX,
  HeldAsks,
  type OthersClaim,
  TrustedClaimers,
} from "./claims.ts";
import { reloadPending, savePending } from "./pending.ts";
import { type Plan, planRun, takeForRun } from "./plan.ts";
import type { RunnerOptions, RunnerSettings } from "./runner_options.ts";
import { cursorOf, type QueuedEvent, setUpRun } from "./run_setup.ts";
import { DEFAULT_RETENTION, newRunId } from "./transcripts.ts";
import type { RunIndexEntry, RunStatus, RunTrigger } from "../contracts/runs.ts";
import type { AgentHost } from "../contracts/agent_host.ts";
import { normalizeAllow, normalizeCaps, type WakeContext, WakeLimiter } from "./wake_rules.ts";
import { SkipLog } from "./skips.ts";
import { answered, heldBecause, intake } from "./intake.ts";
import { endedLine, type RunnerStatus, statusOf } from "./runner_status.ts";
import { HOUR_MS } from "../duration.ts";

/** The meta key of the feed cursor given to the next run (moved by completed runs only). */
export const CURSOR_META_KEY = "runner.cursor";

/** The heartbeat runner. */
export class Runner implements AgentHost {
  readonly #world: RunnerOptions["world"];
  readonly #records: RunnerOptions["records"];
  readonly #agent: RunnerOptions["agent"];
  readonly #launch: RunnerOptions["launch"];
  readonly #hooks: NonNullable<RunnerOptions["hooks"]>;
  readonly #settings: RunnerSettings;
  /** What running one run needs (execute.ts): the same for every run. */
  readonly #execute: ExecuteDeps;
  /** The budget of runs and coding agent calls together (reservations.ts). */
  readonly #desk: BudgetDesk;
  readonly #limiter: WakeLimiter;
  readonly #skips: SkipLog;
  /** What the wake rules read (wake_rules.ts). */
  readonly #wake: WakeContext;
  readonly #queue = new Map<string, QueuedEvent>();
  /** Asks dropped from the queue because another author claimed them (claims.ts). */
  readonly #held = new HeldAsks<QueuedEvent>();
  /** Whose claims are trusted (claims.ts): `agent.allow`, this node's profiles, accepted answerers. */
  readonly #trusted: (author: string) => boolean;
  readonly #accepted: TrustedClaimers;
  /** Decisions on coding agents' parked requests not yet told to a run, with their thread. */
  #decided: Decided[] = [];
  /** What runs that ended before the agent could act gave back, waiting for its next try. */
  readonly #retries = new Retries<QueuedEvent>();
  readonly #feedback = new Map<string, PromptFeedback>();
  readonly #paused: ThreadPauses;
  #runStarts: number[] = [];
  #debounceAt: number | undefined;
  #heartbeatAt: number | undefined;
  #capUntil: number | undefined;
  readonly #budgetWaits: BudgetWaits;
  #halted: string | undefined;
  #timer: unknown;
  #timerAt: number | undefined;
  #current: ActiveRun | undefined;
  #lastRun: RunIndexEntry | undefined;
  #state: "new" | "started" | "stopped" = "new";

  constructor(opts: RunnerOptions) {
    this.#world = { ...opts.world, log: literalLog(opts.world.log) };
    this.#records = opts.records;
    this.#agent = opts.agent;
    this.#launch = opts.launch;
    this.#hooks = opts.hooks ?? {};
    this.#settings = opts.settings;
    const l = opts.launch;
    this.#execute = {
      ...this.#world,
      harness: l.harness,
      spawn: l.spawn,
      fs: l.fs ?? denoRunnerFs,
      runDir: l.paths.runDir,
      timeoutMs: opts.settings["agent.timeout"],
      prepare: l.prepare,
      recorder: l.recorder,
      identify: l.identify,
      listProcesses: l.listProcesses,
    };
    this.#wake = {
      agentKey: opts.agent.agentKey,
      localAuthors: opts.agent.localAuthors,
      ignoreLocal: opts.settings["agent.ignore_local"],
      allow: normalizeAllow(opts.settings["agent.allow"]),
      caps: normalizeCaps(opts.settings["agent.caps"]),
      capsMatch: opts.settings["agent.caps_match"],
      openAsks: opts.settings["agent.open_asks"],
      get: (id: string) => opts.records.store.get(id),
    };
    this.#accepted = new TrustedClaimers(opts.records.store);
    this.#trusted = (a) =>
      this.#wake.allow.has(a) || opts.agent.localAuthors().has(a) || this.#accepted.has(a);
    this.#limiter = new WakeLimiter(opts.settings["agent.wakes_per_author_per_hour"]);
    this.#skips = new SkipLog(this.#world.log);
    this.#budgetWaits = new BudgetWaits(this.#world.log, this.#hooks.onBudgetPause);
    this.#paused = new ThreadPauses({
      store: opts.records.store,
      agentKey: opts.agent.agentKey,
      maxExchanges: opts.settings["agent.loop_max_exchanges"],
      log: this.#world.log,
    });
    this.#desk = new BudgetDesk({
      limits: {
        usdPerDay: opts.settings["agent.max_usd_per_day"],
        usdPerMonth: opts.settings["agent.max_usd_per_month"],
        runsPerDay: opts.settings["agent.max_runs_per_day"],
      },
      reserveUsd: opts.settings["agent.reserve_usd"],
      ...this.#world,
      // A run that waited for calls to release the budget may start now.
      onRelease: () => this.#schedule(),
    });
  }

  /**
   * Restores spend and the hour's runs from the runs index (closing transcripts a
   * crash left open), applies retention, and starts waiting.
   */
  start(): void {
    if (this.#state !== "new") return;
    const now = this.#world.clock.now();
    const t = this.#records.transcripts;
    for (const id of t.recoverInterrupted(now, this.#records.lastSeen)) {
      this.#world.log.warn(`run ${id} was interrupted by a restart; recorded as interrupted`);
    }
    this.#prune(now);
    const entries = t.index();
    this.#desk.restore(t.spend(now));
    // A run that ended before the agent could act is not a full run for the hourly cap.
    this.#runStarts = entries.filter((e) => e.retry === undefined)
      .map((e) => Date.parse(e.started_at)).filter((s) => now - s < HOUR_MS);
    this.#lastRun = entries.at(-1);
    this.#heartbeatAt = this.#nextHeartbeat(now);
    this.#restore(now);
    this.#state = "started";
    this.#armDebounce(now);
    this.#schedule();
  }

  /** Stops: no new runs; the current run is killed and recorded as stopped. */
  async stop(): Promise<void> {
    this.#state = "stopped";
    this.#clearTimer();
    this.#desk.close();
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
    this.#world.log.warn(`agent runs halted: ${reason}`);
    this.#current?.kill("halted");
  }

  /** Ends a halt. */
  resume(): void {
    if (this.#halted === undefined) return;
    this.#halted = undefined;
    this.#world.log.info("agent runs resumed");
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
    this.#world.log.info(`queued: ${reason}`);
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
    const at = { cur: this.#current, transcripts: this.#records.transcripts, log: this.#world.log };
    noteAcpLine(at, runId, event);
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
    const now = this.#world.clock.now();
    const check = new Set<string>();
    /** Threads that got a post: a claim, release or sign of life may change a claim there. */
    const touched = new Set<string>();
    const before = this.#queue.size + this.#feedback.size;
    let claimed = false;
    const queued: QueuedEvent[] = [];
    const skip = (post: RunnerPost, setting: string, reason: string) =>
      this.#skips.didNotWake(now, post, setting, reason);
    const at = {
      ctx: this.#wake,
      limiter: this.#limiter,
      now,
      wakesPerAuthor: this.#settings["agent.wakes_per_author_per_hour"],
    };
    for (const post of posts) {
      // Any post in a held thread may be the third author that releases it.
      const thread = threadOf(post);
      touched.add(thread);
      this.#accepted.learn(post);
      if (this.#paused.reason(thread) !== undefined) check.add(thread);
      const d = intake(post, at);
      if (d.do === "ignore") {
        if (d.setting !== undefined) skip(post, d.setting, d.reason);
        else this.#world.log.debug(`ignored: ${d.reason}`, { id: post.id });
      } else if (d.do === "feedback") {
        this.#feedback.set(post.id, d.feedback);
        this.#world.log.info(`remembered for the next run: ${d.reason}`, { id: post.id });
      } else {
        const q = d.queued;
        // Claimed before it arrived (relays need not keep order): never queued.
        if (this.#holdIfClaimed(q, now)) {
          claimed = true;
          continue;
        }
        this.#queue.set(post.id, q);
        queued.push(q);
        this.#world.log.info(`queued: ${q.reason}`, { id: post.id, thread: q.thread });
        check.add(q.thread);
      }
    }
    const claimsChanged = this.#recheckClaims(touched, now) || claimed;
    for (const thread of claimsChanged ? touched : []) this.#checkThread(thread);
    for (const thread of check) this.#checkThread(thread);
    // Queued, but held: the post waits for the loop pause or the budget pause to end.
    const blocked = queued.length > 0 ? this.#desk.state(now).blocked : undefined;
    for (const q of queued.filter((q) => this.#queue.has(q.post.id))) {
      const held = heldBecause(q, this.#paused.reason(q.thread), blocked);
      if (held !== undefined) skip(q.post, held.setting, held.reason);
    }
    for (const thread of check) this.#checkThread(thread);
    if (claimsChanged || this.#queue.size + this.#feedback.size !== before) this.#persist();
    this.#armDebounce(now);
    this.#schedule();
  }

  /** The runner's state, budget and queue. */
  status(): RunnerStatus {
    return statusOf({
      started: this.#state === "started",
      ...(this.#halted !== undefined ? { halted: this.#halted } : {}),
      ...(this.#current ? { current: this.#current } : {}),
    }, {
      queued: this.#queue.size,
      pausedThreads: this.#paused.list(),
      claimed: this.#held.list().map((h) => ({ ask: h.queued.post.id, claim: h.claim })),
      feedback: this.#feedback.size,
      budget: this.#desk.state(this.#world.clock.now()),
      skipped: this.#skips.recent(),
      retrying: this.#retries.waiting(),
      gaveUp: this.#retries.gaveUp(),
      ...(this.#lastRun ? { lastRun: this.#lastRun } : {}),
      ...(this.#timerAt !== undefined ? { nextAt: this.#timerAt } : {}),
      ...(this.#capUntil !== undefined ? { capUntil: this.#capUntil } : {}),
    });
  }

  // ------------------------------------------------------------- deciding

  /** The next heartbeat run's time, counted from `now` (`agent.heartbeat` = 0: none). */
  #nextHeartbeat(now: number): number | undefined {
    const hb = this.#settings["agent.heartbeat"];
    return hb > 0 ? now + hb : undefined;
  }

  #checkQueuedThreads(): void {
    for (const thread of new Set([...this.#queue.values()].map((q) => q.thread))) {
      this.#checkThread(thread);
    }
  }

  /** Asks the loop detector again about a thread (held only while it holds queued events). */
  #checkThread(thread: string): void {
    this.#paused.check(thread, [...this.#queue.values()].some((q) => q.thread === thread));
  }

  #runnable(): QueuedEvent[] {
    return [...this.#queue.values()].filter((q) => this.#paused.reason(q.thread) === undefined);
  }

  /** Starts the debounce when runnable events wait and no window is open. */
  #armDebounce(now: number): void {
    if (this.#debounceAt === undefined && this.#runnable().length > 0) {
      this.#debounceAt = now + this.#settings["agent.every"];
    }
  }

  /** The budget runs and coding agent calls share (reservations.ts, src/contracts/budget.ts). */
  get budget(): NodeBudget {
    return this.#desk;
  }

  /** Runs what is due, or sets the one timer for the next deadline (plan.ts decides which). */
  #schedule(): void {
    if (this.#state !== "started" || this.#halted !== undefined || this.#current) {
      this.#clearTimer();
      return;
    }
    const now = this.#world.clock.now();
    this.#lapseClaims(now);
    this.#retryDue(now);
    const budget = this.#desk.state(now);
    this.#runStarts = this.#runStarts.filter((t) => now - t < HOUR_MS);
    let plan = planRun(this.#planState(now, budget, false));
    if (plan.do === "check") {
      // Loop state may have changed since the events were queued (the agent posted);
      // checked, the plan never asks again.
      this.#checkQueuedThreads();
      plan = planRun(this.#planState(now, budget, true));
    }
    if (plan.debounceEnded) this.#debounceAt = undefined;
    this.#follow(plan, now, budget);
  }

  #planState(now: number, budget: BudgetState, checked: boolean) {
    return {
      now,
      ...(budget.blocked ? { blocked: budget.blocked } : {}),
      runnable: this.#runnable().length,
      decided: this.#decided.length,
      debounceAt: this.#debounceAt,
      heartbeatAt: this.#heartbeatAt,
      capUntil: this.#capUntil,
      runStarts: this.#runStarts,
      maxRunsPerHour: this.#settings["agent.max_runs_per_hour"],
      heartbeatMs: this.#settings["agent.heartbeat"],
      checked,
    };
  }

  #follow(plan: Plan, now: number, budget: BudgetState): void {
    if (plan.do === "pause") {
      this.#budgetWaits.paused(plan.reason, plan.until);
      this.#armFor(plan.until, now);
      return;
    }
    this.#budgetWaits.open(budget.usdLeft);
    switch (plan.do) {
      case "idle":
        this.#armFor(undefined, now);
        return;
      case "wait":
        this.#armFor(plan.until, now);
        return;
      case "skip":
        this.#world.log.info(plan.message);
        if (plan.capUntil !== undefined) this.#capUntil = plan.capUntil;
        if (plan.heartbeatAt !== undefined) this.#heartbeatAt = plan.heartbeatAt;
        this.#schedule();
        return;
      case "run": {
        const admitted = this.#desk.admit(true);
        if (admitted.admitted) {
          this.#budgetWaits.started();
          this.#startRun(plan.trigger, this.#runnable(), admitted.hold);
          return;
        }
        // Calls in flight hold the rest: the run starts when one of them ends (onRelease).
        this.#budgetWaits.heldBack(admitted.reason);
        this.#armFor(undefined, now);
        return;
      }
    }
  }

  /** Sets the one timer for `until`, the first claim lapse or the next retry, whichever comes first. */
  #armFor(until: number | undefined, now: number): void {
    const all = [until, this.#held.nextLapse(), this.#retries.nextAt()]
      .filter((t): t is number => t !== undefined);
    if (all.length === 0) this.#clearTimer();
    else this.#arm(Math.min(...all), now);
  }

  #arm(at: number, now: number): void {
    if (this.#timer !== undefined && this.#timerAt === at) return;
    this.#clearTimer();
    this.#timerAt = at;
    this.#timer = this.#world.timers.setTimer(at - now, () => {
      this.#timer = undefined;
      this.#timerAt = undefined;
      this.#schedule();
    });
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#world.timers.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#timerAt = undefined;
  }

  // -------------------------------------------------------------- running

  #startRun(trigger: RunTrigger, runnable: QueuedEvent[], hold: BudgetHold): void {
    const now = this.#world.clock.now();
    this.#clearTimer();
    const { store, transcripts } = this.#records;
    const log = this.#world.log;
    const id = newRunId(now, this.#world.random);
    const { events, decided, thread } = takeForRun(
      runnable,
      this.#decided,
      this.#launch.threadPerRun ?? false,
    );
    this.#decided = this.#decided.filter((d) => !decided.includes(d));
    for (const q of events) this.#queue.delete(q.post.id);
    const feedback = [...this.#feedback.values()];
    this.#feedback.clear();
    const claims = new Map<string, OthersClaim>();
    for (const q of events) {
      const c = q.post.kind === "ask" ? this.#claimState(q, now) : undefined;
      if (c !== undefined && c.state !== "open") claims.set(q.post.id, c);
    }
    // Events left for the next run (one thread per run) have waited their debounce already.
    this.#debounceAt = events.length < runnable.length ? now : undefined;
    this.#capUntil = undefined;
    this.#heartbeatAt = this.#nextHeartbeat(now);
    this.#runStarts.push(now);

    const cursor = cursorOf(store.getMeta(CURSOR_META_KEY), events);
    // The cursor moves when this run completes, not now: a run that does not
    // complete leaves it (and its events) for the next one.
    const cursorAfter = Math.max(cursor, store.maxSeq());

    const budget = this.#desk.state(now);
    const rejections = this.#agent.rejections?.() ?? [];
    const token = this.#hooks.onRunStart?.(id);
    const { ctx, header, startLine } = setUpRun(
      {
        id,
        trigger,
        startedAt: now,
        events,
        decided: decided.map((d) => d.reason),
        feedback,
        ...(thread !== undefined ? { thread } : {}),
        claims,
        claimed: this.#held.list().map((h) => ({ ask: h.queued.post.id, claim: h.claim })),
      },
      {
        settings: this.#settings,
        agent: this.#agent,
        launch: this.#launch,
        budget,
        maxUsd: hold.heldUsd,
        cursor,
        rejections,
        token,
      },
    );
    log.info(startLine, { run: id, events: events.map((q) => q.post.id) });
    const { active, control } = activeRun({
      id,
      trigger,
      startedAt: now,
      events: events.length,
      ...(thread !== undefined ? { thread } : {}),
      queued: events,
      feedback,
      decided,
    });
    this.#current = active;
    active.done = (async () => {
      const writer = transcripts.begin(header);
      active.writer = writer;
      const { beforeActing, ...footer } = await executeRun(this.#execute, ctx, writer, control);
      const endedAt = this.#world.clock.now();
      const retry = beforeActing ? this.#giveBack(active, footer, endedAt) : undefined;
      const entry = writer.end(retry ? { ...footer, retry } : footer, endedAt);
      this.#settle(active, footer.status, cursorAfter);
      hold.settle(entry.cost_usd);
      this.#ended(entry);
    })()
      .catch((err) => {
        hold.settle(undefined);
        this.#settle(active, "error", cursorAfter);
        log.error(`run ${id} could not be recorded: ${(err as Error).message}`);
      })
      .finally(() => {
        this.#current = undefined;
        this.#armDebounce(this.#world.clock.now());
        this.#schedule();
      });
  }

  /**
   * After a run: a completed run moves the cursor past what it was given and
   * its events are done; the events of a run that did not complete (the node
   * stopped, a halt) go back to the queue for the next run.
   */
  #settle(run: ActiveRun, status: RunStatus, cursorAfter: number): void {
    if (run.settled) return;
    run.settled = true;
    if (INCOMPLETE.has(status)) {
      const { store } = this.#records;
      const agent = this.#agent.agentKey;
      const owed = run.queued.filter((q) => !answered(store, agent, q.post.id, q.thread));
      for (const q of owed) if (!this.#queue.has(q.post.id)) this.#queue.set(q.post.id, q);
      this.#recheckClaims(new Set(owed.map((q) => q.thread)), this.#world.clock.now());
      for (const f of run.feedback) if (!this.#feedback.has(f.id)) this.#feedback.set(f.id, f);
      if (owed.length > 0) {
        this.#world.log.info(
          `run ${run.id} did not complete (${status}): its ${owed.length} event(s) wait for the next run`,
        );
      }
    } else {
      this.#retries.done(run.queued.map((q) => q.post.id));
      this.#records.store.setMeta(CURSOR_META_KEY, String(cursorAfter));
    }
    this.#current = undefined;
    this.#persist();
  }

  /**
   * A run that ended before the agent could act (retry.ts): it is not a full run for the hourly
   * cap, its feedback goes back at once, and its events the agent has not answered and its
   * decisions wait their backoff (or are given up); the cursor stays. Returns the index's mark.
   */
  #giveBack(run: ActiveRun, footer: Omit<RunOutcome, "beforeActing">, now: number): RetryMark {
    run.settled = true;
    const log = this.#world.log;
    const i = this.#runStarts.indexOf(run.startedAt);
    if (i >= 0) this.#runStarts.splice(i, 1);
    const { store } = this.#records;
    const agent = this.#agent.agentKey;
    const owed = run.queued.filter((q) => !answered(store, agent, q.post.id, q.thread));
    this.#retries.done(run.queued.filter((q) => !owed.includes(q)).map((q) => q.post.id));
    for (const f of run.feedback) if (!this.#feedback.has(f.id)) this.#feedback.set(f.id, f);
    const error = footer.error ?? "it failed";
    const { mark, gaveUp } = this.#retries.fail(owed, run.decided, now, error);
    if (mark.at !== undefined) log.info(retryLine(run.id, error, mark));
    for (const g of gaveUp) log.warn(gaveUpLine(run.id, g));
    this.#current = undefined;
    this.#persist();
    return mark;
  }

  /** Queues the events and decisions whose retry is due, unless answered or claimed meanwhile. */
  #retryDue(now: number): void {
    const { events, decided } = this.#retries.due(now);
    if (events.length === 0 && decided.length === 0) return;
    const { store } = this.#records;
    for (const q of events) {
      if (answered(store, this.#agent.agentKey, q.post.id, q.thread)) {
        this.#retries.done([q.post.id]);
        this.#world.log.info(`${q.reason} is not tried again: the agent replied to it`);
        continue;
      }
      if (this.#queue.has(q.post.id) || this.#holdIfClaimed(q, now)) continue;
      this.#queue.set(q.post.id, q);
      this.#world.log.info(
        `queued again: ${q.reason}: its last run ended before the agent could act`,
        { id: q.post.id, thread: q.thread },
      );
      this.#checkThread(q.thread);
    }
    this.#decided.push(...decided);
    // Its backoff was its wait: it does not wait a new debounce.
    this.#debounceAt = Math.min(this.#debounceAt ?? now, now);
    this.#persist();
  }

  #ended(entry: RunIndexEntry): void {
    const log = this.#world.log;
    const endedAt = Date.parse(entry.ended_at);
    this.#lastRun = entry;
    const line = endedLine(entry, this.#desk.state(endedAt));
    if (entry.status === "ok") log.info(line, { run: entry.id });
    else log.warn(line, { run: entry.id });
    try {
      this.#hooks.onRunEnd?.(entry);
    } finally {
      this.#prune(endedAt);
    }
  }

  // --------------------------------------------------------------- claims

  #claimState(q: QueuedEvent, now: number): ClaimState {
    return claimStateIn(this.#records.store, q, {
      agentKey: this.#agent.agentKey,
      ttlMs: this.#settings["agent.claim_ttl"],
      now,
      trusted: this.#trusted,
    });
  }

  /** Holds an ask another author claimed instead of queueing it; true when it did. */
  #holdIfClaimed(q: QueuedEvent, now: number): boolean {
    if (q.post.kind !== "ask") return false;
    const c = this.#claimState(q, now);
    if (c.state !== "held" || this.#held.beyondBound(q.post.id, c.claim)) return false;
    this.#hold(q, c.claim, now);
    // An earlier claim by the same author takes the place of its latest one (claims.ts).
    const over = this.#held.overBound(c.claim.by);
    if (over !== undefined) this.#reopen(this.#held.take(over.queued.post.id)!.queued, OPEN, now);
    return true;
  }

  /** Holds `q` under `claim`: the skip decision is recorded the first time only. */
  #hold(q: QueuedEvent, claim: Claim, now: number): void {
    const first = !this.#held.has(q.post.id);
    const forgotten = this.#held.hold(q, claim);
    if (first) {
      this.#skips.didNotWake(
        now,
        q.post,
        "agent.claim_ttl",
        `${q.reason} is dropped from the queue: ${claimNote({ state: "held", claim }, now)}`,
      );
    }
    if (forgotten !== undefined) {
      this.#world.log.info(
        `${HELD_MAX} claimed asks are held: the oldest, ${forgotten.queued.post.id}, is ` +
          "forgotten and will not wake the agent",
      );
    }
  }

  /**
   * Applies the claims of `threads` to their queued asks (a claim drops one) and to their held
   * asks (a lapse or release queues one again); true when anything moved.
   */
  #recheckClaims(threads: ReadonlySet<string>, now: number): boolean {
    let changed = false;
    for (const q of [...this.#queue.values()]) {
      if (threads.has(q.thread) && this.#holdIfClaimed(q, now)) {
        this.#queue.delete(q.post.id);
        changed = true;
      }
    }
    // The window the dropped asks opened closes with them: the next event opens its own.
    if (changed && this.#queue.size === 0) this.#debounceAt = undefined;
    for (const thread of threads) {
      for (const h of this.#held.inThread(thread)) {
        const c = this.#claimState(h.queued, now);
        if (c.state === "held") {
          this.#held.hold(h.queued, c.claim);
          continue;
        }
        this.#held.take(h.queued.post.id);
        this.#reopen(h.queued, c, now);
        changed = true;
      }
    }
    return changed;
  }

  /** Queues again an ask whose claim ended, unless the agent answered it meanwhile. */
  #reopen(
    q: QueuedEvent,
    c: Exclude<ClaimState, { state: "held" }>,
    now: number,
  ): void {
    const why = c.state === "open" ? "no claim holds it any more" : claimNote(c, now);
    const { store } = this.#records;
    if (answered(store, this.#agent.agentKey, q.post.id, q.thread)) {
      this.#world.log.info(`${q.reason} is not queued again (the agent replied to it): ${why}`, {
        id: q.post.id,
      });
      return;
    }
    this.#queue.set(q.post.id, q);
    this.#world.log.info(`queued again: ${q.reason}: ${why}`, { id: q.post.id, thread: q.thread });
  }

  /** Queues again the held asks whose claim lapsed by `now`. */
  #lapseClaims(now: number): void {
    const due = this.#held.dueThreads(now);
    if (due.size === 0 || !this.#recheckClaims(due, now)) return;
    for (const thread of due) this.#checkThread(thread);
    this.#persist();
    this.#armDebounce(now);
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
    const claimed = this.#held.list().map((h) => h.queued.post.id);
    savePending(
      this.#records.store,
      { events: [...events], feedback: [...feedback], claimed, ...this.#retries.save() },
      this.#world.log,
    );
  }

  /** Queues again what a previous daemon owed a run (see `#persist`). */
  #restore(now: number): void {
    const { events, feedback, claimed, retrying, retries, gaveUp } = reloadPending({
      store: this.#records.store,
      log: this.#world.log,
      wake: this.#wake,
      agentKey: this.#agent.agentKey,
    });
    for (const q of events) this.#queue.set(q.post.id, q);
    for (const f of feedback) this.#feedback.set(f.id, f);
    this.#retries.restore(retries, new Map(retrying.map((q) => [q.post.id, q])), gaveUp);
    // Each held ask's claim is decided again: it may have lapsed while the daemon was down.
    let changed = false;
    for (const q of claimed) {
      const c = this.#claimState(q, now);
      if (c.state === "held") this.#held.hold(q, c.claim);
      else {
        this.#reopen(q, c, now);
        changed = true;
      }
    }
    if (this.#recheckClaims(new Set(events.map((q) => q.thread)), now) || changed) this.#persist();
    if (events.length > 0) {
      this.#world.log.info(
        `${events.length} event(s) not handled before the restart wait for the next run`,
      );
    }
    this.#checkQueuedThreads();
  }

  #prune(now: number): void {
    try {
      this.#records.transcripts.prune(now, this.#records.retention ?? DEFAULT_RETENTION);
    } catch (err) {
      this.#world.log.warn(`transcript retention failed: ${(err as Error).message}`);
    }
  }
}

const OPEN = { state: "open" } as const;

/** The statuses of a run that did not complete: its events are offered to the next run. */
const INCOMPLETE: ReadonlySet<RunStatus> = new Set(["interrupted", "stopped", "halted"]);
