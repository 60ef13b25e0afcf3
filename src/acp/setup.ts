/**
 * Builds the node's ACP layer from the loaded settings, at daemon start: the
 * one call the daemon makes into src/acp. No harness enabled: no layer, and no
 * harness tools.
 *
 * @module
 */

import { missingHarnessFile } from "../config/harness_files.ts";
import { errorMessage } from "../error_message.ts";
import type { AgentHost } from "../contracts/agent_host.ts";
import type { Sandboxer } from "../safety/sandboxer.ts";
import type { AcpTables } from "../config/acp_tables.ts";
import type { DataPaths } from "../config/paths.ts";
import type { Settings } from "../config/schema.ts";
import { ConfigError } from "../errors.ts";
import { AcpLayer, type AcpLayerOptions, type CallEvent } from "./calls.ts";
import type { PermissionAsk } from "../contracts/coding_agents.ts";
import { makePolicy } from "./policy.ts";
import { AcpSpendFile } from "./spend.ts";
import { checkCheckout } from "./worktrees.ts";
import type { SweepReport } from "../contracts/coding_agents.ts";
import type { WorkOpsSource } from "./work_ops.ts";

/** What the daemon gives the layer. */
export interface AcpSetup {
  acp: AcpTables;
  settings: Settings;
  paths: DataPaths;
  /** The daemon's environment: harnesses start from it. */
  env: Record<string, string>;
  /** Names harness tools may not take (the wats tools'). */
  reserved: readonly string[];
  /** The OS sandbox every harness runs in (docs/decisions/sandbox.md); none: unsandboxed. */
  sandbox?: Sandboxer;
  /** The agent a harness runs (src/acp/agent_pool.ts `AgentPoolOptions.agentOf`). */
  agentOf?: AcpLayerOptions["agentOf"];
  onEvent?: (e: CallEvent) => void;
  /** Told what each sweep removed (the node's JSON lines and log). */
  onSweep?: (report: SweepReport) => void;
  /**
   * The runner, built before the layer (src/contracts/agent_host.ts): its
   * budget, its runs' threads and transcripts, and its wake when a person
   * decides. None (agent.runtime = none): calls are not budgeted.
   */
  host?: AgentHost;
  /** The clock, ms since the epoch. */
  now?: () => number;
  /** Holds an `ask` in the review queue (agent.review on); undefined: `ask` refuses. */
  park?: (ask: PermissionAsk) => string;
  /** The requests held in the review queue: the sweep keeps their worktrees. */
  held?: () => readonly PermissionAsk[];
}

/** `wats agent sweep`: sweeps now and says what it removed and kept, one line each. */
export async function sweepNow(acp: NodeAcp | undefined): Promise<string> {
  if (acp === undefined) {
    return "no coding agents: config.toml has no enabled [harnesses.NAME], so there is nothing to sweep";
  }
  const r = await acp.sweep();
  const lines = [
    r.removed.length === 0 ? "removed nothing" : `removed ${r.removed.length} worktree(s):`,
    ...r.removed.map((d) => `  ${d}`),
    ...r.kept.map((k) => `kept ${k.dir}: ${k.reason}`),
    ...(r.error ? [`error: the sweep stopped: ${r.error}`] : []),
  ];
  return lines.join("\n");
}

/** The layer the daemon holds: the tools' side, plus what the daemon calls at start and stop. */
export interface NodeAcp {
  layer: AcpLayer;
  /**
   * Checks, at daemon start, that every checkout is a git repository with at
   * least one commit; throws a `ConfigError` naming each one that is not.
   */
  check(): Promise<void>;
  /**
   * Parks the calls the previous daemon left in flight as in doubt, counts
   * this month's earlier calls in the runner's budget, sets the works the
   * budget stopped to go on after its window resets, and starts the sweeps
   * (now, then every `agent.sweep`); call once the runner started (a decision
   * on a call in doubt wakes it).
   */
  start(): void;
  /** Sweeps now (`wats agent sweep`), reported like the timed sweeps. */
  sweep(): Promise<SweepReport>;
  /** The works and what `wats work` does to them (src/acp/works.ts, src/acp/work_ops.ts). */
  works: WorkOpsSource;
  /** Stops the sweeps and every harness. */
  close(): Promise<void>;
}

/**
 * The ACP layer, or undefined when no harness is enabled. Throws
 * `ConfigError` for a harness named like a wats tool or an `agent.checkouts`
 * entry that names no checkout.
 */
