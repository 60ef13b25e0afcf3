/**
 * The wording of command-line mistakes, one per kind, for every command (issue 20): an unknown
 * flag, a flag without its value, a flag given a value it does not take, an argument a command
 * does not take. Each is one line naming the command and where its help is:
 * `unknown flag --bogus for wats status (see wats status --help)`.
 *
 * @module
 */

import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "../errors.ts";

/** The command as a person types it: `wats` (the daemon), `wats status`, `wats config list`. */
export function commandName(words: readonly string[]): string {
  return ["wats", ...words].join(" ");
}

/** `unknown flag --bogus for wats status (see wats status --help)`. */
export function unknownFlag(command: string, flag: string): UsageError {
  return new UsageError(`unknown flag ${flag} for ${command} (see ${command} --help)`);
}

/** `--data-dir needs a value (see wats --help)`. */
export function needsValue(command: string, flag: string): UsageError {
  return new UsageError(`${flag} needs a value (see ${command} --help)`);
}

/** `unexpected argument "x" for wats status (see wats status --help)`. */
export function unexpectedArgument(command: string, arg: string): UsageError {
  return new UsageError(`unexpected argument "${arg}" for ${command} (see ${command} --help)`);
}

/** For a command that takes nothing: the first word of `argv` as the mistake it is. */
export function refuseArguments(command: string, argv: readonly string[]): void {
  const [first] = argv;
  if (first === undefined) return;
  if (first.startsWith("-") && first !== "-" && first !== "--") {
    throw unknownFlag(command, first.split("=")[0]!);
  }
  throw unexpectedArgument(command, first);
}

/**
 * `node:util`'s `parseArgs` (strict unless `config` says otherwise), its errors worded as above.
 *
 * @throws {UsageError} on an unknown flag, a missing or unwanted value, or an unexpected argument.
 */
export function parseCommandArgs<T extends ParseArgsConfig>(
  command: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    throw usageErrorOf(command, err);
  }
}

/** A `parseArgs` error as one of this module's wordings; any other error as it is. */
function usageErrorOf(command: string, err: unknown): unknown {
  const e = err as { code?: string; message?: string };
  const message = e.message ?? "";
  const quoted = message.match(/'([^']*)'/)?.[1] ?? "";
  switch (e.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return unknownFlag(command, quoted);
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return unexpectedArgument(command, quoted);
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE": {
      const flag = message.match(/--[\w-]+/)?.[0] ?? quoted;
      return /argument missing/.test(message)
        ? needsValue(command, flag)
        : new UsageError(`${flag} takes no value (see ${command} --help)`);
    }
    default:
      return err;
  }
}
