/**
 * The Codex lock (issue 9): the catalog made from `codex debug models --bundled`, its cache per
 * Codex program and version, the check of a run's first request, the self-check's verdict and
 * its file, and the parser stopping a run whose stream shows the lock broken.
 */

import assert from "node:assert/strict";
import {
  catalogPath,
  codexInstall,
  DELETED_FIELDS,
  ensureCodexCatalog,
  lockCatalog,
} from "../../src/runner/runtimes/codex/catalog.ts";
import {
  ensureSelfCheck,
  judgeSelfCheck,
  lockProblems,
  readSelfCheck,
  recordRefusal,
  selfCheckKey,
  selfCheckStatusLine,
} from "../../src/runner/runtimes/codex/lock.ts";
import { CodexJsonParser, LOCK_BREAKING_ITEMS } from "../../src/runner/runtimes/codex/parser.ts";
import { providerOf } from "../../src/runner/runtimes/codex/prepare.ts";
import {
  type CommandOutput,
  type CommandRunner,
  spawnProcessGroup,
} from "../../src/runner/spawn.ts";
import type { Harness, RunContext } from "../../src/runner/harness.ts";
import { ConfigError, HarnessError } from "../../src/errors.ts";
import { SCHEMA } from "../../src/config/schema.ts";
import { parseText } from "../../src/config/codecs.ts";

/** Two entries as Codex 0.171 bundles them (the fields the lock touches, and one it keeps). */
const BUNDLED = {
  models: [
    {
      slug: "gpt-6.2-sol",
      display_name: "GPT-6.2 Sol",
      tool_mode: "code_mode_only",
      multi_agent_version: "v2",
      multi_agent_reasoning_effort: "low",
      use_responses_lite: true,
      experimental_supported_tools: ["request_user_input_async", "clock"],
      apply_patch_tool_type: "freeform",
      supports_search_tool: true,
      context_window: 400000,
    },
    { slug: "gpt-5.5", apply_patch_tool_type: "freeform", supports_search_tool: true },
  ],
};

Deno.test("the locked catalog drops code mode and sub-agents and forces plain tools on every entry", () => {
  const { models } = lockCatalog(BUNDLED);
  assert.equal(models.length, 2);
  for (const m of models) {
    for (const f of DELETED_FIELDS) assert.equal(f in m, false, `${m.slug}: ${f}`);
    assert.equal(m.use_responses_lite, false);
    assert.deepEqual(m.experimental_supported_tools, []);
    assert.equal(m.apply_patch_tool_type, null);
    assert.equal(m.supports_search_tool, false);
  }
  assert.equal(models[0]!.context_window, 400000, "other fields are kept");
  assert.equal(BUNDLED.models[0]!.tool_mode, "code_mode_only", "the input is not changed");
});

Deno.test("an empty or malformed bundled catalog is refused (Codex refuses {models: []})", () => {
  for (const bad of [{ models: [] }, {}, null, { models: ["x"] }, []]) {
    assert.throws(
      () => lockCatalog(bad),
      (e) => e instanceof HarnessError && e.code === "harness.codex_catalog",
      JSON.stringify(bad),
    );
  }
});

/** A fake Codex: answers `--version` and `debug models --bundled`; records the calls. */
function fakeCodex(version: string, models: CommandOutput) {
  const calls: string[] = [];
  const run: CommandRunner = (program, args) => {
    calls.push(`${program} ${args.join(" ")}`);
    if (args[0] === "--version") return Promise.resolve({ code: 0, stdout: version, stderr: "" });
    return Promise.resolve(models);
  };
  return { run, calls };
}

const OK_MODELS = { code: 0, stdout: JSON.stringify(BUNDLED), stderr: "" };

