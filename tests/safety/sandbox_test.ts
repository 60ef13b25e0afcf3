/**
 * The sandbox's plan and bubblewrap arguments (src/safety/sandbox.ts): what is hidden, what is
 * bound back, and in which order, since a later mount covers an earlier one; and which runs of
 * which runtime are sandboxed at all, as a table over every registered runtime.
 */

import assert from "node:assert/strict";
import {
  bwrapArgs,
  DEFAULT_HIDE,
  envHides,
  foldersToResolve,
  type PathKind,
  pathsToProbe,
  planSandbox,
  type Probed,
  programRoots,
  requiredRefusal,
  sandboxedCommand,
  sandboxLine,
  type SandboxRequest,
} from "../../src/safety/sandbox.ts";
import {
  loginSeeds,
  pathToolchains,
  privateHomeOf,
  programRoot,
  stateFolders,
} from "../../src/safety/sandbox_home.ts";
import { RUNTIMES } from "../../src/runner/runtimes/registry.ts";
import { AGENTS, harnessAgent } from "../../src/runner/runtimes/agents.ts";
import { RUNTIME_FACTS } from "../../src/runner/runtimes/facts.ts";
import {
  runsSandboxed,
  type RuntimeDeps,
  type RuntimeFacts,
} from "../../src/runner/runtimes/runtime.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { defaultSettings } from "../../src/config/schema.ts";
import type { AgentAccess } from "../../src/config/schema.ts";
import { MemoryLog } from "../runner/fakes.ts";

/** bubblewrap on Linux. */
const LINUX = { os: "linux", bwrap: "bwrap" };

const DATA = "/h/.local/share/wats";
const WT = `${DATA}/worktrees/claude/app/a/_/w`;
const PRIVATE = `${DATA}/agent/homes/harness-claude-0123456789abcdef`;

const req: SandboxRequest = {
  dataDir: DATA,
  home: "/h",
  hide: ["~/.ssh", "~/.netrc", "~/.cargo/credentials.toml", "/run/user", "relative/x"],
  readable: ["/src/app/.git"],
  writable: [WT, "/h/.gone"],
  env: { PATH: "/h/.cargo/bin:/h/.local/bin:/h:/usr/bin", CLAUDE_CONFIG_DIR: "/srv/claude" },
  agents: AGENTS,
  privateHome: PRIVATE,
  cwd: WT,
};

const CLAUDE = RUNTIME_FACTS.claude.agent!.state;
const CODEX = RUNTIME_FACTS.codex.agent!.state;

const probed: Probed = {
  kinds: new Map<string, PathKind>([
    ["/h", "dir"],
    ["/h/.ssh", "dir"],
    ["/h/.netrc", "file"],
    ["/h/.cargo/credentials.toml", "file"],
    ["/run/user", "dir"],
    ["/src/app/.git", "dir"],
    [WT, "dir"],
  ]),
  // Another node's data dir, and one that would cover this node's own (never hidden whole).
  dataDirs: ["/srv/other-wats", "/h/.local/share/wats-2", "/h/.local"],
  linked: ["/h/.local/share/claude/versions/2.1.197"],
};

/** The index of `xs` as consecutive arguments in `args`; fails when absent. */
function at(args: string[], ...xs: string[]): number {
  const i = args.findIndex((_, k) => xs.every((x, j) => args[k + j] === x));
  assert.ok(i >= 0, `${xs.join(" ")} in ${args.join(" ")}`);
  return i;
}

function absent(args: string[], ...xs: string[]): void {
  const i = args.findIndex((_, k) => xs.every((x, j) => args[k + j] === x));
  assert.equal(i, -1, `${xs.join(" ")} must not be in ${args.join(" ")}`);
}

Deno.test("the probe is asked about home, the hidden paths and the bound ones, and the home PATH folders' links", () => {
  assert.deepEqual(pathsToProbe(req), [
    "/h",
    "/h/.ssh",
    "/h/.netrc",
    "/h/.cargo/credentials.toml",
    "/run/user",
    "/src/app/.git",
    WT,
    "/h/.gone",
  ]);
  assert.deepEqual(foldersToResolve(req), ["/h/.cargo/bin", "/h/.local/bin"]);
});

