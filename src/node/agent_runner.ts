/**
 * The daemon's side of the heartbeat agent runner: composes the runner from the
 * settings and the `Runtime` of `agent.runtime` (src/runner/runtimes/: what
 * differs between Claude Code, Codex and ACP agents lives there, not in
 * branches here), plans the access level and probes the OS sandbox before
 * every run, posts the announce, mints a per-run token for each run's MCP
 * session, serves a sandboxed run's session on a socket made for that run
 * (run_socket.ts), starts each run from an allowlisted environment
 * (src/contracts/run_env.ts), and feeds stored posts to the runner. The runner
 * itself (src/runner/scheduler.ts) knows none of this.
 *
 * @module
 */

import type { Settings } from "../config/schema.ts";
import type { AcpTables } from "../config/acp_tables.ts";
import type { DataPaths } from "../config/paths.ts";
import { ConfigError } from "../errors.ts";
import type { NodeStatus } from "../contracts/views.ts";
import { type AnnounceDraft, markAnnounced, planAnnounce } from "../runner/announce.ts";
import { type RunnerLog, systemClock, systemTimers } from "../runner/ports.ts";
import { openThreads } from "../runner/open_threads.ts";
import { type PostReader, readHeartbeatTemplate } from "../runner/prompt.ts";
import { Runner } from "../runner/scheduler.ts";
import { spawnProcessGroup } from "../runner/spawn.ts";
import { Transcripts } from "../runner/transcripts.ts";
import { processStartTime } from "../runner/orphan.ts";
import { listProcesses } from "../runner/process_watch.ts";
import { readRunnerState, stateFileRecorder, writeRunnerState } from "../runner/state_file.ts";
import type { RunContext } from "../runner/harness.ts";
import {
  type RunAccess,
  runsSandboxed,
  type Runtime,
  type RuntimeFacts,
} from "../runner/runtimes/runtime.ts";
import { RUNTIMES } from "../runner/runtimes/registry.ts";
import { runtimeFacts } from "../runner/runtimes/facts.ts";
import { type AccessPlan, planAccess } from "../safety/access.ts";
import { sandboxLine } from "../safety/sandbox.ts";
import type { Sandboxer, Wrapper } from "../safety/sandboxer.ts";
import { listDataEntries } from "../safety/claude_settings.ts";
import type { Store } from "../store/store.ts";
import type { EventSink } from "../contracts/node_events.ts";
import type { ProfileKey } from "./profiles.ts";
import type { ReviewQueue } from "./review_queue.ts";
import { selfCommandOf } from "../runner/harness.ts";
import { pickEnv, runEnvAllowlist } from "../contracts/run_env.ts";
import type { NodeService } from "../mcp/service.ts";
import type { McpSocketServer } from "../mcp/socket_server.ts";
import { serveRunSocket } from "./run_socket.ts";
import { RunTokens } from "./run_tokens.ts";
import { runnerBannerLines, runnerStatus, type RunnerView } from "./runner_views.ts";

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
  /**
   * The launcher's variables a run may get (src/contracts/run_env.ts `anyRunEnv`): a Claude or
   * Codex run's environment is the allowlist of its runtime over these and `env`.
   */
  agentEnv?: Record<string, string>;
  /** Reads the one variable `agent.codex_env_key` names (the daemon's only grant for it). */
  readEnv?: (name: string) => string | undefined;
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
  /** Whether its runs start in the OS sandbox (the runtime's `shellless` levels do not). */
  readonly sandboxed: boolean;
  /** Lines for the banner: runtime, budget and pauses, access level. Call it after `ready()`. */
  bannerLines(): string[];
  /** The run whose MCP session presents `token`, while that run lasts. */
  runOfToken(token: string): string | undefined;
  /** The runner's part of the MCP status. */
  status(): Pick<NodeStatus, "agent" | "budget" | "pauses" | "skipped" | "runs">;
  /**
   * Starts the runner; the daemon calls it once mcp.sock serves, with the service a sandboxed
   * run's own socket serves. For Codex it first runs the lock's self-check (docs/codex.md),
   * which needs the socket, and throws when it fails.
   */
  ready(service?: NodeService): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Builds the runner, not started (`ready()` starts it). Throws a `ConfigError`
 * the user can act on.
 */
