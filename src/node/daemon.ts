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
import type { EventSink } from "../contracts/node_events.ts";
import { acpLayerFor, sweepNow } from "../acp/setup.ts";
import { isWorkOp, worksControl } from "./works_control.ts";
import { ALL_TOOLS } from "../mcp/tools.ts";
import { loadOrCreateNodeKey } from "../identity/node_key.ts";
import { log } from "../log.ts";
import type { ControlRequest } from "../contracts/session.ts";
import type { NodeStatus, PendingDraft } from "../contracts/views.ts";
import { type ControlAnswer, serveMcpSocket } from "../mcp/socket_server.ts";
import { startMcpHttp } from "../mcp/http_server.ts";
import type { McpLog } from "../mcp/server.ts";
import { type Network, startNetwork } from "../net/network.ts";
import { watchInterest } from "../net/interest_source.ts";
import { endPreviousRun } from "../runner/orphan.ts";
import { systemTimers } from "../runner/ports.ts";
import { runCommand } from "../runner/spawn.ts";
import { safetyNotices } from "../safety/notices.ts";
import { requiredRefusal, sandboxLine } from "../safety/sandbox.ts";
import { Sandboxer } from "../safety/sandboxer.ts";
import { modelSocketPath, networkRefusal, SandboxNetwork } from "../safety/net_gate.ts";
import { nodeAgents, nodeModelHosts } from "../safety/net_policy.ts";
import { Store } from "../store/store.ts";
import { VERSION } from "../version.ts";
import { type AgentRunner, startAgentRunner } from "./agent_runner.ts";
import { agentState, mayChangeState, startAgentPresence } from "./agent_presence.ts";
import { KnownAgents } from "./presence.ts";
import { AskStates } from "./ask_states.ts";
import { watchAsks } from "./ask_watch.ts";
import { noticeOf } from "./notices.ts";
import type { PresenceAnnouncer } from "../runner/presence.ts";
import { droppedPathLine, renderBanner } from "./banner.ts";
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

