/**
 * Walks the runtime registry (src/runner/runtimes/): every name config accepts has a runtime
 * and facts, every runtime has a parser, and every runtime whose agent can run commands at a
 * level runs sandboxed there, so forgetting a fact cannot run an agent unwrapped unnoticed.
 */
import assert from "node:assert/strict";
import { dataPaths } from "../../src/config/paths.ts";
import { defaultSettings, SCHEMA } from "../../src/config/schema.ts";
import { RUNTIME_NAMES } from "../../src/contracts/runtime_names.ts";
import { planAccess } from "../../src/safety/access.ts";
import { parserFor } from "../../src/runner/render.ts";
import { RUNTIME_FACTS } from "../../src/runner/runtimes/facts.ts";
import { RUNTIMES } from "../../src/runner/runtimes/registry.ts";
import { runsSandboxed, type RuntimeDeps } from "../../src/runner/runtimes/runtime.ts";
import { MemoryLog } from "./fakes.ts";
import { bareHarness } from "../support/harness_fixtures.ts";

const ACCESS_LEVELS = SCHEMA["agent.access"].allowed!;

function deps(dir: string, access: string): RuntimeDeps {
  const paths = dataPaths(dir);
  return {
    settings: {
      ...defaultSettings(),
      "agent.access": access as "locked",
      "agent.harness": "claude",
    },
    paths,
    configDir: `${paths.agentDir}/run-config`,
    selfCommand: { command: "wats", args: [] },
    person: "alice",
    agent: "helper",
    home: dir,
    cwd: dir,
    env: { PATH: "/usr/bin" },
    runEnv: { PATH: "/usr/bin" },
    acp: {
      harnesses: { claude: bareHarness("claude", "claude-agent-acp") },
      checkouts: {},
    },
    log: new MemoryLog(),
  };
}

Deno.test("every runtime name config accepts has a runtime and its facts, and no other exists", () => {
  const accepted = SCHEMA["agent.runtime"].allowed!.filter((n) => n !== "none");
  assert.deepEqual([...accepted].sort(), [...RUNTIME_NAMES].sort());
  assert.deepEqual(Object.keys(RUNTIMES).sort(), [...RUNTIME_NAMES].sort());
  assert.deepEqual(Object.keys(RUNTIME_FACTS).sort(), [...RUNTIME_NAMES].sort());
  for (const name of RUNTIME_NAMES) assert.equal(RUNTIME_FACTS[name].name, name);
});

Deno.test("every runtime has a parser, the one its harness reads runs with", () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-registry-" });
  try {
    for (const name of RUNTIME_NAMES) {
      const facts = RUNTIME_FACTS[name];
      const parser = facts.parser();
      // A line it does not know gives no event; the process's end gives a verdict.
      assert.deepEqual(parser.push("not a line of any harness"), [], name);
      assert.equal(parser.finish(1).ok, false, name);
      // wats agent logs and wats ui read a transcript by its header's harness name.
      assert.equal(parserFor(name)?.constructor, parser.constructor, name);
      const rt = RUNTIMES[name](deps(dir, "workspace"));
      assert.equal(rt.facts, facts, `${name}'s runtime carries its own facts`);
      if (name === "codex") continue; // its harness needs prepare()'s probed install first
      const harness = rt.harness((program, args) => ({ program, args: [...args] }));
      assert.equal(harness.name, name);
      assert.equal(harness.parser().constructor, parser.constructor, name);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("every runtime runs sandboxed at each level where its agent can run commands", () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-registry-" });
  try {
    for (const name of RUNTIME_NAMES) {
      const facts = RUNTIME_FACTS[name];
      for (const level of ACCESS_LEVELS) {
        const shellless = (facts.shellless ?? []).includes(level);
        assert.equal(runsSandboxed(facts, level), !shellless, `${name} at ${level}`);
        if (!shellless) continue;
        // Only locked takes every tool but wats's away (docs/decisions/runner.md).
        assert.equal(level, "locked", `${name} declares ${level} shell-less`);
        const plan = planAccess({
          access: "locked",
          workdir: "",
          tools: ["Bash"],
          paths: dataPaths(dir),
          home: dir,
          userCwd: dir,
        });
        assert.deepEqual(plan.claudeArgs.slice(0, 2), ["--tools", ""]);
        assert.deepEqual(plan.allowedTools, []);
      }
      // What the sandbox wraps is the program the daemon may run (acp: its harness's command).
      const levels = ACCESS_LEVELS.filter((l) => !(name === "acp" && l === "inherit"));
      for (const level of levels) {
        const agent = RUNTIMES[name](deps(dir, level)).sandboxed();
        const programs = name === "acp" ? ["claude-agent-acp"] : facts.programs;
        assert.ok(programs.includes(agent.program), `${name} wraps ${agent.program}`);
      }
    }
    // A runtime that declares nothing runs sandboxed everywhere.
    for (const level of [...ACCESS_LEVELS, "anything"]) {
      assert.equal(runsSandboxed({}, level), true, level);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
