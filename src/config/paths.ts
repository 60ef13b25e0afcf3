/**
 * Where a node keeps its files. The data directory is the contract between the
 * daemon, `wats mcp` and the CLI (docs/architecture.md §3); every path below derives from it.
 *
 * @module
 */

/** The files and folders of one data directory, all absolute. */
export interface DataPaths {
  dataDir: string;
  config: string;
  safety: string;
  nodeKey: string;
  store: string;
  socket: string;
  /** A sandboxed heartbeat run's own socket, while it runs (src/node/run_socket.ts). */
  runSocket: string;
  /** The hashes of the MCP over HTTP tokens (src/mcp/http_tokens.ts); the daemon only reads it. */
  mcpTokens: string;
  lock: string;
  agentDir: string;
  runsDir: string;
  runsIndex: string;
  pendingDir: string;
  runDir: string;
  worktrees: string;
}

/** The environment values that decide the default data directory. */
export interface DataDirEnv {
  WATS_DATA_DIR?: string;
  XDG_DATA_HOME?: string;
  HOME?: string;
}

/**
 * Resolves the data directory: `--data-dir`, else `$WATS_DATA_DIR`, else
 * `$XDG_DATA_HOME/wats`, else `~/.local/share/wats` (macOS: `~/Library/Application
 * Support/wats`). Relative paths are made absolute against `cwd`.
 */
export function resolveDataDir(
  flag: string | undefined,
  env: DataDirEnv,
  os: string,
  cwd: string,
): string {
  const chosen = flag ?? nonEmpty(env.WATS_DATA_DIR) ?? defaultDataDir(env, os);
  return absolute(chosen, cwd);
}

function defaultDataDir(env: DataDirEnv, os: string): string {
  if (nonEmpty(env.XDG_DATA_HOME)) return `${env.XDG_DATA_HOME}/wats`;
  const home = nonEmpty(env.HOME);
  if (!home) {
    throw new Error("Cannot find a data directory: HOME is not set; pass --data-dir DIR");
  }
  return os === "darwin" ? `${home}/Library/Application Support/wats` : `${home}/.local/share/wats`;
}

/** All the paths of a data directory. */
export function dataPaths(dataDir: string): DataPaths {
  const d = dataDir.replace(/\/+$/, "") || "/";
  const agentDir = `${d}/agent`;
  return {
    dataDir: d,
    config: `${d}/config.toml`,
    safety: `${d}/safety.json`,
    nodeKey: `${d}/node.key`,
    store: `${d}/store.db`,
    socket: `${d}/mcp.sock`,
    runSocket: `${agentDir}/run.sock`,
    mcpTokens: `${d}/mcp_tokens.json`,
    lock: `${d}/daemon.lock`,
    agentDir,
    runsDir: `${agentDir}/runs`,
    runsIndex: `${agentDir}/runs.jsonl`,
    pendingDir: `${agentDir}/pending`,
    runDir: `${agentDir}/run`,
    worktrees: `${d}/worktrees`,
  };
}

/** Makes `path` absolute against `cwd` and removes `.`/`..` segments. */
export function absolute(path: string, cwd: string): string {
  const joined = path.startsWith("/") ? path : `${cwd}/${path}`;
  const out: string[] = [];
  for (const part of joined.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return "/" + out.join("/");
}

/** True when `inner` is `outer` or lies inside it (both absolute, normalised). */
export function isWithin(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith("/") ? outer : outer + "/");
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === "" ? undefined : v;
}
