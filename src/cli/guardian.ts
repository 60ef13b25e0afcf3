/**
 * `wats resume` and `wats guardian`: who may halt this node's agent, and
 * halting. A halt post from an accepted author stops new runs and cancels the
 * current one until `wats resume` (src/node/halt.ts). These are CLI commands
 * only: the daemon takes them as a control line on its socket, never as an MCP
 * tool, and the agent's deny rules refuse `wats resume` and `wats guardian`.
 *
 * @module
 */

import { npubEncode } from "nostr-tools/nip19";
import { loadSettings } from "../config/settings.ts";
import { authorKeyHex } from "../author_key.ts";
import { UsageError } from "../errors.ts";
import { runConfig } from "./config.ts";
import { GUARDIAN_HELP } from "./help.ts";
import type { CommandContext } from "./context.ts";
import { sendControl } from "../mcp/socket_client.ts";
import { refuseArguments } from "./usage.ts";
import { print, printErr } from "./output.ts";

/** The usage text of `wats resume`. */
export const RESUME_HELP = `Usage: wats resume

Ends a halt on this node: the agent runner starts runs again. Needs the daemon.
`;

/** Runs `wats resume`. */
export async function resumeCommand(ctx: CommandContext): Promise<number> {
  if (ctx.argv.includes("--help") || ctx.argv.includes("-h")) {
    print(RESUME_HELP);
    return 0;
  }
  refuseArguments("wats resume", ctx.argv);
  print(await sendControl(ctx.paths.socket, { wats: "control", op: "resume" }));
  return 0;
}

/** The usage text of `wats agent sweep`. */
export const SWEEP_HELP = `Usage: wats agent sweep

Removes the coding agents' worktrees whose work is in their checkout's base
(merged, squashed or cherry-picked), with their branches, and prints what it
removed. Worktrees in use or with changes stay. Needs the daemon. docs/acp.md
`;

/** Runs \`wats agent sweep\`: the daemon sweeps (it knows which worktrees are in use). */
export async function sweepCommand(ctx: CommandContext): Promise<number> {
  if (ctx.argv.includes("--help") || ctx.argv.includes("-h")) {
    print(SWEEP_HELP);
    return 0;
  }
  refuseArguments("wats agent sweep", ctx.argv);
  print(await sendControl(ctx.paths.socket, { wats: "control", op: "sweep" }));
  return 0;
}

/** Runs `wats guardian …`. */
export async function guardianCommand(ctx: CommandContext): Promise<number> {
  const sub = ctx.words[1];
  if (ctx.argv.includes("--help") || ctx.argv.includes("-h") || sub === undefined) {
    print(GUARDIAN_HELP);
    return sub === undefined && !ctx.argv.includes("--help") && !ctx.argv.includes("-h") ? 2 : 0;
  }
  switch (sub) {
    case "list": {
      refuseArguments("wats guardian list", ctx.argv);
      const { values } = await loadSettings(ctx.paths, ctx.env, {}, ctx.user);
      print(`your own profile (${values.profile}) may always halt your agent`);
      if (values["halt.accept"].length === 0) print("halt.accept is empty: nobody else may");
      for (const k of values["halt.accept"]) print(npubEncode(k));
      return 0;
    }
    case "add":
    case "remove": {
      const [key, extra] = ctx.argv;
      if (key === undefined || extra !== undefined) {
        throw new UsageError(`use: wats guardian ${sub} KEY`);
      }
      const hex = authorKeyHex(key);
      if (hex === undefined) {
        throw new UsageError(`"${key}" is not an author key: give an npub1… or 64 hex characters`);
      }
      const { values } = await loadSettings(ctx.paths, ctx.env, {}, ctx.user);
      const now = values["halt.accept"];
      const next = sub === "add" ? [...new Set([...now, hex])] : now.filter((k) => k !== hex);
      if (next.length === now.length) {
        print(sub === "add" ? "already accepted" : "was not accepted");
        return 0;
      }
      return await runConfig(
        {
          ...ctx,
          words: ["config", "set"],
          argv: ["halt.accept", next.map((k) => npubEncode(k)).join(",")],
        },
        { out: (s) => print(s), err: (s) => printErr(s) },
      );
    }
    case "halt": {
      const i = ctx.argv.indexOf("--reason");
      const reason = i >= 0 ? ctx.argv[i + 1] : undefined;
      const rest = i >= 0 ? [...ctx.argv.slice(0, i), ...ctx.argv.slice(i + 2)] : ctx.argv;
      if (rest.length > 0 || (i >= 0 && reason === undefined)) {
        throw new UsageError("use: wats guardian halt [--reason R]");
      }
      print(
        await sendControl(ctx.paths.socket, { wats: "control", op: "halt", reason: reason ?? "" }),
      );
      return 0;
    }
    default:
      throw new UsageError(`unknown command "wats guardian ${sub}"\n\n${GUARDIAN_HELP}`);
  }
}
