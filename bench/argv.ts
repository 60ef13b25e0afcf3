/** Splits a command line (as `watsCommand()`, `selfCommand()`, `cliCommand()` build it) into program and arguments. */
export function splitArgv(argv: readonly string[]): { command: string; args: string[] } {
  const [command, ...args] = argv;
  // The builders never return an empty line; if one ever does, say so rather than spawn `undefined`.
  if (command === undefined) {
    throw new Error("error: an empty command line; the command builder returned no program");
  }
  return { command, args };
}
