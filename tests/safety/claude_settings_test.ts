import assert from "node:assert/strict";
import { HarnessError } from "../../src/errors.ts";
import { dataPaths } from "../../src/config/paths.ts";
import {
  claudeSettings,
  denyRules,
  listDataEntries,
  validateClaudeSettings,
  writeClaudeSettings,
} from "../../src/safety/claude_settings.ts";
import { requireCli } from "../support/clis.ts";
import { runClaude } from "../support/claude.ts";
import {
  type MessagesRequest,
  MOCK_MODEL,
  type RecordedRequest,
  type RequestBlock,
  startMockAnthropic,
  text,
  textOf,
  toolResultFor,
  toolUse,
  trailingToolResults,
} from "../support/mock_anthropic.ts";

const HOME = "/home/ada";
const DATA = "/home/ada/.local/share/wats";
const RUN = `${DATA}/agent/run`;
/** A typical data dir once the node has run and the agent has had runs. */
const TYPICAL = [
  "config.toml",
  "safety.json",
  "store.db",
  "node.key",
  "mcp.sock",
  "agent/",
  "agent/runs/",
  "agent/runs.jsonl",
  "agent/pending/",
  "agent/run/",
];

function typical(): string[] {
  return denyRules({ dataDir: DATA, dataEntries: TYPICAL, runDir: RUN, home: HOME });
}

function has(rules: string[], ...wanted: string[]): void {
  for (const w of wanted) assert.ok(rules.includes(w), `missing ${w} in\n${rules.join("\n")}`);
}

function lacks(rules: string[], ...unwanted: string[]): void {
  for (const u of unwanted) assert.ok(!rules.includes(u), `unexpected ${u}`);
}

Deno.test("deny rules cover every entry of a typical data dir for Edit and Write", () => {
  const rules = typical();
  for (const tool of ["Edit", "Write"]) {
    has(
      rules,
      `${tool}(/${DATA}/config.toml)`,
      `${tool}(/${DATA}/safety.json)`,
      `${tool}(/${DATA}/store.db)`,
      `${tool}(/${DATA}/node.key)`,
      `${tool}(/${DATA}/mcp.sock)`,
      `${tool}(/${DATA}/agent/runs/**)`,
      `${tool}(/${DATA}/agent/pending/**)`,
      `${tool}(/${DATA}/agent/runs.jsonl)`,
      `${tool}(/${RUN}/.claude/**)`,
      `${tool}(/${RUN}/.mcp.json)`,
    );
  }
  has(
    rules,
    `Bash(*${DATA}*)`,
    "Bash(*config.toml*)",
    "Bash(*safety.json*)",
    "Bash(*wats config*)",
    "Bash(*wats resume*)",
    "Bash(*wats guardian*)",
    "Bash(*wats setup*)",
    "Bash(*..*)",
  );
  assert.equal(new Set(rules).size, rules.length, "no duplicates");
  assert.deepEqual(validateClaudeSettings(claudeSettings(rules)), []);
});

Deno.test("the path to the run dir stays writable: agent/ and agent/run are not denied", () => {
  const rules = typical();
  for (const tool of ["Edit", "Write"]) {
    lacks(
      rules,
      `${tool}(/${DATA}/agent/**)`,
      `${tool}(/${DATA}/agent)`,
      `${tool}(/${RUN}/**)`,
      `${tool}(/${RUN})`,
      `${tool}(/${DATA}/**)`,
    );
  }
  // Nothing denies a file in the run dir itself other than its .claude and .mcp.json.
  const inRun = rules.filter((r) =>
    r.startsWith(`Edit(/${RUN}/`) || r.startsWith(`Write(/${RUN}/`)
  );
  assert.deepEqual(inRun.sort(), [
    `Edit(/${RUN}/.claude/**)`,
    `Edit(/${RUN}/.mcp.json)`,
    `Write(/${RUN}/.claude/**)`,
    `Write(/${RUN}/.mcp.json)`,
  ]);
});

Deno.test("absolute paths in Edit/Write rules use the // form Claude Code needs", () => {
  for (const r of typical()) {
    const m = /^(Edit|Write|Read)\((.*)\)$/.exec(r);
    if (m) assert.ok(m[2]!.startsWith("//"), `${r} is not //absolute`);
  }
});

Deno.test("config.toml and safety.json are denied before they exist", () => {
  const rules = denyRules({ dataDir: DATA, dataEntries: [], runDir: RUN, home: HOME });
  has(
    rules,
    `Edit(/${DATA}/config.toml)`,
    `Write(/${DATA}/config.toml)`,
    `Edit(/${DATA}/safety.json)`,
    `Write(/${DATA}/safety.json)`,
    // The agent's own records cannot be planted before they exist either.
    `Write(/${DATA}/agent/pending/**)`,
    `Write(/${DATA}/agent/runs/**)`,
  );
});

