/**
 * Which agent a `[harnesses.NAME]` runs (src/runner/runtimes/agents.ts): declared, or exactly a
 * known agent's ACP adapter, never guessed from a word of its command line. Each crafted
 * harness below fooled the old substring match (`/claude/i`, then `/codex/i`) into handing its
 * sandbox another vendor's login and network.
 */

import assert from "node:assert/strict";
import type { HarnessConfig } from "../../src/config/acp_tables.ts";
import { parseAcpTables } from "../../src/config/acp_tables.ts";
import { ConfigError } from "../../src/errors.ts";
import {
  AGENTS,
  harnessAgent,
  nodeAgents,
  undeclaredAgentNotice,
} from "../../src/runner/runtimes/agents.ts";
import { RUNTIME_FACTS } from "../../src/runner/runtimes/facts.ts";
import { loginSeeds } from "../../src/safety/sandbox_home.ts";
import { modelHosts, nodeModelHosts } from "../../src/safety/net_policy.ts";

const CLAUDE = RUNTIME_FACTS.claude.agent!;
const CODEX = RUNTIME_FACTS.codex.agent!;
const PKG = "/opt/acp/node_modules/@agentclientprotocol";

function harness(command: string, args: string[] = [], more: Partial<HarnessConfig> = {}) {
  return {
    name: "h",
    command,
    args,
    env: {},
    meta: {},
    context: [],
    idle: 1,
    enabled: true,
    ...more,
  } satisfies HarnessConfig;
}

/** What the old `agentKindOf` said: the first name found anywhere in the command line. */
function oldGuess(h: HarnessConfig): string | undefined {
  const words = [h.command, ...h.args].join(" ");
  return /claude/i.test(words) ? "claude" : /codex/i.test(words) ? "codex" : undefined;
}

