/**
 * `wats mcp token create|list|revoke`: the bearer tokens of MCP over HTTP (docs/mcp.md). A token
 * is bound to one profile and shown once; `<data dir>/mcp_tokens.json` keeps only its hash
 * (src/mcp/http_tokens.ts). The daemon reads the file at the next request, so a revoked token
 * stops at once.
 *
 * Requires read on config.toml and the token file, write on the token file, its `.tmp` and its
 * `.lock` (writers take turns: two `create`s at once keep both tokens).
 *
 * @module
 */

import { print, printErr } from "./output.ts";
import { loadSettings } from "../config/settings.ts";
import { UsageError, WatsError } from "../errors.ts";
import { terminalSafe } from "../io/terminal_text.ts";
import { createToken, readTokens, revokeToken } from "../mcp/http_tokens.ts";
import { checkProfileName } from "../node/profiles.ts";
import type { CommandContext } from "./context.ts";
import { parseCommandArgs, unexpectedArgument } from "./usage.ts";

/** The help text of `wats mcp token`. */
export const MCP_TOKEN_HELP = `Usage: wats mcp token create [--profile NAME] [--label TEXT]
       wats mcp token list
       wats mcp token revoke ID

The tokens of MCP over HTTP (mcp.listen, off by default). Each request to the
endpoint carries one as \`Authorization: Bearer <token>\`; its session speaks for
the token's profile, with the tools of an interactive session.

  create   makes a token for --profile (default: the profile setting, else the
           OS user) and prints it on stdout, once: wats keeps only its hash
  list     the tokens: id, profile, label, when made (never the tokens)
  revoke   removes the token with this id (or a unique start of it); the node
           refuses it from its next request on

  --label TEXT   a name for the token, shown by list (e.g. the host using it)

Docs: docs/mcp.md ("MCP over HTTP").
`;

/** Runs `wats mcp token …`. */
export async function mcpTokenCommand(ctx: CommandContext): Promise<number> {
  const parsed = parseCommandArgs("wats mcp token", {
    args: ctx.argv,
    allowPositionals: true,
    options: {
      profile: { type: "string" },
      label: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const v = parsed.values;
  const [action, arg, extra] = parsed.positionals;
  if (v.help || action === undefined) {
    print(MCP_TOKEN_HELP);
    return v.help ? 0 : 2;
  }
  const file = ctx.paths.mcpTokens;
  switch (action) {
    case "create": {
      if (arg !== undefined) throw unexpectedArgument("wats mcp token create", arg);
      const profile = v.profile ??
        (await loadSettings(ctx.paths, ctx.env, {}, ctx.user)).values.profile;
      checkProfileName(profile);
      const label = v.label ?? "";
      if (/[\p{Cc}\p{Cf}]/u.test(label) || label.length > 100) {
        throw new UsageError("--label takes at most 100 visible characters on one line");
      }
      const made = await createToken(file, { profile, label }).catch((err) => {
        if (err instanceof Deno.errors.NotFound) {
          throw new WatsError(
            "mcp.token_file",
            `the data directory ${ctx.paths.dataDir} does not exist yet: start the node once ` +
              "(`wats`) or set mcp.listen (`wats config set mcp.listen 127.0.0.1:7449`), then " +
              "create the token",
          );
        }
        throw err;
      });
      print(made.token);
      printErr(
        `token ${made.record.id} for profile ${terminalSafe(profile)}: shown once, wats keeps ` +
          "only its hash. Send it as `Authorization: Bearer <token>` to mcp.listen's /mcp " +
          "(docs/mcp.md); `wats mcp token revoke " + made.record.id + "` ends it.",
      );
      return 0;
    }
    case "list": {
      if (arg !== undefined) throw unexpectedArgument("wats mcp token list", arg);
      const tokens = await readTokens(file);
      if (tokens.length === 0) {
        print("no tokens: make one with `wats mcp token create --profile NAME`");
        return 0;
      }
      for (const t of tokens) {
        print(
          `${t.id}  ${terminalSafe(t.profile)}  ${t.created}${
            t.label ? `  ${terminalSafe(t.label)}` : ""
          }`,
        );
      }
      return 0;
    }
    case "revoke": {
      if (arg === undefined) throw new UsageError("name the token: wats mcp token revoke ID");
      if (extra !== undefined) throw unexpectedArgument("wats mcp token revoke", extra);
      const gone = await revokeToken(file, arg);
      print(`revoked token ${gone.id} (profile ${terminalSafe(gone.profile)})`);
      return 0;
    }
    default:
      throw new UsageError(
        `unknown action "${action}" for wats mcp token: use create, list or revoke`,
      );
  }
}
