/**
 * Runs the real Claude Code CLI (the pinned one in `.cache/clis/`) against a
 * mock model server, isolated from the machine's own Claude setup: each run
 * gets its own HOME, TMPDIR and CLAUDE_CONFIG_DIR, and no outside traffic.
 *
 * @module
 */

import { claudeBin } from "./clis.ts";
import { denoDir } from "./cli.ts";
import { MOCK_MODEL } from "./mock_anthropic.ts";

/** How to run the CLI once. */
export interface RunClaudeOptions {
  /** Command-line arguments, e.g. `["-p", "--output-format", "stream-json", "--verbose"]`. */
  args: string[];
  /** Written to stdin, which is then closed (the CLI waits for EOF before it starts). */
  prompt: string;
  /** The working directory. */
  cwd: string;
  /** The mock's base URL (`ANTHROPIC_BASE_URL`). */
  mockUrl: string;
  /**
   * A HOME to use and keep (e.g. to inspect or resume a session). When unset a
   * fresh temp dir is used and removed after the run.
   */
  home?: string;
  /** Extra environment variables (applied last). */
  env?: Record<string, string>;
  /** Kill the CLI after this long (SIGKILL); 120 s when unset. */
  timeoutMs?: number;
}

/** How one run ended. */
export interface ClaudeRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout's lines parsed as JSON (stream-json); lines that are not JSON are skipped. */
  events: Record<string, unknown>[];
  /** True when the run was killed for taking longer than `timeoutMs`. */
  timedOut: boolean;
  /** Wall time of the run in milliseconds. */
  ms: number;
  /** The HOME the run used (removed after the run unless it was passed in). */
  home: string;
}

/** Environment variables that change the CLI's behaviour when inherited from the test's shell. */
const DROPPED_ENV = /^(IS_SANDBOX|ANTHROPIC_.*|CLAUDE_.*|CLAUDECODE|OTEL_.*|DISABLE_.*)$/;

/** Parses stream-json output: one JSON object a line. */
export function parseEvents(stdout: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of stdout.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("{")) continue;
    try {
      out.push(JSON.parse(t));
    } catch {
      // A partial last line (killed on timeout) is not an event.
    }
  }
  return out;
}

/** Runs the pinned Claude Code CLI once. Requires `--allow-run --allow-read --allow-write --allow-env`. */
export async function runClaude(opts: RunClaudeOptions): Promise<ClaudeRun> {
  const bin = claudeBin();
  const home = opts.home ?? Deno.makeTempDirSync({ prefix: "wats-claude-home-" });
  const tmp = Deno.makeTempDirSync({ prefix: "wats-claude-tmp-" });
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    if (!DROPPED_ENV.test(k)) env[k] = v;
  }
  Object.assign(env, {
    HOME: home,
    TMPDIR: tmp,
    CLAUDE_CONFIG_DIR: `${home}/.claude`,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ANTHROPIC_BASE_URL: opts.mockUrl,
    ANTHROPIC_API_KEY: "test-key",
    // MCP servers the CLI starts inherit this HOME; keep Deno's cache where it is.
    DENO_DIR: denoDir(),
  }, opts.env ?? {});

  const started = performance.now();
  const child = new Deno.Command(bin, {
    args: opts.args,
    cwd: opts.cwd,
    env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, opts.timeoutMs ?? 120_000);
  try {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.prompt));
    await w.close();
  } catch {
    // The CLI exited before reading stdin (e.g. a usage error); its output says why.
  }
  const out = await child.output();
  clearTimeout(timer);
  const ms = performance.now() - started;
  Deno.removeSync(tmp, { recursive: true });
  if (opts.home === undefined) Deno.removeSync(home, { recursive: true });
  const dec = new TextDecoder();
  const stdout = dec.decode(out.stdout);
  return {
    code: out.code,
    stdout,
    stderr: dec.decode(out.stderr),
    events: parseEvents(stdout),
    timedOut,
    ms,
    home,
  };
}

/** The MCP servers and tools a run's `init` line reported. */
export interface ClaudeInit {
  /** By name and status only: newer releases add fields (2.1.332: `source`). */
  servers: { name: string; status: string }[];
  tools: string[];
}

/**
 * Runs the CLI once in `-p` stream-json mode with `servers` (written to `cwd`/mcp.json) as its
 * only MCP servers and their tools as its only tools, no settings read; `init` is what its
 * init line reported, if it printed one.
 */
export async function runClaudeOnMcp(o: {
  servers: Record<string, unknown>;
  prompt: string;
  cwd: string;
  mockUrl: string;
  env?: Record<string, string>;
}): Promise<ClaudeRun & { init?: ClaudeInit }> {
  const config = `${o.cwd}/mcp.json`;
  await Deno.writeTextFile(config, JSON.stringify({ mcpServers: o.servers }));
  const run = await runClaude({
    args: [
      ...["-p", "--output-format", "stream-json", "--verbose", "--model", MOCK_MODEL],
      ...["--mcp-config", config, "--strict-mcp-config"],
      ...["--allowedTools", ...Object.keys(o.servers).map((name) => `mcp__${name}__*`)],
      ...["--tools", "", "--setting-sources", ""],
    ],
    prompt: o.prompt,
    cwd: o.cwd,
    mockUrl: o.mockUrl,
    ...(o.env ? { env: o.env } : {}),
  });
  const init = run.events.find((e) => e.type === "system" && e.subtype === "init") as
    | { mcp_servers: { name: string; status: string }[]; tools: string[] }
    | undefined;
  if (!init) return run;
  return {
    ...run,
    init: {
      servers: init.mcp_servers.map((m) => ({ name: m.name, status: m.status })),
      tools: init.tools,
    },
  };
}
