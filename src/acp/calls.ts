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

import type { ContentBlock, PermissionOption } from "@agentclientprotocol/sdk";
import {
  type CallArgs,
  type CallOrigin,
  type CallResult,
  IN_DOUBT,
  type PermissionAsk,
  type Refusal,
} from "../contracts/coding_agents.ts";
import type { CheckoutConfig, HarnessConfig } from "../config/acp_tables.ts";
import { WatsError } from "../errors.ts";
import { AcpAgent, type SessionUpdate, type ToolCallInfo } from "./client.ts";
import { agentKindOf } from "../safety/sandbox.ts";
import type { Sandboxer } from "../safety/sandboxer.ts";
import { type RequestShape, sameRequest } from "./carried.ts";
import { chooseOption, decide, type Policy, resolveLocation } from "./policy.ts";
import { commandOf } from "./shell_split.ts";
import { sweep } from "./sweep.ts";
import type { SweepReport } from "../contracts/coding_agents.ts";
import {
  checkCheckout,
  commitPaths,
  commitsSince,
  ensureWorktree,
  headOf,
  workPlace,
} from "./worktrees.ts";
import {
  declinedNotice,
  noteDeclined,
  readWorkState,
  saveCost,
  saveSession,
  takeDeclined,
} from "./work_state.ts";

/** One thing that happened in a call, for the node's log lines. */
export type CallEvent =
  | { type: "acp_update"; harness: string; agent: string; call: string; update: SessionUpdate }
  | {
    type: "acp_permission";
    harness: string;
    agent: string;
    call: string;
    id: string;
    request: string;
    locations: string[];
    verdict: "allow" | "deny" | "ask";
    answer: string;
    reason: string;
    labels: string[];
  };

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
  /** Called with each call's cost in USD, when it reported one (the runner's budget ledger). */
  onCost?: (usd: number, call: { harness: string; callId: string }) => void;
  /** Why no call may start now (a reached budget), or undefined. */
  budgetBlocked?: () => string | undefined;
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
  /** The thread a run is about, if one (its calls' works are kept under it). */
  threadOfRun?: (runId: string) => string | undefined;
  /**
   * The OS sandbox (docs/decisions/sandbox.md). When set, each work gets its own
   * agent process, sandboxed so that it sees its own worktree and no other; when
   * unset, one process per harness serves every work.
   */
  sandbox?: Sandboxer;
}

/** A call could not start: a bad checkout or work name, or the harness failed. */
export class CallError extends WatsError {}

interface Running {
  agent: AcpAgent;
  /** Sessions opened in this process: no load needed to continue them. */
  open: Set<string>;
  /** Each session's cumulative cost when its last call ended (usage_update is cumulative). */
  costs: Map<string, number>;
  attached: number;
  idleTimer?: ReturnType<typeof setTimeout>;
}

/** The coding agents of one node. */
export class AcpLayer {
  readonly #o: AcpLayerOptions;
  readonly #running = new Map<string, Promise<Running>>();
  /** One call per work at a time: the tail of each work's queue. */
  readonly #works = new Map<string, Promise<unknown>>();
  readonly #policy: Policy;
  /** Requests waiting for a person, by pending id. */
  readonly #parked = new Map<string, { resolve: (approved: boolean) => void }>();
  #closed = false;
  #sweeping: Promise<unknown> = Promise.resolve();

  constructor(options: AcpLayerOptions) {
    this.#o = options;
    // Judged against the real path: locations are resolved through symlinks too.
    this.#policy = { ...options.policy, dataDir: realOr(options.policy.dataDir) };
  }

  /** The thread the run `runId` is about, if it is about one. */
  threadOfRun(runId: string): string | undefined {
    return this.#o.threadOfRun?.(runId);
  }

