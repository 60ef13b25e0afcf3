import assert from "node:assert/strict";
import { dataPaths } from "../../src/config/paths.ts";
import { type AccessInput, INHERIT_WARNING, planAccess } from "../../src/safety/access.ts";
import { validateClaudeSettings } from "../../src/safety/claude_settings.ts";

const HOME = "/home/ada";
const paths = dataPaths("/home/ada/.local/share/wats");

function input(over: Partial<AccessInput>): AccessInput {
  return {
    access: "locked",
    workdir: "",
    tools: [],
    paths,
    home: HOME,
    userCwd: "/home/ada/somewhere",
    dataEntries: ["config.toml", "agent/", "agent/run/", "agent/runs/"],
    ...over,
  };
}

Deno.test("locked runs in the empty run dir with no tools, no settings sources, wats MCP only", () => {
  const plan = planAccess(input({}));
  assert.equal(plan.level, "locked");
  assert.equal(plan.cwd, paths.runDir);
  assert.deepEqual(plan.claudeArgs, [
    "--tools",
    "",
    "--setting-sources",
    "",
    "--strict-mcp-config",
  ]);
  assert.deepEqual(plan.allowedTools, []);
  assert.deepEqual(plan.problems, []);
  assert.ok(plan.denyRules.includes("Bash(*..*)"), "the run dir is inside the data dir");
  assert.ok(plan.denyRules.includes(`Write(/${paths.config})`));
  assert.deepEqual(validateClaudeSettings({ permissions: { deny: plan.denyRules } }), []);
  assert.match(plan.bannerLines[0]!, /^agent access: locked: only the wats tools/);
  assert.ok(plan.bannerLines[0]!.includes(paths.runDir));
});

Deno.test("locked ignores agent.tools and says so in the banner", () => {
  const plan = planAccess(input({ tools: ["Bash"] }));
  assert.deepEqual(plan.claudeArgs.slice(0, 2), ["--tools", ""]);
  assert.ok(plan.bannerLines.some((l) => /agent\.tools \(Bash\) is used only with/.test(l)));
});

Deno.test("workspace opens agent.tools and Skill, loads project settings, scopes file tools", () => {
  const plan = planAccess(input({
    access: "workspace",
    workdir: "/home/ada/project/",
    tools: ["Read", "Edit", "Bash", "Write(//home/ada/notes/**)", "WebFetch"],
  }));
  assert.deepEqual(plan.problems, []);
  assert.equal(plan.cwd, "/home/ada/project");
  assert.deepEqual(plan.claudeArgs, [
    "--tools",
    "Read,Edit,Bash,Write,WebFetch,Skill",
    "--setting-sources",
    "project,local",
  ]);
  assert.ok(!plan.claudeArgs.includes("--strict-mcp-config"), "the workspace's MCP servers load");
  assert.deepEqual(plan.allowedTools, [
    "Read(//home/ada/project/**)",
    "Edit(//home/ada/project/**)",
    "Bash",
    "Write(//home/ada/notes/**)",
    "WebFetch",
  ]);
  assert.ok(!plan.denyRules.includes("Bash(*..*)"), "the workspace is outside the data dir");
  assert.ok(plan.denyRules.includes("Write(//home/ada/project/.claude/**)"));
  assert.ok(plan.denyRules.includes(`Edit(/${paths.safety})`));
  const banner = plan.bannerLines.join("\n");
  assert.match(banner, /agent access: workspace: \/home\/ada\/project, with its instructions/);
  assert.match(banner, /built-in tools: Read, Edit, Bash, Write, WebFetch/);
  assert.match(banner, /warning: Bash is open/);
});

Deno.test("workspace turns a /abs scope into the //abs form and reports a malformed item", () => {
  const plan = planAccess(input({
    access: "workspace",
    workdir: "/srv/ws",
    tools: ["Edit(/srv/other/**)", "Read(", "Bash(git *)"],
  }));
  assert.deepEqual(plan.allowedTools, ["Edit(//srv/other/**)", "Bash(git *)"]);
  assert.equal(plan.problems.length, 1);
  assert.match(plan.problems[0]!, /agent\.tools item "Read\(" is not a tool name/);
});

Deno.test("workspace with no tools opens only Skill and warns about unknown names", () => {
  const none = planAccess(input({ access: "workspace", workdir: "/srv/ws" }));
  assert.deepEqual(none.claudeArgs.slice(0, 2), ["--tools", "Skill"]);
  assert.ok(none.bannerLines.includes("built-in tools: none (agent.tools is empty)"));
  const typo = planAccess(input({ access: "workspace", workdir: "/srv/ws", tools: ["bash"] }));
  assert.ok(
    typo.bannerLines.some((l) => /agent\.tools names bash, which wats does not know/.test(l)),
  );
});

Deno.test("workspace without agent.workdir is a problem that says how to set it", () => {
  const plan = planAccess(input({ access: "workspace" }));
  assert.equal(plan.problems.length, 1);
  assert.match(plan.problems[0]!, /needs a workspace/);
  assert.match(plan.problems[0]!, /wats config set agent\.workdir \/path/);
});

Deno.test("a workdir that is or contains the data dir is a problem at every level", () => {
  for (const workdir of [paths.dataDir, "/home/ada", "/home/ada/.local/share/wats/", "/"]) {
    for (const access of ["locked", "workspace", "inherit"] as const) {
      const plan = planAccess(input({ access, workdir }));
      assert.ok(
        plan.problems.some((p) => /is or contains the data directory/.test(p)),
        `${access} ${workdir}: ${JSON.stringify(plan.problems)}`,
      );
    }
  }
  // Inside the data dir is not "containing" it (locked runs there), nor is a sibling.
  for (const workdir of ["/home/ada/project", "/home/ada/.local/share/wats2"]) {
    assert.deepEqual(planAccess(input({ access: "workspace", workdir })).problems, []);
  }
});

Deno.test("a relative workdir is a problem", () => {
  const plan = planAccess(input({ access: "workspace", workdir: "project" }));
  assert.ok(plan.problems.some((p) => /not an absolute path/.test(p)));
});

Deno.test("a data dir the rules cannot express is a problem", () => {
  const plan = planAccess(input({ paths: dataPaths("/home/ada/wats (old)") }));
  assert.ok(plan.problems.some((p) => /contains one of \( \) \* \? \[ \]/.test(p)));
});

Deno.test("inherit runs in the workdir or the user's cwd, with no rules, and warns", () => {
  const plan = planAccess(input({ access: "inherit" }));
  assert.equal(plan.level, "inherit");
  assert.equal(plan.cwd, "/home/ada/somewhere");
  assert.deepEqual(plan.claudeArgs, []);
  assert.deepEqual(plan.allowedTools, []);
  assert.deepEqual(plan.denyRules, []);
  assert.deepEqual(plan.problems, []);
  assert.match(plan.bannerLines[0]!, /the user's own environment/);
  assert.equal(
    plan.bannerLines[1],
    "warning: agent.access = inherit: the agent runs with your own environment and no deny " +
      "rules; the safety settings are detected, not enforced",
  );
  assert.equal(plan.bannerLines[1], INHERIT_WARNING);
  assert.equal(planAccess(input({ access: "inherit", workdir: "/srv/ws" })).cwd, "/srv/ws");
});