Deno.test("home is the private one; toolchains come back read-only; every known data dir is hidden; secrets only where something shows them", () => {
  const plan = planSandbox(req, probed);
  assert.equal(plan.replacesHome, true);
  assert.equal(plan.homeAt, "/h");
  // ~/.cargo whole (its libraries), ~/.local/bin alone (~/.local holds the data dir), the
  // claude version folder a ~/.local/bin link leads to; never /h.
  assert.deepEqual(plan.toolchains, [
    "/h/.cargo",
    "/h/.local/bin",
    "/h/.local/share/claude/versions",
  ]);
  assert.deepEqual(plan.dataDirs, [DATA, "/srv/other-wats"], "under home they go with it");
  // ~/.ssh and ~/.netrc went with home; the cargo token lies in a toolchain bound back.
  assert.deepEqual(plan.hiddenDirs, ["/run/user"]);
  assert.deepEqual(plan.hiddenFiles, ["/h/.cargo/credentials.toml"]);
  assert.deepEqual(plan.writable, [WT]);
  assert.deepEqual(plan.env, {
    HOME: "/h",
    CLAUDE_CONFIG_DIR: "/h/.claude",
    CODEX_HOME: "/h/.codex",
    TMPDIR: "/tmp",
  });
});

Deno.test("bubblewrap: private home, toolchains, data dirs, worktree, then secrets; own session, no capability, dies with wats", () => {
  const args = bwrapArgs(planSandbox(req, probed));
  const root = at(args, "--ro-bind", "/", "/");
  const tmp = at(args, "--tmpfs", "/tmp");
  const home = at(args, "--bind", PRIVATE, "/h");
  const cargo = at(args, "--ro-bind-try", "/h/.cargo", "/h/.cargo");
  const data = at(args, "--tmpfs", DATA);
  const other = at(args, "--tmpfs", "/srv/other-wats");
  const git = at(args, "--ro-bind", "/src/app/.git", "/src/app/.git");
  const wt = at(args, "--bind", WT, WT);
  const token = at(args, "--ro-bind", "/dev/null", "/h/.cargo/credentials.toml");
  assert.ok(root < tmp && tmp < home && home < cargo && cargo < data && data < other);
  assert.ok(other < git && git < wt && wt < token);
  absent(args, "--ro-bind-try", "/h", "/h");
  absent(args, "--tmpfs", "/h/.ssh");
  for (const flag of ["--unshare-pid", "--die-with-parent", "--new-session"]) at(args, flag);
  at(args, "--cap-drop", "ALL");
  at(args, "--setenv", "CLAUDE_CONFIG_DIR", "/h/.claude");
  at(args, "--setenv", "CODEX_HOME", "/h/.codex");
  at(args, "--setenv", "TMPDIR", "/tmp");
  assert.deepEqual(args.slice(-3), ["--chdir", WT, "--"]);
});

Deno.test("without a home to replace, the private home is bound where it lies and named by HOME", () => {
  const plan = planSandbox({ ...req, home: "/nohome" }, { ...probed, linked: [] });
  assert.equal(plan.replacesHome, false);
  assert.deepEqual(plan.toolchains, []);
  assert.equal(plan.env.HOME, PRIVATE);
  const args = bwrapArgs(plan);
  assert.ok(at(args, "--tmpfs", DATA) < at(args, "--bind", PRIVATE, PRIVATE));
});

Deno.test("toolchain and program folders under home: never home, never a folder holding a data dir", () => {
  const dd = ["/h/.local/share/wats"];
  assert.deepEqual(
    pathToolchains(
      "/h/.deno/bin:/h/.npm-global/bin:/h/bin:/h:/h/.local/bin:/usr/bin:rel",
      "/h",
      dd,
    ),
    ["/h/.deno", "/h/.npm-global", "/h/bin", "/h/.local/bin"],
  );
  // A toolchain prefix that holds a data dir gives way to its PATH entry.
  assert.deepEqual(pathToolchains("/h/.x/bin", "/h", ["/h/.x/data"]), ["/h/.x/bin"]);
  assert.equal(programRoot("/h/proj/node_modules/agent/dist/index.js", "/h", dd), "/h/proj");
  assert.equal(
    programRoot("/h/.nvm/versions/node/v20/bin/node", "/h", dd),
    "/h/.nvm/versions/node/v20",
  );
  assert.equal(programRoot("/h/wats/main.ts", "/h", dd), "/h/wats");
  assert.equal(programRoot("/h/script.sh", "/h", dd), undefined, "never home itself");
  assert.equal(programRoot("/h/.local/share/wats/x.js", "/h", dd), undefined, "nor a data dir");
  assert.equal(programRoot("/h/.local/share/x.js", "/h", dd), undefined);
  assert.equal(programRoot("/usr/bin/node", "/h", dd), undefined);
});

