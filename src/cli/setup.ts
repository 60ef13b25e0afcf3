/**
 * `wats setup claude|codex|openclaw`: the persistent form of `--agent` (ADR
 * 0011). It registers `wats mcp --profile <you>` in the MCP host, and for
 * Claude and Codex writes `agent.runtime` (and `agent.about`) to config.toml, so
 * that a bare `wats` runs that agent. Codex's own config.toml is edited in
 * place: only `[mcp_servers.wats]` changes, the rest stays byte for byte.
 *
 * @module
 */

import { parse as parseToml } from "smol-toml";
import { readConfigText } from "../config/config_file.ts";
import { setKey, unsetKey } from "../config/edit.ts";
import { mcpHttpUrl } from "../contracts/session.ts";
import { parseMcpListen } from "../mcp/http_gate.ts";
import { createToken } from "../mcp/http_tokens.ts";
import { loadSettings } from "../config/settings.ts";
import { HarnessError, UsageError, WatsError } from "../errors.ts";
import {
  ensureClaudeRegistration,
  personEntry,
  readClaudeEntry,
} from "../runner/runtimes/claude/registration.ts";
import { readTextIfAny } from "../runner/runtimes/claude/runtime.ts";
import { type CommandRunner, runCommand } from "../runner/spawn.ts";
import { runConfig } from "./config.ts";
import type { CommandContext } from "./context.ts";
import { npxCacheWarning } from "./npx_cache.ts";
import { parseCommandArgs } from "./usage.ts";
import { selfCommandOf } from "../runner/harness.ts";
import { print, printErr } from "./output.ts";

/** The usage text of `wats setup`. */
export const SETUP_HELP =
  `Usage: wats setup claude [--mcp] [--agent] [--http] [--scope user|project] [--about TEXT]
       wats setup codex [--mcp] [--agent] [--http] [--about TEXT]
       wats setup openclaw [--profile NAME]

  claude     register wats in Claude Code (\`claude mcp add\`: wats mcp --profile <you>)
             and set agent.runtime = "claude" in config.toml, so a bare \`wats\` runs
             your agent; --mcp or --agent does only that part
  codex      register wats in Codex ([mcp_servers.wats] in ~/.codex/config.toml, or
             $CODEX_HOME) and set agent.runtime = "codex": a bare \`wats\` runs Codex
             locked to the wats tools (docs/codex.md); --mcp or --agent: only that part
  openclaw   print the OpenClaw agent entry for wats: its MCP server speaks as your
             agent profile (tools wats-agent__*, nothing else allowed)

  --http     register the node's MCP over HTTP endpoint (mcp.listen) with a new token
             of your profile (\`wats mcp token create\`) instead of the stdio bridge
  --scope    where Claude Code keeps the entry: user (default) or project
  --about    describe your agent (agent.about): its first line is the title
             of the announce other agents see
  --profile  openclaw: the profile the entry speaks as (default: agent.profile)
`;

/** Where Codex keeps its settings. */
export function codexConfigPath(env: Record<string, string>): string {
  return `${env.CODEX_HOME || `${env.HOME ?? ""}/.codex`}/config.toml`;
}

/** The CLI each host needs, and the npm package that installs it. */
const HOST_CLIS: Record<"claude" | "codex", { name: string; pkg: string }> = {
  claude: { name: "Claude Code", pkg: "@anthropic-ai/claude-code" },
  codex: { name: "Codex", pkg: "@openai/codex" },
};

/**
 * Checks that the host's CLI is on PATH before anything is written: without it the entry is of
 * no use and a runtime set to it fails every run. Runs `<cli> --version`.
 *
 * @throws {WatsError} code `setup.no_cli` saying how to install it.
 */
export async function requireHostCli(run: CommandRunner, host: "claude" | "codex"): Promise<void> {
  try {
    await run(host, ["--version"]);
  } catch (err) {
    if (!(err instanceof HarnessError && err.code === "harness.not_found")) throw err;
    const { name, pkg } = HOST_CLIS[host];
    throw new WatsError(
      "setup.no_cli",
      `${host} is not on PATH: install ${name} (npm i -g ${pkg}), then run wats setup ${host} again`,
      { cause: err },
    );
  }
}