Deno.test("a harness whose command line only mentions an agent gets no agent: no login, no vendor host", () => {
  const crafted = [
    harness("/opt/claude/bin/gemini", ["--acp"]),
    harness("my-claude-wrapper"),
    harness("claude-agent-acp-fork"),
    harness("gemini", ["--model", "claude-sonnet"]),
    harness("codex-acp.sh"),
    harness("node", ["/tmp/claude-agent-acp.js"]),
    harness("node", ["/x/node_modules/@agentclientprotocol/claude-agent-acp/evil.js"]),
    harness("node", ["relative/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"]),
    harness("node", [`${PKG}/claude-agent-acp/dist/index.js/../../../../../evil/x.js`]),
    harness("sh", ["-c", "claude-agent-acp"]),
    harness("python3", [`${PKG}/claude-agent-acp/dist/index.js`]),
    // The table's name is the tool's name, not the agent.
    { ...harness("gemini"), name: "claude" },
  ];
  for (const h of crafted) {
    const what = JSON.stringify([h.command, ...h.args]);
    if (h.name === "h") assert.notEqual(oldGuess(h), undefined, `the old match took ${what}`);
    assert.equal(harnessAgent(h), undefined, what);
    assert.deepEqual(loginSeeds(harnessAgent(h)?.state, {}, "/h", "/p"), [], what);
    assert.deepEqual(
      modelHosts({ env: {}, args: [h.command, ...h.args], known: AGENTS }),
      [],
      what,
    );
    const notice = undeclaredAgentNotice(h) ?? "";
    assert.match(notice, /no login and reaches no vendor's API/, what);
    assert.match(
      notice,
      new RegExp(`add agent = "claude" or agent = "codex" to \\[harnesses\\.${h.name}\\]`),
    );
  }
});

Deno.test("only a command that is exactly a known ACP adapter runs that agent without declaring it", () => {
  assert.equal(harnessAgent(harness("claude-agent-acp")), CLAUDE);
  assert.equal(harnessAgent(harness("/usr/local/bin/codex-acp")), CODEX);
  assert.equal(harnessAgent(harness("node", [`${PKG}/claude-agent-acp/dist/index.js`])), CLAUDE);
  assert.equal(harnessAgent(harness("/usr/bin/node", [`${PKG}/codex-acp/dist/index.js`])), CODEX);
  // The old match read the first name anywhere: a Codex adapter with a Claude model was Claude.
  const codexWithClaudeModel = harness("node", [
    `${PKG}/codex-acp/dist/index.js`,
    "-c",
    "model=claude-opus",
  ]);
  assert.equal(oldGuess(codexWithClaudeModel), "claude");
  assert.equal(harnessAgent(codexWithClaudeModel), CODEX);
  assert.equal(undeclaredAgentNotice(codexWithClaudeModel), undefined);
});

Deno.test("a declared agent wins over the command; a wrapper is known only when it declares", () => {
  const wrapper = harness("/home/me/bin/run-agent", ["--sandboxed"], { agent: "claude" });
  assert.equal(oldGuess(wrapper), undefined);
  assert.equal(harnessAgent(wrapper), CLAUDE);
  assert.deepEqual(loginSeeds(harnessAgent(wrapper)?.state, {}, "/h", "/p"), [
    { from: "/h/.claude/.credentials.json", to: "/p/.claude/.credentials.json" },
  ]);
  // A Codex adapter the person says runs Claude is Claude: the declaration is the truth.
  assert.equal(harnessAgent(harness("codex-acp", [], { agent: "claude" })), CLAUDE);
  // An agent wats does not know declares its state: its own login, no vendor's host.
  const gemini = harness("gemini", ["--acp"], {
    state: { dir: "~/.gemini", login: ["oauth_creds.json"] },
  });
  assert.deepEqual(harnessAgent(gemini), {
    name: "h",
    state: { dir: "~/.gemini", login: ["oauth_creds.json"] },
    hosts: [],
  });
  assert.equal(undeclaredAgentNotice(gemini), undefined);
  // A declared state is where the login is, even for a known adapter.
  const moved = harness("claude-agent-acp", [], { state: { dir: "~/.claude-work", login: ["c"] } });
  assert.deepEqual(harnessAgent(moved), {
    ...CLAUDE,
    state: { dir: "~/.claude-work", login: ["c"] },
  });
});

Deno.test("a declared agent wats does not know is refused with what to write instead", () => {
  for (const name of ["gemini", "acp", "other"]) {
    assert.throws(
      () => harnessAgent(harness("x", [], { agent: name })),
      (e: unknown) =>
        e instanceof ConfigError && e.code === "config.bad_value" &&
        e.message.includes(`agent = "${name}" is not an agent wats knows (claude, codex)`) &&
        e.message.includes("declare the agent's state folder and login"),
    );
  }
  // The node's model hosts are worked out at start, so a bad name stops the daemon there.
  const acp = { harnesses: { h: harness("x", [], { agent: "gemini" }) }, checkouts: {} };
  const values = { "agent.runtime": "none", "agent.harness": "", "agent.codex_base_url": "" };
  assert.throws(() => nodeAgents(values as never, acp, {}), ConfigError);
});

Deno.test("config.toml's agent key: a name, and never beside a declared state", () => {
  const where = (k: string) => `config.toml:${k}`;
  const parsed = parseAcpTables(
    { harnesses: { w: { command: "/home/me/bin/run-agent", agent: "claude" } } },
    where,
  );
  assert.equal(parsed.harnesses.w!.agent, "claude");
  assert.throws(
    () => parseAcpTables({ harnesses: { w: { command: "x", agent: 3 } } }, where),
    /harnesses\.w\.agent = 3 is not allowed; must name the agent it runs/,
  );
  assert.throws(
    () =>
      parseAcpTables(
        { harnesses: { w: { command: "x", agent: "claude", state: "~/.claude" } } },
        where,
      ),
    /drop state and login, or agent/,
  );
});

Deno.test("a node's proxy opens a harness's vendor hosts only for the agent it runs", () => {
  const acp = {
    harnesses: {
      fake: harness("/opt/claude/gemini"),
      real: harness("node", [`${PKG}/codex-acp/dist/index.js`]),
    },
    checkouts: {},
  };
  const values = {
    "agent.runtime": "none" as const,
    "agent.harness": "",
    "agent.codex_base_url": "",
  };
  assert.deepEqual(nodeModelHosts(nodeAgents(values, acp, {})), CODEX.hosts);
});
