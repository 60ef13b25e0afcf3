/**
 * The environment a heartbeat run's agent starts with: an allowlist over the daemon's, never the
 * daemon's whole environment (issue 26). Found from inside: a `claude -p` run at `workspace` with
 * Bash printed `GH_TOKEN` and a notify target's secret, because the process inherited everything
 * the daemon was started with. So the run's process starts from a cleared environment holding
 * only what the runtime itself reads — the basics every program needs, its own API key and
 * endpoint variables — plus what the harness sets (`HarnessCommand.env`: the run token, Claude's
 * MCP wait, Codex's `RUST_BACKTRACE`).
 *
 * One table ({@linkcode RUN_ENV}), tested as a table (tests/contracts/run_env_test.ts): a variable
 * not in it never reaches a run, whatever its name says. `agent.codex_env_key` names one more for
 * Codex (the daemon reads exactly that one: docs/permissions.md).
 *
 * @module
 */

/** Which variables a runtime's process keeps: exact names and name prefixes. */
export interface EnvAllowlist {
  names: readonly string[];
  prefixes: readonly string[];
}

/**
 * The declared allowlist: `common` for every runtime, then each runtime's own. AWS_*, GH_*,
 * GITHUB_*, SSH_*, `*_TOKEN`, `*_SECRET` and the notify targets' variables are in none of them.
 */
export const RUN_ENV: Readonly<Record<"common" | "claude" | "codex", EnvAllowlist>> = {
  common: {
    names: [
      "PATH",
      "HOME",
      "USER",
      "LOGNAME",
      "SHELL",
      "LANG",
      "LANGUAGE",
      "TERM",
      "COLORTERM",
      "NO_COLOR",
      "TZ",
      "TMPDIR",
      "XDG_CONFIG_HOME",
      "XDG_DATA_HOME",
      "XDG_CACHE_HOME",
      "XDG_STATE_HOME",
      // `wats mcp` run from source finds its module cache here when HOME differs.
      "DENO_DIR",
      // Reaching the model API from behind a proxy, or with a private CA.
      "HTTP_PROXY",
      "HTTPS_PROXY",
      "NO_PROXY",
      "ALL_PROXY",
      "http_proxy",
      "https_proxy",
      "no_proxy",
      "all_proxy",
      "SSL_CERT_FILE",
      "SSL_CERT_DIR",
      "NODE_EXTRA_CA_CERTS",
    ],
    prefixes: ["LC_"],
  },
  // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, …; CLAUDE_CONFIG_DIR, CLAUDE_CODE_*.
  claude: { names: [], prefixes: ["ANTHROPIC_", "CLAUDE_"] },
  // OPENAI_API_KEY, CODEX_API_KEY, CODEX_HOME, …
  codex: { names: [], prefixes: ["OPENAI_", "CODEX_"] },
};

/**
 * The allowlist of a runtime whose own list is `own` (its `RuntimeFacts.env`, one of
 * {@linkcode RUN_ENV}'s; only the common part when it has none), and `extra` names.
 */
export function runEnvAllowlist(
  own: EnvAllowlist | undefined,
  extra: readonly string[] = [],
): EnvAllowlist {
  return {
    names: [...RUN_ENV.common.names, ...(own?.names ?? []), ...extra],
    prefixes: [...RUN_ENV.common.prefixes, ...(own?.prefixes ?? [])],
  };
}

/** True when `name` passes `list`. */
export function envAllows(list: EnvAllowlist, name: string): boolean {
  return list.names.includes(name) || list.prefixes.some((p) => name.startsWith(p));
}

/** The variables of `from` that `list` lets through. */
export function pickEnv(
  from: Readonly<Record<string, string>>,
  list: EnvAllowlist,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(from)) if (envAllows(list, k)) out[k] = v;
  return out;
}

/**
 * The variables any runtime's run may get, from the launcher's whole environment: what the
 * launcher hands the daemon for its runs (src/cli/context.ts), beside its filtered copy.
 */
export function anyRunEnv(from: Readonly<Record<string, string>>): Record<string, string> {
  return pickEnv(from, {
    names: RUN_ENV.common.names,
    prefixes: [...RUN_ENV.common.prefixes, ...RUN_ENV.claude.prefixes, ...RUN_ENV.codex.prefixes],
  });
}
