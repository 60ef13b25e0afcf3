/**
 * The daemon's side of the agent's presence (docs/decisions/presence.md): what state
 * the agent is in (no runner: `off`; a halt holds: `halted`; a budget reached:
 * `paused`; else `running`), which node events may change it, and the announcer
 * that posts it as the agent profile.
 *
 * @module
 */

import type { NodeEvent } from "../contracts/node_events.ts";
import type { PresenceState } from "../posts/presence.ts";
import { PresenceAnnouncer } from "../runner/presence.ts";
import type { PresenceDraft } from "../runner/presence.ts";
import { type RunnerLog, systemClock, systemTimers } from "../runner/ports.ts";
import type { AgentRunner } from "./agent_runner.ts";
import type { HaltState } from "./halt.ts";

/** The agent's state now. */
export function agentState(
  runner: Pick<AgentRunner, "status"> | undefined,
  halt: Pick<HaltState, "current">,
): PresenceState {
  if (runner === undefined) return { state: "off" };
  if (halt.current()) return { state: "halted" };
  const paused = runner.status().pauses?.budget;
  return paused ? { state: "paused", until: paused.until } : { state: "running" };
}

/** True for the node events after which the agent's state may differ. */
export function mayChangeState(e: NodeEvent): boolean {
  return e.event === "run_ended" || e.event === "halted" || e.event === "resumed";
}

/** Starts posting the agent's presence: now, every `everyMs`, and on each `check()`. */
export function startAgentPresence(opts: {
  about: string;
  caps: readonly string[];
  everyMs: number;
  state: () => PresenceState;
  publish: (draft: PresenceDraft) => Promise<unknown>;
  log: RunnerLog;
}): PresenceAnnouncer {
  const title = opts.about.trim().split("\n")[0]!.trim();
  const announcer = new PresenceAnnouncer({
    clock: systemClock,
    timers: systemTimers,
    log: opts.log,
    everyMs: opts.everyMs,
    ...(title ? { title } : {}),
    caps: opts.caps,
    state: opts.state,
    publish: opts.publish,
  });
  void announcer.start();
  return announcer;
}