Deno.test("an unexpected entry of the data dir or of agent/ is denied too", () => {
  const rules = denyRules({
    dataDir: DATA,
    dataEntries: [...TYPICAL, "notes.txt", "backup/", "backup/old.db", "agent/extra/"],
    runDir: RUN,
    home: HOME,
  });
  has(
    rules,
    `Write(/${DATA}/notes.txt)`,
    `Write(/${DATA}/backup/**)`,
    `Write(/${DATA}/agent/extra/**)`,
  );
  lacks(rules, `Write(/${DATA}/backup/old.db)`);
});

Deno.test("entries under the run dir are not denied", () => {
  const rules = denyRules({
    dataDir: DATA,
    dataEntries: [...TYPICAL, "agent/run/scratch.txt"],
    runDir: RUN,
    home: HOME,
  });
  lacks(rules, `Write(/${RUN}/scratch.txt)`, `Edit(/${RUN}/scratch.txt)`);
});

Deno.test("a run dir outside the data dir leaves the whole data dir denied", () => {
  const rules = denyRules({
    dataDir: DATA,
    dataEntries: TYPICAL,
    runDir: "/srv/agent-run",
    home: HOME,
  });
  has(rules, `Edit(/${DATA}/**)`, `Write(/${DATA}/**)`, `Write(/${DATA}/config.toml)`);
  has(rules, "Write(//srv/agent-run/.claude/**)");
  lacks(rules, "Bash(*..*)");
});

Deno.test("the data dir is denied in Bash as ~/…, $HOME/… and ${HOME}/… when under home", () => {
  has(
    typical(),
    "Bash(*~/.local/share/wats*)",
    "Bash(*$HOME/.local/share/wats*)",
    "Bash(*${HOME}/.local/share/wats*)",
  );
});

Deno.test("no ~ or $HOME forms when the data dir is not under home", () => {
  const rules = denyRules({
    dataDir: "/var/lib/wats",
    dataEntries: [],
    runDir: "/var/lib/wats/agent/run",
    home: HOME,
  });
  has(rules, "Bash(*/var/lib/wats*)");
  assert.deepEqual(rules.filter((r) => r.includes("~") || r.includes("HOME")), []);
  // A sibling whose name merely starts with the home path is not under home.
  const sibling = denyRules({
    dataDir: "/home/adam/wats",
    dataEntries: [],
    runDir: "/home/adam/wats/agent/run",
    home: HOME,
  });
  assert.deepEqual(sibling.filter((r) => r.includes("~") || r.includes("HOME")), []);
});

Deno.test("a data dir with a space is also denied with the space escaped", () => {
  const data = "/Users/ada/Library/Application Support/wats";
  const rules = denyRules({
    dataDir: data,
    dataEntries: [],
    runDir: `${data}/agent/run`,
    home: "/Users/ada",
  });
  has(
    rules,
    `Bash(*${data}*)`,
    "Bash(*/Users/ada/Library/Application\\ Support/wats*)",
    "Bash(*~/Library/Application\\ Support/wats*)",
  );
  assert.deepEqual(validateClaudeSettings(claudeSettings(rules)), []);
});

Deno.test("Bash(*..*) only when the workspace lies inside the data dir", () => {
  has(typical(), "Bash(*..*)");
  const outside = denyRules({
    dataDir: DATA,
    dataEntries: TYPICAL,
    runDir: RUN,
    home: HOME,
    workdir: "/home/ada/project",
  });
  lacks(outside, "Bash(*..*)");
  // The workspace's own settings and MCP servers are protected as well.
  has(outside, "Write(//home/ada/project/.claude/**)", "Edit(//home/ada/project/.mcp.json)");
});

Deno.test("node.key is denied to Read; config.toml and safety.json are not", () => {
  const rules = typical();
  has(rules, `Read(/${DATA}/node.key)`);
  lacks(rules, `Read(/${DATA}/config.toml)`, `Read(/${DATA}/safety.json)`);
});

Deno.test("claudeSettings holds the rules and disables bypass mode", () => {
  const s = claudeSettings(["Bash(*x*)"]);
  assert.deepEqual(s, {
    permissions: { deny: ["Bash(*x*)"], disableBypassPermissionsMode: "disable" },
  });
});

