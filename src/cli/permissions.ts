/**
 * Every command's Deno permissions, declared once as data (docs/architecture.md §2).
 *
 * The launcher runs each command in a Worker granted exactly the set this module
 * returns, and the tests assert `NotCapable` one step outside it. A path-list
 * grant is the only way to say "the data dir but not safety.json": revoking a
 * sub-path under a global grant does nothing in Deno 2.9.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { DataPaths } from "../config/paths.ts";
import { VERIFY_WORKER_SOURCES } from "../net/verify_worker_url.ts";

/** The commands, each one Worker with its own permission set. */
export type CommandId =
  | "help"
  | "daemon"
  | "mcp"
  | "mcp-token"
  | "agent-read"
  | "agent-decide"
  | "agent-edit"
  | "config-read"
  | "config-write"
  | "config-ack"
  | "safety-init"
  | "setup"
  | "status"
  | "ui"
  | "control"
  | "work"
  | "service-install"
  | "service-uninstall"
  | "service-status"
  | "try"
  | "ask"
  | "thread";

/** A Worker's `deno.permissions`, with lists only (never `true` for a path kind). */
export interface PermissionSet {
  read: string[];
  write: string[];
  net: string[];
  run: string[];
  /** Only the daemon reads variables itself: those its `[notify.NAME]` targets name. */
  env: false | string[];
  /** Only `wats service` on macOS asks for one: the user id (launchd's `gui/<uid>`). */
  sys: false | Array<"uid">;
  ffi: false;
  import: false;
}

/** What a command's permissions depend on, resolved by the launcher. */
export interface PermissionInputs {
  paths: DataPaths;
  /** The command that runs this very program: `[deno, run, …, main.ts]` or `[wats]`. */
  self: string[];
  /** Daemon: `agent.workdir` when set. */
  workdir?: string;
  /** Daemon: the HEARTBEAT.md it fills, when outside the data dir. */
  heartbeatFile?: string;
  /** Daemon: `host:port` of `listen` when set. `wats ui`: the address it serves. */
  listen?: string;
  /** Daemon: `host:port` of `mcp.listen` when set (MCP over HTTP, docs/mcp.md). */
  mcpListen?: string;
  /** `wats ui`: the folder of its static files (src/ui/assets, embedded when compiled). */
  uiAssets?: string;
  /** Daemon: `host:port` of each relay in `infra`. */
  relays?: string[];
  /** Daemon: `host:port` of each `[notify.NAME]` target's url. */
  notifyHosts?: string[];
  /** Daemon: the variables its `[notify.NAME]` targets name (url_env, secret_env, token_env). */
  notifyEnv?: string[];
  /**
   * Daemon with Claude, `wats setup`: Claude Code's files that hold the wats entry, read as data
   * (src/runner/runtimes/claude/registration.ts `claudeConfigFiles`); never written.
   */
  claudeConfigs?: string[];
  /** Daemon: the variable `agent.codex_env_key` names, which a Codex run gets. */
  agentKeyEnv?: string[];
  /** Daemon: the harness programs it may spawn (`claude`, `codex`, ACP commands). */
  harnesses?: string[];
  /** Daemon: the OS sandbox program its agents run in (`bwrap`), when one of them needs it. */
  sandbox?: string;
  /**
   * Daemon: the `[checkouts.NAME]` paths, read to resolve the locations of coding
   * agents' requests. Never written by the daemon itself: git, a child, writes
   * the worktrees' branches there.
   */
  checkouts?: string[];
  /**
   * Daemon with Codex: listen on an ephemeral loopback port (`127.0.0.1:0`), for the Codex
   * lock's self-check server. It connects nowhere with it (docs/codex.md).
   */
  loopbackServer?: boolean;
  /** `agent approve --edit`: the editor it runs and the one temp file it writes. */
  editor?: string;
  editFile?: string;
  /** Setup: the MCP host config files it reads and writes. */
  hostConfigs?: string[];
  /** `wats try`: the throwaway node's data dir, which the launcher makes and removes. */
  scratch?: string;
  /** `wats service`: its unit file or plist and what else it touches (src/cli/service.ts). */
  service?: ServiceGrant;
  /**
   * Daemon under `sandbox.network = "model-only"`: the model proxy's socket and the
   * `host:port`s it opens tunnels to (src/safety/net_gate.ts).
   */
  modelProxy?: { socket: string; hosts: string[] };
}

/** What `wats service` may touch, resolved from its layout. */
export interface ServiceGrant {
  /** The systemd unit or launchd plist. */
  file: string;
  /** The file, or its folder when that does not exist yet (install creates it). */
  writable: string;
  /** systemd: the `default.target.wants/` link, removed by uninstall if still there. */
  enableLink?: string;
  /** launchd: the log file install creates in the data dir. */
  log?: string;
  /** launchd: `<data dir>/service.env`, whose variables install copies into the plist. */
  envFile?: string;
  /** The manager status and uninstall ask: `systemctl` or `launchctl`. */
  manager: string;
  /** launchd's domain `gui/<uid>` needs the user id. */
  needsUid: boolean;
}

