/**
 * A command Worker (tests/cli/permission_error_test.ts) that steps outside its
 * grant by running `git`: in the command itself (`sync`), or in a timer, outside
 * the command's promise (`timer`).
 */

import { serveCommand } from "../../src/cli/worker_entry.ts";

serveCommand((ctx) => {
  const git = () => new Deno.Command("git", { args: ["--version"] }).outputSync();
  if (ctx.argv[0] === "timer") {
    setTimeout(git, 0);
    return new Promise(() => {/* ended by the timer's error */});
  }
  git();
  return Promise.resolve(0);
});
