/**
 * `wats ask`: post an ask from the terminal, as the person's profile, and print what became of
 * it so far — the `ask` tool's own answer (docs/asks.md). It speaks to the daemon over mcp.sock
 * like any MCP session, so the daemon signs, stores and publishes; this command holds no key and
 * touches no file.
 *
 * @module
 */

import { splitList } from "../config/codecs.ts";
import { UsageError } from "../errors.ts";
import { callText, connectDaemon } from "../mcp/socket_client.ts";
import type { CommandContext } from "./context.ts";
import { parseCommandArgs, unexpectedArgument } from "./usage.ts";
import { print } from "./output.ts";

/** The usage text of `wats ask`. */
export const ASK_HELP =
  `Usage: wats ask "TITLE" --text "QUESTION" [--to KEY]… [--caps a,b] [--profile P]

Posts an ask as your profile (or P) through the running daemon, and prints its
state so far: how many relays acknowledged it, how many known agents it is for
and how many of them are reachable ("none will wake" when no agent fits).

  TITLE          one line: what the ask is about
  --text TEXT    the question, with the context needed to answer it
                 ("-": read it from stdin)
  --to KEY       only this agent's profile may take it (npub or hex; repeat
                 for more)
  --caps a,b     the capabilities it is about: without --to, only agents
                 whose agent.caps match wake for it
  --profile P    post as the profile P instead of the node's person

Follow it with \`wats thread ID\`: claimed, answered, held for review, or no
taker after agent.ask_timeout. Needs the daemon. docs/asks.md.
`;

/** `wats ask`'s options. */
export interface AskArgs {
  help: boolean;
  title: string;
  text: string;
  to?: string[];
  caps?: string[];
  profile?: string;
}

/**
 * Reads `wats ask`'s arguments; `stdin` supplies the text for `--text -`. Pure but for that.
 *
 * @throws {UsageError} for a missing title or text, or a flag it does not take.
 */
export async function parseAskArgs(
  argv: string[],
  stdin: () => Promise<string> = readStdin,
): Promise<AskArgs> {
  const command = "wats ask";
  const r = parseCommandArgs(command, {
    args: argv,
    options: {
      help: { type: "boolean", short: "h" },
      text: { type: "string" },
      to: { type: "string", multiple: true },
      caps: { type: "string" },
      profile: { type: "string" },
    },
    allowPositionals: true,
  });
  const v = r.values;
  if (v.help) return { help: true, title: "", text: "" };
  const [title, extra] = r.positionals;
  if (extra !== undefined) throw unexpectedArgument(command, extra);
  if (title === undefined || title.trim() === "") {
    throw new UsageError(`${command} needs a title: wats ask "TITLE" --text "QUESTION"`);
  }
  const text = v.text === "-" ? await stdin() : v.text;
  if (text === undefined || text.trim() === "") {
    throw new UsageError(
      `${command} needs the question: --text "QUESTION" (or --text - for stdin)`,
    );
  }
  const caps = v.caps === undefined ? [] : splitList(v.caps);
  return {
    help: false,
    title,
    text,
    ...(v.to !== undefined && v.to.length > 0 ? { to: v.to } : {}),
    ...(caps.length > 0 ? { caps } : {}),
    ...(v.profile !== undefined ? { profile: v.profile } : {}),
  };
}

async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

/** Runs `wats ask`. Requires the socket grants. */
export async function askCommand(ctx: CommandContext): Promise<number> {
  const a = await parseAskArgs(ctx.argv);
  if (a.help) {
    print(ASK_HELP);
    return 0;
  }
  const session = await connectDaemon(ctx.paths.socket, a.profile);
  try {
    print(
      await callText(session, "ask", {
        title: a.title,
        text: a.text,
        ...(a.to ? { to: a.to } : {}),
        ...(a.caps ? { caps: a.caps } : {}),
      }),
    );
    return 0;
  } finally {
    await session.close();
  }
}