Deno.test("validation catches each kind of bad settings", () => {
  const bad: [unknown, RegExp][] = [
    [null, /JSON object, not null/],
    [[], /JSON object, not an array/],
    ["{}", /JSON object, not a string/],
    [{}, /"permissions" must be an object, not missing/],
    [{ permissions: [] }, /"permissions" must be an object/],
    [{ permissions: { deny: "Bash" } }, /"permissions.deny" must be an array/],
    [{ permissions: {} }, /"permissions.deny" must be an array of rules, not missing/],
    [{ permissions: { deny: [] } }, /is empty/],
    [{ permissions: { deny: [42] } }, /deny\[0\] must be a string, not a number/],
    [{ permissions: { deny: ["Bsh(*x*)"] } }, /unknown tool "Bsh"/],
    [{ permissions: { deny: ["bash"] } }, /unknown tool "bash"/],
    [{ permissions: { deny: ["Bash(*x*"] } }, /must end with '\)'/],
    [{ permissions: { deny: ["Bash(a(b)"] } }, /unbalanced parentheses/],
    [{ permissions: { deny: ["Bash(a)b)"] } }, /unbalanced parentheses/],
    [{ permissions: { deny: ["Bash)"] } }, /unbalanced parentheses/],
    [{ permissions: { deny: ["Bash()"] } }, /empty specifier/],
    [{ permissions: { deny: ["Edit(/abs/config.toml)"] } }, /relative to the settings file/],
    [{ permissions: { deny: ["Write(/abs/**)"] } }, /write an absolute path as "\/\/abs\/\*\*"/],
    [{ permissions: { deny: ["Bash"], allow: "x" } }, /"permissions.allow" must be an array/],
    [{ permissions: { deny: ["Bash"], denny: [] } }, /unexpected key "permissions.denny"/],
    [{ permission: { deny: ["Bash"] } }, /unexpected key "permission"/],
    [
      { permissions: { deny: ["Bash"], disableBypassPermissionsMode: true } },
      /must be "disable"/,
    ],
  ];
  for (const [value, re] of bad) {
    const problems = validateClaudeSettings(value);
    assert.ok(
      problems.some((p) => re.test(p)),
      `${JSON.stringify(value)}: ${JSON.stringify(problems)} does not match ${re}`,
    );
  }
});

Deno.test("validation accepts the rule forms wats and users write", () => {
  const ok = {
    $schema: "https://json.schemastore.org/claude-code-settings.json",
    permissions: {
      deny: [
        "Bash",
        "WebFetch",
        "Bash(*..*)",
        "Edit(//abs/dir/**)",
        "Read(~/.ssh/**)",
        "Write(relative/file)",
        "mcp__wats__post_answer",
        "mcp__wats",
        "Bash(echo (nested) ok)",
      ],
      allow: ["mcp__wats__*"],
      disableBypassPermissionsMode: "disable",
    },
  };
  assert.deepEqual(validateClaudeSettings(ok), []);
});

