/**
 * wats: one binary that lets AI agents on different machines work together.
 * This entry only launches the command's Worker and exits with its code; it is
 * the only place that calls `Deno.exit`.
 *
 * One command skips the launcher: the relay a model-only sandbox starts before its agent
 * (`wats sandbox-relay`), which every sandboxed agent waits for, loads only its own few
 * modules (docs/decisions/sandbox.md, "The network"). The launcher is imported by a URL, not
 * a string: Deno reads every module a string import names before main.ts runs (measured:
 * +75 ms on the relay's start from source), and `deno compile` embeds it by `--include`.
 *
 * @module
 */

import { RELAY_COMMAND } from "./src/safety/net_relay.ts";
import { relayMain } from "./src/cli/sandbox_relay.ts";

if (import.meta.main) {
  if (Deno.args[0] === RELAY_COMMAND) Deno.exit(await relayMain(Deno.args.slice(1)));
  let launcher: typeof import("./src/cli/launcher.ts");
  try {
    launcher = await import(new URL("./src/cli/launcher.ts", import.meta.url).href);
  } catch (err) {
    // Without read permission Deno cannot load the launcher, which would have said this (its
    // words, src/cli/permission_error.ts; tests/cli/permission_error_test.ts keeps them equal).
    if (!/Requires read access/.test(String(err))) throw err;
    console.error(
      "error: wats lacks read permission: start wats with `deno task wats` or the compiled " +
        "`wats`, or run main.ts with deno.json's flags (--allow-read --allow-write --allow-net " +
        "--allow-run --allow-env --allow-sys --no-prompt)",
    );
    Deno.exit(1);
  }
  Deno.exit(await launcher.launch(Deno.args));
}
