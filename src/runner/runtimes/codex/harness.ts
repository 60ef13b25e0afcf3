/**
 * The Codex CLI harness (docs/decisions/runner.md, "Codex (0.1.6)"; docs/harness_facts.md; docs/codex.md).
 *
 * A run is `codex exec --json --ephemeral` locked down to the wats tools:
 * `--ignore-user-config` and `--ignore-rules` (the user's config.toml and
 * execpolicy rules stay out; the login in `CODEX_HOME` still works), a
 * read-only sandbox whatever `agent.access` says (Codex has no path deny
 * rules, so nothing may be a writable root), `approval_policy="never"` (`exec`
 * has no `-a`), the features of {@linkcode LOCKDOWN_FEATURES} this Codex knows
 * switched off, web search off, `project_doc_max_bytes=0` (an `AGENTS.md` in the
 * cwd would enter the prompt), no analytics, no update check.
 *
 * The wats MCP server is given with `-c mcp_servers.wats.*` overrides (TOML
 * values): `required=true` (otherwise a server that fails to start is silent)
 * and `default_tools_approval_mode="approve"` (otherwise un-annotated tools fail
 * under approval never). Codex starts MCP servers with a filtered environment
 * (HOME, PATH, LANG, SHELL, TERM), so the run token and the variables `wats mcp`
 * may need are forwarded by name with `env_vars`: the token is set in Codex's
 * own environment rather than in an `env={…}` override, which would put it on
 * the command line for every user of the machine to read.
 *
 * **The lock** (docs/codex.md): every run passes `-c model_catalog_json=<file>`, a catalog
 * without code mode, sub-agents, patch or search tools (codex_catalog.ts), so whatever model is
 * chosen the model sees only the wats tools; `--strict-config` makes Codex refuse a `-c` key it
 * does not know instead of ignoring it. The daemon proves the lock once per Codex version with a
 * self-check (codex_lock.ts). Should a run still show a shell command, a file change, a
 * sub-agent or a web search in its event stream, the parser (codex_parser.ts) asks the runner to stop it at once
 * and fails it with "lock broken: …".
 *
 * The model provider is the user's Codex default (their `codex login`, or an
 * API key in `CODEX_API_KEY`) unless the harness is given a provider: with
 * `--ignore-user-config` the providers of the user's config.toml are not
 * loaded, and `OPENAI_BASE_URL` is not honoured (measured), so a custom
 * endpoint must come through {@linkcode CodexProvider}.
 *
 * Output (`--json`, one event a line): `turn.completed` ends a good run,
 * `turn.failed` (after an `error` event) a failed one. Top-level `error` events
 * and `error` items alone are warnings ("Reconnecting... 2/5", unknown model
 * metadata). Exit code 0 does not mean the tools worked: a `mcp_tool_call` item
 * with status `failed` is a tool error. A required MCP server that does not
 * start makes Codex exit 1 before `thread.started`, with the reason on stderr
 * only (the runner appends the stderr tail to the error). Codex reports tokens,
 * never a cost: results carry no `costUsd`, so runs count against
 * `agent.max_runs_per_day`. It has no turn limit either: `agent.max_turns` is not
 * enforced, `agent.timeout` bounds a run.
 *
 * @module
 */

import { ConfigError } from "../../../errors.ts";
import { MCP_SERVER_NAME, RUN_TOKEN_ENV } from "../../../contracts/session.ts";
import { runSystemPrompt } from "../../../prompts.ts";
import type { Harness, HarnessCommand, ProcessRule, RunContext } from "../../harness.ts";
import { LOCKDOWN_FEATURES } from "./features.ts";
import { CodexJsonParser } from "./parser.ts";

/**
 * Variables forwarded by name to `wats mcp` when Codex has them: those the wats
 * CLI reads (src/cli/context.ts `filterEnv`) beyond the five Codex always
 * passes, and `DENO_DIR`, which a wats run from source (`deno run … main.ts`)
 * needs to find its cache when HOME differs.
 */
export const FORWARDED_ENV: readonly string[] = [
  "USER",
  "LOGNAME",
  "TMPDIR",
  "XDG_DATA_HOME",
  "XDG_CONFIG_HOME",
  "NO_COLOR",
  "DENO_DIR",
];

/** The `-c` overrides that close what `--disable` does not (docs/harness_facts.md). */
export const LOCKED_CONFIG: readonly string[] = [
  'web_search="disabled"',
  "project_doc_max_bytes=0",
  "analytics.enabled=false",
  "check_for_update_on_startup=false",
];

