/**
 * The daemon: `wats` and `wats node`. It holds the data directory's lock, opens
 * the store, derives the profiles, runs the agent runner when agent.runtime is
 * set, serves MCP on mcp.sock and syncs with other nodes, until SIGINT or
 * SIGTERM. Stopping is not an error: exit 0. This file only composes the parts.
 *
 * @module
 */

import { npubEncode } from "nostr-tools/nip19";
import type { CommandContext } from "../cli/context.ts";
import { loadSettings } from "../config/settings.ts";
import { acpLayerFor, sweepNow } from "../acp/setup.ts";
import { ALL_TOOLS } from "../mcp/tools.ts";
import { loadOrCreateNodeKey } from "../identity/node_key.ts";
import { log, setupLogging } from "../log.ts";
import type { ControlRequest } from "../mcp/service.ts";
import { serveMcpSocket } from "../mcp/socket_server.ts";
import { type Network, startNetwork } from "../net/network.ts";
import { endPreviousRun } from "../runner/orphan.ts";
import { runCommand } from "../runner/spawn.ts";
import { safetyNotices } from "../safety/notices.ts";
import { Store } from "../store/store.ts";
import { VERSION } from "../version.ts";
import { type AgentRunner, startAgentRunner } from "./agent_runner.ts";
import { renderBanner } from "./banner.ts";
import { DAEMON_HELP, parseDaemonArgs } from "./daemon_args.ts";
import { type EventSink, jsonLinesSink, noEvents } from "./events_out.ts";
import { HaltState } from "./halt.ts";
import { acquireDaemonLock } from "./lock.ts";
import { nodeId } from "./node_id.ts";
import { LocalNodeService } from "./node_service.ts";
import { desktopNotifier } from "./notify.ts";
import { Profiles } from "./profiles.ts";
import { ReviewQueue } from "./review_queue.ts";

/** Runs the daemon until the context's signal aborts. */
export async function daemonCommand(ctx: CommandContext): Promise<number> {
  const args = parseDaemonArgs(ctx.argv);
  if (args.help) {
    console.log(DAEMON_HELP);
    return 0;
  }
  await setupLogging(args.logLevel);
  const logger = log("node");
  const events: EventSink = ctx.words[0] === "node" ? jsonLinesSink() : noEvents;
  const resolved = await loadSettings(ctx.paths, ctx.env, args.flags, ctx.user);
  for (const w of resolved.warnings) logger.warn(w);
  const settings = resolved.values;
  const paths = ctx.paths;

  const lock = await acquireDaemonLock(paths.lock, paths.socket, Deno.pid);
  const cleanups: Array<() => void | Promise<void>> = [() => lock.release()];
  try {
    // Before anything else runs: a run the previous daemon left must not live on.
    await endPreviousRun(paths.agentDir, log("runner"));
    const secret = await loadOrCreateNodeKey(paths.nodeKey);
    const store = Store.open(paths.store);
    cleanups.unshift(() => store.close());
    const profiles = new Profiles(secret, store);
    const person = profiles.key(settings.profile);
    const agent = profiles.key(settings["agent.profile"]);
    const id = nodeId(secret);
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
    const notices = () => safetyNotices(paths, ctx.env, ctx.user);
    const startNotices = await notices();
    for (const n of startNotices) logger.warn(n);

    const halt = new HaltState({
      meta: store,
      accepted: [...settings["halt.accept"], person.pubkey],
      agentKey: agent.pubkey,
      now: Date.now,
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
      ? desktopNotifier({ os: ctx.os, run: runCommand, warn: (m) => logger.warn(m) })
      : undefined;
    let agentRunner: AgentRunner | undefined;
    // The network starts after the socket; status may ask for it before then.
    const net: { current?: Network } = {};
    // Coding agents over ACP (docs/acp.md): one MCP tool per enabled harness.
    const codingAgents = acpLayerFor({
      acp: resolved.acp,
      settings,
      paths,
      env: ctx.env,
      reserved: ALL_TOOLS.map((t) => t.name),
      onEvent: (e) => events({ ...e, event: e.type }),
      budget: () => agentRunner?.runner,
      onSweep: (r) => events({ event: "acp_sweep", ...r }),
    });
    if (codingAgents) cleanups.unshift(() => codingAgents.close());
    await codingAgents?.check();
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
      onHeld: notifier
        ? (d) =>
          notifier.notify(
            "wats: a draft waits for review",
            `${d.kind} ${d.id}: ${d.text.slice(0, 120)}`,
          )
        : undefined,
      now: Date.now,
      runOfToken: (token) => agentRunner?.runOfToken(token),
      runnerStatus: () => {
        const h = halt.current();
        return {
          agent: null,
          budget: null,
          ...agentRunner?.status(),
          halted: h
            ? { by: npubEncode(h.by), at: h.at, ...(h.reason ? { reason: h.reason } : {}) }
            : null,
        };
      },
      safetyNotices: notices,
      networkStatus: () => net.current?.status(),
    });

    const runtime = settings["agent.runtime"];
    const haltNow = halt.current();
    if (haltNow) {
      startNotices.push(`agent halted by ${npubEncode(haltNow.by)}: run \`wats resume\` to end it`);
    }
    if (runtime !== "none") {
      agentRunner = await startAgentRunner({
        settings,
        store,
        paths,
        self: ctx.self,
        person,
        agent,
        review,
        events,
        log: log("runner"),
        home: ctx.env.HOME ?? "",
        cwd: ctx.cwd,
        publishAnnounce: async (draft) => (await service.publishAs(agent.name, draft)).id,
      });
      cleanups.unshift(() => agentRunner?.stop());
      halt.attach(agentRunner.runner);
    }
    const control = async (req: ControlRequest): Promise<string> => {
      if (req.op === "sweep") return await sweepNow(codingAgents);
      if (req.op === "resume") {
        const ended = halt.resume();
        events({ event: "resumed" });
        logger.info("agent runs resumed by `wats resume`");
        return ended
          ? `resumed: the halt ${ended.id.slice(0, 12)} no longer holds`
          : "nothing was halted";
      }
      const out = await service.publishAs(person.name, { kind: "halt", text: req.reason ?? "" });
      return `halt ${out.id} posted as ${person.name}`;
    };
    const mcp = await serveMcpSocket({
      path: paths.socket,
      service,
      control,
      log: (level, msg, fields) => logger[level === "warn" ? "warn" : level](msg, fields ?? {}),
    });
    cleanups.unshift(() => mcp.close());
    // The runner starts once the socket serves: Codex's self-check needs it.
    await agentRunner?.ready();
    codingAgents?.start();
    const network = await startNetwork({
      settings: {
        infra: settings.infra,
        listen: settings.listen,
        maxSkewMs: settings["net.max_skew"],
      },
      store,
      events,
      log: log("net"),
    });
    net.current = network;
    cleanups.unshift(() => network.close());
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
        : args.startedByMcp
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

    await abortPromise(ctx.signal);
    logger.info("stopping on {signal}", { signal: String(ctx.signal.reason) });
    // The run first, while its MCP session still has a node: a runner session
    // that loses the node ends its run itself, which would not read as stopped.
    await agentRunner?.stop();
    events({ event: "stopped", reason: String(ctx.signal.reason ?? "signal") });
    return 0;
  } finally {
    for (const c of cleanups) {
      try {
        await c();
      } catch (err) {
        logger.warn("cleanup failed: {error}", { error: (err as Error).message });
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