Deno.test("the catalog is made once per Codex program and version, in the given dir", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const a = fakeCodex("codex-cli 0.171.0\n", OK_MODELS);
    const first = await ensureCodexCatalog({ run: a.run, program: "codex", dir });
    assert.equal(first.created, true);
    assert.deepEqual(first.slugs, ["gpt-6.2-sol", "gpt-5.5"]);
    assert.ok(first.path.startsWith(`${dir}/catalog-`));
    assert.deepEqual(JSON.parse(await Deno.readTextFile(first.path)), lockCatalog(BUNDLED));

    const again = await ensureCodexCatalog({ run: a.run, program: "codex", dir });
    assert.equal(again.created, false);
    assert.equal(again.path, first.path);
    assert.deepEqual(a.calls, [
      "codex --version",
      "codex debug models --bundled",
      "codex --version",
    ]);

    const newer = await ensureCodexCatalog({
      run: fakeCodex("codex-cli 0.172.0\n", OK_MODELS).run,
      program: "codex",
      dir,
    });
    assert.notEqual(newer.path, first.path, "another version, another file");
    const other = await codexInstall(fakeCodex("codex-cli 0.171.0", OK_MODELS).run, "/opt/codex");
    assert.notEqual(catalogPath(dir, other), first.path, "another program, another file");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a Codex that cannot list its models is refused with its own words, and no file is left", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const f = fakeCodex("codex-cli 0.99.0", {
      code: 2,
      stdout: "",
      stderr: "error: unrecognized subcommand 'models'",
    });
    await assert.rejects(
      ensureCodexCatalog({ run: f.run, program: "codex", dir }),
      (e) =>
        e instanceof HarnessError &&
        /`codex debug models --bundled` exited with code 2: error: unrecognized subcommand 'models'/
          .test(e.message),
    );
    assert.deepEqual([...Deno.readDirSync(dir)], []);
    await assert.rejects(
      ensureCodexCatalog({ run: fakeCodex("", OK_MODELS).run, program: "codex", dir }),
      /`codex --version`/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---- the first request ---------------------------------------------------------

const LOCKED_BODY = {
  model: "gpt-6.2-sol",
  input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
  tools: [
    { type: "function", name: "list_mcp_resources" },
    { type: "function", name: "list_mcp_resource_templates" },
    { type: "function", name: "read_mcp_resource" },
    { type: "function", name: "request_user_input" },
    {
      type: "namespace",
      name: "mcp__wats",
      tools: [{ type: "function", name: "answer" }, { type: "function", name: "ask" }],
    },
  ],
};

Deno.test("a locked first request has no problems", () => {
  assert.deepEqual(lockProblems({ "content-type": "application/json" }, LOCKED_BODY), []);
  assert.deepEqual(
    judgeSelfCheck({ request: { headers: {}, body: LOCKED_BODY }, exitCode: 0, stderr: "" }),
    {
      tools: [
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
        "request_user_input",
        "mcp__wats/answer",
        "mcp__wats/ask",
      ],
    },
  );
});

Deno.test("each tool beyond the wats tools, an additional_tools item and the lite header are named", () => {
  const body = {
    ...LOCKED_BODY,
    tools: [
      ...LOCKED_BODY.tools,
      { type: "function", name: "exec_command" },
      { type: "custom", name: "apply_patch" },
      { type: "web_search" },
      { type: "namespace", name: "mcp__other", tools: [{ type: "function", name: "x" }] },
    ],
    input: [
      ...LOCKED_BODY.input,
      { type: "additional_tools", tools: [{ type: "function", name: "exec" }] },
    ],
  };
  const problems = lockProblems({ "X-OpenAI-Internal-Codex-Responses-Lite": "true" }, body);
  assert.deepEqual(problems, [
    "tool exec_command",
    "tool apply_patch",
    "tool web_search",
    "tool mcp__other/x",
    "an additional_tools item (exec): code mode",
    "the header x-openai-internal-codex-responses-lite: true (code mode)",
  ]);
  const v = judgeSelfCheck({ request: { headers: {}, body }, exitCode: 0, stderr: "" });
  assert.match(v.error!, /more than the wats tools in the first request: tool exec_command; /);
});

Deno.test("a check with no request, or without the wats tools, fails with the reason", () => {
  const none = judgeSelfCheck({
    exitCode: 1,
    stderr: "Error: required MCP servers failed to initialize: wats",
  });
  assert.match(
    none.error!,
    /made no model request \(codex exited with code 1: .*failed to initialize/,
  );
  const bare = judgeSelfCheck({
    request: { headers: {}, body: { ...LOCKED_BODY, tools: LOCKED_BODY.tools.slice(0, 4) } },
    exitCode: 0,
    stderr: "",
  });
  assert.match(bare.error!, /offered no wats tools/);
});

// ---- the self-check's file -------------------------------------------------------

function ctx(cwd: string): RunContext {
  return {
    runId: "codex-self-check",
    prompt: "",
    maxTurns: 10,
    maxBudgetUsd: 0,
    token: "t",
    agentProfile: "helper",
    dataDir: "/data",
    cwd,
    configDir: "/data/agent/run-config",
    selfCommand: { command: "/usr/bin/wats", args: [] },
  };
}

/**
 * A harness whose "Codex" is `curl`-free Deno: it posts `body` to the check's server once, like
 * Codex's first request, so the check runs its real server with no Codex.
 */
function postingHarness(body: unknown, seen: string[]): (baseUrl: string) => Harness {
  return (baseUrl) => ({
    name: "codex",
    command: (c) => {
      seen.push(baseUrl);
      return {
        program: Deno.execPath(),
        args: [
          "eval",
          `const r = await fetch(${JSON.stringify(`${baseUrl}/responses`)}, {method: "POST", ` +
          `headers: {"content-type": "application/json"}, body: ${
            JSON.stringify(JSON.stringify(body))
          }}); console.log(r.status, (await r.text()).includes("response.completed"));`,
        ],
        env: {},
        cwd: c.cwd,
        stdin: c.prompt,
        files: [],
      };
    },
    parser: () => new CodexJsonParser(),
  });
}

Deno.test("the self-check serves a scripted answer on loopback, writes its result, and is reused while the key holds", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const seen: string[] = [];
    const o = {
      dir,
      key: selfCheckKey({ installKey: "k1", model: "gpt-6.2-sol", args: ["--disable", "x"] }),
      program: "codex",
      version: "codex-cli 0.171.0",
      model: "gpt-6.2-sol",
      ctx: ctx(dir),
      spawn: spawnProcessGroup,
      harness: postingHarness(LOCKED_BODY, seen),
    };
    const first = await ensureSelfCheck(o);
    assert.equal(first.ran, true);
    assert.equal(first.result.ok, true);
    assert.match(seen[0]!, /^http:\/\/127\.0\.0\.1:\d+\/v1$/, "a loopback provider");
    assert.deepEqual(readSelfCheck(dir), first.result);
    assert.match(
      selfCheckStatusLine(dir)!,
      /^codex lock: self-check passed at .* \(codex-cli 0\.171\.0, model gpt-6\.2-sol\): only list_mcp_resources, .*mcp__wats\/ask$/,
    );

    const again = await ensureSelfCheck(o);
    assert.equal(again.ran, false);
    assert.equal(seen.length, 1, "not run again for the same Codex, model and flags");

    const otherModel = { ...o, key: selfCheckKey({ installKey: "k1", args: ["--disable", "x"] }) };
    assert.equal((await ensureSelfCheck(otherModel)).ran, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a failed self-check throws, is written for `wats status`, and runs again next time", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const seen: string[] = [];
    const o = {
      dir,
      key: "k",
      program: "codex",
      ctx: ctx(dir),
      spawn: spawnProcessGroup,
      harness: postingHarness(
        {
          ...LOCKED_BODY,
          tools: [...LOCKED_BODY.tools, { type: "function", name: "spawn_agent" }],
        },
        seen,
      ),
    };
    await assert.rejects(
      ensureSelfCheck(o),
      (e) => e instanceof HarnessError && /tool spawn_agent/.test(e.message),
    );
    assert.equal(readSelfCheck(dir)?.ok, false);
    assert.match(selfCheckStatusLine(dir)!, /^codex lock: REFUSED at .*tool spawn_agent/);
    await assert.rejects(ensureSelfCheck(o));
    assert.equal(seen.length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a refusal before the check (no catalog) is on file for `wats status`", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.equal(selfCheckStatusLine(dir), undefined, "nothing before the first start");
    await recordRefusal(dir, { program: "codex", error: "no catalog: because" });
    assert.match(selfCheckStatusLine(dir)!, /^codex lock: REFUSED at .*\(codex, .*\): no catalog/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---- a broken lock in the event stream ---------------------------------------------

const STARTED = '{"type":"thread.started","thread_id":"t1"}';

Deno.test("each lock-breaking item stops the run at its first sight, with 'lock broken: …'", () => {
  const items: Record<string, string> = {
    command_execution:
      '{"id":"item_1","type":"command_execution","command":"/bin/bash -lc \'sleep 60\'","aggregated_output":"","exit_code":null,"status":"in_progress"}',
    file_change:
      '{"id":"item_1","type":"file_change","changes":[{"path":"/x","kind":"add"}],"status":"in_progress"}',
    collab_tool_call: '{"id":"item_1","type":"collab_tool_call","tool":"spawn_agent"}',
    web_search: '{"id":"item_1","type":"web_search","query":"wats"}',
  };
  assert.deepEqual(Object.keys(items), [...LOCK_BREAKING_ITEMS]);
  for (const [type, item] of Object.entries(items)) {
    for (const phase of ["item.started", "item.completed"]) {
      const p = new CodexJsonParser();
      p.push(STARTED);
      const events = p.push(`{"type":"${phase}","item":${item}}`);
      const stops = events.filter((e) => e.type === "stop");
      assert.equal(stops.length, 1, `${type} ${phase}: ${JSON.stringify(events)}`);
      assert.equal(
        p.push(`{"type":"item.completed","item":${item}}`).filter((e) => e.type === "stop").length,
        0,
        "one stop",
      );
      p.push('{"type":"turn.completed","usage":{}}');
      const r = p.finish(0);
      assert.equal(r.ok, false, "failed even though Codex exited 0");
      assert.match(r.error!, new RegExp(`^lock broken: Codex started .*\\(a ${type} item\\)`));
    }
  }
});

Deno.test("an MCP call, a message and a warning item never stop a run", () => {
  const p = new CodexJsonParser();
  const events = [
    STARTED,
    '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"warning"}}',
    '{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"wats","tool":"status","arguments":{},"result":null,"error":null,"status":"completed"}}',
    '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done."}}',
    '{"type":"turn.completed","usage":{}}',
  ].flatMap((l) => p.push(l));
  assert.ok(!events.some((e) => e.type === "stop"));
  assert.equal(p.finish(0).ok, true);
});

// ---- the settings --------------------------------------------------------------------

Deno.test("agent.codex_model, agent.codex_base_url and agent.codex_env_key are validated", () => {
  const ok = (
    key: "agent.codex_model" | "agent.codex_base_url" | "agent.codex_env_key",
    v: string,
  ) => assert.equal(parseText(SCHEMA[key], v), v);
  const bad = (
    key: "agent.codex_model" | "agent.codex_base_url" | "agent.codex_env_key",
    v: string,
  ) => assert.throws(() => parseText(SCHEMA[key], v), /must be/, `${key} = ${v}`);
  ok("agent.codex_model", "gpt-5.5");
  ok("agent.codex_model", "");
  bad("agent.codex_model", "gpt 5");
  bad("agent.codex_model", '"; rm');
  ok("agent.codex_base_url", "https://example.test/v1");
  ok("agent.codex_base_url", "http://127.0.0.1:8080/v1");
  bad("agent.codex_base_url", "ftp://x");
  bad("agent.codex_base_url", "example.test/v1");
  ok("agent.codex_env_key", "MY_KEY");
  bad("agent.codex_env_key", "sk-abc123");
  bad("agent.codex_env_key", "1KEY");
});

Deno.test("the endpoint settings become a provider whose key is only named", () => {
  const s = { "agent.codex_model": "", "agent.codex_base_url": "", "agent.codex_env_key": "" };
  assert.equal(providerOf(s), undefined, "Codex's own provider and login");
  assert.deepEqual(
    providerOf({ ...s, "agent.codex_base_url": "https://h/v1", "agent.codex_env_key": "K" }),
    { id: "wats_endpoint", name: "wats endpoint", baseUrl: "https://h/v1", envKey: "K" },
  );
  assert.throws(
    () => providerOf({ ...s, "agent.codex_env_key": "K" }),
    (e) => e instanceof ConfigError && /agent\.codex_base_url is not/.test(e.message),
  );
});
