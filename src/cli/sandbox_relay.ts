/**
 * `wats sandbox-relay` (hidden): the first process of a sandbox whose network is
 * `model-only`, which main.ts runs without the launcher so the agent behind it starts
 * sooner (src/safety/net_relay.ts does the relaying; docs/decisions/sandbox.md, "The
 * network", says why no Worker holds it).
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { UsageError } from "../errors.ts";
import { parseRelayArgs, type RelayArgs, runRelay } from "../safety/net_relay.ts";
import { printErr } from "./output.ts";

/** Runs the relay from its command line (the words after `sandbox-relay`); the exit code. */
export async function relayMain(argv: readonly string[]): Promise<number> {
  let a: RelayArgs;
  try {
    a = parseRelayArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    printErr(`error: ${err.message}`);
    return 2;
  }
  try {
    return await runRelay(a);
  } catch (err) {
    // The listen, the socket or the agent's program: the daemon's log shows this line.
    printErr(`error: wats sandbox-relay: ${errorMessage(err)}`);
    return 1;
  }
}