  /** The enabled harnesses' names: one MCP tool each. */
  harnessNames(): string[] {
    return Object.values(this.#o.harnesses).filter((h) => h.enabled).map((h) => h.name);
  }

  /** The checkouts calls may use. */
  checkoutNames(): string[] {
    const all = Object.keys(this.#o.checkouts);
    const allowed = this.#o.allowedCheckouts;
    return allowed.length === 0 ? all : all.filter((c) => allowed.includes(c));
  }

  /** Calls a coding agent; one call per work at a time (later ones wait). */
  // async: a bad checkout or work name rejects the promise rather than throwing.
  async call(
    harnessName: string,
    origin: CallOrigin,
    args: CallArgs,
    signal?: AbortSignal,
  ): Promise<CallResult> {
    const harness = this.#o.harnesses[harnessName];
    if (harness === undefined || !harness.enabled) {
      throw new CallError("acp.no_harness", `no enabled harness ${harnessName} in config.toml`);
    }
    const co = this.#checkout(args.checkout);
    const place = workPlace(
      this.#o.worktrees,
      harness.name,
      co.name,
      origin.agent,
      origin.thread,
      args.work,
    );
    return await this.#enqueue(harness, co, place, origin, args, signal);
  }

  /**
   * Joins the work's queue. The promise settles with the call's result, or
   * earlier with a `parked` one: the prompt then goes on, and holds the work,
   * until a person decides.
   */
  #enqueue(
    harness: HarnessConfig,
    co: CheckoutConfig,
    place: ReturnType<typeof workPlace>,
    origin: CallOrigin,
    args: CallArgs,
    signal: AbortSignal | undefined,
    grant?: Grant,
  ): Promise<CallResult> {
    let onParked!: (r: CallResult) => void;
    const parked = new Promise<CallResult>((resolve) => onParked = resolve);
    // Nothing above awaits, so the queue is joined in call order.
    const before = this.#works.get(place.dir) ?? Promise.resolve();
    const run = before.catch(() => {}).then(() =>
      this.#call(harness, co, place, origin, args, signal, onParked, grant)
    );
    this.#works.set(place.dir, run);
    const forget = () => {
      if (this.#works.get(place.dir) === run) this.#works.delete(place.dir);
    };
    run.then(forget, forget);
    return Promise.race([run, parked]);
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
    const held = this.#parked.get(id);
    this.#parked.delete(id);
    const verb = approved ? "approved" : "rejected";
    if (held !== undefined) {
      held.resolve(approved);
      this.#o.onDecided?.(ask, approved);
      return `${verb} ${ask.harness}/${ask.kind}: the coding agent ${ask.harness} got the answer`;
    }
    if (ask.kind === IN_DOUBT && !approved) {
      this.#o.onDecided?.(ask, approved);
      return `rejected: the call in doubt on work ${ask.work} is left as it is; ${
        this.#noteDeclined(ask)
      }`;
    }
    const harness = this.#o.harnesses[ask.harness];
    const co = this.#o.checkouts[ask.checkout];
    if (harness === undefined || !harness.enabled || co === undefined) {
      this.#o.onDecided?.(ask, approved);
      return `${verb}, but [harnesses.${ask.harness}] or [checkouts.${ask.checkout}] is gone from config.toml: nothing was sent`;
    }
    const task = ask.kind === IN_DOUBT
      ? `The node restarted while you worked on this task, so your last turn was cut off:\n\n${ask.task}\n\n` +
        "Check the worktree (git status, git log, the files) for what is done, then finish the task."
      : `A person ${verb} your request "${ask.title ?? `${ask.harness}/${ask.kind}`}" ` +
        `(${ask.harness}/${ask.kind}), which waited while you were stopped. ` +
        (approved
          ? "Make that same request again now, unchanged (it is allowed once; any other request " +
            "is decided as usual) and finish the task."
          : "Do not make it again; finish what you can without it and say what is left.") +
        `\n\nThe task was:\n${ask.task}`;
    const place = workPlace(
      this.#o.worktrees,
      harness.name,
      co.name,
      ask.agent,
      ask.thread,
      ask.work,
    );
    const origin = { agent: ask.agent, thread: ask.thread, callId: `${id}.answer` };
    const grant = ask.kind === IN_DOUBT
      ? undefined
      : { kind: ask.kind, locations: ask.locations, rawInput: ask.arguments, approved };
    this.#enqueue(
      harness,
      co,
      place,
      origin,
      { task, checkout: co.name, work: ask.work },
      undefined,
      grant,
    )
      // Its outcome reaches the node's JSON lines; the agent sees the work at its next call.
      .catch(() => {})
      .finally(() => this.#o.onDecided?.(ask, approved));
    return ask.kind === IN_DOUBT
      ? `approved: the coding agent ${ask.harness} is told to check the worktree of ${ask.work} and finish`
      : `${verb} ${ask.harness}/${ask.kind}: its coding agent had stopped, so a new call on ${ask.work} tells it`;
  }

  /** Notes a rejected call in doubt for the next call on its work; says what the next call does. */
  #noteDeclined(ask: PermissionAsk): string {
    try {
      const place = workPlace(
        this.#o.worktrees,
        ask.harness,
        ask.checkout,
        ask.agent,
        ask.thread,
        ask.work,
      );
      const noted = noteDeclined(place.stateFile, place.dir, {
        call: ask.request_id,
        task: ask.task,
      });
      return noted
        ? "the next call on it tells the coding agent not to finish that task"
        : "its worktree is gone, so the next call starts afresh";
    } catch (err) {
      return `but the next call cannot be told (${(err as Error).message})`;
    }
  }

  /**
   * Calls a daemon left in flight when it stopped (notes under
   * `inFlightDir`): each is parked as in doubt for a person, and its note
   * removed. Returns their pending ids.
   */
  parkInDoubt(): string[] {
    const dir = this.#o.inFlightDir;
    if (dir === undefined || this.#o.park === undefined) return [];
    const ids: string[] = [];
    let names: string[];
    try {
      names = [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".json")).map((e) => e.name);
    } catch {
      return [];
    }
    for (const name of names) {
      try {
        const note = JSON.parse(Deno.readTextFileSync(`${dir}/${name}`)) as InFlight;
        ids.push(this.#o.park({
          request_id: note.callId,
          harness: note.harness,
          kind: IN_DOUBT,
          title: `call ${note.callId} was running when the node stopped`,
          locations: [],
          worktree: note.worktree,
          checkout: note.checkout,
          work: note.work,
          agent: note.agent,
          thread: note.thread,
          task: note.task,
          reason: "the node stopped during this call: its state is in doubt",
        }));
      } catch {
        // A damaged note cannot be answered; it goes all the same.
      }
      Deno.removeSync(`${dir}/${name}`);
    }
    return ids;
  }

  #checkout(name: string): CheckoutConfig {
    const names = this.checkoutNames();
    const co = this.#o.checkouts[name];
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

  async #call(
    harness: HarnessConfig,
    co: CheckoutConfig,
    place: ReturnType<typeof workPlace>,
    origin: CallOrigin,
    args: CallArgs,
    signal: AbortSignal | undefined,
    onParked: (r: CallResult) => void,
    grant: Grant | undefined,
  ): Promise<CallResult> {
    if (signal?.aborted) throw new CallError("acp.cancelled", "the call was cancelled");
    if (this.#closed) throw new CallError("acp.closed", "the node is stopping; call again later");
    const blocked = this.#o.budgetBlocked?.();
    if (blocked !== undefined) {
      throw new CallError(
        "acp.budget",
        `no coding agent call now: ${blocked}; it resets at the next UTC day or month`,
      );
    }
    await checkCheckout(co);
    const { created } = await ensureWorktree(co, place);
    const worktree = realOr(place.dir);
    const running = await this.#attach(harness, worktree, place.branch);
    try {
      const saved = created ? {} : readWorkState(place.stateFile);
      let sessionId = saved.harness === harness.name ? saved.sessionId : undefined;
      let continued = sessionId !== undefined && running.open.has(sessionId);
      if (!continued) {
        const opened = await running.agent.openSession(worktree, harness.meta, sessionId);
        sessionId = opened.sessionId;
        continued = opened.continued;
        running.open.add(sessionId);
        // A loaded session reports its cost since it began: count from what it was.
        if (continued && saved.sessionId === sessionId && !running.costs.has(sessionId)) {
          running.costs.set(sessionId, saved.cost ?? 0);
        }
        saveSession(place.stateFile, harness.name, sessionId, created);
      }
      const prompt: ContentBlock[] = continued
        ? []
        : await contextBlocks(worktree, harness.context);
      prompt.push({ type: "text", text: args.task });

      const refused: Refusal[] = [];
      const labels = new Set<string>();
      let message = "";
      let cost: number | undefined;
      const emit = (e: CallEvent) => this.#o.onEvent?.(e);
      const base = { harness: harness.name, agent: origin.agent, call: origin.callId };
      // A cancelled or timed-out call cancels its prompt; the next call sends a new one.
      const cancel = () => running.agent.cancel(sessionId!);
      signal?.addEventListener("abort", cancel, { once: true });
      const note = this.#noteInFlight(harness, co, place, origin, args);
      const unnote = () => note && Deno.removeSync(note.path);
      const mine: string[] = [];
      let granted = grant;
      // Told once, in the prompt about to be sent: a person declined to let a call in doubt finish.
      const declined = takeDeclined(place.stateFile);
      if (declined.length > 0) prompt.unshift({ type: "text", text: declinedNotice(declined) });
      const stopReason = await running.agent.prompt(sessionId!, prompt, {
        onUpdate: (update) => {
          emit({ type: "acp_update", ...base, update });
          if (update.sessionUpdate === "tool_call") {
            message = "";
            if (update.kind === "fetch") labels.add("outside");
          } else if (update.sessionUpdate === "agent_message_chunk") {
            if (update.content.type === "text") message += update.content.text;
          } else if (update.sessionUpdate === "usage_update") {
            if (update.cost?.currency === "USD") cost = update.cost.amount;
          }
        },
        onPermission: async (toolCall: ToolCallInfo, options: readonly PermissionOption[]) => {
          const kind = toolCall.kind ?? "other";
          if (kind === "fetch") labels.add("outside");
          const locations = (toolCall.locations ?? []).map((l) =>
            resolveLocation(l.path, worktree, this.#policy.home)
          );
          const decision = decide(this.#policy, {
            harness: harness.name,
            kind,
            locations,
            worktree,
            command: commandOf(toolCall.rawInput),
          });
          const id = `${origin.callId}:${toolCall.toolCallId}`;
          const request = `${harness.name}/${kind}`;
          let verdict = decision.verdict;
          let reason = decision.reason;
          const shape = { kind, locations, rawInput: toolCall.rawInput };
          if (verdict === "ask" && granted !== undefined && sameRequest(granted, shape)) {
            // The person's decision on the request that waited while the agent was stopped.
            verdict = granted.approved ? "allow" : "deny";
            reason += `; a person ${granted.approved ? "approved" : "rejected"} it while it waited`;
            granted = undefined;
          } else if (verdict === "ask" && this.#o.park !== undefined) {
            const ask: PermissionAsk = {
              request_id: id,
              harness: harness.name,
              kind,
              title: toolCall.title ?? undefined,
              arguments: toolCall.rawInput,
              locations,
              worktree: place.dir,
              checkout: co.name,
              work: args.work,
              agent: origin.agent,
              thread: origin.thread,
              task: args.task,
              reason: decision.reason,
            };
            const pendingId = this.#o.park(ask);
            mine.push(pendingId);
            const decided = new Promise<boolean>((resolve) =>
              this.#parked.set(pendingId, { resolve })
            );
            emit({
              type: "acp_permission",
              ...base,
              id,
              request,
              locations,
              verdict,
              answer: "parked",
              reason: `${reason}; parked for review as ${pendingId}`,
              labels: [...labels],
            });
            // The MCP call returns now; the prompt outlives it and waits for the person.
            signal?.removeEventListener("abort", cancel);
            // While it waits, the held request stands for the call: a restart now
            // must not also park it in doubt.
            unnote();
            onParked({
              message: message.trim(),
              stop_reason: "parked",
              branch: place.branch,
              worktree: place.dir,
              head: await headOf(co, place.dir),
              commits: await commitsSince(co, place.dir, co.base),
              refused: [...refused],
              labels: [...labels],
              usd: 0,
              parked: { id: pendingId, request_id: id, request },
            });
            const approved = await decided;
            note?.write();
            verdict = approved ? "allow" : "deny";
            reason += `; a person ${approved ? "approved" : "rejected"} it`;
          } else if (verdict === "ask") {
            reason += "; agent.review is off, so it was refused";
          }
          const allow = verdict === "allow";
          const chosen = chooseOption(options, allow);
          if (allow && chosen?.kind !== "allow_once") {
            reason += ", but the agent offered no allow_once option";
          }
          if (chosen?.kind !== "allow_once") {
            refused.push({ id, request, title: toolCall.title ?? undefined, reason });
          }
          emit({
            type: "acp_permission",
            ...base,
            id,
            request,
            locations,
            verdict,
            answer: chosen?.kind ?? "cancelled",
            reason,
            labels: [...labels],
          });
          return chosen?.optionId;
        },
      }).finally(() => {
        signal?.removeEventListener("abort", cancel);
        for (const id of mine) this.#parked.delete(id);
        // A call the stopping daemon cut off stays noted: the next start parks it in doubt.
        if (!this.#closed) {
          try {
            unnote();
          } catch {
            // Not noted while it waited.
          }
        }
      });

      let usd = 0;
      if (cost !== undefined) {
        const before = running.costs.get(sessionId!) ?? 0;
        // A count below where it was started again from zero (an agent that does not restore it).
        usd = cost >= before ? cost - before : cost;
        running.costs.set(sessionId!, cost);
        saveCost(place.stateFile, sessionId!, cost);
        if (usd > 0) this.#o.onCost?.(usd, { harness: harness.name, callId: origin.callId });
      }
      return {
        message: message.trim(),
        stop_reason: stopReason,
        branch: place.branch,
        worktree: place.dir,
        head: await headOf(co, place.dir),
        commits: await commitsSince(co, place.dir, co.base),
        refused,
        labels: [...labels],
        usd,
      };
    } finally {
      this.#detach(harness, worktree);
    }
  }

  /** Notes the call as in flight, for the next start should the daemon stop now. */
  #noteInFlight(
    harness: HarnessConfig,
    co: CheckoutConfig,
    place: ReturnType<typeof workPlace>,
    origin: CallOrigin,
    args: CallArgs,
  ): { path: string; write(): void } | undefined {
    const dir = this.#o.inFlightDir;
    if (dir === undefined) return undefined;
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = `${dir}/${origin.callId.replace(/[^A-Za-z0-9._-]/g, "_")}.json`;
    const note: InFlight = {
      callId: origin.callId,
      harness: harness.name,
      checkout: co.name,
      work: args.work,
      agent: origin.agent,
      thread: origin.thread,
      task: args.task,
      worktree: place.dir,
    };
    const write = () => Deno.writeTextFileSync(path, JSON.stringify(note) + "\n", { mode: 0o600 });
    write();
    return { path, write };
  }

  /** The key of a running agent: one per harness, or one per work when sandboxed. */
  #key(harness: HarnessConfig, worktree: string): string {
    return this.#o.sandbox === undefined ? harness.name : `${harness.name}\n${worktree}`;
  }

  async #attach(harness: HarnessConfig, worktree: string, branch: string): Promise<Running> {
    const key = this.#key(harness, worktree);
    let p = this.#running.get(key);
    if (p !== undefined) {
      const r = await p.catch(() => undefined);
      if (r === undefined || r.agent.stopped) p = undefined;
    }
    if (p === undefined) {
      p = this.#start(harness, worktree, branch).then((agent) => {
        const r: Running = { agent, open: new Set(), costs: new Map(), attached: 0 };
        // A harness that dies is started again by the next call.
        agent.exited.then(() => {
          if (this.#running.get(key) === p) this.#running.delete(key);
        });
        return r;
      });
      this.#running.set(key, p);
      p.catch(() => this.#running.delete(key));
    }
    const r = await p;
    r.attached++;
    clearTimeout(r.idleTimer);
    return r;
  }

  /** Starts the harness, in the sandbox of the work's worktree when there is one. */
  async #start(harness: HarnessConfig, worktree: string, branch: string): Promise<AcpAgent> {
    const sandbox = this.#o.sandbox;
    if (sandbox === undefined) return AcpAgent.start(harness, this.#o.worktrees, this.#o.env);
    const env = { ...this.#o.env, ...harness.env };
    let wrapped;
    try {
      const git = await commitPaths(worktree, branch);
      wrapped = await sandbox.wrap({
        what: `harness ${harness.name}`,
        program: harness.command,
        args: harness.args,
        cwd: worktree,
        env,
        kind: agentKindOf(harness.command, harness.args),
        readable: git.readable,
        writable: [worktree, ...git.writable],
      });
    } catch (err) {
      throw new CallError("acp.sandbox", (err as Error).message, { cause: err });
    }
    return AcpAgent.start(harness, worktree, this.#o.env, {
      command: { program: wrapped.program, args: wrapped.args },
    });
  }

  #detach(harness: HarnessConfig, worktree: string): void {
    const key = this.#key(harness, worktree);
    const p = this.#running.get(key);
    p?.then((r) => {
      r.attached--;
      if (r.attached > 0) return;
      r.idleTimer = setTimeout(() => {
        if (r.attached > 0) return;
        this.#running.delete(key);
        r.agent.stop();
      }, harness.idle);
    });
  }

  /** True while the harness's process runs (for tests and status). */
  async isRunning(harness: string): Promise<boolean> {
    for (const [key, p] of this.#running) {
      if (key !== harness && !key.startsWith(`${harness}\n`)) continue;
      const r = await p.catch(() => undefined);
      if (r !== undefined && !r.agent.stopped) return true;
    }
    return false;
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
    for (const [name, p] of [...this.#running]) {
      const r = await p.catch(() => undefined);
      if (r === undefined || r.attached > 0) continue;
      clearTimeout(r.idleTimer);
      if (this.#running.get(name) === p) this.#running.delete(name);
      await r.agent.stop();
    }
    const held = new Set(this.#o.held?.() ?? []);
    return await sweep(
      this.#o.worktrees,
      this.#o.checkouts,
      (dir) =>
        this.#works.has(dir)
          ? "a call uses it"
          : held.has(dir)
          ? "a request of it waits for a person"
          : undefined,
    );
  }

  /** Stops every harness (the daemon is stopping). */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#running.values()];
    this.#running.clear();
    await Promise.all(all.map(async (p) => {
      const r = await p.catch(() => undefined);
      if (r === undefined) return;
      clearTimeout(r.idleTimer);
      await r.agent.stop();
    }));
  }
}

/**
 * The context files of a new session, as text blocks. Missing files are
 * skipped, and so is one that resolves outside the worktree or into its `.git`:
 * the daemon reads with its own rights, so a committed `CLAUDE.md -> ../node.key`
 * link must not hand the coding agent what its own requests cannot reach.
 */
export async function contextBlocks(
  worktree: string,
  files: readonly string[],
): Promise<ContentBlock[]> {
  const out: ContentBlock[] = [];
  for (const f of files) {
    try {
      const real = await Deno.realPath(`${worktree}/${f}`);
      const inside = real.startsWith(worktree + "/") &&
        !real.slice(worktree.length + 1).split("/").includes(".git");
      if (!inside) continue;
      const text = await Deno.readTextFile(real);
      out.push({ type: "text", text: `Context from ${f}:\n\n${text}` });
    } catch {
      // Not in this checkout.
    }
  }
  return out;
}

/**
 * A person's decision on a request that waited while its coding agent was
 * stopped, with the request it answers.
 */
interface Grant extends RequestShape {
  approved: boolean;
}

/** A call in flight, as noted under `inFlightDir`. */
interface InFlight {
  callId: string;
  harness: string;
  checkout: string;
  work: string;
  agent: string;
  thread: string;
  task: string;
  worktree: string;
}

function realOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}
