/**
 * The node: given the data directory's lock and its settings, it opens the
 * store, derives the profiles, runs the agent runner when agent.runtime is set,
 * serves MCP on mcp.sock and syncs with other nodes, until its signal aborts,
 * a foreground `wats` takes over (a node started by `wats mcp` only), or such a
 * node has had no MCP session for a while. This file only composes the parts,
 * each from the ones built before it: store → runner (not started) → ACP layer
 * (the runner is its host) → service → socket → runner started → network. The
 * command around it (`wats`, `wats node`) is src/cli/daemon.ts.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { npubEncode } from "nostr-tools/nip19";
import type { DataPaths } from "../config/paths.ts";
import type { AcpTables } from "../config/acp_tables.ts";
import type { NotifyTarget } from "../config/notify_tables.ts";
import type { Settings } from "../config/schema.ts";
import { formatDuration } from "../duration.ts";
import { WatsError } from "../errors.ts";
import type { EventSink, NodeEvent } from "../contracts/node_events.ts";
import { acpLayerFor } from "../acp/setup.ts";
import type { CallEvent } from "../acp/calls.ts";
import { controlHandler, nodeControl } from "./control.ts";
import { NodeNetwork } from "./node_network.ts";
import { ALL_TOOLS } from "../mcp/tools.ts";
import { loadOrCreateNodeKey } from "../identity/node_key.ts";
import { log } from "../log.ts";
import type { NodeStatus, PendingDraft } from "../contracts/views.ts";
import { serveMcpSocket } from "../mcp/socket_server.ts";
import { startMcpHttp } from "../mcp/http_server.ts";
import type { McpLog } from "../mcp/server.ts";
import { endPreviousRun } from "../runner/orphan.ts";
import { systemTimers } from "../runner/ports.ts";
import { runCommand } from "../runner/spawn.ts";
import { readSpend } from "../runner/spend_figures.ts";
import { safetyNotices } from "../safety/notices.ts";
import { requiredRefusal, sandboxLine } from "../safety/sandbox.ts";
import { Sandboxer } from "../safety/sandboxer.ts";
import { modelSocketPath, networkRefusal, SandboxNetwork } from "../safety/net_gate.ts";
import { nodeModelHosts } from "../safety/net_policy.ts";
import {
  AGENTS,
  harnessAgent,
  nodeAgents,
  nodeHarnesses,
  undeclaredAgentNotice,
} from "../runner/runtimes/agents.ts";
import { Store } from "../store/store.ts";
import { VERSION } from "../version.ts";
import { startAgentRunner } from "./agent_runner.ts";
import { budgetOnlyHost } from "./budget_host.ts";
import { agentState, mayChangeState, startAgentPresence } from "./agent_presence.ts";
import { KnownAgents } from "./presence.ts";
import { AskStates } from "./ask_states.ts";
import { watchAsks } from "./ask_watch.ts";
import { noticeOf } from "./notices.ts";
import { droppedPathLine, renderBanner } from "./banner.ts";
import { acpLines } from "../config/acp_tables.ts";
import { EventHub } from "./event_hub.ts";
import { type HaltRecord, HaltState } from "./halt.ts";
import { MCP_NODE_IDLE_MS, watchIdle } from "./idle.ts";
import type { DaemonLock } from "./lock.ts";
import { nodeId } from "./node_id.ts";
import { PostViews } from "./post_views.ts";
import { LocalNodeService } from "./node_service.ts";
import { desktopNotifier, heldEvent, heldNotifier } from "./notify.ts";
import { startNotifyTargets } from "./notify_targets.ts";
import { Profiles, shownProfileName } from "./profiles.ts";
import { ReviewQueue } from "./review_queue.ts";
import { removeStaleRunSocket } from "./run_socket.ts";

/** What the node needs from the command that runs it. */
export interface NodeOptions {
  /** The data directory's lock, already taken; the node releases it when it stops. */
  lock: DaemonLock;
  paths: DataPaths;
  settings: Settings;
  /** config.toml's `[harnesses.*]` and `[checkouts.*]` (docs/acp.md). */
  acp: AcpTables;
  /** config.toml's `[notify.NAME]` targets (docs/notifications.md). */
  notify?: Record<string, NotifyTarget>;
  /** Where events go (`wats node`: JSON lines on stdout). */
  events: EventSink;
  /** Shows the start-up banner to the person (the CLI: stderr); unset, it is not shown. */
  banner?: (text: string) => void;
  /** The filtered environment, the OS user and OS, for safety notices and notifications. */
  env: Record<string, string>;
  /** The launcher's variables a heartbeat run may get (src/contracts/run_env.ts). */
  agentEnv?: Record<string, string>;
  /** PATH entries the launcher left out (src/cli/context.ts `trustedPath`), said in the banner. */
  droppedPath?: readonly string[];
  user: string;
  os: string;
  /** The command that runs this program again (the runner's MCP entry). */
  self: string[];
  cwd: string;
  /** Started in the background by `wats mcp`: a foreground `wats` may take over. */
  startedByMcp: boolean;
  /** Posts no presence (`wats try`'s throwaway node: it runs no agent and ends soon). */
  noPresence?: boolean;
  /** A node started by `wats mcp` stops after this long with no MCP session (default {@linkcode MCP_NODE_IDLE_MS}). */
  idleStopMs?: number;
  /** Aborts on SIGINT/SIGTERM. */
  signal: AbortSignal;
}

