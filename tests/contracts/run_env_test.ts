/**
 * A heartbeat run's environment is an allowlist (src/contracts/run_env.ts, issue 26): the table
 * says, per variable and runtime, whether a Claude or Codex run gets it from the daemon's.
 */

import assert from "node:assert/strict";
import {
  anyRunEnv,
  envAllows,
  pickEnv,
  RUN_ENV,
  runEnvAllowlist,
} from "../../src/contracts/run_env.ts";

/** variable → [claude run gets it, codex run gets it] */
const TABLE: ReadonlyArray<[string, boolean, boolean]> = [
  ["PATH", true, true],
  ["HOME", true, true],
  ["LANG", true, true],
  ["LC_ALL", true, true],
  ["LC_CTYPE", true, true],
  ["TERM", true, true],
  ["TZ", true, true],
  ["TMPDIR", true, true],
  ["DENO_DIR", true, true],
  ["HTTPS_PROXY", true, true],
  ["ANTHROPIC_API_KEY", true, false],
  ["ANTHROPIC_BASE_URL", true, false],
  ["CLAUDE_CONFIG_DIR", true, false],
  ["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", true, false],
  ["OPENAI_API_KEY", false, true],
  ["CODEX_HOME", false, true],
  ["CODEX_API_KEY", false, true],
  // The daemon's other secrets, and what would change how programs run.
  ["GH_TOKEN", false, false],
  ["GITHUB_TOKEN", false, false],
  ["AWS_SECRET_ACCESS_KEY", false, false],
  ["AWS_ACCESS_KEY_ID", false, false],
  ["SLACK_WEBHOOK_SECRET", false, false],
  ["NTFY_TOKEN", false, false],
  ["SSH_AUTH_SOCK", false, false],
  ["GPG_AGENT_INFO", false, false],
  ["DBUS_SESSION_BUS_ADDRESS", false, false],
  ["XDG_RUNTIME_DIR", false, false],
  ["WATS_DATA_DIR", false, false],
  ["WATS_RUN_TOKEN", false, false],
  ["LD_PRELOAD", false, false],
  ["NODE_OPTIONS", false, false],
  ["BASH_ENV", false, false],
  ["GIT_SSH_COMMAND", false, false],
  ["IS_SANDBOX", false, false],
  ["MY_KEY", false, false],
];

Deno.test("a run's environment keeps exactly the allowlisted variables of its runtime", () => {
  const claude = runEnvAllowlist(RUN_ENV.claude);
  const codex = runEnvAllowlist(RUN_ENV.codex);
  for (const [name, toClaude, toCodex] of TABLE) {
    assert.equal(envAllows(claude, name), toClaude, `claude ${name}`);
    assert.equal(envAllows(codex, name), toCodex, `codex ${name}`);
    // What the launcher hands the daemon for its runs: any runtime's.
    assert.equal(name in anyRunEnv({ [name]: "v" }), toClaude || toCodex, `launcher ${name}`);
  }
});

Deno.test("agent.codex_env_key's variable is the one name added, for Codex", () => {
  const env = { MY_KEY: "sk-1", OTHER_KEY: "sk-2", PATH: "/usr/bin" };
  assert.deepEqual(pickEnv(env, runEnvAllowlist(RUN_ENV.codex, ["MY_KEY"])), {
    MY_KEY: "sk-1",
    PATH: "/usr/bin",
  });
  // An unknown runtime gets the common part only.
  assert.deepEqual(pickEnv({ ANTHROPIC_API_KEY: "k", HOME: "/h" }, runEnvAllowlist(undefined)), {
    HOME: "/h",
  });
});