Deno.test("a program installed under /tmp or home stays readable, the data dirs still hidden over it", () => {
  const plan = planSandbox(
    { ...req, dataDir: "/tmp/ci/data", writable: ["/tmp/ci/data/worktrees/w"], cwd: "/tmp/ci" },
    {
      kinds: new Map([["/h", "dir"], ["/tmp/ci/data/worktrees/w", "dir"]]),
      dataDirs: [],
      linked: [],
    },
  );
  assert.deepEqual(
    programRoots([
      "node",
      "/tmp/ci/.cache/clis/node_modules/agent/dist/index.js",
      "--config=/tmp/ci/deno.json",
      "/tmp/other/x",
      "/tmpfoo/y",
      "/tmp/../etc/passwd",
      "/h/app/node_modules/a/b.js",
      "/h/../etc/shadow",
      "-v",
    ], plan),
    ["/tmp/ci", "/tmp/other", "/h/app"],
  );
  const cmd = sandboxedCommand(plan, { program: "node", args: ["/tmp/ci/agent.js"] }, {
    ...LINUX,
    alsoRuns: ["deno", "/h/wats/main.ts"],
  });
  const a = cmd.args;
  const ci = at(a, "--ro-bind-try", "/tmp/ci", "/tmp/ci");
  const wats = at(a, "--ro-bind-try", "/h/wats", "/h/wats");
  const home = at(a, "--bind", PRIVATE, "/h");
  const data = at(a, "--tmpfs", "/tmp/ci/data");
  assert.ok(at(a, "--tmpfs", "/tmp") < ci && ci < home && home < wats && wats < data);
  assert.deepEqual(a.slice(-2), ["node", "/tmp/ci/agent.js"]);
});

Deno.test("a bind puts a path at another inside, after the data dir's tmpfs and before the secrets", () => {
  const sock = { from: `${DATA}/agent/sock/r1.sock`, to: `${DATA}/mcp.sock` };
  const args = bwrapArgs(planSandbox({ ...req, binds: [sock] }, probed));
  const data = at(args, "--tmpfs", DATA);
  const bind = at(args, "--bind", sock.from, sock.to);
  const run = at(args, "--tmpfs", "/run/user");
  assert.ok(data < bind && bind < run, args.join(" "));
  absent(args, "--bind", sock.to, sock.to);
});

Deno.test("each agent's private home is seeded with its own vendor's login only, from where the person keeps it", () => {
  const p = "/d/agent/homes/x";
  assert.deepEqual(loginSeeds(CLAUDE, {}, "/h", p), [
    { from: "/h/.claude/.credentials.json", to: `${p}/.claude/.credentials.json` },
  ]);
  assert.deepEqual(loginSeeds(CLAUDE, { CLAUDE_CONFIG_DIR: "/c" }, "/h", p), [
    { from: "/c/.credentials.json", to: `${p}/.claude/.credentials.json` },
  ]);
  assert.deepEqual(loginSeeds(CODEX, { CODEX_HOME: "/x" }, "/h", p), [
    { from: "/x/auth.json", to: `${p}/.codex/auth.json` },
    { from: "/x/config.toml", to: `${p}/.codex/config.toml` },
  ]);
  assert.deepEqual(loginSeeds(undefined, {}, "/h", p), []);
  // A third agent's [harnesses.NAME] declares its state: its login is copied, the person's
  // folder hidden, the private home's made by the daemon.
  const gemini = { dir: "~/.gemini", login: ["oauth_creds.json"] } as const;
  assert.deepEqual(loginSeeds(gemini, {}, "/h", p), [
    { from: "/h/.gemini/oauth_creds.json", to: `${p}/.gemini/oauth_creds.json` },
  ]);
  assert.ok(envHides({}, AGENTS, gemini).includes("~/.gemini"));
  assert.deepEqual(stateFolders(AGENTS, gemini), [".claude", ".codex", ".gemini"]);
  // One private home per agent and working directory.
  const a = privateHomeOf("/d", "harness claude", "/w/1");
  assert.match(a, /^\/d\/agent\/homes\/harness-claude-[0-9a-f]{16}$/);
  assert.notEqual(a, privateHomeOf("/d", "harness claude", "/w/2"));
  assert.notEqual(a, privateHomeOf("/d", "harness codex", "/w/1"));
});

