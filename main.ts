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
  const launcher: typeof import("./src/cli/launcher.ts") = await import(
    new URL("./src/cli/launcher.ts", import.meta.url).href
  );
  Deno.exit(await launcher.launch(Deno.args));
}
