/**
 * What a command's permission set depends on beyond the data directory: for the
 * daemon, the configured workdir, listen address, relays and harness programs.
 * The launcher computes these before it starts the Worker, from the same
 * settings the daemon will load.
 *
 * @module
 */

import { ConfigError } from "../errors.ts";
import { pathExists } from "./io.ts";
import type { CommandId, PermissionInputs } from "./permissions.ts";
import type { CommandInit } from "./context.ts";

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
  // Each command's modules are imported only for it: every command starts through this
  // launcher, and `wats mcp` (started for each agent run) must not pay for the daemon's, the
  // dashboard's or setup's modules (bench/mcp_start.ts measured it).
  if (id === "agent-edit") {
    const { editFile, editorOf } = await import("./agent.ts");
    const draft = init.argv.find((a) => !a.startsWith("-")) ?? "";
    return { ...base, editor: editorOf(init.env), editFile: editFile(init.env, draft) };
  }
  if (id === "setup") {
    // Codex's config.toml, or its folder when Codex has never run.
    const { codexConfigPath } = await import("./setup.ts");
    const { RUNTIME_LAUNCH } = await import("../runner/runtimes/launch.ts");
    const file = codexConfigPath(init.env);
    const dir = file.slice(0, file.lastIndexOf("/"));
    return {
      ...base,
      hostConfigs: [pathExists(dir) ? file : dir],
      claudeConfigs: Object.values(RUNTIME_LAUNCH).flatMap((l) => l.entryFiles?.(init) ?? []),
    };
  }
  if (id === "service-install" || id === "service-uninstall" || id === "service-status") {
    const { serviceEnvFile, serviceLayout } = await import("./service.ts");
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
    const { parseUiArgs, resolveUiListen } = await import("./ui.ts");
    const { ASSETS_DIR } = await import("../ui/assets.ts");
    if (parseUiArgs(init.argv).help) return base;
    return { ...base, listen: (await resolveUiListen(init)).hostPort, uiAssets: ASSETS_DIR };
  }
  if (id !== "daemon") return base;
  const [
    { parseDaemonArgs },
    { loadSettings },
    { notifyEnvNames, targetUrlOf },
    { notifierProgram },
    { HEARTBEAT_TEMPLATE_URL },
    { sandboxProgram },
    { modelSocketPath },
    { nodeModelHosts },
    { nodeAgents },
    { runtimeFacts },
    { runtimeLaunch },
    { parseMcpListen },
  ] = await Promise.all([
    import("./daemon_args.ts"),
    import("../config/settings.ts"),
    import("../config/notify_tables.ts"),
    import("../node/notify.ts"),
    import("../runner/prompt.ts"),
    import("../safety/sandboxer.ts"),
    import("../safety/net_gate.ts"),
    import("../safety/net_policy.ts"),
    import("../runner/runtimes/agents.ts"),
    import("../runner/runtimes/facts.ts"),
    import("../runner/runtimes/launch.ts"),
    import("../mcp/http_gate.ts"),
  ]);
  const args = parseDaemonArgs(init.argv);
  if (args.help) return base;
  const { values, acp, notify } = await loadSettings(init.paths, init.env, args.flags, init.user);
  const runtime = runtimeFacts(values["agent.runtime"]);
  const keySetting = runtime?.keySetting;
  // What the runtime's daemon needs beyond its programs; it refuses here what cannot start.
  const launch = runtimeLaunch(values["agent.runtime"]);
  const grant = launch?.launch?.({ values, env, dataDir: init.paths.dataDir }) ?? {};
  const entryFiles = launch?.entryFiles?.(init);
  // A coding agent that cannot start is said now, with the fix, not at its first call.
  const { missingHarnessFile } = await import("../config/harness_files.ts");
  for (const h of Object.values(acp.harnesses).filter((h) => h.enabled)) {
    const missing = await missingHarnessFile(h);
    if (missing !== undefined) throw new ConfigError("config.bad_value", missing);
  }
  const acpHarness = values["agent.runtime"] === "acp"
    ? acp.harnesses[values["agent.harness"]]
    : undefined;
  // A daemon with an agent may start the sandbox program: which of its runs are sandboxed is
  // the runtime's to say (src/runner/runtimes/runtime.ts `runsSandboxed`).
  const sandbox = values["sandbox.mode"] !== "off" &&
    (Object.values(acp.harnesses).some((h) => h.enabled) || values["agent.runtime"] !== "none");
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
    // An address the daemon may not serve is refused there, with what to set instead.
    mcpListen: mcpListenGrant(() => parseMcpListen(values["mcp.listen"], values["mcp.remote"])),
    relays: values.infra.map(hostPortOf),
    // A url_env's value is read here, from the same environment the daemon inherits.
    notifyHosts: Object.values(notify).flatMap((t) => targetUrlOf(t, (n) => env[n]) ?? [])
      .map(hostPortOf),
    notifyEnv: notifyEnvNames(notify),
    // A run gets this one variable beside its runtime's allowlist (src/contracts/run_env.ts).
    agentKeyEnv: keySetting && values[keySetting] !== "" ? [values[keySetting]] : [],
    loopbackServer: grant.loopbackServer ?? false,
    checkouts: Object.values(acp.checkouts).map((c) => c.path),
    ...(entryFiles ? { claudeConfigs: entryFiles } : {}),
    sandbox: sandbox ? sandboxProgram(init.os) : undefined,
    harnesses: [
      // agent.runtime = acp runs the command of agent.harness.
      ...(runtime?.programs ?? []),
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

/** The net grant of `mcp.listen`: `host:port` as the daemon will listen, or none (empty: off). */
function mcpListenGrant(parse: () => { hostPort: string }): string | undefined {
  try {
    return parse().hostPort;
  } catch {
    // The daemon says why at start; a grant for an address it refuses helps nobody.
    return undefined;
  }
}
