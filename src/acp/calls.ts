/**
 * A call of a coding agent (issue 10, items 2–4): the harness tool's handler.
 * It finds or cuts the work's worktree, starts the harness when it is not
 * running, continues or opens the work's ACP session, sends the task, judges
 * every permission request with the wats policy, and returns what the coding
 * agent did. The harness stops after its `idle` time with no call attached.
 *
 * With review on (an `options.park`), an `ask` parks the call: the request is
 * held for a person, the call returns `parked`, and the prompt waits for
 * {@linkcode AcpLayer.answer}. A request whose coding agent stopped meanwhile,
 * and a call the daemon was running when it stopped (in doubt), are answered
 * by a new call on the same work that tells the coding agent the decision; a
 * call in doubt that a person rejects is told to the next call on the work.
 *
 * @module
 */

import type { ContentBlock } from "@agentclientprotocol/sdk";
import {
  type CallArgs,
  type CallControl,
  type CallOrigin,
  type CallResult,
  IN_DOUBT,
  type PermissionAsk,
  type SweepReport,
} from "../contracts/coding_agents.ts";
import type { CheckoutConfig, HarnessConfig } from "../config/acp_tables.ts";
import type { AgentHost } from "../contracts/agent_host.ts";
import type { BudgetHold } from "../contracts/budget.ts";
import type { Sandboxer } from "../safety/sandboxer.ts";
import {
  AgentPool,
  type AgentPoolOptions,
  callCost,
  CallError,
  type Running,
  workSession,
} from "./agent_pool.ts";
import type { Connect } from "./agent_link.ts";
import { answerTask, declineInDoubt, noteInFlight, parkInDoubt } from "./in_doubt.ts";
import type { Policy } from "./policy.ts";
import { contextBlocks } from "./context.ts";
import { type CallEvent, Turn } from "./turn.ts";
import { sweep } from "./sweep.ts";
import { agentPaths, checkCheckout, ensureWorktree, workPlace } from "./worktrees.ts";
import { refSignature } from "./work_import.ts";
import {
  type BudgetStop,
  declinedNotice,
  noteBudgetStop,
  readWorkState,
  saveCost,
  takeDeclined,
} from "./work_state.ts";
import { type CallLine, noteSession } from "./work_record.ts";
import { errorMessage } from "../error_message.ts";
import {
  type CallHooks,
  type CallPlan,
  noteCallSafely,
  outcomeOf,
  progressNotes,
  realOr,
  resultOf,
  workOf,
} from "./call_plan.ts";
import { budgetStopsUnder, resumeTask } from "./budget_stop.ts";
import { type AcpSpendFile, SpendNote } from "./spend.ts";

// Part of the layer's API (the lines a call emits, what it throws, the kind of a call in
// doubt), kept where its users find it.
export type { CallEvent } from "./turn.ts";
export { CallError } from "./agent_pool.ts";

