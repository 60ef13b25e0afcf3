/**
 * Registering wats in the user's Claude Code (docs/decisions/runner.md: `--agent claude`
 * registers wats when the entry is missing or different, silently otherwise).
 * The entry is `wats mcp --profile <person>`: interactive sessions speak as the
 * person; runner sessions get their own generated config instead.
 *
 * Reads `claude mcp get wats` (exit 1 when missing; `Command:` and `Args:`
 * lines otherwise, args joined by spaces), then `claude mcp remove` and
 * `claude mcp add` as needed. Commands are run through an injected runner.
 *
 * @module
 */

import { HarnessError } from "../../errors.ts";
import type { SelfCommand } from "../harness.ts";
import type { CommandRunner } from "../spawn.ts";
import { MCP_SERVER_NAME } from "../../contracts/session.ts";

/** Claude Code's configuration scopes. */
export type ClaudeScope = "user" | "project" | "local";

/** A stdio MCP server entry. */
export interface McpEntry {
  command: string;
  args: string[];
}

/** What `claude mcp get` shows of an entry. */
export interface RegisteredEntry {
  scope?: ClaudeScope;
  command: string;
  /** The arguments joined by spaces, as the CLI prints them. */
  args: string;
}

/** What registration did. */
export interface RegistrationOutcome {
  action: "unchanged" | "added" | "replaced";
  scope: ClaudeScope;
  /** The entry found before, when there was one. */
  previous?: RegisteredEntry;
}

/** The entry for the person: `wats mcp --profile <profile>` (and `--data-dir` when given). */
export function personEntry(self: SelfCommand, profile: string, dataDir?: string): McpEntry {
  return {
    command: self.command,
    args: [
      ...self.args,
      "mcp",
      "--profile",
      profile,
      ...(dataDir !== undefined ? ["--data-dir", dataDir] : []),
    ],
  };
}

/** Reads the output of `claude mcp get <name>`; undefined when it shows no stdio command. */
export function parseMcpGet(stdout: string): RegisteredEntry | undefined {
  let scope: ClaudeScope | undefined;
  let command: string | undefined;
  let args = "";
  for (const raw of stdout.split("\n")) {
    const line = raw.trim();
    const m = /^(Scope|Command|Args):\s?(.*)$/.exec(line);
    if (!m) continue;
    const [, field, value = ""] = m;
    if (field === "Scope") {
      const s = value.toLowerCase();
      scope = s.startsWith("user")
        ? "user"
        : s.startsWith("project")
        ? "project"
        : s.startsWith("local")
        ? "local"
        : undefined;
    } else if (field === "Command") command = value;
    else args = value;
  }
  return command === undefined ? undefined : { scope, command, args };
}

/** Options of `ensureClaudeRegistration`. */
export interface RegistrationOptions {
  run: CommandRunner;
  entry: McpEntry;
  /** Where to add it; `user` when unset. */
  scope?: ClaudeScope;
  /** The CLI; `claude` when unset. */
  program?: string;
}

/**
 * Makes sure Claude Code has the wats entry `opts.entry`: adds it when missing,
 * replaces it when different, does nothing when equal. Log only when the
 * outcome is not `unchanged`.
 *
 * @throws {HarnessError} code `claude.register` when `claude mcp add`/`remove` fails.
 */
export async function ensureClaudeRegistration(
  opts: RegistrationOptions,
): Promise<RegistrationOutcome> {
  const program = opts.program ?? "claude";
  const scope = opts.scope ?? "user";
  const got = await opts.run(program, ["mcp", "get", MCP_SERVER_NAME]);
  const previous = got.code === 0 ? parseMcpGet(got.stdout) : undefined;
  const wanted = opts.entry;
  if (
    previous !== undefined && previous.command === wanted.command &&
    previous.args === wanted.args.join(" ")
  ) {
    return { action: "unchanged", scope: previous.scope ?? scope, previous };
  }
  if (previous !== undefined) {
    const rm = await opts.run(program, [
      "mcp",
      "remove",
      MCP_SERVER_NAME,
      "-s",
      previous.scope ?? scope,
    ]);
    check(rm.code, rm.stderr || rm.stdout, "remove the old wats entry");
  }
  const add = await opts.run(program, [
    "mcp",
    "add",
    "-s",
    scope,
    MCP_SERVER_NAME,
    "--",
    wanted.command,
    ...wanted.args,
  ]);
  check(add.code, add.stderr || add.stdout, "add the wats entry");
  return previous === undefined
    ? { action: "added", scope }
    : { action: "replaced", scope, previous };
}

function check(code: number, output: string, what: string): void {
  if (code === 0) return;
  throw new HarnessError(
    "claude.register",
    `claude mcp could not ${what} (exit code ${code}): ${output.trim()}. ` +
      `Run \`claude mcp list\` to see the entries, or register by hand with \`wats setup claude\`.`,
  );
}
