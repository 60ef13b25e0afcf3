/**
 * The daemon's side of the heartbeat agent runner: builds the runner from the
 * settings, applies the access level (a validated deny-rules settings file
 * before every run), registers wats in Claude Code, posts the announce, mints a
 * per-run token for each run's MCP session, and feeds stored posts to the
 * runner. The runner itself (src/runner) knows none of this.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { npubEncode } from "nostr-tools/nip19";
import type { Settings } from "../config/schema.ts";
import type { AcpTables } from "../config/acp_tables.ts";
import { AcpAgent } from "../acp/client.ts";
import { makePolicy } from "../acp/policy.ts";
import { acpRuntimeHarness, LOCKABLE_AGENTS } from "../runner/harnesses/acp.ts";
import { usdOf } from "../money.ts";
import type { DataPaths } from "../config/paths.ts";
import { ConfigError } from "../errors.ts";
import type { NodeStatus } from "../contracts/views.ts";
import { reportsCost } from "../runner/budget.ts";
import { type AnnounceDraft, markAnnounced, planAnnounce } from "../runner/announce.ts";
import { claudeHarness } from "../runner/harnesses/claude.ts";
import { codexHarness } from "../runner/harnesses/codex.ts";
import { type CodexRuntime, prepareCodexRuntime } from "../runner/harnesses/codex_runtime.ts";
import { codexStateDir } from "../runner/harnesses/codex_lock.ts";
import { ensureClaudeRegistration, personEntry } from "../runner/harnesses/claude_registration.ts";
import { type RunnerLog, systemClock, systemTimers } from "../runner/ports.ts";
import { openThreads } from "../runner/open_threads.ts";
import { type PostReader, readHeartbeatTemplate } from "../runner/prompt.ts";
import { Runner } from "../runner/scheduler.ts";
import { runCommand, spawnProcessGroup } from "../runner/spawn.ts";
import { Transcripts } from "../runner/transcripts.ts";
import { processStartTime } from "../runner/orphan.ts";
import { listProcesses } from "../runner/process_watch.ts";
import {
  readRunnerState,
  type RunnerStateFile,
  stateFileRecorder,
  writeRunnerState,
} from "../runner/state_file.ts";
import { type AccessPlan, planAccess } from "../safety/access.ts";
import { agentKindOf, runnerSandboxed, sandboxLine } from "../safety/sandbox.ts";
import type { Sandboxer, Wrapper } from "../safety/sandboxer.ts";
import { claudeSettings, listDataEntries, writeClaudeSettings } from "../safety/claude_settings.ts";
import type { Store } from "../store/store.ts";
import type { EventSink } from "../contracts/node_events.ts";
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
  /** Posts as the MCP tools show them (the node's `NodeService`), for the wake prompt. */
  posts?: Pick<PostReader, "get" | "thread">;
  /** config.toml's `[harnesses.*]` (agent.runtime = acp runs on agent.harness). */
  acp?: AcpTables;
  /** The daemon's environment (an ACP agent starts from it). */
  env?: Record<string, string>;
  /** The OS sandbox of runs that can run commands (docs/decisions/sandbox.md). */
  sandbox?: Sandboxer;
}