export async function startAgentRunner(d: AgentRunnerDeps): Promise<AgentRunner> {
  const s = d.settings;
  const { facts, runtime, runEnv, configDir, selfCommand } = makeRuntime(d);
  const first = accessPlan(d);
  if (first.problems.length > 0) {
    throw new ConfigError("agent.access", first.problems.join("\n"));
  }
  await runtime.prepare();

  const view: RunnerView = { facts, limits: limitsOf(s), settings: s, agent: d.agent.name };
  Deno.mkdirSync(configDir, { recursive: true, mode: 0o700 });
  // The run a previous daemon left (ended at start by endPreviousRun): when
  // it was last seen alive dates its transcript's end.
  const left = readRunnerState(d.paths.agentDir)?.run;
  writeRunnerState(d.paths.agentDir, {
    runtime: facts.name,
    limits: view.limits,
    started_at: new Date().toISOString(),
  });

  const tokens = new RunTokens();
  const sockets = new RunSockets(d, tokens);
  // Runs that can run commands start in the OS sandbox, probed before each run.
  const sandboxed = runsSandboxed(facts, s["agent.access"]);
  const sandbox = d.sandbox !== undefined && d.sandbox.mode !== "off" && sandboxed
    ? d.sandbox
    : undefined;
  const wrapping: { wrap?: Wrapper } = {};
  const spawn: typeof spawnProcessGroup = (req, o) => {
    const w = wrapping.wrap?.(req.program, req.args);
    const env = { ...runEnv, ...req.env };
    return spawnProcessGroup(
      w ? { ...req, env, program: w.program, args: w.args } : { ...req, env },
      o,
    );
  };
  const runner = new Runner({
    world: { clock: systemClock, timers: systemTimers, log: d.log },
    records: {
      store: d.store,
      transcripts: new Transcripts({ runsDir: d.paths.runsDir, runsIndex: d.paths.runsIndex }),
      lastSeen: (id) => left?.id === id ? Date.parse(left.ended_at ?? left.alive_at) : undefined,
    },
    settings: s,
    agent: agentOf(d),
    launch: {
      harness: runtime.harness((program, args) =>
        wrapping.wrap?.(program, args) ?? { program, args: [...args] }
      ),
      threadPerRun: facts.threadPerRun,
      spawn,
      paths: { dataDir: d.paths.dataDir, runDir: d.paths.runDir, configDir },
      selfCommand,
      prepare: runPreparer({ d, runtime, sandbox, sockets, wrapping }),
      recorder: stateFileRecorder(d.paths.agentDir),
      identify: processStartTime,
      listProcesses,
    },
    hooks: {
      onRunStart: (runId) => {
        d.events({ event: "run_started", run: runId });
        return tokens.mint(runId);
      },
      onRunEnd: (entry) => {
        tokens.revokeRun(entry.id);
        const ended = () => d.events({ event: "run_ended", ...entry, run: entry.id });
        if (!sockets.serves(entry.id)) return ended();
        // Told once the socket is gone: whoever waits for the end finds no file left.
        sockets.close().catch((err) => d.log.warn(`cannot close the run's socket: ${err}`))
          .finally(ended);
      },
      onBudgetPause: (reason, until) => d.events({ event: "budget_paused", reason, until }),
    },
  });
  const unsubscribe = d.store.onInsert((posts) => runner.onPosts(posts));
  return {
    runner,
    sandboxed,
    announce: (publish) => announceAgent(d, publish),
    // After ready(): the runner knows its spend and its paused threads only once started.
    bannerLines: () => [
      ...runnerBannerLines({ ...view, label: runtime.label }, runner.status(), systemClock.now()),
      ...first.bannerLines,
      ...(sandboxed && d.sandbox
        ? [`runs: ${sandboxLine(d.sandbox.mode, d.sandbox.lastProblem)}`]
        : []),
    ],
    runOfToken: (token) => tokens.runOnMain(token),
    ready: async (serving) => {
      sockets.service = serving;
      await runtime.ready({
        workdir: () => {
          if (first.cwd === d.paths.runDir) Deno.mkdirSync(first.cwd, { recursive: true });
          return first.cwd;
        },
        mintToken: (runId) => {
          const token = tokens.mint(runId);
          return { token, revoke: () => tokens.revoke(token) };
        },
      });
      runner.start();
    },
    status: () => runnerStatus(view, runner.status(), systemClock.now()),
    stop: async () => {
      unsubscribe();
      await runner.stop();
      await sockets.close();
      tokens.clear();
    },
  };
}

