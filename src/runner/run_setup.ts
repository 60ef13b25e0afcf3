/**
 * What a run starts with, from what it was given (docs/decisions/runner.md):
 * the reasons and the wake prompt, the run context the harness builds its
 * command from, the transcript header and the log line. The runtime's name
 * decides what bounds the run as the runtime applies it: Codex reports no
 * cost and takes no turn limit (docs/codex.md).
 *
 * @module
 */

import { usd } from "../money.ts";
import { formatDuration } from "../duration.ts";
import type { BudgetState } from "./budget.ts";
import { limitsTurns, reportsCost } from "./runtimes/facts.ts";
import type { RunContext } from "./harness.ts";
import type { RunnerPost } from "./ports.ts";
import type { OthersClaim } from "./claims.ts";
import {
  buildPrompt,
  type PromptClaimed,
  type PromptEvent,
  type PromptFeedback,
  type PromptRejection,
} from "./prompt.ts";
import type { RunnerAgent, RunnerLaunch, RunnerSettings } from "./runner_options.ts";
import type { RunHeader } from "./transcripts.ts";
import type { RunTrigger } from "../contracts/runs.ts";

/** A post queued to wake the agent, with why and the thread it is in. */
export interface QueuedEvent {
  post: RunnerPost;
  reason: string;
  thread: string;
}

/** What a run was given by the scheduler. */
export interface RunShare {
  id: string;
  trigger: RunTrigger;
  startedAt: number;
  events: readonly QueuedEvent[];
  /** The reasons of the decisions on parked requests it was given. */
  decided: readonly string[];
  feedback: readonly PromptFeedback[];
  thread?: string;
  /** Other authors' claims on its events' asks, by event id (claims.ts). */
  claims?: ReadonlyMap<string, OthersClaim>;
  /** Asks dropped from the queue because others claimed them. */
  claimed?: readonly PromptClaimed[];
}

/** What the run starts with. */
export interface RunSetup {
  ctx: RunContext;
  header: Omit<RunHeader, "type">;
  /** The "run … started" log line. */
  startLine: string;
}

/** Builds a run's prompt, context, header and log line. */
export function setUpRun(
  share: RunShare,
  at: {
    settings: RunnerSettings;
    agent: RunnerAgent;
    launch: Pick<RunnerLaunch, "harness" | "paths" | "selfCommand" | "settingsFile">;
    budget: BudgetState;
    /** What the run holds of the budget (src/runner/reservations.ts): the most it may spend. */
    maxUsd: number;
    /** The feed cursor given to the run. */
    cursor: number;
    rejections: PromptRejection[];
    token: string | undefined;
  },
): RunSetup {
  const { id, trigger, events, feedback, thread } = share;
  const s = at.settings;
  const hb = s["agent.heartbeat"];
  const promptEvents: PromptEvent[] = events.map((q) => {
    const claim = share.claims?.get(q.post.id);
    return {
      id: q.post.id,
      kind: q.post.kind,
      author: q.post.author,
      thread: q.thread,
      reason: q.reason,
      ...(claim !== undefined ? { claim } : {}),
    };
  });
  const reasons = trigger === "heartbeat"
    ? [`heartbeat (agent.heartbeat = ${formatDuration(hb)})`]
    : [...new Set(events.map((q) => q.reason))];
  reasons.push(...share.decided);
  if (trigger === "heartbeat" && events.length > 0) reasons.push(`${events.length} new event(s)`);
  const prompt = buildPrompt(at.agent.template, {
    agentProfile: s["agent.profile"],
    user: at.agent.user,
    about: s["agent.about"],
    reasons,
    cursor: at.cursor,
    events: promptEvents,
    feedback: [...feedback],
    rejections: at.rejections,
    posts: at.agent.posts,
    claimed: share.claimed ?? [],
    now: share.startedAt,
  });
  const { paths } = at.launch;
  const ctx: RunContext = {
    runId: id,
    ...(thread !== undefined ? { thread } : {}),
    prompt,
    maxTurns: s["agent.max_turns"],
    maxBudgetUsd: at.maxUsd,
    token: at.token,
    agentProfile: s["agent.profile"],
    dataDir: paths.dataDir,
    cwd: paths.runDir,
    configDir: paths.configDir,
    selfCommand: at.launch.selfCommand,
    settingsFile: at.launch.settingsFile,
  };
  const runtime = at.launch.harness.name;
  const budget = at.budget;
  const left = reportsCost(runtime)
    ? `run budget ${usd(at.maxUsd)} of ${usd(budget.usdLeft)} left`
    : `runs today ${budget.runsWithoutCostToday} of ${budget.limits.runsPerDay}`;
  const startLine = `run ${id} started (${trigger}${
    events.length > 0 ? `, ${events.length} event(s)` : ""
  }; ${left})`;
  const header = {
    id,
    trigger,
    events: events.map((q) => q.post.id),
    ...(feedback.length > 0 ? { feedback: feedback.map((f) => f.id) } : {}),
    ...(share.decided.length > 0 ? { decided: [...share.decided] } : {}),
    ...(thread !== undefined ? { thread } : {}),
    started_at: new Date(share.startedAt).toISOString(),
    harness: runtime,
    profile: s["agent.profile"],
    ...(limitsTurns(runtime) ? { max_turns: s["agent.max_turns"] } : {}),
    ...(reportsCost(runtime) ? { max_budget_usd: at.maxUsd } : {}),
  };
  return { ctx, header, startLine };
}

/**
 * The feed cursor given to a run: the stored one (moved by completed runs), or
 * before the first event it was given when none is stored yet.
 */
export function cursorOf(stored: string | undefined, events: readonly QueuedEvent[]): number {
  if (stored !== undefined) return Number(stored);
  const firstSeq = Math.min(...events.map((q) => q.post.seq));
  return Number.isFinite(firstSeq) ? firstSeq - 1 : 0;
}
