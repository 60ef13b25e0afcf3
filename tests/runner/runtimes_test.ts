import assert from "node:assert/strict";
import { dataPaths } from "../../src/config/paths.ts";
import { defaultSettings, type Settings } from "../../src/config/schema.ts";
import type { HarnessConfig } from "../../src/config/acp_tables.ts";
import { ConfigError } from "../../src/errors.ts";
import { planAccess } from "../../src/safety/access.ts";
import { acpRuntime } from "../../src/runner/runtimes/acp/runtime.ts";
import { claudeRuntime } from "../../src/runner/runtimes/claude/runtime.ts";
import { codexRuntime } from "../../src/runner/runtimes/codex/runtime.ts";
import type { RuntimeDeps } from "../../src/runner/runtimes/runtime.ts";
import { MemoryLog } from "./fakes.ts";
import { RUNTIME_FACTS } from "../../src/runner/runtimes/facts.ts";

const HARNESS: HarnessConfig = {
  name: "claude",
  command: "claude-agent-acp",
  args: ["--flag"],
  env: { EXTRA: "1" },
  meta: {},
  context: [],
  idle: 60_000,
  enabled: true,
};

function deps(dir: string, settings: Partial<Settings> = {}): RuntimeDeps {
  const paths = dataPaths(dir);
  return {
    settings: { ...defaultSettings(), ...settings },
    paths,
    configDir: `${paths.agentDir}/run-config`,
    selfCommand: { command: "wats", args: [] },
    person: "alice",
    agent: "helper",
    home: dir,
    cwd: dir,
    env: { PATH: "/usr/bin" },
    runEnv: { PATH: "/usr/bin" },
    acp: { harnesses: { claude: HARNESS }, checkouts: {} },
    log: new MemoryLog(),
  };
}

function plan(d: RuntimeDeps) {
  const s = d.settings;
  return planAccess({
    access: s["agent.access"],
    workdir: s["agent.workdir"],
    tools: s["agent.tools"],
    paths: d.paths,
    home: d.home,
    userCwd: d.home,
    dataEntries: [],
  });
}

Deno.test("the ACP runtime refuses a missing harness and inherit access as it is made", () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-runtimes-" });
  try {
    assert.throws(
      () => acpRuntime(deps(dir, { "agent.runtime": "acp", "agent.harness": "" })),
      (e) =>
        e instanceof ConfigError &&
        /agent.runtime = "acp" needs agent.harness.*harnesses: claude/.test(e.message),
    );
    assert.throws(
      () => acpRuntime(deps(dir, { "agent.runtime": "acp", "agent.harness": "nope" })),
      (e) => e instanceof ConfigError && /names no \[harnesses.nope\]/.test(e.message),
    );
    assert.throws(
      () =>
        acpRuntime(
          deps(dir, {
            "agent.runtime": "acp",
            "agent.harness": "claude",
            "agent.access": "inherit",
          }),
        ),
      (e) => e instanceof ConfigError && /"inherit" is not available/.test(e.message),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the ACP runtime runs one thread per run, names its harness, and shows the sandbox the agent's program", () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-runtimes-" });
  try {
    const d = deps(dir, { "agent.runtime": "acp", "agent.harness": "claude" });
    const rt = acpRuntime(d);
    assert.equal(rt.label, "acp on [harnesses.claude]");
    assert.equal(rt.facts.threadPerRun, true);
    assert.deepEqual(rt.sandboxed(), {
      program: "claude-agent-acp",
      args: ["--flag"],
      env: { PATH: "/usr/bin", EXTRA: "1" },
      readable: [d.configDir],
      // Its command is exactly Claude's ACP adapter: the sandbox holds Claude's login.
      agent: RUNTIME_FACTS.claude.agent,
    });
    assert.equal(rt.harness((program, args) => ({ program, args: [...args] })).name, "acp");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("Claude's access plan is a validated deny-rules file, except at inherit", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-runtimes-" });
  try {
    const d = deps(dir, { "agent.access": "locked" });
    Deno.mkdirSync(d.configDir, { recursive: true });
    const rt = claudeRuntime(d);
    assert.equal(rt.facts.threadPerRun, false);
    const p = plan(d);
    const locked = await rt.access(p);
    assert.equal(locked.settingsFile, `${d.configDir}/claude-settings.json`);
    const written = JSON.parse(Deno.readTextFileSync(locked.settingsFile!));
    assert.ok(written.permissions.deny.length > 0, JSON.stringify(written));
    assert.deepEqual(locked.access, { args: p.claudeArgs, allowedTools: p.allowedTools });

    const inherit = claudeRuntime(deps(dir, { "agent.access": "inherit" }));
    const ip = plan(deps(dir, { "agent.access": "inherit" }));
    assert.deepEqual(await inherit.access(ip), {
      access: { args: [], allowedTools: [] },
      cwd: ip.cwd,
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the Codex runtime takes no deny rules and lets the sandbox read its locked catalog", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-runtimes-" });
  try {
    const d = deps(dir, { "agent.runtime": "codex", "agent.access": "workspace" });
    const rt = codexRuntime(d);
    const p = plan(d);
    assert.deepEqual(await rt.access(p), { access: { args: [], allowedTools: [] }, cwd: p.cwd });
    assert.deepEqual(rt.sandboxed().readable, [d.configDir, `${d.paths.agentDir}/codex`]);
    assert.throws(() => rt.harness((program, args) => ({ program, args: [...args] })), /prepare/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
