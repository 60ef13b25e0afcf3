/**
 * A call of a coding agent (issue 10, items 2–4): the harness tool's handler.
 * It finds or cuts the work's worktree, starts the harness when it is not
 * running, continues or opens the work's ACP session, sends the task, judges
 * every permission request with the wats policy, and returns what the coding
 * agent did. The harness stops after its `idle` time with no call attached.
 *
 * Not built yet (docs/acp.md): parking `ask` requests for review (they are
 * refused), in-doubt calls after a restart, the sweep.
 *
 * @module
 */

import type { ContentBlock, PermissionOption, StopReason } from "@agentclientprotocol/sdk";
import type { CheckoutConfig, HarnessConfig } from "../config/acp_tables.ts";
import { WatsError } from "../errors.ts";
import { AcpAgent, type SessionUpdate, type ToolCallInfo } from "./client.ts";
import { chooseOption, decide, type Policy, resolveLocation } from "./policy.ts";
import { sweep, type SweepReport } from "./sweep.ts";
import {
  checkCheckout,
  type Commit,
  commitsSince,
  ensureWorktree,
  headOf,
  workPlace,
} from "./worktrees.ts";

/** The arguments of a harness tool. */
export interface CallArgs {
  /** What to do. */
  task: string;
  /** The name of a `[checkouts.NAME]`. */
  checkout: string;
  /** A name for the piece of work, such as `fix-login`. */
  work: string;
}

/** Who calls: the agent's profile, its thread (`_` for none) and this call's id. */
export interface CallOrigin {
  agent: string;
  thread: string;
  callId: string;
}

/** A permission request the policy refused. */
export interface Refusal {
  /** `<call id>:<toolCallId>`. */
  id: string;
  /** `<harness>/<kind>`. */
  request: string;
  title?: string;
  reason: string;
}

/** What a call returns to the agent (the seed's map, plus `usd` and `labels`). */
export interface CallResult {
  message: string;
  stop_reason: StopReason;
  branch: string;
  worktree: string;
  head: string;
  commits: Commit[];
  refused: Refusal[];
  /** `outside` once the coding agent asked to fetch from the network. */
  labels: string[];
  /** What the call cost, in USD, when the agent reports it (Claude does; Codex does not). */
  usd: number;
}

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
  #closed = false;
  #sweeping: Promise<unknown> = Promise.resolve();

  constructor(options: AcpLayerOptions) {
    this.#o = options;
    // Judged against the real path: locations are resolved through symlinks too.
    this.#policy = { ...options.policy, dataDir: realOr(options.policy.dataDir) };
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
    // Nothing above awaits, so the queue is joined in call order.
    const before = this.#works.get(place.dir) ?? Promise.resolve();
    const run = before.catch(() => {}).then(() =>
      this.#call(harness, co, place, origin, args, signal)
    );
    this.#works.set(place.dir, run);
    const forget = () => {
      if (this.#works.get(place.dir) === run) this.#works.delete(place.dir);
    };
    run.then(forget, forget);
    return await run;
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
    const running = await this.#attach(harness);
    try {
      const saved = created ? undefined : await readState(place.stateFile);
      let sessionId = saved?.harness === harness.name ? saved.sessionId : undefined;
      let continued = sessionId !== undefined && running.open.has(sessionId);
      if (!continued) {
        const opened = await running.agent.openSession(worktree, harness.meta, sessionId);
        sessionId = opened.sessionId;
        continued = opened.continued;
        running.open.add(sessionId);
        await writeState(place.stateFile, { harness: harness.name, sessionId });
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
        onPermission: (toolCall: ToolCallInfo, options: readonly PermissionOption[]) => {
          const kind = toolCall.kind ?? "other";
          if (kind === "fetch") labels.add("outside");
          const locations = (toolCall.locations ?? []).map((l) =>
            resolveLocation(l.path, worktree)
          );
          const decision = decide(this.#policy, {
            harness: harness.name,
            kind,
            locations,
            worktree,
          });
          const allow = decision.verdict === "allow";
          const chosen = chooseOption(options, allow);
          const id = `${origin.callId}:${toolCall.toolCallId}`;
          const request = `${harness.name}/${kind}`;
          let reason = decision.reason;
          if (decision.verdict === "ask") {
            reason += "; review of coding agents' requests is not built yet, so it was refused";
          } else if (allow && chosen?.kind !== "allow_once") {
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
            verdict: decision.verdict,
            answer: chosen?.kind ?? "cancelled",
            reason,
            labels: [...labels],
          });
          return Promise.resolve(chosen?.optionId);
        },
      }).finally(() => signal?.removeEventListener("abort", cancel));

      let usd = 0;
      if (cost !== undefined) {
        usd = Math.max(0, cost - (running.costs.get(sessionId!) ?? 0));
        running.costs.set(sessionId!, cost);
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
      this.#detach(harness);
    }
  }

  async #attach(harness: HarnessConfig): Promise<Running> {
    let p = this.#running.get(harness.name);
    if (p !== undefined) {
      const r = await p.catch(() => undefined);
      if (r === undefined || r.agent.stopped) p = undefined;
    }
    if (p === undefined) {
      p = AcpAgent.start(harness, this.#o.worktrees, this.#o.env).then((agent) => {
        const r: Running = { agent, open: new Set(), costs: new Map(), attached: 0 };
        // A harness that dies is started again by the next call.
        agent.exited.then(() => {
          if (this.#running.get(harness.name) === p) this.#running.delete(harness.name);
        });
        return r;
      });
      this.#running.set(harness.name, p);
      p.catch(() => this.#running.delete(harness.name));
    }
    const r = await p;
    r.attached++;
    clearTimeout(r.idleTimer);
    return r;
  }

  #detach(harness: HarnessConfig): void {
    const p = this.#running.get(harness.name);
    p?.then((r) => {
      r.attached--;
      if (r.attached > 0) return;
      r.idleTimer = setTimeout(() => {
        if (r.attached > 0) return;
        this.#running.delete(harness.name);
        r.agent.stop();
      }, harness.idle);
    });
  }

  /** True while the harness's process runs (for tests and status). */
  async isRunning(harness: string): Promise<boolean> {
    const p = this.#running.get(harness);
    if (p === undefined) return false;
    const r = await p.catch(() => undefined);
    return r !== undefined && !r.agent.stopped;
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
    return await sweep(this.#o.worktrees, this.#o.checkouts, (dir) => this.#works.has(dir));
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

interface WorkState {
  harness: string;
  sessionId: string;
}

async function readState(path: string): Promise<WorkState | undefined> {
  try {
    const v = JSON.parse(await Deno.readTextFile(path));
    return typeof v?.sessionId === "string" && typeof v?.harness === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

async function writeState(path: string, state: WorkState): Promise<void> {
  await Deno.writeTextFile(path, JSON.stringify(state) + "\n");
}

function realOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}