/** The grant to listen on an ephemeral port of 127.0.0.1 (and to nothing else). */
export const LOOPBACK_EPHEMERAL = "127.0.0.1:0";

const NONE: PermissionSet = {
  read: [],
  write: [],
  net: [],
  run: [],
  env: false,
  sys: false,
  ffi: false,
  import: false,
};

/** The socket needs net, read and write grants on its path to listen or connect. */
function socketGrant(socket: string): Pick<PermissionSet, "read" | "write" | "net"> {
  return { read: [socket], write: [socket], net: [`unix:${socket}`] };
}

/**
 * What writing the MCP over HTTP token file takes (src/mcp/http_tokens.ts): the file, the `.tmp`
 * renamed over it, and the `.lock` that makes writers wait for each other.
 */
function tokenFiles(p: DataPaths): string[] {
  return [p.mcpTokens, `${p.mcpTokens}.tmp`, `${p.mcpTokens}.lock`];
}

/** Returns the permission set of `command`. */
export function permissionsFor(command: CommandId, inputs: PermissionInputs): PermissionSet {
  const p = inputs.paths;
  switch (command) {
    case "help":
      return { ...NONE };
    case "daemon": {
      // mcp.sock, and a sandboxed run's own socket (src/node/run_socket.ts).
      const main = socketGrant(p.socket);
      const run = socketGrant(p.runSocket);
      const sock = {
        read: [...main.read, ...run.read],
        write: [...main.write, ...run.write],
        net: [...main.net, ...run.net],
      };
      return {
        ...NONE,
        read: unique([
          p.dataDir,
          ...(inputs.workdir ? [inputs.workdir] : []),
          ...(inputs.heartbeatFile ? [inputs.heartbeatFile] : []),
          ...(inputs.checkouts ?? []),
          ...(inputs.claudeConfigs ?? []),
          ...sock.read,
          ...(inputs.modelProxy ? [inputs.modelProxy.socket] : []),
          // The signature-check workers' module, to start them (they hold no permission).
          ...VERIFY_WORKER_SOURCES.map((u) => fileURLToPath(u)),
        ]),
        // Never config.toml, never safety.json: the agent's own daemon cannot
        // rewrite the settings that hold the agent in check.
        write: unique([
          p.store,
          p.nodeKey,
          p.lock,
          p.agentDir,
          p.worktrees,
          ...sock.write,
          ...(inputs.modelProxy ? [inputs.modelProxy.socket] : []),
        ]),
        net: unique([
          ...sock.net,
          ...(inputs.listen ? [inputs.listen] : []),
          ...(inputs.mcpListen ? [inputs.mcpListen] : []),
          ...(inputs.relays ?? []),
          ...(inputs.notifyHosts ?? []),
          ...(inputs.loopbackServer ? [LOOPBACK_EPHEMERAL] : []),
          // The model proxy listens on its socket and connects only to the model hosts.
          ...(inputs.modelProxy
            ? [`unix:${inputs.modelProxy.socket}`, ...inputs.modelProxy.hosts]
            : []),
        ]),
        // The notify targets' secrets and the Codex provider's key, read once at start; no other
        // variable.
        env: inputs.notifyEnv?.length || inputs.agentKeyEnv?.length
          ? unique([...(inputs.notifyEnv ?? []), ...(inputs.agentKeyEnv ?? [])])
          : false,
        // `kill` signals a run's whole process group on timeout or halt; `ps`
        // tells whether a run a crashed daemon left still runs, and which
        // processes a Codex run has (never /proc, whose <pid>/root would open
        // every file).
        run: unique([
          ...(inputs.harnesses ?? []),
          ...(inputs.sandbox ? [inputs.sandbox] : []),
          // `wats work push --draft-pr` opens the pull request with gh (docs/acp.md "Works").
          ...((inputs.checkouts ?? []).length > 0 ? ["gh"] : []),
          "git",
          "kill",
          "ps",
        ]),
      };
    }
    case "mcp": {
      const sock = socketGrant(p.socket);
      return {
        ...NONE,
        read: unique([p.dataDir, ...sock.read]),
        write: sock.write,
        net: sock.net,
        // `kill`: a runner session whose daemon went away ends its own run's
        // process group (src/cli/mcp.ts).
        run: unique([...inputs.self.slice(0, 1), "kill"]),
      };
    }
    case "mcp-token": {
      // The token file (written beside, then renamed over, under a lock on its `.lock` file:
      // src/mcp/http_tokens.ts) and config.toml for the profile.
      const files = tokenFiles(p);
      return { ...NONE, read: unique([p.config, ...files]), write: files };
    }
    case "agent-read":
      return { ...NONE, read: [p.agentDir] };
    case "agent-decide": {
      const sock = socketGrant(p.socket);
      return {
        ...NONE,
        read: unique([p.agentDir, ...sock.read]),
        write: sock.write,
        net: sock.net,
      };
    }
    case "agent-edit": {
      const sock = socketGrant(p.socket);
      return {
        ...NONE,
        read: unique([p.agentDir, ...sock.read, ...(inputs.editFile ? [inputs.editFile] : [])]),
        write: unique([...sock.write, ...(inputs.editFile ? [inputs.editFile] : [])]),
        net: sock.net,
        run: inputs.editor ? [inputs.editor] : [],
      };
    }
    case "config-read":
      return { ...NONE, read: [p.config, p.safety] };
    case "config-write":
      return { ...NONE, read: [p.config, p.safety], write: [p.config] };
    case "config-ack":
      return { ...NONE, read: [p.config, p.safety], write: [p.safety] };
    case "safety-init":
      return { ...NONE, read: [p.config, p.safety], write: [p.safety] };
    case "setup":
      return {
        ...NONE,
        read: unique([
          p.config,
          p.safety,
          ...(inputs.hostConfigs ?? []),
          ...(inputs.claudeConfigs ?? []),
          // `--http`: a token for the entry (src/mcp/http_tokens.ts).
          ...tokenFiles(p),
        ]),
        write: unique([p.config, ...(inputs.hostConfigs ?? []), ...tokenFiles(p)]),
        // `claude mcp …` registers wats; `codex --version` only checks Codex is installed.
        run: ["claude", "codex"],
      };
    case "control":
    case "work": {
      // `wats resume`, `wats guardian halt`: one line to the daemon, nothing else.
      // `wats work`: the daemon does the work (src/acp/work_ops.ts), so the same.
      const sock = socketGrant(p.socket);
      return { ...NONE, read: sock.read, write: sock.write, net: sock.net };
    }
    case "ask":
    case "thread": {
      // `wats ask`, `wats thread`: an MCP session with the daemon, which signs, stores and
      // publishes; nothing else (docs/asks.md).
      const sock = socketGrant(p.socket);
      return { ...NONE, read: sock.read, write: sock.write, net: sock.net };
    }
    case "status": {
      const sock = socketGrant(p.socket);
      return { ...NONE, read: unique([p.dataDir, ...sock.read]), write: sock.write, net: sock.net };
    }
    case "ui": {
      // A client of the socket like `status`, plus the one address it serves.
      // It writes one file: config.toml, when the person confirms "allow always"
      // on a permission card (src/node/policy_rule.ts), as `wats config set` would;
      // the socket's write grant is what connecting takes.
      const sock = socketGrant(p.socket);
      return {
        ...NONE,
        read: unique([p.dataDir, ...sock.read, ...(inputs.uiAssets ? [inputs.uiAssets] : [])]),
        write: unique([...sock.write, p.config]),
        net: unique([...sock.net, ...(inputs.listen ? [inputs.listen] : [])]),
      };
    }
    case "try": {
      // This node's socket and the throwaway node's data dir (its socket inside);
      // it runs only itself, as that node. No TCP: the nodes peer by themselves.
      const sock = socketGrant(p.socket);
      const dir = inputs.scratch ? [inputs.scratch] : [];
      return {
        ...NONE,
        read: unique([...sock.read, ...dir]),
        write: unique([...sock.write, ...dir]),
        net: unique([...sock.net, ...dir.map((d) => `unix:${d}/mcp.sock`)]),
        run: inputs.self.slice(0, 1),
      };
    }
    case "service-install": {
      // Writes one file and runs nothing: starting it is the user's command.
      const s = inputs.service;
      if (s === undefined) return { ...NONE };
      return {
        ...NONE,
        read: unique([s.file, ...(s.log ? [s.log] : []), ...(s.envFile ? [s.envFile] : [])]),
        write: unique([s.writable, ...(s.log ? [s.log] : [])]),
      };
    }
    case "service-uninstall":
    case "service-status": {
      const s = inputs.service;
      if (s === undefined) return { ...NONE };
      const uninstall = command === "service-uninstall";
      return {
        ...NONE,
        // status compares the plist with what install would write, env file included.
        read: unique([s.file, ...(s.envFile && !uninstall ? [s.envFile] : [])]),
        write: uninstall ? unique([s.file, ...(s.enableLink ? [s.enableLink] : [])]) : [],
        run: [s.manager],
        sys: s.needsUid ? ["uid"] : false,
      };
    }
  }
}

/**
 * The flags of the launcher itself, and so of the compiled binary: the union of
 * every command's set. Paths are only known at run time, so the union is the
 * whole kind; each Worker then narrows it. deno.json's `wats` and `compile` tasks
 * must carry exactly these (a test checks).
 *
 * `--no-prompt`: a Worker inherits the process's prompt setting (measured: at a
 * terminal, a Worker's `Deno.kill` outside its grant asks "Allow? [y/n/A]" and
 * waits), so without it one step outside a command's set freezes that command
 * until a person answers, and a "y" grants more than the set. With it, the step
 * throws `NotCapable` at a terminal too, as in tests and services.
 */
export const LAUNCHER_FLAGS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "--allow-run",
  "--allow-env",
  "--allow-sys",
  "--no-prompt",
];

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}