/**
 * A model provider for Codex to use instead of its default: an OpenAI-compatible
 * Responses API (`wire_api = "responses"`) at `baseUrl`.
 */
export interface CodexProvider {
  /** The provider id (a bare TOML key, not a built-in id such as `openai`). */
  id: string;
  /** Shown by Codex in messages; the id when unset. */
  name?: string;
  /** E.g. `https://example.test/v1`: Codex posts to `<baseUrl>/responses`. */
  baseUrl: string;
  /** The variable of Codex's environment holding the API key; none sent when unset. */
  envKey?: string;
  /** Codex's `request_max_retries`; its default when unset. */
  requestMaxRetries?: number;
  /** Codex's `stream_max_retries`; its default when unset. */
  streamMaxRetries?: number;
}

/** Options of the Codex harness. */
export interface CodexHarnessOptions {
  /** The program; `codex` (found on PATH) when unset. */
  program?: string;
  /**
   * The locked model catalog (`ensureCodexCatalog(…).path`, codex_catalog.ts). Required: without
   * it catalog models run in code mode.
   */
  catalog: string;
  /**
   * The features to `--disable`: `lockdownDisables(await probe(program))`
   * (codex_features.ts). Required, so that no run starts without the probe:
   * an empty list leaves the shell on.
   */
  disable: readonly string[];
  /** `-m`: the model slug; Codex's default when unset. */
  model?: string;
  /** A provider instead of Codex's default (its login). */
  provider?: CodexProvider;
  /** More variable names to forward to `wats mcp`, after {@linkcode FORWARDED_ENV}. */
  forwardEnv?: readonly string[];
}

/** Built-in provider ids Codex refuses to have redefined. */
const RESERVED_PROVIDER_IDS: ReadonlySet<string> = new Set(["openai", "ollama", "lmstudio"]);

/**
 * A TOML basic string: `"…"` with backslash, quote and control characters
 * escaped. Codex parses each `-c` value as TOML and silently takes the raw text
 * as a string when that fails, so quoting must be exact.
 */
export function tomlString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (c < 0x20 || c === 0x7f) out += `\\u${c.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return out + '"';
}

/** A TOML array of strings, e.g. `["a","b c"]`. */
export function tomlStringArray(xs: readonly string[]): string {
  return `[${xs.map(tomlString).join(",")}]`;
}

/** The `key=value` overrides that define the wats MCP server of a run. */
export function mcpServerConfig(
  ctx: RunContext,
  forwardEnv: readonly string[] = [],
): string[] {
  const k = `mcp_servers.${MCP_SERVER_NAME}`;
  const env = [
    ...new Set([
      ...(ctx.token !== undefined ? [RUN_TOKEN_ENV] : []),
      ...FORWARDED_ENV,
      ...forwardEnv,
    ]),
  ];
  return [
    `${k}.command=${tomlString(ctx.selfCommand.command)}`,
    `${k}.args=${
      tomlStringArray([
        ...ctx.selfCommand.args,
        "mcp",
        "--profile",
        ctx.agentProfile,
        "--data-dir",
        ctx.dataDir,
      ])
    }`,
    `${k}.env_vars=${tomlStringArray(env)}`,
    `${k}.required=true`,
    // Codex gives a server 10 s to start, then fails the run (required): `wats mcp` can take
    // longer on a loaded machine (issue 27), and a run that fails so never acts.
    `${k}.startup_timeout_sec=60`,
    `${k}.default_tools_approval_mode="approve"`,
  ];
}

/**
 * The `key=value` overrides that select `p` as the model provider.
 *
 * @throws {ConfigError} code `agent.codex_provider` on an id that is not a bare
 *   TOML key or is a built-in id, a base URL that is not http(s), or a retry
 *   count that is not a whole number ≥ 0.
 */
export function providerConfig(p: CodexProvider): string[] {
  const bad = (msg: string) => new ConfigError("agent.codex_provider", msg);
  if (!/^[A-Za-z0-9_-]+$/.test(p.id)) {
    throw bad(`the Codex provider id "${p.id}" may hold only letters, digits, _ and -`);
  }
  if (RESERVED_PROVIDER_IDS.has(p.id)) {
    throw bad(`"${p.id}" is a built-in Codex provider and cannot be redefined; choose another id`);
  }
  let url: URL;
  try {
    url = new URL(p.baseUrl);
  } catch {
    throw bad(`the Codex provider base URL "${p.baseUrl}" is not a URL (e.g. https://host/v1)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw bad(`the Codex provider base URL "${p.baseUrl}" must start with http:// or https://`);
  }
  const k = `model_providers.${p.id}`;
  const out = [
    `model_provider=${tomlString(p.id)}`,
    `${k}.name=${tomlString(p.name ?? p.id)}`,
    `${k}.base_url=${tomlString(p.baseUrl)}`,
    `${k}.wire_api="responses"`,
  ];
  if (p.envKey !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(p.envKey)) {
      throw bad(`the Codex provider key variable "${p.envKey}" is not a variable name`);
    }
    out.push(`${k}.env_key=${tomlString(p.envKey)}`);
  }
  for (
    const [key, n] of [
      ["request_max_retries", p.requestMaxRetries],
      ["stream_max_retries", p.streamMaxRetries],
    ] as const
  ) {
    if (n === undefined) continue;
    if (!Number.isSafeInteger(n) || n < 0) {
      throw bad(`${key} is ${n}: it must be a whole number ≥ 0`);
    }
    out.push(`${k}.${key}=${n}`);
  }
  return out;
}

