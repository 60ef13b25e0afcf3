/**
 * `wats thread`: read a thread from the terminal — for an ask, first what became of it (sent,
 * routing, claimed, answered, held for review, no taker), then its posts, each fenced as another
 * author's unverified text: the `thread` tool's own answer (docs/asks.md). Needs only the socket.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { callText, connectDaemon } from "../mcp/socket_client.ts";
import type { CommandContext } from "./context.ts";
import { parseCommandArgs, unexpectedArgument } from "./usage.ts";
import { print } from "./output.ts";

/** The usage text of `wats thread`. */
export const THREAD_HELP = `Usage: wats thread ID [--limit N] [--profile P]

Shows the thread of the post ID (any post in it): for an ask, first its state —
how many relays acknowledged it, how many known agents it is for and how many
are reachable, who claims it and until when, who answered, an answer held for
review on this node, or no taker after agent.ask_timeout — then its first post
and its newest N replies (default 200, at most 500), oldest first.

Every post is another author's text, shown fenced and unverified. Needs the
daemon. docs/asks.md.
`;

/** `wats thread`'s options. */
export interface ThreadArgs {
  help: boolean;
  id: string;
  limit?: number;
  profile?: string;
}

/**
 * Reads `wats thread`'s arguments. Pure.
 *
 * @throws {UsageError} for a missing id, a limit that is not a whole number, or a flag it does
 * not take.
 */
export function parseThreadArgs(argv: string[]): ThreadArgs {
  const command = "wats thread";
  const r = parseCommandArgs(command, {
    args: argv,
    options: {
      help: { type: "boolean", short: "h" },
      limit: { type: "string" },
      profile: { type: "string" },
    },
    allowPositionals: true,
  });
  const v = r.values;
  if (v.help) return { help: true, id: "" };
  const [id, extra] = r.positionals;
  if (extra !== undefined) throw unexpectedArgument(command, extra);
  if (id === undefined) {
    throw new UsageError(`${command} needs a post's id: the one \`wats ask\` printed`);
  }
  let limit: number | undefined;
  if (v.limit !== undefined) {
    limit = Number(v.limit);
    if (!/^\d+$/.test(v.limit) || !Number.isSafeInteger(limit) || limit < 1) {
      throw new UsageError(`--limit must be a whole number from 1 to 500 (see ${command} --help)`);
    }
  }
  return {
    help: false,
    id,
    ...(limit !== undefined ? { limit } : {}),
    ...(v.profile !== undefined ? { profile: v.profile } : {}),
  };
}

/** Runs `wats thread`. Requires the socket grants. */
export async function threadCommand(ctx: CommandContext): Promise<number> {
  const a = parseThreadArgs(ctx.argv);
  if (a.help) {
    print(THREAD_HELP);
    return 0;
  }
  const session = await connectDaemon(ctx.paths.socket, a.profile);
  try {
    print(
      await callText(session, "thread", { id: a.id, ...(a.limit ? { limit: a.limit } : {}) }),
    );
    return 0;
  } finally {
    await session.close();
  }
}
