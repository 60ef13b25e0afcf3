/** The model-only network's pure pieces: which hosts a model needs, the relay, the bwrap args. */

import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import {
  modelHosts,
  nodeModelHosts,
  parseProxyHead,
  relayCommand,
  withModelOnly,
} from "../../src/safety/net_policy.ts";
import { route } from "../../src/cli/route.ts";
import { AGENTS, nodeAgents } from "../../src/runner/runtimes/agents.ts";
import { RUNTIME_FACTS } from "../../src/runner/runtimes/facts.ts";
import type { AgentProfile } from "../../src/safety/sandbox.ts";
import { MODEL_SOCKET_INSIDE, parseRelayArgs, RELAY_COMMAND } from "../../src/safety/net_relay.ts";

const CLAUDE = RUNTIME_FACTS.claude.agent;
const CODEX = RUNTIME_FACTS.codex.agent;

Deno.test("an agent's model hosts: its base URL replaces its vendor's hosts; args name more", () => {
  const at = (
    agent: AgentProfile | undefined,
    env: Record<string, string>,
    args: string[] = [],
  ) => modelHosts({ ...(agent ? { agent } : {}), env, args, known: AGENTS });
  const cases: Array<[string[], string[]]> = [
    [at(CLAUDE, {}), ["api.anthropic.com:443", "platform.claude.com:443"]],
    [at(CLAUDE, { ANTHROPIC_BASE_URL: "http://127.0.0.1:4000" }), ["127.0.0.1:4000"]],
    [at(CLAUDE, { ANTHROPIC_BASE_URL: "https://gw.example.org/anthropic" }), [
      "gw.example.org:443",
    ]],
    [at(CODEX, {}), ["api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"]],
    [
      at(CODEX, { OPENAI_BASE_URL: "http://localhost:8080/v1" }, [
        "-c",
        'model_providers.wats.base_url="http://127.0.0.1:5000/v1"',
      ]),
      ["localhost:8080", "127.0.0.1:5000"],
    ],
    // An agent nobody declared reaches only what its settings name: no vendor's host.
    [at(undefined, {}), []],
    [at(undefined, { ANTHROPIC_BASE_URL: "http://127.0.0.1:1" }), ["127.0.0.1:1"]],
    // Not a URL: nothing.
    [at(undefined, { OPENAI_BASE_URL: "not a url" }, ["file:///x", "ftp://h/"]), []],
  ];
  for (const [got, want] of cases) assertEquals(got, want);
});

Deno.test("a node's model hosts: the runtime's and every enabled harness's (the ACP runtime's too)", () => {
  const h = (name: string, command: string, enabled: boolean, env = {}) => ({
    name,
    command,
    args: [],
    env,
    meta: {},
    context: [],
    idle: 1,
    enabled,
  });
  const acp = {
    harnesses: {
      claude: h("claude", "claude-agent-acp", true, { ANTHROPIC_BASE_URL: "http://127.0.0.1:7" }),
      off: h("off", "codex-acp", false),
      heart: h("heart", "gemini", false, { OPENAI_BASE_URL: "https://llm.example.org" }),
    },
    checkouts: {},
  };
  const values = {
    "agent.runtime": "acp" as const,
    "agent.harness": "heart",
    "agent.codex_base_url": "",
  };
  assertEquals(nodeModelHosts(nodeAgents(values, acp, {})), [
    "127.0.0.1:7",
    "llm.example.org:443",
  ]);
  assertEquals(
    nodeModelHosts(
      nodeAgents(
        { ...values, "agent.runtime": "codex", "agent.codex_base_url": "http://127.0.0.1:9/v1" },
        undefined,
        {},
      ),
    ),
    ["127.0.0.1:9", "api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"],
  );
});

