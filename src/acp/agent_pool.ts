/**
 * The running coding agents of one node: one process per harness, or one per
 * work when sandboxed (each sees its own worktree and no other). A call
 * attaches to its agent, starting it when none runs (or it died), and detaches
 * when done; an agent with no call attached stops after its harness's `idle`.
 *
 * @module
 */

import type { HarnessConfig } from "../config/acp_tables.ts";
import { WatsError } from "../errors.ts";
import type { AgentProfile } from "../safety/sandbox.ts";
import type { Sandboxer } from "../safety/sandboxer.ts";
import { AcpAgent } from "./client.ts";
import type { Connect } from "./agent_link.ts";
import { readWorkState, saveCost, saveSession } from "./work_state.ts";

/** A call could not start: a bad checkout or work name, or the harness failed. */
export class CallError extends WatsError {}

/** A running agent and what its calls share. */
export interface Running {
  agent: AcpAgent;
  /** Sessions opened in this process: no load needed to continue them. */
  open: Set<string>;
  /** Each session's cumulative cost when its last call ended (usage_update is cumulative). */
  costs: Map<string, number>;
  attached: number;
  idleTimer?: ReturnType<typeof setTimeout>;
}

/** What the pool starts agents with. */
export interface AgentPoolOptions {
  /** `<data>/worktrees`: where an unsandboxed agent runs. */
  worktrees: string;
  /** The environment agents start from. */
  env: Record<string, string>;
  /** The OS sandbox; unset: one agent per harness serves every work. */
  sandbox?: Sandboxer;
  /** How an agent is reached; default: its process. */
  connect?: Connect;
  /**
   * The agent a harness runs, as the runtimes' facts and its table declare it
   * (src/runner/runtimes/agents.ts `harnessAgent`); unset or none: its sandbox gets no login and
   * no vendor host.
   */
  agentOf?: (harness: HarnessConfig) => AgentProfile | undefined;
}

/** The node's running coding agents. */
export class AgentPool {
  readonly #options: AgentPoolOptions;
  readonly #running = new Map<string, Promise<Running>>();

  constructor(options: AgentPoolOptions) {
    this.#options = options;
  }

  /** The key of a running agent: one per harness, or one per work when sandboxed. */
  #key(harness: HarnessConfig, worktree: string): string {
    return this.#options.sandbox === undefined ? harness.name : `${harness.name}\n${worktree}`;
  }

  /**
   * The agent of a call in `worktree`, started when none runs; a sandboxed one
   * gets `paths` (the work folder writable, the checkout's git dir readable:
   * src/acp/worktrees.ts `agentPaths`).
   */
  async attach(
    harness: HarnessConfig,
    worktree: string,
    paths: { readable: string[]; writable: string[] },
  ): Promise<Running> {
    const key = this.#key(harness, worktree);
    let p = this.#running.get(key);
    if (p !== undefined) {
      const r = await p.catch(() => undefined);
      if (r === undefined || r.agent.stopped) p = undefined;
    }
    if (p === undefined) {
      p = this.#start(harness, worktree, paths).then((agent) => {
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

  /** Starts the harness, in the sandbox of the work's folder when there is one. */
  async #start(
    harness: HarnessConfig,
    worktree: string,
    paths: { readable: string[]; writable: string[] },
  ): Promise<AcpAgent> {
    const { sandbox, connect } = this.#options;
    if (sandbox === undefined) {
      return AcpAgent.start(harness, this.#options.worktrees, this.#options.env, { connect });
    }
    const env = { ...this.#options.env, ...harness.env };
    let wrapped;
    try {
      const agent = this.#options.agentOf?.(harness);
      wrapped = await sandbox.wrap({
        what: `harness ${harness.name}`,
        program: harness.command,
        args: harness.args,
        cwd: worktree,
        env,
        ...(agent ? { agent } : {}),
        readable: paths.readable,
        writable: paths.writable,
      });
    } catch (err) {
      throw new CallError("acp.sandbox", (err as Error).message, { cause: err });
    }
    return AcpAgent.start(harness, worktree, this.#options.env, {
      command: { program: wrapped.program, args: wrapped.args },
      connect,
    });
  }

  /** The call is done with its agent: it stops after `idle` unless another call attaches. */
  detach(harness: HarnessConfig, worktree: string): void {
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

  /** True while an agent of the harness runs. */
  async isRunning(harness: string): Promise<boolean> {
    for (const [key, p] of this.#running) {
      if (key !== harness && !key.startsWith(`${harness}\n`)) continue;
      const r = await p.catch(() => undefined);
      if (r !== undefined && !r.agent.stopped) return true;
    }
    return false;
  }

  /** Stops every agent no call is attached to (before a sweep). */
  async stopIdle(): Promise<void> {
    for (const [name, p] of [...this.#running]) {
      const r = await p.catch(() => undefined);
      if (r === undefined || r.attached > 0) continue;
      clearTimeout(r.idleTimer);
      if (this.#running.get(name) === p) this.#running.delete(name);
      await r.agent.stop();
    }
  }

  /** Stops every agent (the daemon is stopping). */
  async close(): Promise<void> {
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

/** The work a session is opened for: where it runs and where its state is kept. */
export interface SessionWork {
  /** The worktree the session works in. */
  worktree: string;
  /** The work's state file (its session and cost). */
  stateFile: string;
  /** The worktree was just cut: it has no state yet. */
  created: boolean;
}

/**
 * The work's session on the running agent: continued in memory when this
 * process opened it, else loaded or resumed from the work's state file, else
 * new (then noted there).
 */
export async function workSession(
  running: Running,
  harness: HarnessConfig,
  work: SessionWork,
): Promise<{ sessionId: string; continued: boolean }> {
  const { worktree, stateFile, created } = work;
  const saved = created ? {} : readWorkState(stateFile);
  const known = saved.harness === harness.name ? saved.sessionId : undefined;
  if (known !== undefined && running.open.has(known)) return { sessionId: known, continued: true };
  const { sessionId, continued } = await running.agent.openSession(worktree, harness.meta, known);
  running.open.add(sessionId);
  // A loaded session reports its cost since it began: count from what it was.
  if (continued && saved.sessionId === sessionId && !running.costs.has(sessionId)) {
    running.costs.set(sessionId, saved.cost ?? 0);
  }
  saveSession(stateFile, harness.name, sessionId, created);
  return { sessionId, continued };
}

/**
 * What a call cost, in USD, from its session's cumulative `cost` at its end;
 * notes where the session stands, in memory and in the work's state file.
 */
export function callCost(
  running: Running,
  stateFile: string,
  sessionId: string,
  cost: number,
): number {
  const before = running.costs.get(sessionId) ?? 0;
  running.costs.set(sessionId, cost);
  saveCost(stateFile, sessionId, cost);
  // A count below where it was started again from zero (an agent that does not restore it).
  return cost >= before ? cost - before : cost;
}
