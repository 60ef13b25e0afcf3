/**
 * Coding-agent harnesses pointed at the scripted mocks, as the e2e tests give
 * them to the ACP layer (a `HarnessConfig`) or to a daemon (`[harnesses.*]`
 * lines of config.toml): the pinned claude-agent-acp against the Anthropic
 * mock, the pinned codex-acp against the Responses mock.
 *
 * @module
 */

import type { HarnessConfig } from "../../src/config/acp_tables.ts";
import { MOCK_MODEL } from "./mock_openai.ts";

/**
 * A harness named `name` with no arguments, environment or context: for a layer whose
 * `connect` reaches an agent in this process (its `command` never runs) or a registry that
 * only reads it.
 */
export function bareHarness(name: string, command: string): HarnessConfig {
  return { name, command, args: [], env: {}, meta: {}, context: [], idle: 60_000, enabled: true };
}

/** What claude-agent-acp needs to talk to the Anthropic mock at `mockUrl`, its config under `home`. */
function claudeEnv(mockUrl: string, home: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: mockUrl,
    ANTHROPIC_API_KEY: "test-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CONFIG_DIR: `${home}/.claude`,
  };
}

/** The `claude` harness for the ACP layer: `acp` is `requireCli("claude-acp")`. */
export function claudeAcpHarness(acp: string[], mockUrl: string, home: string): HarnessConfig {
  const [command, ...args] = acp;
  if (command === undefined) {
    throw new Error('error: no claude-acp command: pass requireCli("claude-acp")');
  }
  return {
    name: "claude",
    command,
    args,
    env: claudeEnv(mockUrl, home),
    meta: {},
    context: [],
    idle: 60_000,
    enabled: true,
  };
}

/**
 * The same harness as the `[harnesses.claude]` lines of a daemon's config.toml
 * (`command = "node"`, the agent's script as its one argument); `env` adds
 * variables after the mock's.
 */
export function claudeAcpToml(
  acp: string[],
  mockUrl: string,
  home: string,
  env: Record<string, string> = {},
): string[] {
  const vars = Object.entries({ ...claudeEnv(mockUrl, home), ...env })
    .map(([k, v]) => `${k} = ${JSON.stringify(v)}`);
  return [
    "[harnesses.claude]",
    'command = "node"',
    `args = [${JSON.stringify(acp[1])}]`,
    `env = { ${vars.join(", ")} }`,
  ];
}

/**
 * The `codex` harness for the ACP layer (`codexAcp` is
 * `requireCli("codex-acp")`), with Codex's own config.toml written under
 * `codexHome`: the Responses mock at `mockUrl` as its provider, retries off.
 */
export function codexAcpHarness(
  codexAcp: string[],
  mockUrl: string,
  codexHome: string,
): HarnessConfig {
  const [command, ...args] = codexAcp;
  if (command === undefined) {
    throw new Error('error: no codex-acp command: pass requireCli("codex-acp")');
  }
  Deno.mkdirSync(codexHome, { recursive: true });
  Deno.writeTextFileSync(
    `${codexHome}/config.toml`,
    [
      `model = "${MOCK_MODEL}"`,
      'model_provider = "wats_mock"',
      "[model_providers.wats_mock]",
      'name = "wats mock"',
      `base_url = "${mockUrl}/v1"`,
      'wire_api = "responses"',
      "request_max_retries = 0",
      "stream_max_retries = 0",
      'env_key = "OPENAI_API_KEY"',
      "",
    ].join("\n"),
  );
  return {
    name: "codex",
    command,
    args,
    env: { CODEX_HOME: codexHome, OPENAI_API_KEY: "test-key" },
    meta: {},
    context: [],
    idle: 60_000,
    enabled: true,
  };
}