export function acpLayerFor(s: AcpSetup): NodeAcp | undefined {
  const enabled = Object.values(s.acp.harnesses).filter((h) => h.enabled);
  for (const h of enabled) {
    if (s.reserved.includes(h.name)) {
      throw new ConfigError(
        "config.bad_value",
        `[harnesses.${h.name}] is named like the wats tool ${h.name}; rename the table`,
      );
    }
  }
  for (const c of s.settings["agent.checkouts"]) {
    if (!Object.hasOwn(s.acp.checkouts, c)) {
      throw new ConfigError(
        "config.bad_value",
        `agent.checkouts names "${c}", but config.toml has no [checkouts.${c}]; ` +
          `add it or remove the name (checkouts: ${
            Object.keys(s.acp.checkouts).join(", ") || "none"
          })`,
      );
    }
  }
  if (enabled.length === 0) return undefined;
  const now = s.now ?? Date.now;
  const spend = new AcpSpendFile(s.paths.agentDir);
  const layer = new AcpLayer({
    worktrees: s.paths.worktrees,
    harnesses: s.acp.harnesses,
    checkouts: s.acp.checkouts,
    allowedCheckouts: s.settings["agent.checkouts"],
    policy: makePolicy(s.settings["policy.allow"], s.settings["policy.deny"], s.paths.dataDir, {
      home: s.env.HOME,
    }),
    env: s.env,
    ...(s.agentOf ? { agentOf: s.agentOf } : {}),
    onEvent: (e) => {
      s.onEvent?.(e);
      // A run's calls go to its transcript too.
      if (e.run !== undefined) s.host?.noteAcp(e.run, { ...e, event: e.type });
    },
    // The budget counted each call as it settled; these lines count it again after a restart.
    onCost: (usd, call) => spend.add({ at: now(), usd, harness: call.harness, call: call.callId }),
    onUncosted: (call) => spend.add({ at: now(), harness: call.harness, call: call.callId }),
    spendFile: spend,
    host: s.host,
    park: s.park,
    // The heartbeat agent wakes to continue the work.
    onDecided: (ask, approved) =>
      s.host?.permissionDecided(
        `permission decided: ${ask.harness}/${ask.kind} on work ${ask.work} was ${
          approved ? "approved" : "rejected"
        }`,
        ask.thread === "_" ? undefined : ask.thread,
      ),
    // A work the budget stopped went on after the reset and ended: the agent hears it, as of any call.
    onResumedEnd: (stop, end) =>
      s.host?.permissionDecided(
        `work ${stop.work} (${stop.harness}), which the budget had stopped, went on after ` +
          `the budget window reset and ended: ${end.outcome}` +
          (end.commits ? `, ${end.commits} commit(s) to review` : "") +
          `; see wats work show ${end.work}`,
        stop.thread === "_" ? undefined : stop.thread,
      ),
    held: () => (s.held?.() ?? []).map((ask) => ask.worktree),
    inFlightDir: `${s.paths.agentDir}/acp_calls`,
    sandbox: s.sandbox,
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sweeping: Promise<void> = Promise.resolve();
  let closed = false;
  const every = s.settings["agent.sweep"];
  const sweepOnce = () => {
    sweeping = layer.sweep().then((report) => s.onSweep?.(report)).catch((err) =>
      s.onSweep?.({ removed: [], kept: [], error: errorMessage(err) })
    ).finally(() => {
      if (!closed && every > 0) timer = setTimeout(sweepOnce, every);
    });
  };
  const sweepReported = async () => {
    const report = await layer.sweep();
    s.onSweep?.(report);
    return report;
  };
  return {
    layer,
    works: {
      root: s.paths.worktrees,
      harnesses: s.acp.harnesses,
      checkouts: s.acp.checkouts,
      busy: (dir) => layer.busy(dir),
      held: () => s.held?.() ?? [],
      call: (harness, origin, args) => layer.call(harness, origin, args),
      blocked: () => layer.blocked(),
      checkoutNames: () => layer.checkoutNames(),
      agentProfile: s.settings["agent.profile"],
      sweep: sweepReported,
      sandbox: s.sandbox,
    },
    check: async () => {
      const bad: string[] = [];
      for (const h of enabled) {
        const missing = await missingHarnessFile(h);
        if (missing !== undefined) bad.push(missing);
      }
      for (const co of Object.values(s.acp.checkouts)) {
        await checkCheckout(co).catch((err) => bad.push(errorMessage(err)));
      }
      if (bad.length > 0) throw new ConfigError("config.bad_checkout", bad.join("; "));
    },
    start: () => {
      // Calls the previous daemon left running are in doubt: a person decides.
      layer.parkInDoubt();
      // What calls a killed daemon left in flight had reported counts, as their lines.
      spend.recoverOpen(now());
      for (const x of spend.month(now())) s.host?.budget.addSpend(x.at, x.usd);
      // Works the budget stopped before the restart go on after the window resets.
      layer.resumeStopped();
      if (every > 0) sweepOnce();
    },
    sweep: sweepReported,
    close: async () => {
      closed = true;
      clearTimeout(timer);
      await sweeping;
      await layer.close();
    },
  };
}