Deno.test("the person's agent state, the ssh agent's socket and root's control sockets are hidden", () => {
  assert.deepEqual(envHides({ SSH_AUTH_SOCK: "/tmp/ssh-x/agent.1", CODEX_HOME: "/c" }, AGENTS), [
    "/tmp/ssh-x/agent.1",
    "~/.claude",
    "~/.claude.json",
    "~/.codex",
    "/c",
  ]);
  assert.deepEqual(envHides({ SSH_AUTH_SOCK: "relative" }, AGENTS), [
    "~/.claude",
    "~/.claude.json",
    "~/.codex",
  ]);
  for (const p of ["/run/user", "/run/docker.sock", "/run/systemd/private", "~/.ssh"]) {
    assert.ok(DEFAULT_HIDE.includes(p), p);
  }
  // The person's state shows again only where the workspace is home itself: hidden there.
  const plan = planSandbox(
    { ...req, hide: envHides({}, AGENTS), writable: ["/h"], cwd: "/h" },
    {
      kinds: new Map([["/h", "dir"], ["/h/.claude", "dir"], ["/h/.claude.json", "file"]]),
      dataDirs: [],
      linked: [],
    },
  );
  assert.deepEqual(plan.hiddenDirs, ["/h/.claude"]);
  assert.deepEqual(plan.hiddenFiles, ["/h/.claude.json"]);
});

const deps = (access: AgentAccess): RuntimeDeps => {
  const paths = dataPaths("/d");
  return {
    settings: { ...defaultSettings(), "agent.access": access, "agent.harness": "claude" },
    paths,
    configDir: `${paths.agentDir}/run-config`,
    selfCommand: { command: "wats", args: [] },
    person: "alice",
    agent: "helper",
    home: "/h",
    cwd: "/h",
    env: { PATH: "/usr/bin" },
    runEnv: { PATH: "/usr/bin" },
    acp: {
      harnesses: {
        claude: {
          name: "claude",
          command: "node",
          args: ["/h/acp/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"],
          env: {},
          meta: {},
          context: [],
          idle: 60_000,
          enabled: true,
        },
      },
      checkouts: {},
    },
    log: new MemoryLog(),
  };
};

/**
 * Each runtime × access level: sandboxed or not, the agent kind the sandbox sees, and the
 * arguments that hold its state and session. inherit over ACP is refused as the runtime is made.
 */
const TABLE: Array<[string, AgentAccess, boolean, string]> = [
  ["claude", "locked", false, "claude"],
  ["claude", "workspace", true, "claude"],
  ["claude", "inherit", true, "claude"],
  ["codex", "locked", false, "codex"],
  ["codex", "workspace", true, "codex"],
  ["codex", "inherit", true, "codex"],
  ["acp", "locked", false, "claude"],
  ["acp", "workspace", true, "claude"],
];

