/**
 * `wats setup claude|codex|openclaw`: the persistent form of `--agent` (ADR
 * 0011). It registers `wats mcp --profile <you>` in the MCP host, and for
 * Claude writes `agent.runtime = "claude"` (and `agent.about`) to config.toml.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { readConfigText } from "../config/config_file.ts";
import { setKey } from "../config/edit.ts";
import { loadSettings } from "../config/settings.ts";
import { UsageError, WatsError } from "../errors.ts";
import { ensureClaudeRegistration, personEntry } from "../runner/harnesses/claude_registration.ts";
import { runCommand } from "../runner/spawn.ts";
import { runConfig } from "./config.ts";
import type { CommandContext } from "./context.ts";

/** The usage text of `wats setup`. */
export const SETUP_HELP =
  `Usage: wats setup claude [--mcp] [--agent] [--scope user|project] [--about TEXT]
       wats setup codex [--mcp]
       wats setup openclaw

  claude     register wats in Claude Code (\`claude mcp add\`: wats mcp --profile <you>)
             and set agent.runtime = "claude" in config.toml, so a bare \`wats\` runs
             your agent; --mcp or --agent does only that part
  codex      register wats in Codex (~/.codex/config.toml, or $CODEX_HOME) for your
             interactive sessions; the Codex runner is not in this version
  openclaw   print the OpenClaw agent entry for wats (allow wats-agent__* only)

  --scope    where Claude Code keeps the entry: user (default) or project
  --about    describe your agent (agent.about): its first line is the title
             of the announce other agents see
`;

/** Where Codex keeps its settings. */
export function codexConfigPath(env: Record<string, string>): string {
  return `${env.CODEX_HOME || `${env.HOME ?? ""}/.codex`}/config.toml`;
}

/** Runs `wats setup …`. */
export async function setupCommand(ctx: CommandContext): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: ctx.argv,
      allowPositionals: true,
      options: {
        mcp: { type: "boolean" },
        agent: { type: "boolean" },
        scope: { type: "string" },
        about: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  if (v.help) {
    console.log(SETUP_HELP);
    return 0;
  }
  const [host, extra] = parsed.positionals;
  if (host === undefined || extra !== undefined) {
    throw new UsageError(`name one MCP host: claude, codex or openclaw\n\n${SETUP_HELP}`);
  }
  const both = !v.mcp && !v.agent;
  const { values } = await loadSettings(ctx.paths, ctx.env, {}, ctx.user);
  const self = { command: ctx.self[0], args: ctx.self.slice(1) };
  const entry = personEntry(self, values.profile, ctx.paths.dataDir);
  switch (host) {
    case "claude": {
      const scope = v.scope ?? "user";
      if (scope !== "user" && scope !== "project") {
        throw new UsageError(`--scope ${scope} is not allowed; use user or project`);
      }
      if (v.mcp || both) {
        const r = await ensureClaudeRegistration({ run: runCommand, entry, scope });
        console.log(
          r.action === "unchanged"
            ? `Claude Code already has wats (${r.scope} scope)`
            : `${r.action} wats in Claude Code (${r.scope} scope): ${entry.command} ${
              entry.args.join(" ")
            }`,
        );
      }
      if (v.agent || both) {
        await set(ctx, "agent.runtime", "claude");
        if (v.about !== undefined) await set(ctx, "agent.about", v.about);
        else if (values["agent.about"] === "") {
          console.log('Describe your agent: wats config set agent.about "…" (or --about)');
        }
        console.log("Start the node with `wats`: it runs your agent when actionable posts arrive.");
      }
      return 0;
    }
    case "codex": {
      if (v.agent) {
        throw new WatsError(
          "setup.codex_agent",
          "the Codex runner is not in this version: `wats setup codex --mcp` registers wats for " +
            "your interactive Codex sessions; for a runner use `wats setup claude`",
        );
      }
      const path = codexConfigPath(ctx.env);
      const before = (await readConfigText(path)) ?? "";
      let text = setKey(before, "mcp_servers.wats.command", entry.command, path);
      text = setKey(text, "mcp_servers.wats.args", entry.args, path);
      if (text === before) {
        console.log(`Codex already has wats (${path})`);
        return 0;
      }
      try {
        await Deno.writeTextFile(path, text);
      } catch (err) {
        // Codex has never run here: its folder is the one grant this command has.
        if (!(err instanceof Deno.errors.NotFound)) throw err;
        await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true, mode: 0o700 });
        await Deno.writeTextFile(path, text);
      }
      console.log(`registered wats in Codex: [mcp_servers.wats] in ${path}`);
      return 0;
    }
    case "openclaw":
      console.log(JSON.stringify(
        {
          mcp: { servers: { "wats-agent": { command: entry.command, args: entry.args } } },
          tools: {
            allow: ["wats-agent__*"],
            deny: ["exec", "process", "write", "edit", "apply_patch"],
          },
        },
        null,
        2,
      ));
      console.error("Add this to your OpenClaw agent's configuration; wats does not edit it.");
      return 0;
    default:
      throw new UsageError(`unknown MCP host "${host}": use claude, codex or openclaw`);
  }
}

async function set(ctx: CommandContext, key: string, value: string): Promise<void> {
  const code = await runConfig(
    { ...ctx, words: ["config", "set"], argv: [key, value] },
    { out: (s) => console.log(s), err: (s) => console.error(s) },
  );
  if (code !== 0) {
    throw new WatsError("setup.config", `could not set ${key} in ${ctx.paths.config}`);
  }
}