/** Why a node stopped when no signal stopped it. */
const TAKEOVER = "takeover";
const IDLE = "idle";

/**
 * Runs the node until it is told to stop; resolves with the exit code (0). Each part goes on one
 * stack as it is built (`keep`); leaving this function, however it leaves, stops them in reverse
 * order, the data directory's lock last. A new part is one `keep(...)` line where it is built.
 */
export async function runNode(opts: NodeOptions): Promise<number> {
  const { paths, settings } = opts;
  const logger = log("node");
  await using parts = new AsyncDisposableStack();
  /** Puts `part` on the stack; a stop that fails is logged, and the others still stop. */
  const keep = <T>(part: T, stop: (part: T) => unknown): T => {
    parts.defer(async () => {
      try {
        await stop(part);
      } catch (err) {
        logger.warn("cleanup failed: {error}", { error: errorMessage(err) });
      }
    });
    return part;
  };
  keep(opts.lock, (l) => l.release());
  // Every way to stop (signal, takeover, idle) ends the node; the first reason is kept.
  const stop = new AbortController();
  const stopped = AbortSignal.any([opts.signal, stop.signal]);

  // Before anything else runs: a run the previous daemon left must not live on.
  await endPreviousRun(paths.agentDir, log("runner"));
  // Nor its socket: a run's socket lives only while that run does.
  await removeStaleRunSocket(paths.runSocket);
  const secret = await loadOrCreateNodeKey(paths.nodeKey);
  // Local posts are queued for the same relays the network connects to.
  const store = keep(Store.open(paths.store, { relays: settings.infra }), (s) => s.close());
  const profiles = new Profiles(secret, store);
  const person = profiles.key(settings.profile);
  const agent = profiles.key(settings["agent.profile"]);
  const id = nodeId(secret);
  // Notifications away from the desk: fed by the event stream, never awaited by it.
  const targets = keep(notifyTargets(opts.notify, id), (t) => t.stop());
  // Every part emits into the hub, which also feeds `wats ui`'s watch and the presence.
  const hub = new EventHub();
  const events: EventSink = hub.sink((e) => {
    opts.events(e);
    targets.onEvent(e);
  });
  Deno.mkdirSync(paths.agentDir, { recursive: true, mode: 0o700 });
  const review = new ReviewQueue({
    dir: paths.pendingDir,
    rejectionsFile: `${paths.agentDir}/rejections.jsonl`,
    ttlMs: settings["agent.review_ttl"],
    now: Date.now,
    warn: (m) => logger.warn(m),
  });

  // Safety detection: compare config.toml's values with the acknowledged ones
  // at start, and again at every status call (no live reload).
  const notices = () => safetyNotices(paths, opts.env, opts.user);
  const startNotices = await notices();
  for (const n of startNotices) logger.warn(n);

  const knownAgents = keep(
    new KnownAgents({
      store,
      now: Date.now,
      everyMs: settings["agent.presence_every"],
      ignoreLocal: settings["agent.ignore_local"],
    }),
    (k) => k.close(),
  );
  const halt = new HaltState({
    meta: store,
    accepted: [...settings["halt.accept"], person.pubkey],
    agentKey: agent.pubkey,
    warn: (message) =>
      logger.warn(
        `the halt record cannot be read, so agent runs stay halted until \`wats resume\`: ${message}`,
      ),
  });
  keep(store.onInsert((posts) => announceHalt(halt.onPosts(posts), events)), (off) => off());
  const notifier = settings["agent.notify"]
    ? desktopNotifier({ os: opts.os, run: runCommand, warn: (m) => logger.warn(m) })
    : undefined;
  // Drafts, coding agents' requests and calls in doubt alike.
  const desktop = notifier ? heldNotifier(notifier) : undefined;
  const onHeld = (d: PendingDraft) => {
    desktop?.(d);
    events(heldEvent(d));
  };
  // What became of asks (docs/asks.md): computed where it is read, nothing posted for it.
  const askStates = new AskStates({
    store,
    knownAgents,
    review,
    relays: settings.infra,
    claimTtlMs: settings["agent.claim_ttl"],
    askTimeoutMs: settings["agent.ask_timeout"],
    allow: new Set(settings["agent.allow"]),
    now: Date.now,
    // The network is built below and lives as long as this; before its start, none refused.
    refusals: (id) => network.refusals(id),
  });
  keep(
    watchAsks({
      store,
      stateOf: (ask) => askStates.of(ask),
      timeoutMs: settings["agent.ask_timeout"],
      clock: { now: Date.now },
      timers: systemTimers,
      events: (e) => {
        events(e);
        const n = notifier && e.event === "ask_no_taker"
          ? noticeOf(e, { node: id, at: Date.now(), id: e.ask })
          : undefined;
        if (n) notifier!.notify(n.title, n.text);
      },
    }),
    (w) => w.stop(),
  );
  // Built now, so status holds it from the start; started last (below).
  const network = keep(
    new NodeNetwork({
      settings: {
        infra: settings.infra,
        listen: settings.listen,
        maxSkewMs: settings["net.max_skew"],
        maxConnections: settings["net.max_connections"],
        auth: settings["net.auth"],
        members: settings["net.members"],
        maxConnectionsPerIp: settings["net.max_connections_per_ip"],
        maxMessagesPerIp: settings["net.max_messages_per_ip"],
        trustForwarded: settings["net.trust_forwarded"],
      },
      authKey: person,
      store,
      events,
      log: log("net"),
    }, {
      caps: settings["agent.caps"],
      openAsks: settings["agent.open_asks"],
      haltAccept: settings["halt.accept"],
    }),
    (n) => n[Symbol.asyncDispose](),
  );
  // What the sandboxes reach: the model API only, through one proxy (src/safety/net_gate.ts).
  const sandboxNet = keep(
    new SandboxNetwork({
      network: settings["sandbox.network"],
      mode: settings["sandbox.mode"],
      socket: modelSocketPath(paths.agentDir),
      hosts: nodeModelHosts(nodeAgents(settings, opts.acp, opts.env)),
      self: opts.self,
      os: opts.os,
      onRefused: (target, reason) =>
        log("sandbox").warn("model-only network refused {target}: {reason}", { target, reason }),
    }),
    (n) => n.close(),
  );
  // The OS sandbox of agents that run commands (docs/decisions/sandbox.md).
  const sandbox = new Sandboxer({
    agents: AGENTS,
    network: sandboxNet,
    mode: settings["sandbox.mode"],
    hide: settings["sandbox.hide"],
    dataDir: paths.dataDir,
    home: opts.env.HOME ?? "",
    os: opts.os,
    self: opts.self,
  });
  // The runner, built but not started: the ACP layer's host (src/contracts/agent_host.ts).
  // It reads posts from the store as the MCP tools show them; it starts once the socket serves.
  const agentRunner = settings["agent.runtime"] === "none" ? undefined : keep(
    await startAgentRunner({
      settings,
      store,
      paths,
      self: opts.self,
      person,
      agent,
      review,
      events,
      log: log("runner"),
      home: opts.env.HOME ?? "",
      cwd: opts.cwd,
      posts: new PostViews(store),
      acp: opts.acp,
      env: opts.env,
      agentEnv: opts.agentEnv ?? {},
      // Only the variable agent.codex_env_key names is granted (docs/permissions.md).
      readEnv: (name) => Deno.env.get(name),
      sandbox,
    }),
    (r) => r.stop(),
  );
  if (agentRunner) halt.attach(agentRunner.runner);
  // Without a runner the budget still holds every coding agent call (issue 30).
  const harnesses = Object.values(opts.acp.harnesses).some((h) => h.enabled);
  const budgetOnly = agentRunner || !harnesses
    ? undefined
    : keep(budgetOnlyHost(settings), (b) => b.close());
  // Coding agents over ACP (docs/acp.md): one MCP tool per enabled harness.
  const acpLayer = acpLayerFor({
    acp: opts.acp,
    settings,
    paths,
    env: opts.env,
    sandbox: settings["sandbox.mode"] === "off" ? undefined : sandbox,
    agentOf: harnessAgent,
    reserved: ALL_TOOLS.map((t) => t.name),
    onEvent: (e) => events(acpEvent(e)),
    host: agentRunner?.runner ?? budgetOnly?.host,
    onSweep: (r) => events({ event: "acp_sweep", ...r }),
    // agent.review on: a gated request waits in the review queue for a person.
    park: settings["agent.review"]
      ? (ask) => {
        const held = review.hold({
          kind: "permission",
          text: `${ask.harness}/${ask.kind}: ${ask.title ?? ask.reason}`,
          profile: agent.name,
          createdAt: Math.floor(Date.now() / 1000),
          permission: ask,
        });
        onHeld(held);
        return held.id;
      }
      : undefined,
    held: () => review.read().flatMap((d) => d.permission ?? []),
  });
  const codingAgents = acpLayer && keep(acpLayer, (a) => a.close());
  // A halt stops the coding agents too: no call starts, the running ones end.
  if (codingAgents) halt.attach(codingAgents.layer);
  await codingAgents?.check();
  if (codingAgents || agentRunner?.sandboxed) {
    startNotices.push(...await sandboxNotices(sandbox, sandboxNet));
    // A harness's sandbox has only the login and network of the agent it declares.
    startNotices.push(
      ...nodeHarnesses(settings, opts.acp).flatMap((h) => undeclaredAgentNotice(h) ?? []),
    );
  }
  const service = new LocalNodeService({
    codingAgents: codingAgents?.layer,
    store,
    profiles,
    nodeId: id,
    dataDir: paths.dataDir,
    defaultProfile: person.name,
    agentProfile: agent.name,
    relays: settings.infra,
    maxSkewMs: settings["net.max_skew"],
    events,
    review,
    reviewOn: settings["agent.review"],
    onHeld,
    now: Date.now,
    runOfToken: (token) => agentRunner?.runOfToken(token),
    runnerStatus: () => {
      const h = halt.current();
      return {
        agent: null,
        budget: budgetOnly?.view() ?? null,
        ...agentRunner?.status(),
        halted: h ? haltedView(store, h) : null,
      };
    },
    safetyNotices: notices,
    networkStatus: () => network.status(),
    knownAgents,
    askStates,
    fetchOnce: (filter) => network.fetchOnce(filter),
    sandboxStatus: () =>
      sandboxStatusOf({
        sandbox,
        sandboxNet,
        runner: agentRunner?.sandboxed ? settings["agent.runtime"] : undefined,
        acp: opts.acp,
      }),
  });

  await agentRunner?.announce(async (draft) => (await service.publishAs(agent.name, draft)).id);
  const presence = opts.noPresence ? undefined : keep(
    startAgentPresence({
      about: settings["agent.about"],
      caps: settings["agent.caps"],
      everyMs: settings["agent.presence_every"],
      state: () => agentState(agentRunner, halt),
      publish: (draft) => service.publishPresence(agent.name, draft),
      log: log("runner"),
    }),
    (p) => p.stop(),
  );
  // Posted again at once when the agent's state may have changed; a task later, so the runner
  // has recorded the run's spend (src/node/agent_presence.ts).
  if (presence) {
    keep(
      hub.watch((e) => mayChangeState(e) && setTimeout(() => void presence.check(), 0)),
      (off) => off(),
    );
  }
  if (opts.droppedPath && opts.droppedPath.length > 0) {
    startNotices.push(droppedPathLine(opts.droppedPath));
  }
  const haltNow = halt.current();
  if (haltNow) {
    startNotices.push(`agent halted by ${npubEncode(haltNow.by)}: run \`wats resume\` to end it`);
  }
  const control = nodeControl({
    ...(codingAgents ? { codingAgents } : {}),
    halt,
    postHalt: async (reason) => {
      const out = await service.publishAs(person.name, { kind: "halt", text: reason });
      return `halt ${out.id} posted as ${person.name}`;
    },
    startedByMcp: opts.startedByMcp,
    takeOver: () => stop.abort(TAKEOVER),
    events,
    log: logger,
    spend: (now) => readSpend(paths, now),
  });
  const idleStopMs = opts.idleStopMs ?? MCP_NODE_IDLE_MS;
  const mcpLog: McpLog = (level, msg, fields) =>
    logger[level === "warn" ? "warn" : level](msg, fields ?? {});
  const idle = opts.startedByMcp
    ? keep(watchIdle(idleStopMs, () => stop.abort(IDLE)), (i) => i.stop())
    : undefined;
  keep(
    await serveMcpSocket({
      path: paths.socket,
      service,
      control: controlHandler(control),
      watch: (send) => hub.watch(send),
      onSessions: (open) => idle?.sessions(open, "socket"),
      log: mcpLog,
    }),
    (mcp) => mcp.close(),
  );
  // MCP over HTTP when mcp.listen names an address (docs/mcp.md): the same service, by token.
  // Its sessions hold a node `wats mcp` started as the socket's do (src/node/idle.ts).
  const mcpHttp = startMcpHttp({
    settings,
    tokensFile: paths.mcpTokens,
    service,
    log: mcpLog,
    ...(idle ? { idle } : {}),
  });
  if (mcpHttp) keep(mcpHttp, (h) => h.close());
  // The runner starts once the socket serves: Codex's self-check needs it.
  await agentRunner?.ready(service);
  codingAgents?.start();
  await network.start();
  opts.banner?.(renderBanner({
    version: VERSION,
    nodeId: id,
    profiles: [
      { role: "person", name: person.name, npub: person.npub },
      { role: "agent", name: agent.name, npub: agent.npub },
    ],
    dataDir: paths.dataDir,
    socket: paths.socket,
    agent: agentRunner
      ? agentRunner.bannerLines().join("\n           ")
      : opts.startedByMcp
      ? "no agent (started by wats mcp)"
      : "no agent",
    relays: settings.infra,
    listen: settings.listen,
    notices: startNotices,
    acp: acpLines(opts.acp),
  }));
  events({
    event: "started",
    node: id,
    dataDir: paths.dataDir,
    socket: paths.socket,
    profiles: { [person.name]: person.npub, [agent.name]: agent.npub },
    pid: Deno.pid,
  });

  await abortPromise(stopped);
  const reason = String(stopped.reason ?? "signal");
  if (reason === TAKEOVER) logger.info("stopping: a foreground wats takes over");
  else if (reason === IDLE) {
    logger.info("stopping: no MCP session for {idle}", { idle: formatDuration(idleStopMs) });
  } else logger.info("stopping on {signal}", { signal: reason });
  // The run first, while its MCP session still has a node: a runner session
  // that loses the node ends its run itself, which would not read as stopped.
  await agentRunner?.stop();
  events({ event: "stopped", reason });
  return 0;
}

