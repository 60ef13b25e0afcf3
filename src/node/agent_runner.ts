/**
 * The daemon's side of the heartbeat agent runner: builds the runner from the
 * settings, applies the access level (a validated deny-rules settings file
 * before every run), registers wats in Claude Code, posts the announce, mints a
 * per-run token for each run's MCP session, and feeds stored posts to the
 * runner. The runner itself (src/runner) knows none of this.
 *
 * @module
 */

import type { Settings } from "../config/schema.ts";
import type { DataPaths } from "../config/paths.ts";
import { ConfigError } from "../errors.ts";
import type { NodeStatus } from "../mcp/service.ts";
import { type AnnounceDraft, markAnnounced, planAnnounce } from "../runner/announce.ts";
import { claudeHarness } from "../runner/harnesses/claude.ts";
import { ensureClaudeRegistration, personEntry } from "../runner/harnesses/claude_registration.ts";
import { type RunnerLog, systemClock, systemTimers } from "../runner/ports.ts";
import { openThreads } from "../runner/open_threads.ts";
import { type PostReader, readHeartbeatTemplate } from "../runner/prompt.ts";
import { Runner } from "../runner/scheduler.ts";
import { runCommand, spawnProcessGroup } from "../runner/spawn.ts";
import { Transcripts } from "../runner/transcripts.ts";
import { type AccessPlan, planAccess } from "../safety/access.ts";
import { claudeSettings, listDataEntries, writeClaudeSettings } from "../safety/claude_settings.ts";
import type { Store } from "../store/store.ts";
import { RUNNER_STATE_FILE, type RunnerStateFile } from "../cli/agent.ts";
import type { EventSink } from "./events_out.ts";
import { bytesToHex } from "@noble/hashes/utils.js";
import type { ProfileKey } from "./profiles.ts";
import type { ReviewQueue } from "./review_queue.ts";

/** What the runner wiring needs from the daemon. */
export interface AgentRunnerDeps {
  settings: Settings;
  store: Store;
  paths: DataPaths;
  /** The command that runs wats itself. */
  self: string[];
  person: ProfileKey;
  agent: ProfileKey;
  review: ReviewQueue;
  events: EventSink;
  log: RunnerLog;
  home: string;
  cwd: string;
  /** Publishes the runner's announce as the agent (the one post wats makes for it). */
  publishAnnounce: (draft: AnnounceDraft) => Promise<string>;
  /** Posts as the MCP tools show them (the node's `NodeService`), for the wake prompt. */
  posts?: Pick<PostReader, "get" | "thread">;
}

/** The running runner, as the daemon sees it. */
export interface AgentRunner {
  runner: Runner;
  /** Lines for the banner: runtime, access level, budget. */
  bannerLines: string[];
  /** The run whose MCP session presents `token`, while that run lasts. */
  runOfToken(token: string): string | undefined;
  /** The runner's part of the MCP status. */
  status(): Pick<NodeStatus, "agent" | "budget">;
  stop(): Promise<void>;
}

/** Runtimes the runner can run today. */
const SUPPORTED: ReadonlySet<string> = new Set(["claude"]);