/** The runtime of `agent.runtime`, made (its settings checked), and what its runs start from. */
function makeRuntime(d: AgentRunnerDeps) {
  const s = d.settings;
  const facts = runtimeFacts(s["agent.runtime"]);
  if (facts === undefined) {
    throw new ConfigError(
      "agent.runtime",
      `agent.runtime = "${s["agent.runtime"]}" has no runner yet in this version; use "claude", ` +
        `or "none" to run the node without an agent (\`wats config set agent.runtime claude\`)`,
    );
  }
  const configDir = `${d.paths.agentDir}/run-config`;
  const selfCommand = selfCommandOf(d.self);
  const runEnv = runEnvOf(facts, d);
  const runtime = RUNTIMES[facts.name]({
    settings: s,
    paths: d.paths,
    configDir,
    selfCommand,
    person: d.person.name,
    agent: d.agent.name,
    home: d.home,
    cwd: d.cwd,
    env: d.env ?? {},
    runEnv,
    ...(d.acp ? { acp: d.acp } : {}),
    log: d.log,
  });
  return { facts, runtime, runEnv, configDir, selfCommand };
}

/**
 * What a Claude or Codex run starts with: its runtime's allowlist over the daemon's variables,
 * and the one its key setting names, nothing else of the daemon's.
 */
function runEnvOf(facts: RuntimeFacts, d: AgentRunnerDeps): Record<string, string> {
  const keyName = facts.keySetting ? d.settings[facts.keySetting] : "";
  const keyValue = keyName !== "" ? d.readEnv?.(keyName) : undefined;
  return pickEnv(
    { ...d.env, ...d.agentEnv, ...(keyValue !== undefined ? { [keyName]: keyValue } : {}) },
    runEnvAllowlist(facts.env, keyName !== "" ? [keyName] : []),
  );
}

/** The access plan of the settings, given the data dir's entries as they are now. */
function accessPlan(d: AgentRunnerDeps, entries?: string[]): AccessPlan {
  const s = d.settings;
  return planAccess({
    access: s["agent.access"],
    workdir: s["agent.workdir"],
    tools: s["agent.tools"],
    paths: d.paths,
    home: d.home,
    userCwd: d.cwd,
    ...(entries ? { dataEntries: entries } : {}),
  });
}

function limitsOf(s: Settings): RunnerView["limits"] {
  return {
    usdPerDay: s["agent.max_usd_per_day"],
    usdPerMonth: s["agent.max_usd_per_month"],
    runsPerDay: s["agent.max_runs_per_day"],
  };
}

/** What the runner knows of the agent: its key, its posts, the wake prompt's parts. */
function agentOf(d: AgentRunnerDeps): ConstructorParameters<typeof Runner>[0]["agent"] {
  return {
    agentKey: d.agent.pubkey,
    user: d.person.name,
    localAuthors: () => d.store.localAuthors(),
    template: readHeartbeatTemplate(),
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
  };
}