/** Notification targets (docs/notifications.md) with the real world's fetch and timers. */
function notifyTargets(targets: NodeOptions["notify"], node: string) {
  const logger = log("node");
  return startNotifyTargets({
    targets: targets ?? {},
    readEnv: (name) => Deno.env.get(name),
    node,
    world: {
      fetch: (url, init) => fetch(url, init),
      timers: systemTimers,
      now: Date.now,
      random: Math.random,
      warn: (m) => logger.warn(m),
    },
  });
}

/** Logs and emits a halt a post just put in force. */
function announceHalt(h: HaltRecord | undefined, events: EventSink): void {
  if (!h) return;
  log("node").warn("agent halted by {by}: {reason}", {
    by: npubEncode(h.by),
    reason: h.reason ?? "",
  });
  events({ event: "halted", id: h.id, by: h.by, reason: h.reason ?? "" });
}

/** A coding agent's call event as a node event (each member spelled out: one of a closed union). */
function acpEvent(e: CallEvent): NodeEvent {
  return e.type === "acp_update"
    ? { ...e, event: e.type }
    : e.type === "acp_permission"
    ? { ...e, event: e.type }
    : { ...e, event: e.type };
}

/**
 * Checks the sandbox once at start, where the access level is shown: refused under
 * `sandbox.mode = required`, otherwise the lines the banner says (unsandboxed, off, an open
 * network).
 *
 * @throws {WatsError} code `harness.sandbox` when the mode is required and it cannot run.
 */