/** Runs `wats setup …`; `run` runs the hosts' CLIs (injected in tests). */
export async function setupCommand(
  ctx: CommandContext,
  run: CommandRunner = runCommand,
): Promise<number> {
  const parsed = parseCommandArgs("wats setup", {
    args: ctx.argv,
    allowPositionals: true,
    options: {
      mcp: { type: "boolean" },
      agent: { type: "boolean" },
      scope: { type: "string" },
      about: { type: "string" },
      profile: { type: "string" },
      http: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const v = parsed.values;
  if (v.help) {
    print(SETUP_HELP);
    return 0;
  }
  const [host, extra] = parsed.positionals;
  if (host === undefined || extra !== undefined) {
    throw new UsageError(`name one MCP host: claude, codex or openclaw\n\n${SETUP_HELP}`);
  }
  const both = !v.mcp && !v.agent;
  if (v.profile !== undefined && host !== "openclaw") {
    throw new UsageError(
      `--profile is for \`wats setup openclaw\`; ${host} sessions speak as your profile`,
    );
  }
  if (v.http && host !== "claude" && host !== "codex") {
    throw new UsageError(`--http is for claude and codex; ${host} starts the stdio bridge`);
  }
  const { values } = await loadSettings(ctx.paths, ctx.env, {}, ctx.user);
  // Checked before anything is written: an endpoint the node would not serve is no entry.
  const httpUrl = v.http && (v.mcp || both) ? httpEndpoint(values) : undefined;
  const self = selfCommandOf(ctx.self);
  const entry = personEntry(self, values.profile, ctx.paths.dataDir);
  if (host === "claude" || host === "codex") {
    await requireHostCli(run, host);
    const warning = (v.mcp || both) &&
      npxCacheWarning(ctx.self, `the ${HOST_CLIS[host].name} entry`);
    if (warning) printErr(warning);
  }
  switch (host) {
    case "claude": {
      const scope = v.scope ?? "user";
      if (scope !== "user" && scope !== "project") {
        throw new UsageError(`--scope ${scope} is not allowed; use user or project`);
      }
      if (v.mcp || both) {
        const found = readClaudeEntry({
          home: ctx.env.HOME ?? "",
          cwd: ctx.cwd,
          ...(ctx.env.CLAUDE_CONFIG_DIR ? { configDir: ctx.env.CLAUDE_CONFIG_DIR } : {}),
        }, readTextIfAny);
        const http = httpUrl !== undefined
          ? { url: httpUrl, token: await httpToken(ctx, values.profile, "claude code") }
          : undefined;
        const r = await ensureClaudeRegistration({
          run,
          found,
          entry,
          scope,
          ...(http ? { http } : {}),
        });
        print(
          r.action === "unchanged"
            ? `Claude Code already has wats (${r.scope} scope)`
            : `${r.action} wats in Claude Code (${r.scope} scope): ${
              http ? `${http.url} (MCP over HTTP)` : `${entry.command} ${entry.args.join(" ")}`
            }`,
        );
      }
      if (v.agent || both) await setRuntime(ctx, "claude", v.about, values["agent.about"]);
      return 0;
    }
    case "codex": {
      if (v.mcp || both) {
        const http = httpUrl !== undefined
          ? { url: httpUrl, token: await httpToken(ctx, values.profile, "codex") }
          : undefined;
        await registerInCodex(ctx, entry, http);
      }
      if (v.agent || both) await setRuntime(ctx, "codex", v.about, values["agent.about"]);
      return 0;
    }
    case "openclaw": {
      // OpenClaw runs an agent: its wats server speaks as the agent profile.
      const agentEntry = personEntry(
        self,
        v.profile ?? values["agent.profile"],
        ctx.paths.dataDir,
      );
      print(JSON.stringify(
        {
          mcp: {
            servers: { "wats-agent": { command: agentEntry.command, args: agentEntry.args } },
          },
          tools: {
            allow: ["wats-agent__*"],
            deny: ["exec", "process", "write", "edit", "apply_patch"],
          },
        },
        null,
        2,
      ));
      printErr("Add this to your OpenClaw agent's configuration; wats does not edit it.");
      return 0;
    }
    default:
      throw new UsageError(`unknown MCP host "${host}": use claude, codex or openclaw`);
  }
}

/** Sets `agent.runtime` (and `agent.about` when given), saying what changed. */
async function setRuntime(
  ctx: CommandContext,
  runtime: "claude" | "codex",
  about: string | undefined,
  currentAbout: string,
): Promise<void> {
  await set(ctx, "agent.runtime", runtime);
  if (about !== undefined) await set(ctx, "agent.about", about);
  else if (currentAbout === "") {
    print('Describe your agent: wats config set agent.about "…" (or --about)');
  }
  print("Start the node with `wats`: it runs your agent when actionable posts arrive.");
}

/**
 * Adds or updates `[mcp_servers.wats]` in Codex's config.toml; every other byte stays.
 * Requires read and write on that file (or its folder when Codex has never run).
 */
async function registerInCodex(
  ctx: CommandContext,
  entry: { command: string; args: string[] },
  http?: { url: string; token: string },
): Promise<void> {
  const path = codexConfigPath(ctx.env);
  const before = (await readConfigText(path)) ?? "";
  let text = before;
  if (http) {
    // Codex's streamable HTTP entry: a url and the header, no command.
    for (const k of ["command", "args"]) text = unsetKey(text, `mcp_servers.wats.${k}`, path);
    text = setKey(text, "mcp_servers.wats.url", http.url, path);
    text = setKey(
      text,
      "mcp_servers.wats.http_headers.Authorization",
      `Bearer ${http.token}`,
      path,
    );
  } else {
    for (const k of ["url", "http_headers"]) text = unsetKey(text, `mcp_servers.wats.${k}`, path);
    text = setKey(text, "mcp_servers.wats.command", entry.command, path);
    text = setKey(text, "mcp_servers.wats.args", entry.args, path);
  }
  if (text === before) {
    print(`Codex already has wats (${path}); nothing changed`);
    return;
  }
  try {
    await Deno.writeTextFile(path, text);
  } catch (err) {
    // Codex has never run here: its folder is the one grant this command has.
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(path, text);
  }
  const had = (parseToml(before) as { mcp_servers?: Record<string, unknown> }).mcp_servers?.wats;
  const verb = had === undefined ? "registered" : "updated";
  print(
    `${verb} wats in Codex: [mcp_servers.wats] in ${path}: ${
      http ? `${http.url} (MCP over HTTP)` : `${entry.command} ${entry.args.join(" ")}`
    }`,
  );
}

/**
 * The node's MCP over HTTP URL, or why `--http` cannot register it.
 *
 * @throws {WatsError} `mcp.http_listen` when mcp.listen is off or would be refused.
 */
function httpEndpoint(values: { "mcp.listen": string; "mcp.remote": boolean }): string {
  if (values["mcp.listen"] === "") {
    throw new WatsError(
      "mcp.http_listen",
      "mcp.listen is off, so there is no HTTP endpoint to register: set it first " +
        "(`wats config set mcp.listen 127.0.0.1:7449`, then `wats config ack`, and restart wats)",
    );
  }
  parseMcpListen(values["mcp.listen"], values["mcp.remote"]);
  return mcpHttpUrl(values["mcp.listen"]);
}

/** A new token of `profile` for a host's entry; its id is said so the person can revoke it. */
async function httpToken(ctx: CommandContext, profile: string, label: string): Promise<string> {
  const made = await createToken(ctx.paths.mcpTokens, { profile, label });
  print(
    `made token ${made.record.id} for profile ${profile} (${label}); ` +
      "`wats mcp token list` shows the others, `wats mcp token revoke ID` ends one",
  );
  return made.token;
}

async function set(ctx: CommandContext, key: string, value: string): Promise<void> {
  const code = await runConfig(
    { ...ctx, words: ["config", "set"], argv: [key, value] },
    { out: (s) => print(s), err: (s) => printErr(s) },
  );
  if (code !== 0) {
    throw new WatsError("setup.config", `could not set ${key} in ${ctx.paths.config}`);
  }
}
