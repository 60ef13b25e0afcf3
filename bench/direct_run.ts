/**
 * The run context of a wake on one ask, as the runner builds it, for the
 * benchmarks that run a harness's command directly beside the runner
 * (runner_overhead.ts, runner_overhead_codex.ts).
 *
 * @module
 */

import type { DataPaths } from "../src/config/paths.ts";
import type { Settings } from "../src/config/schema.ts";
import { selfCommand } from "../src/cli/launcher.ts";
import type { RunContext } from "../src/runner/harness.ts";
import { buildPrompt, readHeartbeatTemplate } from "../src/runner/prompt.ts";
import { splitArgv } from "./argv.ts";

/** The context of run `runId` that answers the ask `askId`, as profile `helper`. */
export function directRunContext(o: {
  runId: string;
  askId: string;
  settings: Settings;
  paths: DataPaths;
  configDir: string;
}): RunContext {
  const self = selfCommand();
  return {
    runId: o.runId,
    prompt: buildPrompt(readHeartbeatTemplate(), {
      agentProfile: "helper",
      user: Deno.env.get("USER") ?? "user",
      about: o.settings["agent.about"],
      reasons: ["a new ask"],
      cursor: 0,
      events: [{
        id: o.askId,
        kind: "ask",
        author: "1".repeat(64),
        thread: o.askId,
        reason: "ask",
      }],
      feedback: [],
      rejections: [],
    }),
    maxTurns: o.settings["agent.max_turns"],
    maxBudgetUsd: o.settings["agent.max_usd_per_day"],
    agentProfile: "helper",
    dataDir: o.paths.dataDir,
    cwd: o.paths.runDir,
    configDir: o.configDir,
    selfCommand: splitArgv(self),
  };
}