Deno.test("the relay runs first in the sandbox, forwards each loopback model host, and is no launcher command", () => {
  const cmd = relayCommand(
    ["deno", "run", "main.ts"],
    ["127.0.0.1:4000", "api.anthropic.com:443"],
    "claude",
    [
      "-p",
      "--",
      "x",
    ],
  );
  assertEquals(cmd, {
    program: "deno",
    args: [
      "run",
      "main.ts",
      "sandbox-relay",
      "--socket",
      MODEL_SOCKET_INSIDE,
      "--forward",
      "127.0.0.1:4000",
      "--",
      "claude",
      "-p",
      "--",
      "x",
    ],
  });
  // main.ts runs the relay when the command is its first word, without the launcher.
  assertEquals(cmd.args[2], RELAY_COMMAND);
  assertEquals(parseRelayArgs(cmd.args.slice(3)), {
    socket: MODEL_SOCKET_INSIDE,
    forwards: ["127.0.0.1:4000"],
    program: "claude",
    args: ["-p", "--", "x"],
  });
  // The agent's own flags after `--` are never the relay's.
  assertEquals(parseRelayArgs(["--socket", "/s", "--", "a", "--socket", "/x"]), {
    socket: "/s",
    forwards: [],
    program: "a",
    args: ["--socket", "/x"],
  });
  // The launcher knows no such command (help says so): the relay has no path through it.
  assertEquals(route(["--verbose", RELAY_COMMAND, "--socket", "/s", "--", "a"]).id, "help");
  for (
    const bad of [[], ["--socket", "/s"], ["--forward", "nope", "--socket", "/s", "--", "a"], [
      "--x",
      "1",
      "--",
      "a",
    ]]
  ) {
    throws(() => parseRelayArgs(bad), /sandbox-relay/);
  }
});

Deno.test("model-only adds its own network and the model socket after every other mount, before --", () => {
  const bwrap = [
    "--ro-bind",
    "/",
    "/",
    "--tmpfs",
    "/tmp",
    "--chdir",
    "/w",
    "--",
    "deno",
    "--",
    "x",
  ];
  assertEquals(withModelOnly(bwrap, "/data/agent/model.sock"), [
    "--ro-bind",
    "/",
    "/",
    "--tmpfs",
    "/tmp",
    "--chdir",
    "/w",
    "--unshare-net",
    "--bind",
    "/data/agent/model.sock",
    MODEL_SOCKET_INSIDE,
    "--",
    "deno",
    "--",
    "x",
  ]);
  throws(() => withModelOnly(["-p", "profile", "prog"], "/s"), /without --/);
});

Deno.test("the proxy reads CONNECT and absolute-form requests, and nothing else", () => {
  const cases: Array<[string, ReturnType<typeof parseProxyHead>]> = [
    ["CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: x\r\n\r\n", {
      kind: "connect",
      target: "api.anthropic.com:443",
    }],
    ["CONNECT API.Anthropic.com:443 HTTP/1.1\r\n\r\n", {
      kind: "connect",
      target: "api.anthropic.com:443",
    }],
    ["POST http://127.0.0.1:4000/v1/messages HTTP/1.1\r\n\r\n", {
      kind: "forward",
      target: "127.0.0.1:4000",
    }],
    ["GET https://h.example/ HTTP/1.0\r\n\r\n", { kind: "forward", target: "h.example:443" }],
    ["CONNECT api.anthropic.com HTTP/1.1\r\n\r\n", {
      kind: "bad",
      reason: "CONNECT needs host:port",
    }],
    ["CONNECT h:0 HTTP/1.1\r\n\r\n", { kind: "bad", reason: "CONNECT needs host:port" }],
    ["GET / HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n", { kind: "bad", reason: "not a proxy request" }],
    ["GET ftp://h/ HTTP/1.1\r\n\r\n", { kind: "bad", reason: "not a proxy request" }],
    ["\x16\x03\x01 tls hello", { kind: "bad", reason: "not an HTTP/1 request line" }],
  ];
  for (const [head, want] of cases) assertEquals(parseProxyHead(head), want, JSON.stringify(head));
});