/** Runs the node until it is told to stop; resolves with the exit code (0). */
export async function runNode(opts: NodeOptions): Promise<number> {
  const { lock, paths, settings } = opts;
  // Every part emits into the hub, which also feeds `wats ui`'s watch.
  const hub = new EventHub();
  const idleStopMs = opts.idleStopMs ?? MCP_NODE_IDLE_MS;
  const logger = log("node");
  // Every way to stop (signal, takeover, idle) aborts this one.
  const stop = new AbortController();
  const onSignal = () => stop.abort(opts.signal.reason);
  if (opts.signal.aborted) onSignal();
  else opts.signal.addEventListener("abort", onSignal, { once: true });
  const cleanups: Array<() => void | Promise<void>> = [
    () => lock.release(),
    () => opts.signal.removeEventListener("abort", onSignal),
  ];
  try {
    // Before anything else runs: a run the previous daemon left must not live on.
    await endPreviousRun(paths.agentDir, log("runner"));
    // Nor its socket: a run's socket lives only while that run does.
    await removeStaleRunSocket(paths.runSocket);
    const secret = await loadOrCreateNodeKey(paths.nodeKey);
    // Local posts are queued for the same relays the network connects to.
    const store = Store.open(paths.store, { relays: settings.infra });
    cleanups.unshift(() => store.close());
    const profiles = new Profiles(secret, store);
    const person = profiles.key(settings.profile);
    const agent = profiles.key(settings["agent.profile"]);
    const id = nodeId(secret);
    // Notifications away from the desk: fed by the event stream, never awaited by it.
    const targets = startNotifyTargets({
      targets: opts.notify ?? {},
      readEnv: (name) => Deno.env.get(name),
      node: id,
      world: {
        fetch: (url, init) => fetch(url, init),
        timers: systemTimers,
        now: Date.now,
        random: Math.random,
        warn: (m) => logger.warn(m),
      },
    });
    cleanups.unshift(() => targets.stop());
    // The agent's presence is posted again at once when its state may have changed;
    // a task later, so the runner has recorded the run's spend (src/node/agent_presence.ts).
    const presence: { current?: PresenceAnnouncer } = {};
    const events: EventSink = hub.sink((e) => {
      opts.events(e);
      targets.onEvent(e);
      if (mayChangeState(e)) setTimeout(() => void presence.current?.check(), 0);
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

    const knownAgents = new KnownAgents({
      store,
      now: Date.now,
      everyMs: settings["agent.presence_every"],
    });
    cleanups.unshift(() => knownAgents.close());
    const halt = new HaltState({
      meta: store,
      accepted: [...settings["halt.accept"], person.pubkey],
      agentKey: agent.pubkey,
      warn: (message) =>
        logger.warn(
          `the halt record cannot be read, so agent runs stay halted until \`wats resume\`: ${message}`,
        ),
    });
    const stopWatchingHalts = store.onInsert((posts) => {
      const h = halt.onPosts(posts);
      if (h) {
        logger.warn("agent halted by {by}: {reason}", {
          by: npubEncode(h.by),
          reason: h.reason ?? "",
        });
        events({ event: "halted", id: h.id, by: h.by, reason: h.reason ?? "" });
      }
    });
    cleanups.unshift(stopWatchingHalts);
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
    });
    const askWatch = watchAsks({
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
    });
    cleanups.unshift(() => askWatch.stop());
    // The network starts after the socket; status may ask for it before then.
    const net: { current?: Network } = {};
    // What the sandboxes reach: the model API only, through one proxy (src/safety/net_gate.ts).
    const sandboxNet = new SandboxNetwork({
      network: settings["sandbox.network"],
      mode: settings["sandbox.mode"],
      socket: modelSocketPath(paths.agentDir),
      hosts: nodeModelHosts(nodeAgents(settings, opts.acp, opts.env)),
      self: opts.self,
      os: opts.os,
      onRefused: (target, reason) =>
        log("sandbox").warn("model-only network refused {target}: {reason}", { target, reason }),
    });
    cleanups.unshift(() => sandboxNet.close());
    // The OS sandbox of agents that run commands (docs/decisions/sandbox.md).
    const sandbox = new Sandboxer({
      network: sandboxNet,
      mode: settings["sandbox.mode"],
      hide: settings["sandbox.hide"],
      dataDir: paths.dataDir,
      home: opts.env.HOME ?? "",
      os: opts.os,
      self: opts.self,
    });
    const runtime = settings["agent.runtime"];
    // The runner, built but not started: the ACP layer's host (src/contracts/agent_host.ts).
    // It reads posts from the store as the MCP tools show them; it starts once the socket serves.
    const agentRunner: AgentRunner | undefined = runtime === "none"
      ? undefined
      : await startAgentRunner({
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
      });
    if (agentRunner) {
      cleanups.unshift(() => agentRunner.stop());
      halt.attach(agentRunner.runner);
    }
    // Coding agents over ACP (docs/acp.md): one MCP tool per enabled harness.
    const codingAgents = acpLayerFor({
      acp: opts.acp,
      settings,
      paths,
      env: opts.env,
      sandbox: settings["sandbox.mode"] === "off" ? undefined : sandbox,
      reserved: ALL_TOOLS.map((t) => t.name),
      // Spelled out per member so the line stays one member of the closed union.
      onEvent: (e) =>
        events(
          e.type === "acp_update"
            ? { ...e, event: e.type }
            : e.type === "acp_permission"
            ? { ...e, event: e.type }
            : { ...e, event: e.type },
        ),
      host: agentRunner?.runner,
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
    if (codingAgents) {
      cleanups.unshift(() => codingAgents.close());
      // A halt stops the coding agents too: no call starts, the running ones end.
      halt.attach(codingAgents.layer);
    }
    await codingAgents?.check();
    if (codingAgents || agentRunner?.sandboxed) {
      // Said once at start, where the access level is shown: refused, unsandboxed or off.
      const problem = await sandbox.check();
      if (problem !== undefined && sandbox.mode === "required") {
        throw new WatsError("harness.sandbox", requiredRefusal("starting the agents", problem));
      }
      if (problem !== undefined || sandbox.mode === "off") {
        startNotices.push(sandboxLine(sandbox.mode, problem));
      }
      const netProblem = problem === undefined && sandbox.mode !== "off"
        ? await sandboxNet.check()
        : undefined;
      if (netProblem !== undefined && sandbox.mode === "required") {
        throw new WatsError("harness.sandbox", networkRefusal("starting the agents", netProblem));
      }
      if (sandbox.mode !== "off" && sandboxNet.line() !== "model-only") {
        startNotices.push(`sandbox network: ${sandboxNet.line()}`);
      }
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
          budget: null,
          ...agentRunner?.status(),
          halted: h ? haltedView(store, h) : null,
        };
      },
      safetyNotices: notices,
      networkStatus: () => net.current?.status(),
      knownAgents,
      askStates,
      fetchOnce: (filter) =>
        net.current?.fetchOnce(filter) ?? Promise.resolve({ relays: 0, events: 0 }),
      sandboxStatus: () => {
        const state = sandboxLine(sandbox.mode, sandbox.lastProblem);
        return [
          ...(agentRunner?.sandboxed
            ? [{ who: `agent runs (${settings["agent.runtime"]})`, state }]
            : []),
          ...Object.values(opts.acp?.harnesses ?? {}).filter((h) => h.enabled)
            .map((h) => ({ who: `harness ${h.name}`, state })),
          // Only an open network is news: model-only is the default.
          ...(sandbox.mode !== "off" && sandboxNet.line() !== "model-only"
            ? [{ who: "network", state: sandboxNet.line() }]
            : []),
        ];
      },
    });

    await agentRunner?.announce(async (draft) => (await service.publishAs(agent.name, draft)).id);
    presence.current = opts.noPresence ? undefined : startAgentPresence({
      about: settings["agent.about"],
      caps: settings["agent.caps"],
      everyMs: settings["agent.presence_every"],
      state: () => agentState(agentRunner, halt),
      publish: (draft) => service.publishPresence(agent.name, draft),
      log: log("runner"),
    });
    cleanups.unshift(() => presence.current?.stop());
    if (opts.droppedPath && opts.droppedPath.length > 0) {
      startNotices.push(droppedPathLine(opts.droppedPath));
    }
    const haltNow = halt.current();
    if (haltNow) {
      startNotices.push(`agent halted by ${npubEncode(haltNow.by)}: run \`wats resume\` to end it`);
    }
    const control = async (req: ControlRequest): Promise<ControlAnswer> => {
      if (req.op === "sweep") return await sweepNow(codingAgents);
      if (isWorkOp(req.op)) return await worksControl(codingAgents, req);
      if (req.op === "takeover") {
        if (!opts.startedByMcp) {
          throw new WatsError(
            "daemon.foreground",
            `this node (pid ${Deno.pid}) was started in the foreground, not by \`wats mcp\`; ` +
              "it is not taken over: stop it first",
          );
        }
        logger.info("a foreground wats takes over; stopping");
        return {
          message: `the node started by \`wats mcp\` (pid ${Deno.pid}) stops`,
          afterAnswer: () => stop.abort(TAKEOVER),
        };
      }
      if (req.op === "resume") {
        const ended = halt.resume();
        events({ event: "resumed" });
        logger.info("agent runs resumed by `wats resume`");
        return ended
          ? `resumed: the halt ${ended.id.slice(0, 12)} no longer holds`
          : "nothing was halted";
      }
      if (req.op !== "halt") {
        throw new WatsError("mcp.bad_control", `this node does not answer ${req.op} yet`);
      }
      const out = await service.publishAs(person.name, { kind: "halt", text: req.reason ?? "" });
      return `halt ${out.id} posted as ${person.name}`;
    };
    const idle = opts.startedByMcp ? watchIdle(idleStopMs, () => stop.abort(IDLE)) : undefined;
    if (idle) cleanups.unshift(() => idle.stop());
    const mcpLog: McpLog = (level, msg, fields) =>
      logger[level === "warn" ? "warn" : level](msg, fields ?? {});
    const mcp = await serveMcpSocket({
      path: paths.socket,
      service,
      control,
      watch: (send) => hub.watch(send),
      onSessions: (open) => idle?.sessions(open),
      log: mcpLog,
    });
    cleanups.unshift(() => mcp.close());
    // MCP over HTTP when mcp.listen names an address (docs/mcp.md): the same service, by token.
    const mcpHttp = startMcpHttp({ settings, tokensFile: paths.mcpTokens, service, log: mcpLog });
    if (mcpHttp) cleanups.unshift(() => mcpHttp.close());
    // The runner starts once the socket serves: Codex's self-check needs it.
    await agentRunner?.ready(service);
    codingAgents?.start();
    // The relays send what this node follows, not every wats post (docs/network.md).
    const interest = watchInterest(store, {
      caps: settings["agent.caps"],
      openAsks: settings["agent.open_asks"],
      haltAccept: settings["halt.accept"],
    }, (next) => net.current?.setInterest(next));
    cleanups.unshift(() => interest.stop());
    const network = await startNetwork({
      settings: {
        infra: settings.infra,
        listen: settings.listen,
        maxSkewMs: settings["net.max_skew"],
        maxConnections: settings["net.max_connections"],
      },
      store,
      events,
      log: log("net"),
      interest: interest.current(),
    });
    net.current = network;
    // Posts stored while the network started changed nothing yet.
    network.setInterest(interest.current());
    cleanups.unshift(() => sandboxNet.close());
    console.error(renderBanner({
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
    }));
    events({
      event: "started",
      node: id,
      dataDir: paths.dataDir,
      socket: paths.socket,
      profiles: { [person.name]: person.npub, [agent.name]: agent.npub },
      pid: Deno.pid,
    });

    await abortPromise(stop.signal);
    const reason = String(stop.signal.reason ?? "signal");
    if (reason === TAKEOVER) logger.info("stopping: a foreground wats takes over");
    else if (reason === IDLE) {
      logger.info("stopping: no MCP session for {idle}", {
        idle: formatDuration(idleStopMs),
      });
    } else logger.info("stopping on {signal}", { signal: reason });
    // The run first, while its MCP session still has a node: a runner session
    // that loses the node ends its run itself, which would not read as stopped.
    await agentRunner?.stop();
    events({ event: "stopped", reason });
    return 0;
  } finally {
    for (const c of cleanups) {
      try {
        await c();
      } catch (err) {
        logger.warn("cleanup failed: {error}", { error: errorMessage(err) });
      }
    }
  }
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
