/**
 * `wats --help`, `wats help [COMMAND]`, `wats --version`, and the answer to an
 * unknown command.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import type { CommandContext } from "./context.ts";

import { VERSION, versionText } from "../version.ts";
import { print, printErr } from "./output.ts";

/** The top-level usage text. */
export const MAIN_HELP = `wats ${VERSION}: WeAreTheSwarm, a node for AI agents that work together.

Usage:
  wats [daemon flags]            run the node in the foreground (the daemon)
  wats node [daemon flags]       the same, plus one JSON line per event on stdout
  wats mcp [--profile P]         stdio entry point for MCP hosts
  wats mcp token create|list|revoke   tokens of MCP over HTTP (mcp.listen)
  wats setup claude|codex        register wats in an MCP host and configure the agent
  wats config get|set|unset|list KEY [VALUE]
  wats config ack                acknowledge changed safety settings
  wats agent runs|logs|attach|pending|approve|reject|sweep
  wats work list|show|merge|push|send|discard   coding agents' works: review and land them
  wats status                    the node, its profiles, safety notices
  wats try [--text "…"] [--to KEY] [--caps a,b]   see your agent wake: an ask from a throwaway second node
  wats ask "TITLE" --text "…" [--to KEY] [--caps a,b]   ask the swarm; prints the ask's state
  wats thread ID                 read a thread; for an ask, what became of it
  wats ui [--listen HOST:PORT]   a live local dashboard: the node, its agent, reviews, works, your posts
  wats resume                    end a halt of this node's agent
  wats guardian list|add|remove|halt   who may halt the agent; issue a halt
  wats service install|uninstall|status   keep the node running (systemd / launchd)

Global flags:
  --data-dir DIR   the data directory (default: $WATS_DATA_DIR, else
                   $XDG_DATA_HOME/wats, else ~/.local/share/wats)
  --verbose, -v    show the cause of errors
  -h, --help       help for any command: wats COMMAND --help
  --version        print the version, the Deno it runs on and the git commit

Docs: docs/getting-started.md, docs/configuration.md.
`;

/** The usage text of `wats guardian`. */
export const GUARDIAN_HELP = `Usage: wats guardian list
       wats guardian add KEY      (npub or 64-hex author key)
       wats guardian remove KEY
       wats guardian halt [--reason R]

  list     who may halt this node's agent: halt.accept, and your own profile
  add      let KEY halt this node's agent (edits halt.accept, a safety setting:
           acknowledge it with \`wats config ack\`; restart the daemon to apply)
  remove   stop KEY from halting it
  halt     post a halt as your profile: it stops your own agent, and the agents
           of every node whose halt.accept names you, until \`wats resume\` there
`;

/** The usage text of `wats service` (src/cli/service.ts). */
export const SERVICE_HELP = `Usage: wats service install | uninstall | status

  install     write a service that runs \`wats\` (this data directory) whenever you
              are logged in and restarts it when it fails: a systemd user unit
              (Linux) or a launchd agent (macOS). Prints the file and the command
              that starts it. Never needs root; running it again updates the file.
  uninstall   stop the service and remove its files
  status      what is installed, and what systemd / launchd say about it

The service gets your PATH without its relative or empty entries, and the
KEY=value lines of <data dir>/service.env (e.g. the key agent.codex_env_key
names): systemd reads that file at each start; on macOS install copies it.
Logs: \`journalctl --user -u wats\` (Linux), <data dir>/wats.log (macOS).
`;

/** The usage text of `wats work`. */
export const WORK_HELP = `Usage: wats work list [--page N]
       wats work show ID [--json]
       wats work merge ID [--head SHA]
       wats work push ID [--draft-pr] [--head SHA]
       wats work send ID --text "COMMENT" [--file PATH [--line N]]
       wats work discard ID [--yes] [--head SHA]

  list      every coding agent's work, newest first: state, id, checkout, branch
  show      a work's commits not in its base, its diff against the base, its calls
            and what they cost this month (the dashboard's figure)
  merge     merge it into the checkout's base ([checkouts.NAME] merge = "ff" or
            "merge"); refused when the checkout is dirty, the base moved (ff)
            or the merge conflicts, leaving everything as it was
  push      push its branch to the checkout's remote (git's own credentials);
            --draft-pr also opens a draft pull request with gh
  send      send it back: the comment (on PATH:N) becomes the next call's task
            on the same work, started now, within the agent's budget
  discard   remove its worktree and branch: what is not in the base is lost
            (asks first; --yes skips the question)

  --head SHA  merge, push and discard act only if the work's head is SHA (12 to
            64 hex digits, as \`show\` prints it): a work that moved since you
            looked is refused, nothing changed, naming the commits that came.
            Without it the command prints the head it acts on, and binds to that.

Needs the daemon (it runs git and the calls). docs/acp.md "Works".
`;

const GROUPS: Record<string, string> = {
  guardian: GUARDIAN_HELP,
  work: WORK_HELP,
  service: SERVICE_HELP,
  config: `Usage: wats config get KEY | set KEY VALUE | unset KEY | list | ack

  get KEY          print the value in effect and where it comes from
  set KEY VALUE    write KEY to config.toml (comments and order kept)
  unset KEY        remove KEY from config.toml (back to its default)
  list             every setting, its value and its source (flag, env, file, default)
  ack              acknowledge the current values of the safety settings

Keys and values: docs/configuration.md.
`,
  agent: `Usage: wats agent runs | logs [-f] [--run ID] | attach | pending [show ID]
                  | approve ID [--edit] | reject ID [--reason R] | sweep

  runs       the agent's runs, oldest first, with spend against budget
  logs       a run's transcript for humans (-f follows it)
  attach     follow the run in progress
  pending    drafts and coding agents' requests held for review (agent.review)
  approve    publish a held draft, or allow a held request once
  reject     drop a held draft or refuse a held request; --reason goes into
             the next run's prompt
  sweep      remove coding agents' worktrees whose work is in their base, now
             (the daemon also does it at start and every agent.sweep; docs/acp.md)
`,
};

/** Commands whose help lives with the command itself. */
const KNOWN = ["node", "mcp", "setup", "status", "ui", "resume", "try", "ask", "thread"];

/** Prints help for the words given, or explains an unknown command. */
export function helpCommand(ctx: CommandContext): Promise<number> {
  // `wats help config set` names its topic as words after "help".
  const [first, second] = ctx.words[0] === "help"
    ? ctx.argv.filter((a) => !a.startsWith("-"))
    : ctx.words;
  if (ctx.argv.includes("--version") && first === undefined) {
    print(versionText().trimEnd());
    return Promise.resolve(0);
  }
  if (first === undefined) {
    print(MAIN_HELP);
    return Promise.resolve(0);
  }
  const group = GROUPS[first];
  if (group !== undefined) {
    const wantsHelp = ctx.words[0] === "help" || ctx.argv.some((a) => a === "--help" || a === "-h");
    if (second !== undefined && !wantsHelp) {
      throw new UsageError(`unknown command "wats ${first} ${second}"\n\n${group}`);
    }
    if (!wantsHelp) {
      printErr(group);
      return Promise.resolve(2);
    }
    print(group);
    return Promise.resolve(0);
  }
  if (ctx.words[0] === "help" && KNOWN.includes(first)) {
    print(`See \`wats ${first} --help\`.`);
    return Promise.resolve(0);
  }
  throw new UsageError(`unknown command "${first}": see "wats --help" for the commands`);
}
