/**
 * Which agent a process runs, for its sandbox: the login its private home is seeded with and
 * the vendor's API its model-only network reaches (docs/decisions/sandbox.md, "Which agent").
 * The known agents are the runtimes' facts (`RuntimeFacts.agent`). A `[harnesses.NAME]` runs
 * one when it says so (`agent = "claude"`), or when its command is exactly that agent's ACP
 * adapter (the program `claude-agent-acp`, or `node …/node_modules/<its package>/<its entry>`).
 * Never when a word of its command line merely contains a name: a harness path or argument
 * that does (`/opt/claude/bin/gemini`, `--model claude-x`, a wrapper script) would otherwise
 * be handed another vendor's login. Any other harness gets no login and no vendor host, and
 * the daemon says at start how to declare it (`undeclaredAgentNotice`).
 *
 * @module
 */

import type { AcpTables, HarnessConfig } from "../../config/acp_tables.ts";
import type { Settings } from "../../config/schema.ts";
import { ConfigError } from "../../errors.ts";
import type { ModelAgent } from "../../safety/net_policy.ts";
import type { AgentProfile } from "../../safety/sandbox.ts";
import { RUNTIME_FACTS, runtimeFacts } from "./facts.ts";
import type { AgentFacts } from "./runtime.ts";

/** Every agent wats knows, each once: the runtimes' agents. */
export const AGENTS: readonly AgentFacts[] = Object.values(RUNTIME_FACTS).flatMap((f) =>
  f.agent ? [f.agent] : []
);

/** The programs that run a JavaScript adapter's entry file as their first argument. */
const JS_RUNTIMES: readonly string[] = ["node", "nodejs", "bun"];

/**
 * The agent `h` runs: the one it declares, else the known agent whose ACP adapter its command
 * is exactly (with the state it declares, if any), else an agent wats does not know with the
 * state it declares and no vendor host, else none (no login, no vendor host).
 *
 * @throws {ConfigError} code `config.bad_value` when `agent` names no known agent.
 */
export function harnessAgent(h: HarnessConfig): AgentProfile | undefined {
  if (h.agent !== undefined) {
    const known = AGENTS.find((a) => a.name === h.agent);
    if (known === undefined) {
      throw new ConfigError(
        "config.bad_value",
        `[harnesses.${h.name}] agent = "${h.agent}" is not an agent wats knows (${
          AGENTS.map((a) => a.name).join(", ")
        }): set one of those, or remove agent and declare the agent's state folder and login ` +
          `(state = "~/.folder", login = ["file"]; docs/acp.md)`,
      );
    }
    return known;
  }
  const adapter = AGENTS.find((a) => runsAdapter(a, h));
  if (h.state === undefined) return adapter;
  // A declared state is the truth about where it keeps its login, whatever its command.
  return { ...(adapter ?? { name: h.name, hosts: [] }), state: h.state };
}

/** Whether `h`'s command is exactly `agent`'s ACP adapter. */
function runsAdapter(agent: AgentFacts, h: Pick<HarnessConfig, "command" | "args">): boolean {
  const adapter = agent.adapter;
  if (adapter === undefined) return false;
  const program = baseName(h.command);
  if (program === adapter.bin) return true;
  const script = h.args[0] ?? "";
  return JS_RUNTIMES.includes(program) && script.startsWith("/") &&
    script.endsWith(`/node_modules/${adapter.pkg}/${adapter.entry}`) &&
    !script.split("/").includes("..");
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/**
 * What the daemon says at start of an enabled harness whose agent nobody declared: what its
 * sandbox lacks and how to declare it. Undefined when its agent is known or declared.
 */
export function undeclaredAgentNotice(h: HarnessConfig): string | undefined {
  if (harnessAgent(h) !== undefined) return undefined;
  return `[harnesses.${h.name}] runs ${JSON.stringify([h.command, ...h.args].join(" "))}, ` +
    "which declares no agent: its sandbox gets no login and reaches no vendor's API, only the " +
    `base URLs its env and args name. If it runs one wats knows, add ${
      AGENTS.map((a) => `agent = "${a.name}"`).join(" or ")
    } to [harnesses.${h.name}]; for another ` +
    'agent, declare its state folder and login (state = "~/.folder", login = ["file"]; ' +
    "docs/acp.md)";
}

/** The harnesses one node may start: every enabled one, and the one the ACP runtime runs. */
export function nodeHarnesses(
  values: Pick<Settings, "agent.runtime" | "agent.harness">,
  acp: AcpTables | undefined,
): HarnessConfig[] {
  return Object.values(acp?.harnesses ?? {}).filter((h) =>
    h.enabled || (values["agent.runtime"] === "acp" && h.name === values["agent.harness"])
  );
}

/**
 * The agents one node runs, for the model hosts its proxy (and its permission set) allows
 * (src/safety/net_policy.ts `nodeModelHosts`): the heartbeat runtime's agent, and every
 * enabled harness plus the one the ACP runtime runs.
 *
 * @throws {ConfigError} as `harnessAgent` does.
 */
export function nodeAgents(
  values: Pick<Settings, "agent.runtime" | "agent.harness" | "agent.codex_base_url">,
  acp: AcpTables | undefined,
  env: Readonly<Record<string, string>>,
): ModelAgent[] {
  const runtime = runtimeFacts(values["agent.runtime"]);
  const out: ModelAgent[] = [];
  if (runtime?.agent) {
    const url = runtime.baseUrlSetting ? values[runtime.baseUrlSetting] : "";
    out.push({ agent: runtime.agent, env, args: url ? [url] : [], known: AGENTS });
  }
  for (const h of nodeHarnesses(values, acp)) {
    const agent = harnessAgent(h);
    out.push({
      ...(agent ? { agent } : {}),
      env: { ...env, ...h.env },
      args: [h.command, ...h.args],
      known: AGENTS,
    });
  }
  return out;
}
