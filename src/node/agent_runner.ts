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

import { npubEncode } from "nostr-tools/nip19";
import type { Settings } from "../config/schema.ts";
import type { AcpTables } from "../config/acp_tables.ts";
import { usd, usdOf } from "../money.ts";
import type { DataPaths } from "../config/paths.ts";
import { ConfigError } from "../errors.ts";
import type { NodeStatus } from "../contracts/views.ts";
import { reportsCost } from "../runner/budget.ts";
import { type AnnounceDraft, markAnnounced, planAnnounce } from "../runner/announce.ts";
import { type RunnerLog, systemClock, systemTimers } from "../runner/ports.ts";
import { openThreads } from "../runner/open_threads.ts";
import { type PostReader, readHeartbeatTemplate } from "../runner/prompt.ts";
import { Runner } from "../runner/scheduler.ts";
import { retryViews } from "../runner/runner_status.ts";
import { spawnProcessGroup } from "../runner/spawn.ts";
import { Transcripts } from "../runner/transcripts.ts";
import { processStartTime } from "../runner/orphan.ts";
import { listProcesses } from "../runner/process_watch.ts";
import {
  readRunnerState,
  type RunnerStateFile,
  stateFileRecorder,
  writeRunnerState,
} from "../runner/state_file.ts";
import { runsSandboxed, type Runtime, type RuntimeDeps } from "../runner/runtimes/runtime.ts";
import { acpRuntime } from "../runner/runtimes/acp.ts";
import { claudeRuntime } from "../runner/runtimes/claude.ts";
import { codexRuntime } from "../runner/runtimes/codex.ts";
import { type AccessPlan, planAccess } from "../safety/access.ts";
import { agentKindOf, sandboxLine } from "../safety/sandbox.ts";
import type { Sandboxer, Wrapper } from "../safety/sandboxer.ts";
import { listDataEntries } from "../safety/claude_settings.ts";
import type { Store } from "../store/store.ts";
import type { EventSink } from "../contracts/node_events.ts";
import { bytesToHex } from "@noble/hashes/utils.js";
import type { ProfileKey } from "./profiles.ts";
import type { ReviewQueue } from "./review_queue.ts";
import { selfCommandOf } from "../runner/harness.ts";
import { pickEnv, runEnvAllowlist } from "../contracts/run_env.ts";
import type { NodeService } from "../mcp/service.ts";
import type { McpSocketServer } from "../mcp/socket_server.ts";
import { serveRunSocket } from "./run_socket.ts";

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

/** How many held asks `wats status` names; the rest are counted. */
const CLAIMED_SHOWN = 10;

/** The runtimes the runner can run today, by `agent.runtime`. */
export const RUNTIMES: ReadonlyMap<string, (d: RuntimeDeps) => Runtime> = new Map([
  ["claude", claudeRuntime],
  ["codex", codexRuntime],
  ["acp", acpRuntime],
]);

/**
 * Builds the runner, not started (`ready()` starts it). Throws a `ConfigError`
 * the user can act on.
 */