Deno.test("every registered runtime runs sandboxed except at the levels it declares shell-less; its state and session are private", () => {
  assert.deepEqual(Object.keys(RUNTIMES).sort(), ["acp", "claude", "codex"]);
  for (const name of Object.keys(RUNTIMES)) {
    assert.ok(TABLE.some(([n]) => n === name), `${name} has rows in the table`);
  }
  for (const [name, access, sandboxed, kind] of TABLE) {
    const rt = RUNTIMES[name as keyof typeof RUNTIMES](deps(access));
    const row = `${name} at ${access}`;
    assert.equal(runsSandboxed(rt.facts, access), sandboxed, row);
    const agent = rt.sandboxed();
    assert.equal(agent.agent?.name, kind, row);
    if (!sandboxed) continue;
    const privateHome = privateHomeOf("/d", "the heartbeat agent", "/w");
    const plan = planSandbox(
      {
        dataDir: "/d",
        home: "/h",
        hide: [...DEFAULT_HIDE, ...envHides(agent.env, AGENTS)],
        readable: agent.readable,
        writable: ["/w"],
        env: agent.env,
        agents: AGENTS,
        privateHome,
        cwd: "/w",
      },
      {
        kinds: new Map([["/h", "dir"], ["/w", "dir"], ["/d/agent/run-config", "dir"]]),
        dataDirs: [],
        linked: [],
      },
    );
    const args = sandboxedCommand(plan, agent, LINUX).args;
    at(args, "--bind", privateHome, "/h");
    at(args, "--tmpfs", "/d");
    at(args, "--ro-bind", "/d/agent/run-config", "/d/agent/run-config");
    at(args, "--bind", "/w", "/w");
    at(args, "--new-session");
    at(args, "--setenv", "CLAUDE_CONFIG_DIR", "/h/.claude");
    at(args, "--setenv", "CODEX_HOME", "/h/.codex");
    if (name === "acp") at(args, "--ro-bind-try", "/h/acp", "/h/acp");
    const seeds = loginSeeds(agent.agent?.state, {}, "/h", privateHome);
    assert.deepEqual(
      seeds.map((s) => s.from),
      kind === "codex"
        ? ["/h/.codex/auth.json", "/h/.codex/config.toml"]
        : ["/h/.claude/.credentials.json"],
      row,
    );
  }
});

Deno.test("a runtime that declares nothing is sandboxed at every level, locked included", () => {
  const madeUp: RuntimeFacts = {
    name: "acp",
    programs: ["gemini"],
    reportsCost: true,
    limitsTurns: true,
    threadPerRun: false,
    parser: () => {
      throw new Error("not read here");
    },
  };
  for (const level of ["locked", "workspace", "inherit", "anything"]) {
    assert.equal(runsSandboxed(madeUp, level), true, level);
  }
  assert.equal(runsSandboxed({ shellless: [] }, "locked"), true);
});

Deno.test("an ACP coding agent's harness under home: its program folder comes back, its login is its own", () => {
  const harness = [
    "node",
    "/h/tools/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js",
  ];
  const privateHome = privateHomeOf(DATA, "harness claude", WT);
  const plan = planSandbox({ ...req, privateHome }, probed);
  const args = sandboxedCommand(plan, { program: harness[0]!, args: harness.slice(1) }, LINUX).args;
  at(args, "--ro-bind-try", "/h/tools", "/h/tools");
  at(args, "--bind", privateHome, "/h");
  const h = { name: "claude", command: harness[0]!, args: harness.slice(1) };
  assert.equal(
    harnessAgent({ ...h, env: {}, meta: {}, context: [], idle: 1, enabled: true }),
    RUNTIME_FACTS.claude.agent,
  );
  assert.deepEqual(loginSeeds(CLAUDE, req.env, "/h", privateHome), [
    { from: "/srv/claude/.credentials.json", to: `${privateHome}/.claude/.credentials.json` },
  ]);
  // The person's CLAUDE_CONFIG_DIR outside home is hidden.
  const withState = planSandbox(
    { ...req, privateHome, hide: envHides(req.env, AGENTS) },
    { ...probed, kinds: new Map([...probed.kinds, ["/srv/claude", "dir"]]) },
  );
  assert.deepEqual(withState.hiddenDirs, ["/srv/claude"]);
});

Deno.test("the banner and status line says sandboxed, unsandboxed under auto, or off", () => {
  assert.equal(sandboxLine("required", undefined), "sandboxed");
  assert.equal(sandboxLine("auto", undefined), "sandboxed");
  assert.equal(
    sandboxLine("auto", "bwrap is not on PATH"),
    "warning: unsandboxed (sandbox.mode = auto): bwrap is not on PATH",
  );
  assert.equal(
    sandboxLine("off", undefined),
    "sandbox off (sandbox.mode = off): agents' commands see your files",
  );
  assert.doesNotMatch(requiredRefusal("harness claude", "x"), /\n/);
});
