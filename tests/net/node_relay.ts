/**
 * Starts the independent relay (`@nostr-relay/core` under Node, from
 * tests/support/node/relay/) for a test, and stops it.
 *
 * @module
 */

import { requireNodeHelper } from "../support/clis.ts";

/** The relay helper's command, or null (locally, not installed: skip). */
export const RELAY_HELPER = requireNodeHelper("relay");

/** A running Node relay. */
export interface NodeRelay {
  port: number;
  url: string;
  /** Stops it (SIGTERM, then waits for the exit). */
  stop(): Promise<void>;
}

/**
 * Starts the relay on 127.0.0.1 (`port` 0: a free one) and resolves once it
 * listens. `db` keeps its events in a file, across a restart. `members` (hex keys)
 * turns NIP-42 on: only connections authenticated as a member are served, and
 * only members' events are taken (tests/support/node/relay/relay.mjs).
 */
export async function startNodeRelay(
  opts: { port?: number; db?: string; members?: readonly string[] } = {},
): Promise<NodeRelay> {
  if (RELAY_HELPER === null) throw new Error("the relay helper is not installed");
  const [cmd, ...args] = RELAY_HELPER.command;
  const child = new Deno.Command(cmd!, {
    args: [
      ...args,
      String(opts.port ?? 0),
      ...(opts.db ? [opts.db] : []),
      ...(opts.members ? [`--members=${opts.members.join(",")}`] : []),
    ],
    cwd: RELAY_HELPER.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) {
      await child.status;
      throw new Error(`the relay did not start: ${await stderr}`);
    }
    text += value;
  }
  const port = JSON.parse(text.split("\n")[0]!).port as number;
  let stopped: Promise<void> | undefined;
  return {
    port,
    url: `ws://127.0.0.1:${port}`,
    stop() {
      stopped ??= (async () => {
        try {
          child.kill("SIGTERM");
        } catch {
          // Already gone.
        }
        await child.status;
        await reader.cancel().catch(() => {});
        await stderr;
      })();
      return stopped;
    },
  };
}