/**
 * The argument list of a run, in order; the prompt comes on stdin (`-`).
 *
 * @throws {ConfigError} on a provider it cannot use, or a feature to disable
 *   that is not a lock-down feature (the list must come from the probe).
 */
export function codexArgs(ctx: RunContext, opts: CodexHarnessOptions): string[] {
  for (const f of opts.disable) {
    if (!LOCKDOWN_FEATURES.includes(f)) {
      throw new ConfigError(
        "agent.runtime",
        `"${f}" is not a Codex lock-down feature; pass lockdownDisables(…) of the probe`,
      );
    }
  }
  const c = (kv: string) => ["-c", kv];
  return [
    "exec",
    "--json",
    "--ephemeral",
    "--strict-config",
    "--ignore-user-config",
    "--ignore-rules",
    "--skip-git-repo-check",
    "-C",
    ctx.cwd,
    "-s",
    "read-only",
    ...c('approval_policy="never"'),
    ...c(`model_catalog_json=${tomlString(opts.catalog)}`),
    ...(opts.model !== undefined ? ["-m", opts.model] : []),
    ...opts.disable.flatMap((f) => ["--disable", f]),
    ...LOCKED_CONFIG.flatMap(c),
    ...mcpServerConfig(ctx, opts.forwardEnv).flatMap(c),
    ...(opts.provider !== undefined ? providerConfig(opts.provider).flatMap(c) : []),
    "-",
  ];
}

/** The Codex harness. */
export function codexHarness(opts: CodexHarnessOptions): Harness {
  const program = opts.program ?? "codex";
  return {
    name: "codex",
    command(ctx: RunContext): HarnessCommand {
      return {
        program,
        args: codexArgs(ctx, opts),
        env: {
          // Without it a failure ends stderr with a stack backtrace, and the
          // runner's stderr tail would show frames instead of the reason.
          RUST_BACKTRACE: "0",
          ...(ctx.token !== undefined ? { [RUN_TOKEN_ENV]: ctx.token } : {}),
        },
        cwd: ctx.cwd,
        // Codex has no system prompt flag that --strict-config accepts here, and a
        // runner session's MCP instructions carry only the opening sentence: the
        // rest of what a run's model must know comes first on stdin.
        stdin: `${runSystemPrompt()}\n${ctx.prompt}`,
        files: [],
      };
    },
    parser: () => new CodexJsonParser(),
    processRule: codexProcessRule,
  };
}

/**
 * Codex's own helper, measured with 0.171 on Linux: at start it runs `lsb_release -a` (a
 * shell script that runs getopt, cut and tr) to describe the system.
 */
const CODEX_HELPER = /^(\S*\/)?(sh |bash |dash )?(\S*\/)?lsb_release -a$/;

/**
 * The processes a locked Codex run has (measured with 0.171, docs/harness_facts.md): the
 * `codex` launcher and the native `codex` it starts, both with the run's arguments; the
 * `wats mcp` it starts for the wats tools (in a process group of its own), with what that
 * starts; its system probe. Anything else, a shell command first (`/proc/self/exe --codex-run-as-process-setup`,
 * `bwrap`, the command), breaks the lock.
 */
export function codexProcessRule(cmd: HarnessCommand, ctx: RunContext): ProcessRule {
  const own = ` ${cmd.args.join(" ")}`;
  const mcp = ` ${
    [...ctx.selfCommand.args, "mcp", "--profile", ctx.agentProfile, "--data-dir", ctx.dataDir]
      .join(" ")
  }`;
  return (args) => {
    if (args.endsWith(own)) return "run";
    // wats's own code, with what it starts (a node of its own when none runs).
    if (args.endsWith(mcp) || CODEX_HELPER.test(args)) return "helper";
    return undefined;
  };
}