async function sandboxNotices(sandbox: Sandboxer, net: SandboxNetwork): Promise<string[]> {
  const out: string[] = [];
  const problem = await sandbox.check();
  if (problem !== undefined && sandbox.mode === "required") {
    throw new WatsError("harness.sandbox", requiredRefusal("starting the agents", problem));
  }
  if (problem !== undefined || sandbox.mode === "off") out.push(sandboxLine(sandbox.mode, problem));
  const netProblem = problem === undefined && sandbox.mode !== "off"
    ? await net.check()
    : undefined;
  if (netProblem !== undefined && sandbox.mode === "required") {
    throw new WatsError("harness.sandbox", networkRefusal("starting the agents", netProblem));
  }
  if (sandbox.mode !== "off" && net.line() !== "model-only") {
    out.push(`sandbox network: ${net.line()}`);
  }
  return out;
}

/** Who runs sandboxed and how, as `wats status` lists it. */
function sandboxStatusOf(o: {
  sandbox: Sandboxer;
  sandboxNet: SandboxNetwork;
  /** The runtime of the agent runs, when they are sandboxed. */
  runner: string | undefined;
  acp: AcpTables;
}) {
  const state = sandboxLine(o.sandbox.mode, o.sandbox.lastProblem);
  return [
    ...(o.runner !== undefined ? [{ who: `agent runs (${o.runner})`, state }] : []),
    ...Object.values(o.acp?.harnesses ?? {}).filter((h) => h.enabled)
      .map((h) => ({ who: `harness ${h.name}`, state })),
    // Only an open network is news: model-only is the default.
    ...(o.sandbox.mode !== "off" && o.sandboxNet.line() !== "model-only"
      ? [{ who: "network", state: o.sandboxNet.line() }]
      : []),
  ];
}

function abortPromise(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true })
  );
}

/** The halt as the status shows it: the halter's npub, and its name when it is one of ours. */
function haltedView(store: Store, h: HaltRecord): NonNullable<NodeStatus["halted"]> {
  const local = store.profiles().find((r) => r.pubkey === h.by);
  return {
    by: npubEncode(h.by),
    ...(local ? { byProfile: shownProfileName(local.name) } : {}),
    at: h.at,
    ...(h.reason ? { reason: h.reason } : {}),
  };
}