/** Everything the ACP layer is built from; resolved at daemon start. */
export interface AcpLayerOptions {
  /** `<data>/worktrees`. */
  worktrees: string;
  harnesses: Record<string, HarnessConfig>;
  checkouts: Record<string, CheckoutConfig>;
  /** `agent.checkouts`: the checkouts calls may use; empty: all. */
  allowedCheckouts: readonly string[];
  policy: Policy;
  /** The environment harnesses start from. */
  env: Record<string, string>;
  /** The agent a harness runs (`AgentPoolOptions.agentOf`); unset: none, no login, no vendor host. */
  agentOf?: AgentPoolOptions["agentOf"];
  /** Called with each call's cost in USD, when it reported one (kept for a restart). */
  onCost?: (usd: number, call: { harness: string; callId: string }) => void;
  /** Called for each call that prompted its agent and reported no cost (a run without a cost). */
  onUncosted?: (call: { harness: string; callId: string }) => void;
  /**
   * The spend file `onCost` adds to: a call in flight notes there what it
   * reported so far (src/acp/spend.ts `SpendNote`), and ends without a final
   * count with that as its line. None: nothing is kept before a call ends.
   */
  spendFile?: AcpSpendFile;
  /**
   * The runner (src/contracts/agent_host.ts): its budget admits, holds and
   * stops calls, and the thread of a run places its calls' works. None: no
   * budget, no run threads.
   */
  host?: Pick<AgentHost, "budget" | "threadOfRun">;
  /** Called for each session update and each permission decision. */
  onEvent?: (event: CallEvent) => void;
  /**
   * Holds an `ask` for a person (agent.review on) and returns its pending id;
   * undefined: `ask` refuses.
   */
  park?: (ask: PermissionAsk) => string;
  /** Told each decision a person made on a parked request (wakes the heartbeat agent). */
  onDecided?: (ask: PermissionAsk, approved: boolean) => void;
  /**
   * Told how a work the budget stopped ended once it went on after the reset
   * (`outcome` as the work's calls file says it; `work` its id; the commits the
   * base lacks), unless the budget stopped it
   * again: the agent that started it hears it, as it heard the stop (wakes the
   * heartbeat agent).
   */
  onResumedEnd?: (
    stop: BudgetStop,
    end: { outcome: string; work: string; commits?: number },
  ) => void;
  /**
   * The worktrees of the requests held for a person (the review queue), those
   * of calls in doubt too: the sweep keeps them, also after a restart, when no
   * call of this process waits for them.
   */
  held?: () => readonly string[];
  /**
   * Where calls in flight are noted (`<data>/agent/acp_calls`): a note left by
   * a daemon that stopped mid-call parks that call as in doubt at the next start.
   */
  inFlightDir?: string;
  /**
   * The OS sandbox (docs/decisions/sandbox.md). When set, each work gets its own
   * agent process, sandboxed so that it sees its own worktree and no other; when
   * unset, one process per harness serves every work.
   */
  sandbox?: Sandboxer;
  /** How a coding agent is reached; default: its process (tests: an agent in this process). */
  connect?: Connect;
}

/** The coding agents of one node. */
export class AcpLayer {
  readonly #options: AcpLayerOptions;
  readonly #pool: AgentPool;
  /** One call per work at a time: the tail of each work's queue. */
  readonly #works = new Map<string, Promise<unknown>>();
  readonly #policy: Policy;
  /** Requests waiting for a person, by pending id. */
  /**
   * Requests waiting for a person, by pending id: `resolve` hands the call the
   * decision, and says whether the budget admitted the call again (false: it stops).
   */
  readonly #parked = new Map<string, { resolve: (approved: boolean) => boolean }>();
  #closed = false;
  /** Why agents are halted (src/node/halt.ts), or undefined. */
  #halted: string | undefined;
  #sweeping: Promise<unknown> = Promise.resolve();

  constructor(options: AcpLayerOptions) {
    this.#options = options;
    this.#pool = new AgentPool(options);
    // Judged against the real path: locations are resolved through symlinks too.
    this.#policy = { ...options.policy, dataDir: realOr(options.policy.dataDir) };
  }

  /**
   * A halt (src/node/halt.ts, docs/safety.md): no call starts until
   * {@linkcode resume}, however it was started, and every coding agent
   * running now is stopped (its process ended, not asked to cancel), so its
   * call ends with `acp.halted`.
   */
  halt(reason: string): void {
    this.#halted = reason;
    this.#pool.close().catch(() => {});
  }

  /** `wats resume`: calls may start again. */
  resume(): void {
    this.#halted = undefined;
  }

  /** Refuses while halted; what the refusal says. */
  #refuseHalted(): void {
    if (this.#halted === undefined) return;
    throw new CallError(
      "acp.halted",
      `no coding agent call while agents are halted (${this.#halted})`,
    );
  }

  /** The thread the run `runId` is about, if it is about one. */
  threadOfRun(runId: string): string | undefined {
    return this.#options.host?.threadOfRun(runId);
  }