/** The running runner, as the daemon sees it. */
export interface AgentRunner {
  runner: Runner;
  /**
   * Publishes the agent's announce when its about or caps changed, by `publish`
   * (signs and stores it as the agent; the one post wats makes for it; returns its id).
   */
  announce(publish: (draft: AnnounceDraft) => Promise<string>): Promise<void>;
  /** Lines for the banner: runtime, budget and pauses, access level. Call it after `ready()`. */
  bannerLines(): string[];
  /** The run whose MCP session presents `token`, while that run lasts. */
  runOfToken(token: string): string | undefined;
  /** The runner's part of the MCP status. */
  status(): Pick<NodeStatus, "agent" | "budget" | "pauses" | "skipped" | "runs">;
  /**
   * Starts the runner; the daemon calls it once mcp.sock serves. For Codex it first runs the
   * lock's self-check (docs/codex.md), which needs the socket, and throws when it fails.
   */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

/** Runtimes the runner can run today. */
const SUPPORTED: ReadonlySet<string> = new Set(["claude", "codex", "acp"]);

/**
 * Builds the runner, not started (`ready()` starts it). Throws a `ConfigError`
 * the user can act on.
 */
export async function startAgentRunner(d: AgentRunnerDeps): Promise<AgentRunner> {
  const s = d.settings;
  const runtime = s["agent.runtime"];
  if (!SUPPORTED.has(runtime)) {
    throw new ConfigError(
      "agent.runtime",
      `agent.runtime = "${runtime}" has no runner yet in this version; use "claude", ` +
        `or "none" to run the node without an agent (\`wats config set agent.runtime claude\`)`,
    );
  }
  const acpRuntime = runtime === "acp" ? acpRuntimeOf(d) : undefined;
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

  // Codex: the locked catalog and the feature probe, or a refusal with the reason.
  const codex: CodexRuntime | undefined = runtime === "codex"
    ? await prepareCodexRuntime({
      run: runCommand,
      dir: codexStateDir(d.paths.agentDir),
      settings: s,
    })
    : undefined;

  // docs/decisions/runner.md: register wats in Claude Code when the entry is missing or
  // different, and say nothing otherwise.
  const selfCommand = { command: d.self[0], args: d.self.slice(1) };
  if (runtime === "claude") {
    try {
      const r = await ensureClaudeRegistration({
        run: runCommand,
        entry: personEntry(selfCommand, d.person.name, d.paths.dataDir),
      });
      if (r.action !== "unchanged") {
        d.log.info(`registered wats in Claude Code (${r.action}, scope ${r.scope})`);
      }
    } catch (err) {
      d.log.warn(`could not register wats in Claude Code: ${errorMessage(err)}`);
    }
  }

  const limits = {
    usdPerDay: s["agent.max_usd_per_day"],
    usdPerMonth: s["agent.max_usd_per_month"],
    runsPerDay: s["agent.max_runs_per_day"],
  };
  Deno.mkdirSync(configDir, { recursive: true, mode: 0o700 });
  // The run a previous daemon left (ended at start by endPreviousRun): when
  // it was last seen alive dates its transcript's end.
  const left = readRunnerState(d.paths.agentDir)?.run;
  const state: RunnerStateFile = { runtime, limits, started_at: new Date().toISOString() };
  writeRunnerState(d.paths.agentDir, state);

  const tokens = new Map<string, string>();
  // Runs that can run commands start in the OS sandbox, probed before each run.
  const sandbox = d.sandbox !== undefined && d.sandbox.mode !== "off" &&
      runnerSandboxed(runtime, s["agent.access"])
    ? d.sandbox
    : undefined;
  let wrap: Wrapper | undefined;
  const spawn: typeof spawnProcessGroup = (req, o) => {
    const w = wrap?.(req.program, req.args);
    return spawnProcessGroup(w ? { ...req, program: w.program, args: w.args } : req, o);
  };
  const runner = new Runner({
    clock: systemClock,
    timers: systemTimers,
    log: d.log,
    store: d.store,
    harness: codex ? codexHarness(codex.options) : acpRuntime
      ? acpRuntimeHarness({
        ...acpRuntime,
        wrap: (program, args) => wrap?.(program, args) ?? { program, args: [...args] },
      })
      : claudeHarness(),
    threadPerRun: acpRuntime !== undefined,
    spawn,
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
      if (sandbox) {
        // The run's files (settings, MCP config) and the socket its `wats mcp` connects
        // to are the data dir's only parts it sees; its workspace is writable.
        const program = acpRuntime?.harness.command ?? runtime;
        wrap = await sandbox.prepare({
          what: "the heartbeat agent",
          cwd: p.cwd,
          env: { ...d.env, ...acpRuntime?.harness.env },
          kind: agentKindOf(program, acpRuntime?.harness.args ?? []),
          // Codex's locked model catalog lives in the data dir too (docs/codex.md).
          readable: [configDir, ...(codex ? [codexStateDir(d.paths.agentDir)] : [])],
          writable: [p.cwd, d.paths.socket],
        });
      }
      // Codex takes no deny rules: its sandbox stays read-only (docs/codex.md). An ACP
      // agent's own requests are judged by the runtime (src/runner/harnesses/acp.ts).
      if (codex || acpRuntime || p.level === "inherit") {
        return { access: { args: [], allowedTools: [] }, cwd: p.cwd };
      }
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
    recorder: stateFileRecorder(d.paths.agentDir),
    identify: processStartTime,
    listProcesses,
    lastSeen: (id) => left?.id === id ? Date.parse(left.ended_at ?? left.alive_at) : undefined,
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

  const budgetLine = () => {
    const b = runner.status().budget;
    if (!reportsCost(runtime)) {
      return `runs ${b.runsWithoutCostToday} of ${limits.runsPerDay} today ` +
        `(${runtime} reports no cost: runs count against agent.max_runs_per_day)`;
    }
    return `budget ${usdOf(b.usdToday, limits.usdPerDay)} today, ` +
      `${usdOf(b.usdMonth, limits.usdPerMonth)} this month`;
  };
  const pauses = () => {
    const st = runner.status();
    return {
      ...(st.state === "paused" && st.reason !== undefined && st.resumesAt !== undefined
        ? { budget: { reason: st.reason, until: st.resumesAt } }
        : {}),
      threads: st.pausedThreads,
    };
  };
  // After ready(): the runner knows its spend and its paused threads only once started.
  const bannerLines = () => {
    const now = pauses();
    return [
      `${
        acpRuntime ? `acp on [harnesses.${acpRuntime.harness.name}]` : runtime
      } as ${d.agent.name} · ${budgetLine()}`,
      ...(now.budget
        ? [
          `paused: ${now.budget.reason}; runs resume at ${
            new Date(now.budget.until).toISOString()
          }`,
        ]
        : []),
      ...now.threads.map((t) => `thread ${t.thread} paused: ${t.reason}`),
      ...first.bannerLines,
      ...(runnerSandboxed(runtime, s["agent.access"]) && d.sandbox
        ? [`runs: ${sandboxLine(d.sandbox.mode, d.sandbox.lastProblem)}`]
        : []),
    ];
  };
  return {
    runner,
    announce: async (publish) => {
      const announce = planAnnounce(s["agent.about"], s["agent.caps"], d.store);
      if (announce.warning) d.log.warn(announce.warning);
      if (announce.draft) {
        const id = await publish(announce.draft);
        markAnnounced(d.store, announce.hash);
        d.log.info(`announced the agent (post ${id})`);
      }
    },
    bannerLines,
    runOfToken: (token) => tokens.get(token),
    ready: async () => {
      if (acpRuntime) {
        if (first.cwd === d.paths.runDir) Deno.mkdirSync(first.cwd, { recursive: true });
        await checkLockable(acpRuntime.harness, first.cwd, acpRuntime.env, d.log);
      }
      if (codex) {
        // The self-check's `wats mcp` speaks as a runner session, like a run's.
        const token = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
        tokens.set(token, "codex-self-check");
        try {
          if (first.cwd === d.paths.runDir) Deno.mkdirSync(first.cwd, { recursive: true });
          const { result, ran } = await codex.selfCheck({
            spawn: spawnProcessGroup,
            ctx: {
              runId: "codex-self-check",
              prompt: "",
              maxTurns: s["agent.max_turns"],
              maxBudgetUsd: 0,
              token,
              agentProfile: d.agent.name,
              dataDir: d.paths.dataDir,
              cwd: first.cwd,
              configDir,
              selfCommand,
            },
          });
          d.log.info(
            `Codex lock ${ran ? "checked" : "already checked"} for ${codex.install.version}: ` +
              `the model sees only ${result.tools.join(", ")}`,
          );
        } finally {
          tokens.delete(token);
        }
      }
      runner.start();
    },
    status: () => {
      const st = runner.status();
      const b = st.budget;
      return {
        pauses: pauses(),
        skipped: st.skipped.map((k) => ({ ...k, author: npubEncode(k.author) })),
        runs: {
          ...(st.current
            ? { current: { id: st.current.id, startedAt: st.current.startedAt } }
            : {}),
          ...(st.lastRun
            ? {
              last: {
                id: st.lastRun.id,
                status: st.lastRun.status,
                startedAt: Date.parse(st.lastRun.started_at),
              },
            }
            : {}),
        },
        agent: { runtime, profile: d.agent.name },
        budget: {
          usdToday: b.usdToday,
          usdPerDay: b.limits.usdPerDay,
          usdMonth: b.usdMonth,
          usdPerMonth: b.limits.usdPerMonth,
          runsToday: b.runsWithoutCostToday,
          runsPerDay: b.limits.runsPerDay,
          ...(reportsCost(runtime) ? {} : { noCost: true }),
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

/**
 * `agent.runtime = "acp"`: the harness of `agent.harness` and how the access
 * level holds it (src/runner/harnesses/acp.ts). Throws a `ConfigError` the user
 * can act on.
 */
function acpRuntimeOf(d: AgentRunnerDeps) {
  const s = d.settings;
  const name = s["agent.harness"];
  const harnesses = d.acp?.harnesses ?? {};
  const harness = harnesses[name];
  if (harness === undefined) {
    const known = Object.keys(harnesses);
    throw new ConfigError(
      "agent.harness",
      name === ""
        ? `agent.runtime = "acp" needs agent.harness, the [harnesses.NAME] of config.toml the ` +
          `agent runs on (\`wats config set agent.harness NAME\`; harnesses: ${
            known.join(", ") || "none"
          }; docs/acp.md)`
        : `agent.harness = "${name}" names no [harnesses.${name}] in config.toml ` +
          `(harnesses: ${known.join(", ") || "none"}); add the table or fix the name`,
    );
  }
  const access = s["agent.access"];
  if (access === "inherit") {
    throw new ConfigError(
      "agent.access",
      `agent.access = "inherit" is not available with agent.runtime = "acp": an ACP agent's ` +
        `settings files are never loaded; use "locked" or "workspace" ` +
        "(`wats config set agent.access workspace`)",
    );
  }
  return {
    harness,
    env: d.env ?? {},
    agentDir: d.paths.agentDir,
    // `Edit(//x/**)` scopes are Claude Code settings rules; over ACP the policy scopes requests.
    tools: access === "locked"
      ? "locked" as const
      : s["agent.tools"].map((t) => t.replace(/\(.*$/, "")),
    policy: makePolicy(s["policy.allow"], s["policy.deny"], d.paths.dataDir, { home: d.home }),
  };
}

/**
 * Starts the harness once and reads its name: only agents that take Claude's
 * options can be held to the access level (the tools they get, the asking mode).
 */
async function checkLockable(
  harness: AcpTables["harnesses"][string],
  cwd: string,
  env: Record<string, string>,
  log: RunnerLog,
): Promise<void> {
  let agent: AcpAgent;
  try {
    agent = await AcpAgent.start(harness, cwd, env);
  } catch (err) {
    throw new ConfigError(
      "agent.harness",
      `agent.runtime = "acp" is refused: ${errorMessage(err)}`,
    );
  }
  const name = agent.agentName;
  await agent.stop();
  if (name === undefined || !LOCKABLE_AGENTS.has(name)) {
    throw new ConfigError(
      "agent.harness",
      `agent.runtime = "acp" is refused: [harnesses.${harness.name}] runs ${
        name ?? "an agent that gives no name"
      }, which wats cannot hold to agent.access (it does not take Claude's tool list, so it ` +
        `could read files without asking). Use a Claude ACP agent (${
          [...LOCKABLE_AGENTS][0]
        }), or agent.runtime = "codex" for Codex`,
    );
  }
  log.info(`the agent runs on [harnesses.${harness.name}] over ACP (${name})`);
}