Deno.test("writeClaudeSettings refuses invalid settings and writes nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/settings.json`;
    await assert.rejects(
      writeClaudeSettings(path, { permissions: { deny: ["Edit(/x/**)"] } }),
      (err: unknown) => {
        assert.ok(err instanceof HarnessError);
        assert.equal(err.code, "safety.bad_settings");
        assert.match(err.message, /Edit\(\/x\/\*\*\)/);
        assert.match(err.message, /relative to the settings file/);
        return true;
      },
    );
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeClaudeSettings writes valid settings as JSON that reads back equal", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/settings.json`;
    const settings = claudeSettings(typical());
    await writeClaudeSettings(path, settings);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(path)), settings);
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["settings.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("listDataEntries lists the data dir and the dirs on the way to the run dir", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const p = dataPaths(dir);
    await Deno.mkdir(p.runDir, { recursive: true });
    await Deno.mkdir(p.runsDir);
    await Deno.writeTextFile(p.config, "");
    await Deno.writeTextFile(p.runsIndex, "");
    await Deno.writeTextFile(`${p.runDir}/scratch`, "");
    await Deno.writeTextFile(`${p.runsDir}/r1.jsonl`, "");
    assert.deepEqual(await listDataEntries(dir, p.runDir), [
      "agent/",
      "agent/run/",
      "agent/runs.jsonl",
      "agent/runs/",
      "config.toml",
    ]);
    assert.deepEqual(await listDataEntries(`${dir}/missing`, `${dir}/missing/agent/run`), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------
// The real Claude Code CLI: the generated settings bite.

const claude = requireCli("claude");

/** The `file_path` of the newest tool call the model made in `req`, if any. */
function lastFilePath(req: MessagesRequest): string | undefined {
  const msgs = req.messages ?? [];
  for (const msg of msgs.toReversed()) {
    const c = msg.content;
    if (msg.role !== "assistant" || typeof c === "string") continue;
    const use = c.findLast((b) => b.type === "tool_use");
    if (use) return (use.input as { file_path?: string }).file_path;
  }
  return undefined;
}

/**
 * Scripted: `cat <config.toml>`, a Write to safety.json, then a Write to a new
 * file in the run dir (which must stay writable), then done. The Write tool
 * refuses to overwrite a file it has not read, so a Read of safety.json (not
 * denied: it holds no secret) comes before the first Write.
 */
function attackScript(config: string, safety: string, note: string) {
  return {
    rules: [
      { when: (r: MessagesRequest) => lastFilePath(r) === note, reply: text("done") },
      {
        when: toolResultFor("Write"),
        reply: toolUse("Write", { file_path: note, content: "scratch\n" }),
      },
      {
        when: toolResultFor("Read"),
        reply: toolUse("Write", { file_path: safety, content: "{}" }),
      },
      { when: toolResultFor("Bash"), reply: toolUse("Read", { file_path: safety }) },
    ],
    default: toolUse("Bash", { command: `cat ${config}`, description: "read the config" }),
  };
}

/** The first tool result the CLI sent back to the mock for each tool name. */
function toolResults(requests: RecordedRequest[]): Map<string, RequestBlock> {
  const out = new Map<string, RequestBlock>();
  for (const r of requests) {
    if (!r.body) continue;
    for (const t of trailingToolResults(r.body)) {
      if (t.name && !out.has(t.name)) out.set(t.name, t.block);
    }
  }
  return out;
}

async function attack(
  settingsArgs: string[],
): Promise<
  { bash: string; write: string; config: string; safety: string; note?: string; stderr: string }
> {
  const root = await Deno.makeTempDir({ prefix: "wats-settings-test-" });
  const home = `${root}/home`;
  const p = dataPaths(`${home}/.local/share/wats`);
  await Deno.mkdir(p.runDir, { recursive: true });
  await Deno.writeTextFile(p.config, '[agent]\nreview = true\nsecret_marker = "CONFIG-BODY"\n');
  await Deno.writeTextFile(p.safety, '{"version":1,"values":{"agent.review":true}}\n');
  const settingsFile = `${root}/settings.json`;
  const rules = denyRules({
    dataDir: p.dataDir,
    dataEntries: await listDataEntries(p.dataDir, p.runDir),
    runDir: p.runDir,
    home,
  });
  await writeClaudeSettings(settingsFile, claudeSettings(rules));
  const note = `${p.runDir}/note.md`;
  const mock = startMockAnthropic(attackScript(p.config, p.safety, note));
  try {
    const run = await runClaude({
      args: [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        MOCK_MODEL,
        // Locked args, except that Bash, Read and Write are opened AND allowed:
        // only the deny rules stand between the agent and the files.
        "--tools",
        "Bash,Read,Write",
        "--allowedTools",
        "Bash,Read,Write",
        "--setting-sources",
        "",
        "--strict-mcp-config",
        ...settingsArgs.map((a) => a.replace("$SETTINGS", settingsFile)),
      ],
      prompt: "Check the node's settings.",
      cwd: p.runDir,
      mockUrl: mock.url,
      home,
    });
    const results = toolResults(mock.messages());
    return {
      bash: textOf(results.get("Bash")?.content),
      write: textOf(results.get("Write")?.content),
      config: await Deno.readTextFile(p.config),
      safety: await Deno.readTextFile(p.safety),
      note: await Deno.readTextFile(note).catch(() => undefined),
      stderr: run.stderr,
    };
  } finally {
    await mock.close();
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test({
  name: "real claude: the generated --settings refuse cat config.toml and a Write to safety.json",
  ignore: claude === null,
  async fn() {
    // Control: without the settings the same script reads and writes (so the
    // assertions below can fail).
    const open = await attack([]);
    assert.match(open.bash, /CONFIG-BODY/, `control run did not read config.toml: ${open.stderr}`);
    assert.equal(open.safety, "{}", `control run did not write safety.json: ${open.write}`);

    const locked = await attack(["--settings", "$SETTINGS"]);
    assert.doesNotMatch(locked.bash, /CONFIG-BODY/);
    assert.match(locked.bash, /has been denied/, `Bash result: ${locked.bash}`);
    assert.match(locked.write, /denied by your permission settings/, `Write: ${locked.write}`);
    assert.equal(locked.safety, '{"version":1,"values":{"agent.review":true}}\n');
    assert.equal(locked.config, '[agent]\nreview = true\nsecret_marker = "CONFIG-BODY"\n');
    // The run dir itself stays writable under the same rules.
    assert.equal(locked.note, "scratch\n");
  },
});