  /** The enabled harnesses' names: one MCP tool each. */
  harnessNames(): string[] {
    return Object.values(this.#options.harnesses).filter((h) => h.enabled).map((h) => h.name);
  }

  /** The checkouts calls may use. */
  checkoutNames(): string[] {
    const all = Object.keys(this.#options.checkouts);
    const allowed = this.#options.allowedCheckouts;
    return allowed.length === 0 ? all : all.filter((c) => allowed.includes(c));
  }

  /** Calls a coding agent; one call per work at a time (later ones wait). */
  // async: a bad checkout or work name rejects the promise rather than throwing.
  async call(
    harnessName: string,
    origin: CallOrigin,
    args: CallArgs,
    control: CallControl = {},
  ): Promise<CallResult> {
    const harness = this.#options.harnesses[harnessName];
    if (harness === undefined || !harness.enabled) {
      throw new CallError("acp.no_harness", `no enabled harness ${harnessName} in config.toml`);
    }
    const co = this.#checkout(args.checkout);
    const place = workPlace(this.#options.worktrees, {
      harness: harness.name,
      checkout: co.name,
      agent: origin.agent,
      thread: origin.thread,
      work: args.work,
    });
    const { signal, progress } = control;
    return await this.#enqueue({
      harness,
      co,
      place,
      origin,
      args,
      ...(signal ? { signal } : {}),
      ...(progress ? { progress } : {}),
    });
  }

  /**
   * Joins the work's queue. The promise settles with the call's result, or
   * earlier with a `parked` one: the prompt then goes on, and holds the work,
   * until a person decides.
   */
  #enqueue(
    plan: CallPlan,
    onEnd?: (end: { result: CallResult } | { error: unknown }) => void,
  ): Promise<CallResult> {
    const { place, origin } = plan;
    let onParked!: (r: CallResult) => void;
    const parked = new Promise<CallResult>((resolve) => onParked = resolve);
    // Nothing above awaits, so the queue is joined in call order.
    const before = this.#works.get(place.dir) ?? Promise.resolve();
    const run = before.catch(() => {}).then(() =>
      this.#recorded(plan, (started) =>
        this.#call(plan, {
          started,
          parked: (r) => {
            onParked(r);
            noteCallSafely(place.dir, { id: origin.callId, at: Date.now(), outcome: "parked" });
          },
        }))
    );
    this.#works.set(place.dir, run);
    // Told once the work is no longer busy, so a page that redraws on it reads the new state.
    const ended = (outcome: string, commits?: number) => {
      if (this.#works.get(place.dir) === run) this.#works.delete(place.dir);
      this.#changed(plan, { what: `call ended: ${outcome}`, commits });
    };
    run.then((r) => {
      ended(outcomeOf(r), r.commits.length);
      onEnd?.({ result: r });
    }, (error) => {
      ended("error");
      onEnd?.({ error });
    });
    return Promise.race([run, parked]);
  }

  /** Tells the work's readers it changed (its dashboard page redraws): `work_changed`. */
  #changed(plan: CallPlan, change: string | { what: string; commits?: number }): void {
    const { what, commits } = typeof change === "string"
      ? { what: change, commits: undefined }
      : change;
    const { origin } = plan;
    this.#options.onEvent?.({
      type: "work_changed",
      ...(commits !== undefined ? { commits } : {}),
      harness: plan.harness.name,
      agent: origin.agent,
      call: origin.callId,
      ...(origin.run !== undefined ? { run: origin.run } : {}),
      checkout: plan.co.name,
      branch: plan.place.branch,
      work: workOf(plan),
      what,
    });
  }

  /**
   * A person's decision on the parked request `id` (its pending id). When the
   * call still waits, the answer goes to the request it holds; when its coding
   * agent stopped or the daemon restarted, a new call on the same work tells
   * the coding agent the decision (which then answers that same request once,
   * src/acp/carried.ts), or, for a call in doubt, to check the worktree and
   * finish. A rejected call in doubt sends nothing: the next call on the work
   * starts by telling the coding agent not to finish it. Says what happened.
   */
  answer(id: string, approved: boolean, ask: PermissionAsk): string {
    const verb = approved ? "approved" : "rejected";
    if (this.#halted !== undefined && !(ask.kind === IN_DOUBT && !approved)) {
      // Telling the coding agent is a call; a halt starts none. The request waits again.
      this.#parked.delete(id);
      const again = this.#options.park?.(ask);
      return `not ${verb}: agents are halted (${this.#halted}), so no coding agent call starts; ` +
        `the request waits in the review queue again${again ? ` as ${again}` : ""}: ` +
        "decide it after `wats resume`";
    }
    const held = this.#parked.get(id);
    this.#parked.delete(id);
    if (held !== undefined) {
      const goesOn = held.resolve(approved);
      this.#options.onDecided?.(ask, approved);
      return goesOn
        ? `${verb} ${ask.harness}/${ask.kind}: the coding agent ${ask.harness} got the answer`
        : `${verb} ${ask.harness}/${ask.kind}, but the budget has no room for its call to go on: ` +
          `work ${ask.work} is stopped: budget, and goes on with your decision after the budget ` +
          "window resets";
    }
    if (ask.kind === IN_DOUBT && !approved) {
      this.#options.onDecided?.(ask, approved);
      return `rejected: the call in doubt on work ${ask.work} is left as it is; ${
        declineInDoubt(this.#options.worktrees, ask)
      }`;
    }
    const grant = ask.kind === IN_DOUBT
      ? undefined
      : { kind: ask.kind, locations: ask.locations, rawInput: ask.arguments, approved };
    const plan = this.#planFor({ ...ask, call: `${id}.answer`, task: answerTask(ask, approved) });
    if (plan === undefined) {
      this.#options.onDecided?.(ask, approved);
      return `${verb}, but [harnesses.${ask.harness}] or [checkouts.${ask.checkout}] is gone from config.toml: nothing was sent`;
    }
    this.#enqueue({ ...plan, ...(grant !== undefined ? { grant } : {}) })
      // Its outcome reaches the node's JSON lines; the agent sees the work at its next call.
      .catch(() => {})
      .finally(() => this.#options.onDecided?.(ask, approved));
    return ask.kind === IN_DOUBT
      ? `approved: the coding agent ${ask.harness} is told to check the worktree of ${ask.work} and finish`
      : `${verb} ${ask.harness}/${ask.kind}: its coding agent had stopped, so a new call on ${ask.work} tells it`;
  }

  /**
   * The plan of a call the node starts itself on a known work (a person's
   * decision told, a work the budget stopped going on); undefined when its
   * harness or checkout is gone from config.toml.
   */
  #planFor(
    w: Pick<BudgetStop, "harness" | "checkout" | "agent" | "thread" | "work" | "call" | "task">,
  ): CallPlan | undefined {
    const harness = this.#options.harnesses[w.harness];
    const co = this.#options.checkouts[w.checkout];
    if (harness === undefined || !harness.enabled || co === undefined) return undefined;
    const place = workPlace(this.#options.worktrees, {
      harness: harness.name,
      checkout: co.name,
      agent: w.agent,
      thread: w.thread,
      work: w.work,
    });
    return {
      harness,
      co,
      place,
      origin: { agent: w.agent, thread: w.thread, callId: w.call },
      args: { task: w.task, checkout: co.name, work: w.work },
    };
  }

  /**
   * Calls a daemon left in flight when it stopped (notes under
   * `inFlightDir`): each is parked as in doubt for a person, and its note
   * removed. Returns their pending ids.
   */
  parkInDoubt(): string[] {
    const dir = this.#options.inFlightDir;
    if (dir === undefined || this.#options.park === undefined) return [];
    return parkInDoubt(dir, this.#options.park);
  }

  /**
   * Works the budget stopped before a restart (their state files say so): each
   * goes on after the budget window resets. Returns how many.
   */
  resumeStopped(): number {
    const stops = budgetStopsUnder(this.#options.worktrees);
    for (const stop of stops) this.#goOnAfterReset(stop);
    return stops.length;
  }

  /**
   * The budget stopped a call on a work: after the window resets, a new call
   * on the same work and session tells the coding agent to go on, unless a
   * call on the work was admitted meanwhile (which cleared the note).
   */
  #goOnAfterReset(stop: BudgetStop): void {
    const budget = this.#options.host?.budget;
    if (budget === undefined) return;
    budget.afterBudgetReset(() => {
      const plan = this.#planFor({ ...stop, call: `${stop.call}.resume`, task: resumeTask(stop) });
      if (this.#closed || plan === undefined) return;
      if (readWorkState(plan.place.stateFile).budgetStop?.call !== stop.call) return;
      const { decision } = stop;
      const refused = (err: unknown) =>
        err instanceof CallError && (err.code === "acp.budget" || err.code === "acp.halted");
      // Its end reaches the agent that started it, as a call's result does (not a stop again: it goes on).
      const told = (outcome: string, commits?: number) => {
        if (outcome === "stopped: budget") return;
        this.#options.onResumedEnd?.(stop, { outcome, work: workOf(plan), commits });
      };
      this.#enqueue(decision === undefined ? plan : { ...plan, grant: decision }, (end) => {
        if ("result" in end) told(outcomeOf(end.result), end.result.commits.length);
        else if (!refused(end.error)) told(`error: ${errorMessage(end.error)}`);
      }).catch((err) => {
        // Refused (calls in flight hold the budget, a halt holds): the next reset tries again.
        if (refused(err)) this.#goOnAfterReset(stop);
      });
    });
  }

  #checkout(name: string): CheckoutConfig {
    const names = this.checkoutNames();
    const co = this.#options.checkouts[name];
    if (co === undefined || !names.includes(name)) {
      throw new CallError(
        "acp.no_checkout",
        `checkout "${name}" is not one this agent may use; use one of: ${
          names.join(", ") || "(none: add [checkouts.NAME] to config.toml)"
        }`,
      );
    }
    return co;
  }

  /**
   * Runs a call, noting its start and end in the work's calls file
   * (src/acp/work_record.ts) for `wats work show`. A note that cannot be
   * written never fails the call.
   */
  async #recorded(
    plan: CallPlan,
    call: (started: () => void) => Promise<CallResult>,
  ): Promise<CallResult> {
    const { origin, args } = plan;
    const note = (line: CallLine) => noteCallSafely(plan.place.dir, line);
    const id = origin.callId;
    let began = false;
    const started = () => {
      began = true;
      note({
        id,
        at: Date.now(),
        task: args.task,
        agent: origin.agent,
        thread: origin.thread,
        harness: plan.harness.name,
      });
    };
    try {
      const r = await call(started);
      note({
        id,
        at: Date.now(),
        outcome: outcomeOf(r),
        message: r.message,
        refused: r.refused.map((x) => `${x.request}${x.title ? ` ${x.title}` : ""}: ${x.reason}`),
      });
      return r;
    } catch (err) {
      if (began) note({ id, at: Date.now(), outcome: "error", message: errorMessage(err) });
      throw err;
    }
  }

  /**
   * Admits the call against the budget (src/contracts/budget.ts): refused
   * with `acp.budget` when a budget is reached or calls and runs in flight
   * hold the rest. No host: no budget.
   */
  #admit(plan: CallPlan): BudgetHold | undefined {
    const budget = this.#options.host?.budget;
    if (budget === undefined) return undefined;
    const a = budget.admitCall(`${plan.harness.name} call ${plan.origin.callId}`);
    if (!a.admitted) {
      throw new CallError("acp.budget", `no coding agent call now: ${a.reason}`);
    }
    // The work goes on now: it no longer waits for the window to reset.
    try {
      noteBudgetStop(plan.place.stateFile, undefined);
    } catch {
      // No state file yet.
    }
    return a.hold;
  }

  async #call(plan: CallPlan, hooks: CallHooks): Promise<CallResult> {
    if (plan.signal?.aborted) throw new CallError("acp.cancelled", "the call was cancelled");
    if (this.#closed) throw new CallError("acp.closed", "the node is stopping; call again later");
    this.#refuseHalted();
    const hold = this.#admit(plan);
    // What it cost: undefined while nothing reported one (then it counts as a run, once it prompted).
    let cost: number | undefined = 0;
    try {
      const { co, place } = plan;
      await checkCheckout(co);
      const { created } = await ensureWorktree(co, place);
      hooks.started();
      const worktree = realOr(place.dir);
      // What the agent's sandbox opens comes from wats's records, never from the work folder.
      const running = await this.#pool.attach(
        plan.harness,
        worktree,
        await agentPaths(co, worktree),
      );
      cost = undefined;
      try {
        return await this.#prompt(plan, { running, worktree, created, hooks }, hold, (usd) => {
          cost = usd;
        });
      } finally {
        this.#pool.detach(plan.harness, worktree);
      }
    } finally {
      hold?.settle(cost);
    }
  }

  /**
   * A call's prompt on its running agent: opens or continues the work's
   * session, sends the task, judges each request, and stops the prompt
   * (`session/cancel`) when the budget has no room for its next reply; `spent`
   * hears what the call cost once it ends (undefined: the agent reported none).
   */
  async #prompt(
    plan: CallPlan,
    at: { running: Running; worktree: string; created: boolean; hooks: CallHooks },
    hold: BudgetHold | undefined,
    spent: (usd: number | undefined) => void,
  ): Promise<CallResult> {
    const { harness, co, place, origin, args, signal } = plan;
    const progress = plan.progress && progressNotes(plan.progress);
    const { running, worktree } = at;
    // A halt that came while the agent started: it is stopped, and nothing is sent.
    this.#refuseHalted();
    const { sessionId, continued } = await workSession(running, harness, {
      worktree,
      stateFile: place.stateFile,
      created: at.created,
    });
    const prompt: ContentBlock[] = continued ? [] : await contextBlocks(worktree, harness.context);
    prompt.push({ type: "text", text: args.task });

    // A cancelled or timed-out call cancels its prompt; the next call sends a new one.
    const cancel = () => running.agent.cancel(sessionId);
    signal?.addEventListener("abort", cancel, { once: true });
    const dir = this.#options.inFlightDir;
    const note = dir === undefined ? undefined : noteInFlight(dir, {
      callId: origin.callId,
      harness: harness.name,
      checkout: co.name,
      work: args.work,
      agent: origin.agent,
      thread: origin.thread,
      task: args.task,
      worktree: place.dir,
    });
    const mine: string[] = [];
    const park = this.#options.park;
    // A commit mid-call moves the branch's ref files: seen after each finished tool call.
    let refs = refSignature(place.dir, place.branch);
    // usage_update is the session's cumulative cost: the call's is what it grew by.
    const before = running.costs.get(sessionId) ?? 0;
    const spendFile = this.#options.spendFile;
    // What it reports is kept as it reports it: a daemon killed mid-call loses none of it.
    const noted = spendFile && new SpendNote({
      file: spendFile,
      harness: harness.name,
      call: origin.callId,
      session: (total) => saveCost(place.stateFile, sessionId, total),
    });
    let stopped = false;
    /** A person's decision that came when the budget had no room: the call that goes on gets it. */
    let carried: BudgetStop["decision"];
    /** Whether the budget admitted it again when a person decided its parked request. */
    let admitted = true;
    // No room for the next reply, or the money ran out elsewhere: the reply under way is the last.
    const stopForBudget = () => {
      if (stopped) return;
      stopped = true;
      this.#changed(plan, "stopped: budget");
      cancel();
    };
    const turn = new Turn({
      harness: harness.name,
      checkout: co.name,
      args,
      origin,
      worktreeDir: place.dir,
      worktree,
      policy: this.#policy,
      grant: plan.grant,
      emit: (e) => {
        this.#options.onEvent?.(e);
        if (e.type === "acp_update") progress?.(e.update);
        try {
          noteSession(place.dir, { ...e, at: Date.now() });
        } catch {
          // The work's transcript is a view; the call goes on without it.
        }
        if (
          e.type === "acp_update" && e.update.sessionUpdate === "tool_call_update" &&
          e.update.status === "completed"
        ) {
          const now = refSignature(place.dir, place.branch);
          if (now !== refs) this.#changed(plan, "committed");
          refs = now;
        }
      },
      spent: (total) => {
        const usd = total >= before ? total - before : total;
        noted?.report(usd, total);
        if (hold?.spent(usd) === false) stopForBudget();
      },
      park: park && ((ask) => {
        const id = park(ask);
        mine.push(id);
        const decided = new Promise<boolean>((resolve) =>
          this.#parked.set(id, {
            resolve: (approved) => {
              // Admitted again against what is left, before the call hears the decision.
              admitted = hold === undefined || hold.resume();
              resolve(approved);
              return admitted;
            },
          })
        );
        return { id, decided };
      }),
      parked: async (r) => {
        // The MCP call returns now; the prompt outlives it and waits for the person.
        signal?.removeEventListener("abort", cancel);
        // While it waits, the held request stands for the call: a restart now
        // must not also park it in doubt.
        note?.remove();
        // A person may take hours: the call holds only what it spent meanwhile.
        hold?.park();
        at.hooks.parked(
          await resultOf(plan, this.#options.sandbox, { ...r, stop_reason: "parked", usd: 0 }),
        );
      },
      resumed: (decision) => {
        note?.write();
        // No room when the person decided: it stops, and the decision is carried.
        if (admitted) return true;
        carried = { ...decision, locations: [...decision.locations] };
        stopForBudget();
        return false;
      },
    });
    // Told once, in the prompt about to be sent: a person declined to let a call in doubt finish.
    const declined = takeDeclined(place.stateFile);
    if (declined.length > 0) prompt.unshift({ type: "text", text: declinedNotice(declined) });
    hold?.onStop(stopForBudget);
    // Stopped before it was sent (while its worktree was cut or its agent started): nothing is sent.
    const sent = stopped ? Promise.resolve("cancelled" as const) : running.agent.prompt(
      sessionId,
      prompt,
      turn,
    );
    const stopReason = await sent.catch((err) => {
      // No final count: what it reported is its line.
      noted?.settle();
      // Its agent was stopped by the halt: said as that, not as a broken connection.
      if (this.#halted === undefined) throw err;
      throw new CallError("acp.halted", `stopped: agents were halted (${this.#halted})`, {
        cause: err,
      });
    }).finally(() => {
      signal?.removeEventListener("abort", cancel);
      for (const id of mine) this.#parked.delete(id);
      // A call the stopping daemon cut off stays noted: the next start parks it in doubt.
      if (!this.#closed) {
        try {
          note?.remove();
        } catch {
          // Not noted while it waited.
        }
      }
    });

    const { cost } = turn;
    const usd = cost === undefined ? 0 : callCost(running, place.stateFile, sessionId, cost);
    spent(cost === undefined ? undefined : usd);
    if (cost === undefined) {
      this.#options.onUncosted?.({ harness: harness.name, callId: origin.callId });
    } else if (usd > 0) {
      this.#options.onCost?.(usd, { harness: harness.name, callId: origin.callId });
    }
    // Its line is added: the note of what it reported so far goes.
    noted?.drop();
    let message = turn.message;
    if (stopped) {
      const stop: BudgetStop = {
        call: origin.callId,
        harness: harness.name,
        checkout: co.name,
        work: args.work,
        agent: origin.agent,
        thread: origin.thread,
        task: args.task,
        at: Date.now(),
        ...(carried !== undefined ? { decision: carried } : {}),
      };
      noteBudgetStop(place.stateFile, stop);
      this.#goOnAfterReset(stop);
      message = `stopped: budget (wats stopped the coding agent: the budget has no room for its ` +
        `next reply); the work goes on by itself after the budget window resets` +
        (message === "" ? "" : `. The coding agent's last message: ${message}`);
    }
    return await resultOf(plan, this.#options.sandbox, {
      message,
      stop_reason: stopReason,
      refused: turn.refused,
      labels: [...turn.labels],
      usd,
      ...(stopped ? { stopped: "budget" as const } : {}),
    });
  }

  /** Why no call may start now (a halt, the runner's budget), or undefined. */
  blocked(): string | undefined {
    if (this.#halted !== undefined) {
      return `agents are halted (${this.#halted}), so no coding agent call starts`;
    }
    return this.#options.host?.budget.blocked();
  }

  /** True while a call runs on the work whose worktree is `dir`, or waits to. */
  busy(dir: string): boolean {
    return this.#works.has(dir);
  }

  /** True while the harness's process runs (for tests and status). */
  isRunning(harness: string): Promise<boolean> {
    return this.#pool.isRunning(harness);
  }

  /**
   * Removes the worktrees whose work is in their checkout's base (src/acp/sweep.ts),
   * never one a call uses or waits for. Idle harnesses are stopped first: their
   * sessions may be rooted in a worktree about to go (the next call loads them again).
   */
  sweep(): Promise<SweepReport> {
    // One sweep at a time: `wats agent sweep` may come while a timed one runs.
    const run = this.#sweeping.catch(() => {}).then(() => this.#sweep());
    this.#sweeping = run;
    return run;
  }

  async #sweep(): Promise<SweepReport> {
    await this.#pool.stopIdle();
    const held = new Set(this.#options.held?.() ?? []);
    return await sweep(
      this.#options.worktrees,
      this.#options.checkouts,
      (dir) =>
        this.#works.has(dir)
          ? "a call uses it"
          : held.has(dir)
          ? "a request of it waits for a person"
          : undefined,
      this.#options.sandbox,
    );
  }

  /** Stops every harness (the daemon is stopping). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#pool.close();
  }
}