/** Publishes the agent's announce when its about or caps changed. */
async function announceAgent(
  d: AgentRunnerDeps,
  publish: (draft: AnnounceDraft) => Promise<string>,
): Promise<void> {
  const announce = planAnnounce(d.settings["agent.about"], d.settings["agent.caps"], d.store);
  if (announce.warning) d.log.warn(announce.warning);
  if (announce.draft) {
    const id = await publish(announce.draft);
    markAnnounced(d.store, announce.hash);
    d.log.info(`announced the agent (post ${id})`);
  }
}

/**
 * The run's own socket, while a sandboxed run lasts: its token is then refused on mcp.sock
 * (docs/decisions/run_socket.md).
 */
class RunSockets {
  /** What a run's socket serves; set by `ready()`. */
  service: NodeService | undefined;
  readonly #node: Pick<AgentRunnerDeps, "paths" | "agent" | "log">;
  readonly #tokens: RunTokens;
  #open: { run: string; server: McpSocketServer } | undefined;

  constructor(d: Pick<AgentRunnerDeps, "paths" | "agent" | "log">, tokens: RunTokens) {
    this.#node = d;
    this.#tokens = tokens;
  }

  /** Whether `runId` has its socket open. */
  serves(runId: string): boolean {
    return this.#open?.run === runId;
  }

  /** Serves `runId` on its own socket; its token is then refused on mcp.sock. */
  async open(runId: string, token: string): Promise<void> {
    if (this.service === undefined) {
      throw new Error("a sandboxed run started before the node serves: call ready(service) first");
    }
    const d = this.#node;
    const server = await serveRunSocket({
      path: d.paths.runSocket,
      service: this.service,
      agentProfile: d.agent.name,
      log: (level, msg, fields) => d.log[level](msg, fields ?? {}),
    }, { id: runId, token });
    this.#open = { run: runId, server };
    this.#tokens.moveOffMain(token);
  }

  async close(): Promise<void> {
    const open = this.#open;
    this.#open = undefined;
    await open?.server.close();
  }
}

/** What the runner's `prepare` hook is made from. */
interface PreparerParts {
  d: AgentRunnerDeps;
  runtime: Runtime;
  /** Unset: the runs start unsandboxed. */
  sandbox: Sandboxer | undefined;
  sockets: RunSockets;
  /** Where the run's sandbox wrapper goes, for the spawns of the run. */
  wrapping: { wrap?: Wrapper };
}

/**
 * Before every run: list the data dir as it is now, plan the access level, probe the sandbox,
 * and let the runtime apply the plan.
 */
function runPreparer(p: PreparerParts): (ctx: RunContext) => Promise<RunAccess> {
  const { d, runtime, sandbox, sockets, wrapping } = p;
  return async (ctx) => {
    // A socket left by a run that ended without its end being recorded.
    await sockets.close();
    const plan = accessPlan(d, await listDataEntries(d.paths.dataDir, d.paths.runDir));
    if (plan.problems.length > 0) {
      throw new ConfigError("agent.access", plan.problems.join("; "));
    }
    if (sandbox) {
      // The run's files (settings, MCP config) are the data dir's only parts it sees, and
      // its own socket where its `wats mcp` looks for mcp.sock; its workspace is writable.
      const agent = runtime.sandboxed();
      const wrap = await sandbox.prepare({
        what: "the heartbeat agent",
        cwd: plan.cwd,
        env: agent.env,
        ...(agent.agent ? { agent: agent.agent } : {}),
        readable: agent.readable,
        writable: [plan.cwd],
        binds: [{ from: d.paths.runSocket, to: d.paths.socket }],
      });
      wrapping.wrap = wrap;
      // Under sandbox.mode = auto a sandbox that cannot run leaves the run on mcp.sock.
      const held = ctx.token !== undefined && wrap(agent.program, agent.args).sandboxed;
      if (held) await sockets.open(ctx.runId, ctx.token!);
    }
    return await runtime.access(plan);
  };
}
