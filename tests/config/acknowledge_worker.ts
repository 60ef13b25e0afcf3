/**
 * Test Worker: tries to write safety.json through `acknowledge` and config.toml
 * through `writeConfigText` under whatever permissions the test grants it, and
 * reports what each attempt threw.
 *
 * @module
 */

import { acknowledge } from "../../src/safety/safety_file.ts";
import { writeConfigText } from "../../src/config/config_file.ts";

/** What the test posts. */
export interface AttemptRequest {
  safety: string;
  config: string;
}

/** What the Worker answers: the error class name of each attempt, or "ok". */
export interface AttemptResult {
  acknowledge: string;
  writeConfig: string;
}

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<AttemptRequest>) => void) | null;
  postMessage(m: AttemptResult): void;
};

async function attempt(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
    return "ok";
  } catch (err) {
    return err instanceof Deno.errors.NotCapable ? "NotCapable" : String(err);
  }
}

scope.onmessage = async (e) => {
  const { safety, config } = e.data;
  scope.postMessage({
    acknowledge: await attempt(() =>
      acknowledge(safety, { "agent.review": false }, { createNew: false })
    ),
    writeConfig: await attempt(() => writeConfigText(config, "[agent]\nmax_turns = 2\n")),
  });
};
