/**
 * `agent.runtime = "acp"`: the agent of `agent.harness` (a `[harnesses.NAME]`
 * of config.toml) over ACP, one session per thread (docs/acp.md). Its
 * settings are checked as it is made; once mcp.sock serves, the agent is
 * started once to read its name, since only agents that take Claude's options
 * can be held to the access level. Its own requests are judged by the node's
 * policy (src/runner/runtimes/acp/harness.ts), not by deny rules.
 *
 * @module
 */

import { errorMessage } from "../../../error_message.ts";
import type { AcpTables } from "../../../config/acp_tables.ts";
import { ConfigError } from "../../../errors.ts";
import { AcpAgent } from "../../../acp/client.ts";
import { makePolicy } from "../../../acp/policy.ts";
import { acpRuntimeHarness, type AcpRuntimeOptions, LOCKABLE_AGENTS } from "./harness.ts";
import type { RunnerLog } from "../../ports.ts";
import { acpFacts } from "./facts.ts";
import { noDenyRules, type Runtime, type RuntimeDeps } from "../runtime.ts";
import { harnessAgent } from "../agents.ts";

/** The ACP runtime. Throws a `ConfigError` the user can act on. */
export function acpRuntime(d: RuntimeDeps): Runtime {
  const o = acpOptions(d);
  const { harness } = o;
  const agent = harnessAgent(harness);
  return {
    facts: acpFacts,
    label: `acp on [harnesses.${harness.name}]`,
    prepare: () => Promise.resolve(),
    harness: (wrap) => acpRuntimeHarness({ ...o, wrap }),
    sandboxed: () => ({
      program: harness.command,
      args: harness.args,
      env: { ...d.env, ...harness.env },
      readable: [d.configDir],
      ...(agent ? { agent } : {}),
    }),
    access: (p) => Promise.resolve(noDenyRules(p)),
    ready: (at) => checkLockable(harness, at.workdir(), o.env, d.log),
  };
}

/** The harness of `agent.harness` and how the access level holds it. */
function acpOptions(d: RuntimeDeps): Omit<AcpRuntimeOptions, "wrap"> {
  const s = d.settings;
  const name = s["agent.harness"];
  const harnesses = d.acp?.harnesses ?? {};
  const harness = harnesses[name];
  if (harness === undefined) {
    const known = Object.keys(harnesses);
    throw new ConfigError(
      "agent.harness",
      name === ""
        ? `agent.runtime = "acp" needs agent.harness, the [harnesses.NAME] of config.toml the ` +
          `agent runs on (\`wats config set agent.harness NAME\`; harnesses: ${
            known.join(", ") || "none"
          }; docs/acp.md)`
        : `agent.harness = "${name}" names no [harnesses.${name}] in config.toml ` +
          `(harnesses: ${known.join(", ") || "none"}); add the table or fix the name`,
    );
  }
  const access = s["agent.access"];
  if (access === "inherit") {
    throw new ConfigError(
      "agent.access",
      `agent.access = "inherit" is not available with agent.runtime = "acp": an ACP agent's ` +
        `settings files are never loaded; use "locked" or "workspace" ` +
        "(`wats config set agent.access workspace`)",
    );
  }
  return {
    harness,
    env: d.env,
    agentDir: d.paths.agentDir,
    // `Edit(//x/**)` scopes are Claude Code settings rules; over ACP the policy scopes requests.
    tools: access === "locked" ? "locked" : s["agent.tools"].map((t) => t.replace(/\(.*$/, "")),
    policy: makePolicy(s["policy.allow"], s["policy.deny"], d.paths.dataDir, { home: d.home }),
  };
}

/**
 * Starts the harness once and reads its name: only agents that take Claude's
 * options can be held to the access level (the tools they get, the asking mode).
 */
async function checkLockable(
  harness: AcpTables["harnesses"][string],
  cwd: string,
  env: Record<string, string>,
  log: RunnerLog,
): Promise<void> {
  let agent: AcpAgent;
  try {
    agent = await AcpAgent.start(harness, cwd, env);
  } catch (err) {
    throw new ConfigError(
      "agent.harness",
      `agent.runtime = "acp" is refused: ${errorMessage(err)}`,
    );
  }
  const name = agent.agentName;
  await agent.stop();
  if (name === undefined || !LOCKABLE_AGENTS.has(name)) {
    throw new ConfigError(
      "agent.harness",
      `agent.runtime = "acp" is refused: [harnesses.${harness.name}] runs ${
        name ?? "an agent that gives no name"
      }, which wats cannot hold to agent.access (it does not take Claude's tool list, so it ` +
        `could read files without asking). Use a Claude ACP agent (${
          [...LOCKABLE_AGENTS][0]
        }), or agent.runtime = "codex" for Codex`,
    );
  }
  log.info(`the agent runs on [harnesses.${harness.name}] over ACP (${name})`);
}