export async function startAgentRunner(d: AgentRunnerDeps): Promise<AgentRunner> {
  const s = d.settings;
  const makeRuntime = RUNTIMES.get(s["agent.runtime"]);
  if (makeRuntime === undefined) {
    throw new ConfigError(
      "agent.runtime",
      `agent.runtime = "${s["agent.runtime"]}" has no runner yet in this version; use "claude", ` +
        `or "none" to run the node without an agent (\`wats config set agent.runtime claude\`)`,
    );
  }
  const configDir = `${d.paths.agentDir}/run-config`;
  const selfCommand = selfCommandOf(d.self);
  // What a Claude or Codex run starts with: its runtime's allowlist, nothing else of the daemon's.
  const keyName = s["agent.runtime"] === "codex" ? s["agent.codex_env_key"] : "";
  const keyValue = keyName !== "" ? d.readEnv?.(keyName) : undefined;
  const runEnv = pickEnv(
    { ...d.env, ...d.agentEnv, ...(keyValue !== undefined ? { [keyName]: keyValue } : {}) },
    runEnvAllowlist(s["agent.runtime"], keyName !== "" ? [keyName] : []),
  );
  const runtime = makeRuntime({
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
  await runtime.prepare();

  const limits = {
    usdPerDay: s["agent.max_usd_per_day"],
    usdPerMonth: s["agent.max_usd_per_month"],
    runsPerDay: s["agent.max_runs_per_day"],
  };
  Deno.mkdirSync(configDir, { recursive: true, mode: 0o700 });
  // The run a previous daemon left (ended at start by endPreviousRun): when
  // it was last seen alive dates its transcript's end.
  const left = readRunnerState(d.paths.agentDir)?.run;
  const state: RunnerStateFile = {
    runtime: runtime.name,
    limits,
    started_at: new Date().toISOString(),
  };
  writeRunnerState(d.paths.agentDir, state);

  // A token is good on mcp.sock unless its run has a socket of its own (then only there).
  const tokens = new Map<string, { run: string; onMain: boolean }>();
  let service: NodeService | undefined;
  let runSocket: { run: string; server: McpSocketServer } | undefined;
  const closeRunSocket = async () => {
    const open = runSocket;
    runSocket = undefined;
    await open?.server.close();
  };
  // Runs that can run commands start in the OS sandbox, probed before each run.
  const sandboxed = runsSandboxed(runtime, s["agent.access"]);
  const sandbox = d.sandbox !== undefined && d.sandbox.mode !== "off" && sandboxed
    ? d.sandbox
    : undefined;
  let wrap: Wrapper | undefined;
  const spawn: typeof spawnProcessGroup = (req, o) => {
    const w = wrap?.(req.program, req.args);
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
    agent: {
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
    },
    launch: {
      harness: runtime.harness((program, args) =>
        wrap?.(program, args) ?? { program, args: [...args] }
      ),
      threadPerRun: runtime.threadPerRun,
      spawn,
      paths: { dataDir: d.paths.dataDir, runDir: d.paths.runDir, configDir },
      selfCommand,
      // Before every run: list the data dir as it is now, plan the access level,
      // probe the sandbox, and let the runtime apply the plan.
      prepare: async (ctx) => {
        // A socket left by a run that ended without its end being recorded.
        await closeRunSocket();
        const p = plan(await listDataEntries(d.paths.dataDir, d.paths.runDir));
        if (p.problems.length > 0) throw new ConfigError("agent.access", p.problems.join("; "));
        if (sandbox) {
          // The run's files (settings, MCP config) are the data dir's only parts it sees, and
          // its own socket where its `wats mcp` looks for mcp.sock; its workspace is writable.
          const agent = runtime.sandboxed();
          wrap = await sandbox.prepare({
            what: "the heartbeat agent",
            cwd: p.cwd,
            env: agent.env,
            kind: agentKindOf(agent.program, agent.args),
            readable: agent.readable,
            writable: [p.cwd],
            binds: [{ from: d.paths.runSocket, to: d.paths.socket }],
          });
          // Under sandbox.mode = auto a sandbox that cannot run leaves the run on mcp.sock.
          const held = ctx.token !== undefined && wrap(agent.program, agent.args).sandboxed;
          if (held) await openRunSocket(ctx.runId, ctx.token!);
        }
        return await runtime.access(p);
      },
      recorder: stateFileRecorder(d.paths.agentDir),
      identify: processStartTime,
      listProcesses,
    },
    hooks: {
      onRunStart: (runId) => {
        const token = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
        tokens.set(token, { run: runId, onMain: true });
        d.events({ event: "run_started", run: runId });
        return token;
      },
      onRunEnd: (entry) => {
        for (const [t, v] of tokens) if (v.run === entry.id) tokens.delete(t);
        const ended = () => d.events({ event: "run_ended", ...entry, run: entry.id });
        if (runSocket?.run !== entry.id) return ended();
        // Told once the socket is gone: whoever waits for the end finds no file left.
        closeRunSocket().catch((err) => d.log.warn(`cannot close the run's socket: ${err}`))
          .finally(ended);
      },
      onBudgetPause: (reason, until) => d.events({ event: "budget_paused", reason, until }),
    },
  });
  const unsubscribe = d.store.onInsert((posts) => runner.onPosts(posts));
  /** Serves the run on its own socket; its token is then refused on mcp.sock. */
  async function openRunSocket(runId: string, token: string): Promise<void> {
    if (service === undefined) {
      throw new Error("a sandboxed run started before the node serves: call ready(service) first");
    }
    const server = await serveRunSocket({
      path: d.paths.runSocket,
      service,
      agentProfile: d.agent.name,
      log: (level, msg, fields) => d.log[level](msg, fields ?? {}),
    }, { id: runId, token });
    runSocket = { run: runId, server };
    const t = tokens.get(token);
    if (t !== undefined) t.onMain = false;
  }

  const budgetLine = () => {
    const b = runner.status().budget;
    if (!reportsCost(runtime.name)) {
      return `runs ${b.runsWithoutCostToday} of ${limits.runsPerDay} today ` +
        `(${runtime.name} reports no cost: runs count against agent.max_runs_per_day)`;
    }
    return `budget ${usdOf(b.usdToday, limits.usdPerDay)} today, ` +
      `${usdOf(b.usdMonth, limits.usdPerMonth)} this month; ${reservedLine(b.inFlight)} ` +
      `(each run or call reserves ${usd(s["agent.reserve_usd"])}: agent.reserve_usd)`;
  };
  const pauses = () => {
    const st = runner.status();
    return {
      ...(st.state === "paused" && st.reason !== undefined && st.resumesAt !== undefined
        ? { budget: { reason: st.reason, until: st.resumesAt } }
        : {}),
      threads: st.pausedThreads,
      ...(st.capUntil !== undefined && st.capUntil > systemClock.now()
        ? { hourlyCap: { max: s["agent.max_runs_per_hour"], until: st.capUntil } }
        : {}),
      ...retryViews(st, systemClock.now()),
      ...(st.claimed.length > 0
        ? {
          claimed: {
            count: st.claimed.length,
            asks: st.claimed.slice(0, CLAIMED_SHOWN).map(({ ask, claim }) => ({
              ask,
              by: npubEncode(claim.by),
              ...(claim.lapsesAt !== undefined ? { lapsesAt: claim.lapsesAt } : {}),
            })),
          },
        }
        : {}),
    };
  };
  // After ready(): the runner knows its spend and its paused threads only once started.
  const bannerLines = () => {
    const now = pauses();
    return [
      `${runtime.label} as ${d.agent.name} · ${budgetLine()}`,
      ...(now.budget
        ? [
          `paused: ${now.budget.reason}; runs resume at ${
            new Date(now.budget.until).toISOString()
          }`,
        ]
        : []),
      ...now.threads.map((t) => `thread ${t.thread} paused: ${t.reason}`),
      ...first.bannerLines,
      ...(sandboxed && d.sandbox
        ? [`runs: ${sandboxLine(d.sandbox.mode, d.sandbox.lastProblem)}`]
        : []),
    ];
  };
  return {
    runner,
    sandboxed,
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
    runOfToken: (token) => {
      const t = tokens.get(token);
      return t?.onMain ? t.run : undefined;
    },
    ready: async (serving) => {
      service = serving;
      await runtime.ready({
        workdir: () => {
          if (first.cwd === d.paths.runDir) Deno.mkdirSync(first.cwd, { recursive: true });
          return first.cwd;
        },
        mintToken: (runId) => {
          const token = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
          tokens.set(token, { run: runId, onMain: true });
          return { token, revoke: () => void tokens.delete(token) };
        },
      });
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
        agent: { runtime: runtime.name, profile: d.agent.name },
        budget: {
          usdToday: b.usdToday,
          usdPerDay: b.limits.usdPerDay,
          usdMonth: b.usdMonth,
          usdPerMonth: b.limits.usdPerMonth,
          runsToday: b.runsWithoutCostToday,
          runsPerDay: b.limits.runsPerDay,
          ...(reportsCost(runtime.name) ? {} : { noCost: true }),
          reserved: {
            usd: b.inFlight.reservedUsd,
            count: b.inFlight.count,
            spentUsd: b.inFlight.spentUsd,
          },
        },
      };
    },
    stop: async () => {
      unsubscribe();
      await runner.stop();
      await closeRunSocket();
      tokens.clear();
    },
  };
}

/** `$0.80 reserved by 2 runs and calls in flight`: what the banner and status add to the spend. */
export function reservedLine(f: { reservedUsd: number; count: number }): string {
  return f.count === 0
    ? "nothing reserved"
    : `${usd(f.reservedUsd)} reserved by ${f.count} run(s) and coding agent call(s) in flight`;
}
