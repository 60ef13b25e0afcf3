/**
 * What a command's permission set depends on beyond the data directory: for the
 * daemon, the configured workdir, listen address, relays and harness programs.
 * The launcher computes these before it starts the Worker, from the same
 * settings the daemon will load.
 *
 * @module
 */

import { pathExists } from "./io.ts";
import { loadSettings } from "../config/settings.ts";
import { notifyEnvNames, targetUrlOf } from "../config/notify_tables.ts";
import { editFile, editorOf } from "./agent.ts";
import { codexConfigPath } from "./setup.ts";
import { notifierProgram } from "../node/notify.ts";
import { serviceEnvFile, serviceLayout } from "./service.ts";
import { parseDaemonArgs } from "./daemon_args.ts";
import { requireCodexKey } from "../runner/harnesses/codex_runtime.ts";
import { HEARTBEAT_TEMPLATE_URL } from "../runner/prompt.ts";
import { parseUiArgs, resolveUiListen } from "./ui.ts";
import { ASSETS_DIR } from "../ui/assets.ts";
import type { CommandId, PermissionInputs } from "./permissions.ts";
import { runnerSandboxed } from "../safety/sandbox.ts";
import { sandboxProgram } from "../safety/sandboxer.ts";
import { modelSocketPath } from "../safety/net_gate.ts";
import { nodeAgents, nodeModelHosts } from "../safety/net_policy.ts";
import type { CommandInit } from "./context.ts";

/** The programs each agent runtime spawns. */
const HARNESS_PROGRAMS: Record<string, string[]> = {
  none: [],
  claude: ["claude"],
  codex: ["codex"],
  // agent.runtime = acp runs the command of agent.harness (below).
  acp: [],
};

/**
 * Resolves the permission inputs of `id`. `env` is the launcher's whole environment (the worker
 * gets a filtered copy): the daemon refuses to start when a variable its settings name is missing.
 */
export async function commandInputs(
  id: CommandId,
  init: CommandInit,
  env: Readonly<Record<string, string>> = Deno.env.toObject(),
): Promise<PermissionInputs> {
  const base: PermissionInputs = { paths: init.paths, self: init.self };
  if (id === "agent-edit") {
    const draft = init.argv.find((a) => !a.startsWith("-")) ?? "";
    return { ...base, editor: editorOf(init.env), editFile: editFile(init.env, draft) };
  }
  if (id === "setup") {
    // Codex's config.toml, or its folder when Codex has never run.
    const file = codexConfigPath(init.env);
    const dir = file.slice(0, file.lastIndexOf("/"));
    return { ...base, hostConfigs: [pathExists(dir) ? file : dir] };
  }
  if (id === "service-install" || id === "service-uninstall" || id === "service-status") {
    const l = serviceLayout(init.os, init.env, init.paths.dataDir);
    return {
      ...base,
      service: {
        file: l.file,
        writable: pathExists(l.dir) ? l.file : l.dir,
        enableLink: l.enableLink,
        log: l.log,
        ...(l.manager === "launchd" ? { envFile: serviceEnvFile(init.paths.dataDir) } : {}),
        manager: l.program,
        needsUid: l.manager === "launchd",
      },
    };
  }
  if (id === "ui") {
    if (parseUiArgs(init.argv).help) return base;
    return { ...base, listen: (await resolveUiListen(init)).hostPort, uiAssets: ASSETS_DIR };
  }
  if (id !== "daemon") return base;
  const args = parseDaemonArgs(init.argv);
  if (args.help) return base;
  const { values, acp, notify } = await loadSettings(init.paths, init.env, args.flags, init.user);
  if (values["agent.runtime"] === "codex") requireCodexKey(values, env, init.paths.dataDir);
  const acpHarness = values["agent.runtime"] === "acp"
    ? acp.harnesses[values["agent.harness"]]
    : undefined;
  const sandbox = values["sandbox.mode"] !== "off" &&
    (Object.values(acp.harnesses).some((h) => h.enabled) ||
      runnerSandboxed(values["agent.runtime"], values["agent.access"]));
  return {
    ...base,
    modelProxy: sandbox && values["sandbox.network"] === "model-only"
      ? {
        socket: modelSocketPath(init.paths.agentDir),
        hosts: nodeModelHosts(nodeAgents(values, acp, init.env)),
      }
      : undefined,
    workdir: values["agent.workdir"] || undefined,
    heartbeatFile: HEARTBEAT_TEMPLATE_URL.pathname,
    listen: values.listen || undefined,
    relays: values.infra.map(hostPortOf),
    // A url_env's value is read here, from the same environment the daemon inherits.
    notifyHosts: Object.values(notify).flatMap((t) => targetUrlOf(t, (n) => env[n]) ?? [])
      .map(hostPortOf),
    notifyEnv: notifyEnvNames(notify),
    loopbackServer: values["agent.runtime"] === "codex",
    checkouts: Object.values(acp.checkouts).map((c) => c.path),
    // Only a daemon with an agent that runs commands starts the sandbox program.
    sandbox: sandbox ? sandboxProgram(init.os) : undefined,
    harnesses: [
      ...(HARNESS_PROGRAMS[values["agent.runtime"]] ?? []),
      ...(acpHarness ? [acpHarness.command] : []),
      // The coding agents over ACP (docs/acp.md); `git` is in every daemon's set.
      ...Object.values(acp.harnesses).filter((h) => h.enabled).map((h) => h.command),
      ...(values["agent.notify"] ? [notifierProgram(init.os)].filter((p): p is string => !!p) : []),
    ],
  };
}

/** `ws://host:port/path` (or http, https) → `host:port`, the form Deno's net permission takes. */
export function hostPortOf(url: string): string {
  const u = new URL(url);
  const port = u.port || (u.protocol === "wss:" || u.protocol === "https:" ? "443" : "80");
  return `${u.hostname}:${port}`;
}
