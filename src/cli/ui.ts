/**
 * `wats ui`: the local web dashboard (docs/ui.md). A client of the daemon's
 * socket like `wats status`: it reads the agent's files, speaks to the daemon
 * over mcp.sock, listens on one address, and writes no file. It prints the
 * login URL with a one-time token, which exists only in this process's memory
 * and on the terminal (docs/decisions/ui.md).
 *
 * @module
 */

import { UsageError, WatsError } from "../errors.ts";
import { loadSettings } from "../config/settings.ts";
import type { CommandContext, CommandInit } from "./context.ts";
import { Gate, isLoopbackHost } from "../ui/security.ts";
import { DaemonSource } from "../ui/source.ts";
import { LiveFeed } from "../ui/live.ts";
import { watchDaemon } from "../mcp/socket_client.ts";
import { uiHandler } from "../ui/server.ts";
import { hostPortOf } from "../io/http1_server.ts";
import { serveUi, type UiHttpServer } from "../ui/http.ts";
import { parseCommandArgs, unexpectedArgument } from "./usage.ts";
import { print, printErr } from "./output.ts";

/** The usage text of `wats ui`. */
export const UI_HELP = `Usage: wats ui [--listen HOST:PORT] [--data-dir DIR]

Serves a dashboard of the running node on a loopback address (default
127.0.0.1:7448, or ui.listen in config.toml) and prints its login URL with a
one-time token: open it in a browser on this machine. Pages: overview (node,
relays, agent, halt, safety notices, budget and a chart of spend and runs),
posts (feed, threads, search), runs (list, transcripts, live follow), works
(coding agents' branches: commits, diff, uncommitted changes; merge, push, send
back, discard, and New work to give a coding agent a task), review (approve,
edit then approve, reject with a reason; a coding agent's request approved once,
rejected once, or allowed always by a rule you confirm) and halt/resume, through
the daemon as \`wats agent approve/reject\`, \`wats work\`, \`wats guardian halt\`
and \`wats resume\` do. Notifications link to /go/PAGE on this address: it opens
PAGE in this browser's session.

  --listen HOST:PORT   where to serve. An address that is not loopback is
                       refused unless named here, and then served with a warning:
                       anyone who can reach it may try the login. localhost is
                       refused: name 127.0.0.1 or [::1].

A session ends on Log out (in every page's header) or after 30 idle minutes.

Ctrl-C stops it. It writes one file, config.toml, and only when you confirm an
"allow always" rule on the page. It opens no browser: the login URL would
be readable on the opener's command line by any process of yours, the agent's
too (docs/decisions/ui.md). Docs: docs/ui.md.
`;

/** Where `wats ui` listens, and whether the user named it on the command line. */
export interface UiListen {
  hostname: string;
  port: number;
  /** `host:port`, as the net permission and the Host header name it. */
  hostPort: string;
  explicit: boolean;
}

/** Reads `wats ui`'s own flags. */
export function parseUiArgs(argv: string[]): { help: boolean; listen?: string } {
  const { values, positionals } = parseCommandArgs("wats ui", {
    args: argv,
    options: { listen: { type: "string" }, help: { type: "boolean", short: "h" } },
    allowPositionals: true,
  });
  const [extra] = positionals;
  if (extra !== undefined) throw unexpectedArgument("wats ui", extra);
  return { help: values.help === true, ...(values.listen ? { listen: values.listen } : {}) };
}

/**
 * The address to serve: `--listen`, else `ui.listen`. One that is not loopback
 * is refused unless `--listen` names it. Requires read of config.toml.
 */
export async function resolveUiListen(init: CommandInit): Promise<UiListen> {
  const args = parseUiArgs(init.argv);
  const explicit = args.listen !== undefined;
  const text = args.listen ??
    (await loadSettings(init.paths, init.env, {}, init.user)).values["ui.listen"];
  const m = text.match(/^(\[[0-9a-fA-F:]+\]|[^:]+):(\d{1,5})$/);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535) {
    throw new UsageError(
      `"${text}" is not an address to listen on: use HOST:PORT such as 127.0.0.1:7448`,
    );
  }
  const hostname = m[1]!.replace(/^\[|\]$/g, "");
  if (hostname.toLowerCase() === "localhost") {
    // Browsers try [::1] first for `localhost`, and another program may hold
    // [::1]:PORT while the dashboard holds 127.0.0.1:PORT: it would get the
    // login token (docs/decisions/ui.md).
    throw new WatsError(
      "ui.ambiguous_host",
      `${text} names two addresses (127.0.0.1 and ::1) and a browser may reach the other ` +
        `program's: use --listen 127.0.0.1:${port} (or [::1]:${port})`,
    );
  }
  if (!isLoopbackHost(hostname) && !explicit) {
    throw new WatsError(
      "ui.not_loopback",
      `ui.listen is ${text}, which is not a loopback address: the dashboard serves 127.0.0.1 ` +
        `unless you name another address with \`wats ui --listen ${text}\``,
    );
  }
  return { hostname, port, hostPort: `${m[1]}:${port}`, explicit };
}

/** Runs `wats ui` until Ctrl-C. */
export async function uiCommand(ctx: CommandContext): Promise<number> {
  if (parseUiArgs(ctx.argv).help) {
    print(UI_HELP);
    return 0;
  }
  const listen = await resolveUiListen(ctx);
  if (!isLoopbackHost(listen.hostname)) {
    printErr(
      `warning: serving the dashboard on ${listen.hostPort}, which is not loopback: anyone who ` +
        `can reach it may try the login; the token is all that stands in the way`,
    );
  }
  const source = new DaemonSource(ctx.paths, {
    ...(ctx.env.HOME ? { HOME: ctx.env.HOME } : {}),
    user: ctx.user,
  });
  // The gate needs the address actually bound (a name may resolve to several),
  // known once listening: the handler is made right after, before any await,
  // so no request can come before it.
  let server: UiHttpServer;
  try {
    server = serveUi(
      { hostname: listen.hostname, port: listen.port, signal: ctx.signal, report: printErr },
      (req) => handler(req),
    );
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) {
      throw new WatsError(
        "ui.port_busy",
        `${listen.hostPort} is in use (another \`wats ui\`?): stop it, or pass --listen 127.0.0.1:PORT`,
        { cause: err },
      );
    }
    throw err;
  }
  const bound = hostPortOf(server.addr);
  const gate = new Gate(bound);
  // The daemon's events, for the live pages and the activity timeline.
  const live = new LiveFeed((onEvent, signal, onReady) =>
    watchDaemon(ctx.paths.socket, onEvent, signal, onReady)
  );
  const watching = live.run(ctx.signal);
  const handler = uiHandler({
    gate,
    source,
    live,
    access: async () =>
      (await loadSettings(ctx.paths, ctx.env, {}, ctx.user)).values["agent.access"],
  });
  const up = await source.status().catch(() => null);
  if (up === null) {
    printErr(
      `no daemon runs on ${ctx.paths.dataDir}: start it with \`wats\`; the dashboard says so too`,
    );
  }
  // The token goes to the terminal only: never to a log (docs/decisions/ui.md).
  // The URL names the address bound, not the name asked for.
  print(`wats ui: open http://${bound}/login?token=${gate.token}`);
  print("(the link works once; Ctrl-C stops the dashboard)");
  try {
    await server.finished;
  } finally {
    await source.close();
    await watching;
  }
  return 0;
}
