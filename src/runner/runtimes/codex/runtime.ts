/**
 * `agent.runtime = "codex"`: Codex locked to wats's tools (docs/codex.md).
 * Before the runner is built, the locked model catalog is made and the
 * features probed (or the runtime is refused with the reason); once mcp.sock
 * serves, the lock's self-check runs (its `wats mcp` speaks as a runner
 * session, like a run's). Codex takes no deny rules: its sandbox stays
 * read-only.
 *
 * @module
 */

import { codexHarness } from "./harness.ts";
import { codexStateDir } from "./lock.ts";
import { type CodexRuntime, prepareCodexRuntime } from "./prepare.ts";
import { runCommand, spawnProcessGroup } from "../../spawn.ts";
import { codexFacts } from "./facts.ts";
import { noDenyRules, type Runtime, type RuntimeDeps } from "../runtime.ts";

/** The Codex runtime. */
export function codexRuntime(d: RuntimeDeps): Runtime {
  let codex: CodexRuntime | undefined;
  const prepared = (): CodexRuntime => {
    if (codex === undefined) throw new Error("the Codex runtime is used before prepare()");
    return codex;
  };
  const stateDir = codexStateDir(d.paths.agentDir);
  return {
    facts: codexFacts,
    label: "codex",
    prepare: async () => {
      codex = await prepareCodexRuntime({ run: runCommand, dir: stateDir, settings: d.settings });
    },
    // Codex's own processes are wrapped where the runner spawns them.
    harness: () => codexHarness(prepared().options),
    // Codex's locked model catalog lives in the data dir too (docs/codex.md).
    sandboxed: () => ({
      program: "codex",
      args: [],
      env: { ...d.runEnv },
      readable: [d.configDir, stateDir],
      agent: codexFacts.agent,
    }),
    access: (p) => Promise.resolve(noDenyRules(p)),
    ready: async (at) => {
      const c = prepared();
      const runId = "codex-self-check";
      const { token, revoke } = at.mintToken(runId);
      try {
        const { result, ran } = await c.selfCheck({
          // The check's Codex starts from the runs' allowlisted environment too.
          spawn: (req) => spawnProcessGroup({ ...req, env: { ...d.runEnv, ...req.env } }),
          ctx: {
            runId,
            prompt: "",
            maxTurns: d.settings["agent.max_turns"],
            maxBudgetUsd: 0,
            token,
            agentProfile: d.agent,
            dataDir: d.paths.dataDir,
            cwd: at.workdir(),
            configDir: d.configDir,
            selfCommand: d.selfCommand,
          },
        });
        d.log.info(
          `Codex lock ${ran ? "checked" : "already checked"} for ${c.install.version}: ` +
            `the model sees only ${result.tools.join(", ")}`,
        );
      } finally {
        revoke();
      }
    },
  };
}