/** Builds and starts the runner. Throws a `ConfigError` the user can act on. */
export async function startAgentRunner(d: AgentRunnerDeps): Promise<AgentRunner> {
  const s = d.settings;
  const runtime = s["agent.runtime"];
  if (runtime === "codex") {
    throw new ConfigError(
      "agent.runtime",
      'agent.runtime = "codex" is not enabled in this version: Codex 0.171 runs its models with a ' +
        "JavaScript exec tool that cannot be switched off, so a run could not be limited to the " +
        'wats tools (docs/codex.md). Use "claude", or "none" to run the node without an agent.',
    );
  }
  if (!SUPPORTED.has(runtime)) {
    throw new ConfigError(
      "agent.runtime",
      `agent.runtime = "${runtime}" has no runner yet in this version; use "claude", ` +
        `or "none" to run the node without an agent (\`wats config set agent.runtime claude\`)`,
    );
  }
  const configDir = `${d.paths.agentDir}/run-config`;
  const plan = (entries?: string[]): AccessPlan =>
    planAccess({
      access: s["agent.access"],
      workdir: s["agent.workdir"],
      tools: s["agent.tools"],
      paths: d.paths,
      home: d.home,
      userCwd: d.cwd,
      ...(entries ? { dataEntries: entries } : {}),
    });
  const first = plan();
  if (first.problems.length > 0) {
    throw new ConfigError("agent.access", first.problems.join("\n"));
  }

  // ADR 0011: register wats in Claude Code when the entry is missing or
  // different, and say nothing otherwise.
  const selfCommand = { command: d.self[0], args: d.self.slice(1) };
  try {
    const r = await ensureClaudeRegistration({
      run: runCommand,
      entry: personEntry(selfCommand, d.person.name, d.paths.dataDir),
    });
    if (r.action !== "unchanged") {
      d.log.info(`registered wats in Claude Code (${r.action}, scope ${r.scope})`);
    }
  } catch (err) {
    d.log.warn(`could not register wats in Claude Code: ${(err as Error).message}`);
  }

  const announce = planAnnounce(s["agent.about"], s["agent.caps"], d.store);
  if (announce.warning) d.log.warn(announce.warning);
  if (announce.draft) {
    const id = await d.publishAnnounce(announce.draft);
    markAnnounced(d.store, announce.hash);
    d.log.info(`announced the agent (post ${id})`);
  }

  const limits = {
    usdPerDay: s["agent.max_usd_per_day"],
    usdPerMonth: s["agent.max_usd_per_month"],
    runsPerDay: s["agent.max_runs_per_day"],
  };
  Deno.mkdirSync(configDir, { recursive: true, mode: 0o700 });
  const state: RunnerStateFile = { runtime, limits, started_at: new Date().toISOString() };
  Deno.writeTextFileSync(`${d.paths.agentDir}/${RUNNER_STATE_FILE}`, JSON.stringify(state) + "\n");

  const tokens = new Map<string, string>();
  const runner = new Runner({
    clock: systemClock,
    timers: systemTimers,
    log: d.log,
    store: d.store,
    harness: claudeHarness(),
    spawn: spawnProcessGroup,
    transcripts: new Transcripts({ runsDir: d.paths.runsDir, runsIndex: d.paths.runsIndex }),
    settings: s,
    agentKey: d.agent.pubkey,
    user: d.person.name,
    localAuthors: () => d.store.localAuthors(),
    template: readHeartbeatTemplate(),
    paths: { dataDir: d.paths.dataDir, runDir: d.paths.runDir, configDir },
    selfCommand,
    // Before every run: list the data dir as it is now, generate the deny
    // rules, and validate them (Claude silently ignores an invalid file).
    prepare: async () => {
      const p = plan(await listDataEntries(d.paths.dataDir, d.paths.runDir));
      if (p.problems.length > 0) throw new ConfigError("agent.access", p.problems.join("; "));
      if (p.level === "inherit") return { access: { args: [], allowedTools: [] }, cwd: p.cwd };
      const settingsFile = `${configDir}/claude-settings.json`;
      await writeClaudeSettings(settingsFile, claudeSettings(p.denyRules));
      return {
        settingsFile,
        access: { args: p.claudeArgs, allowedTools: p.allowedTools },
        cwd: p.cwd,
      };
    },
    onRunStart: (runId) => {
      const token = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
      tokens.set(token, runId);
      d.events({ event: "run_started", run: runId });
      return token;
    },
    onRunEnd: (entry) => {
      for (const [t, id] of tokens) if (id === entry.id) tokens.delete(t);
      d.events({ event: "run_ended", ...entry, run: entry.id });
    },
    rejections: () => d.review.drainRejections(),
    posts: d.posts && {
      get: (id) => d.posts!.get(id),
      thread: (id, replies) => d.posts!.thread(id, replies),
      openThreads: () =>
        openThreads({
          // Newest first by the author's clock; each is read back for its thread.
          agentPosts: (limit) =>
            d.store.query({ authors: [d.agent.pubkey], limit }).flatMap((e) =>
              d.store.get(e.id) ?? []
            ),
          threadNewest: (root, limit) => d.store.threadNewest(root, limit),
        }, d.agent.pubkey),
    },
  });
  const unsubscribe = d.store.onInsert((posts) => runner.onPosts(posts));
  runner.start();

  const budgetLine = () => {
    const b = runner.status().budget;
    return `budget $${b.usdToday.toFixed(2)} of $${limits.usdPerDay} today, ` +
      `$${b.usdMonth.toFixed(2)} of $${limits.usdPerMonth} this month`;
  };
  return {
    runner,
    bannerLines: [`${runtime} as ${d.agent.name} · ${budgetLine()}`, ...first.bannerLines],
    runOfToken: (token) => tokens.get(token),
    status: () => {
      const b = runner.status().budget;
      return {
        agent: { runtime, profile: d.agent.name },
        budget: {
          usdToday: b.usdToday,
          usdPerDay: b.limits.usdPerDay,
          usdMonth: b.usdMonth,
          usdPerMonth: b.limits.usdPerMonth,
          runsToday: b.runsWithoutCostToday,
          runsPerDay: b.limits.runsPerDay,
        },
      };
    },
    stop: async () => {
      unsubscribe();
      await runner.stop();
      tokens.clear();
    },
  };
}
