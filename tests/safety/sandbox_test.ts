/**
 * The sandbox's plan and bubblewrap arguments (src/safety/sandbox.ts): what is
 * hidden, what is bound back, and in which order, since a later mount covers
 * an earlier one.
 */

import assert from "node:assert/strict";
import {
  agentKindOf,
  agentState,
  bwrapArgs,
  DEFAULT_HIDE,
  envHides,
  type PathKind,
  pathsToProbe,
  planSandbox,
  programRoots,
  requiredRefusal,
  runnerSandboxed,
  sandboxedCommand,
  sandboxLine,
  type SandboxRequest,
} from "../../src/safety/sandbox.ts";

const req: SandboxRequest = {
  dataDir: "/h/.local/share/wats",
  home: "/h",
  hide: ["~/.ssh", "~/.netrc", "~/.claude/.credentials.json", "~/.aws", "relative/x"],
  readable: ["/src/app/.git"],
  writable: ["/h/.local/share/wats/worktrees/claude/app/a/_/w", "/h/.claude", "/h/.gone"],
  keep: ["/h/.claude/.credentials.json"],
  cwd: "/h/.local/share/wats/worktrees/claude/app/a/_/w",
};

const kinds = new Map<string, PathKind>([
  ["/h/.ssh", "dir"],
  ["/h/.netrc", "file"],
  ["/h/.claude/.credentials.json", "file"],
  ["/src/app/.git", "dir"],
  ["/h/.local/share/wats/worktrees/claude/app/a/_/w", "dir"],
  ["/h/.claude", "dir"],
]);

Deno.test("the plan hides what exists, keeps the agent's own credential, and skips what is missing", () => {
  assert.deepEqual(pathsToProbe(req), [
    "/h/.ssh",
    "/h/.netrc",
    "/h/.claude/.credentials.json",
    "/h/.aws",
    "/src/app/.git",
    "/h/.local/share/wats/worktrees/claude/app/a/_/w",
    "/h/.claude",
    "/h/.gone",
  ]);
  const plan = planSandbox(req, kinds);
  assert.deepEqual(plan.hiddenDirs, ["/h/.ssh"]);
  assert.deepEqual(plan.hiddenFiles, ["/h/.netrc"]);
  assert.deepEqual(plan.readable, ["/src/app/.git"]);
  assert.deepEqual(plan.writable, [
    "/h/.local/share/wats/worktrees/claude/app/a/_/w",
    "/h/.claude",
  ]);
});

Deno.test("bubblewrap mounts the data dir's tmpfs before the worktree, and the secrets last", () => {
  const args = bwrapArgs(planSandbox(req, kinds));
  const at = (...xs: string[]) => {
    const i = args.findIndex((_, k) => xs.every((x, j) => args[k + j] === x));
    assert.ok(i >= 0, `${xs.join(" ")} in ${args.join(" ")}`);
    return i;
  };
  const root = at("--ro-bind", "/", "/");
  const tmp = at("--tmpfs", "/tmp");
  const data = at("--tmpfs", req.dataDir);
  const git = at("--ro-bind", "/src/app/.git", "/src/app/.git");
  const wt = at("--bind", req.cwd, req.cwd);
  const claude = at("--bind", "/h/.claude", "/h/.claude");
  const ssh = at("--tmpfs", "/h/.ssh");
  const netrc = at("--ro-bind", "/dev/null", "/h/.netrc");
  assert.ok(root < tmp && tmp < data && data < git && git < wt && wt < claude);
  assert.ok(claude < ssh && ssh < netrc);
  // No capability inside (root could unmount the tmpfs), its own pids, and it dies with wats.
  at("--cap-drop", "ALL");
  at("--unshare-pid");
  at("--die-with-parent");
  at("--setenv", "TMPDIR", "/tmp");
  assert.deepEqual(args.slice(-3), ["--chdir", req.cwd, "--"]);
});

Deno.test("an agent's state follows CLAUDE_CONFIG_DIR and CODEX_HOME", () => {
  assert.deepEqual(agentState("claude", {}, "/h"), {
    writable: ["/h/.claude", "/h/.claude.json"],
    ownSecrets: ["/h/.claude/.credentials.json"],
  });
  assert.deepEqual(agentState("claude", { CLAUDE_CONFIG_DIR: "/c" }, "/h").writable, [
    "/c",
    "/c/.claude.json",
  ]);
  assert.deepEqual(agentState("codex", { CODEX_HOME: "/x" }, "/h"), {
    writable: ["/x"],
    ownSecrets: ["/x/auth.json"],
  });
  assert.deepEqual(agentState("other", {}, "/h"), { writable: [], ownSecrets: [] });
  assert.equal(agentKindOf("npx", ["@agentclientprotocol/claude-agent-acp"]), "claude");
  assert.equal(agentKindOf("codex-acp", []), "codex");
  assert.equal(agentKindOf("gemini", ["--acp"]), "other");
});

Deno.test("the heartbeat agent runs sandboxed exactly where it can run commands", () => {
  assert.equal(runnerSandboxed("claude", "locked"), false);
  assert.equal(runnerSandboxed("claude", "workspace"), true);
  assert.equal(runnerSandboxed("claude", "inherit"), true);
  assert.equal(runnerSandboxed("codex", "workspace"), true);
  assert.equal(runnerSandboxed("acp", "workspace"), true);
  assert.equal(runnerSandboxed("acp", "locked"), false);
  assert.equal(runnerSandboxed("none", "workspace"), false);
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

Deno.test("the ssh agent's socket, the per-user runtime dir and root's control sockets are hidden", () => {
  assert.deepEqual(envHides({ SSH_AUTH_SOCK: "/tmp/ssh-x/agent.1" }), ["/tmp/ssh-x/agent.1"]);
  assert.deepEqual(envHides({ SSH_AUTH_SOCK: "relative" }), []);
  assert.deepEqual(envHides({}), []);
  for (const p of ["/run/user", "/run/docker.sock", "/run/systemd/private", "~/.ssh"]) {
    assert.ok(DEFAULT_HIDE.includes(p), p);
  }
});

Deno.test("a program installed under /tmp stays readable in the sandbox's empty /tmp, its data dir still hidden", () => {
  assert.deepEqual(
    programRoots([
      "node",
      "/tmp/ci/.cache/clis/node_modules/agent/dist/index.js",
      "--config=/tmp/ci/deno.json",
      "/tmp/other/x",
      "/tmpfoo/y",
      "/tmp/../etc/passwd",
      "-v",
    ]),
    ["/tmp/ci", "/tmp/other"],
  );
  const plan = planSandbox(
    {
      dataDir: "/tmp/ci/data",
      home: "/home/u",
      hide: [],
      readable: [],
      writable: ["/tmp/ci/data/worktrees/w"],
      cwd: "/tmp/ci/data/worktrees/w",
    },
    new Map([["/tmp/ci/data/worktrees/w", "dir"]]),
  );
  const cmd = sandboxedCommand("linux", "bwrap", plan, "node", ["/tmp/ci/agent.js"], [
    "deno",
    "/tmp/wats/main.ts",
  ]);
  const a = cmd.args;
  const at = (i: number) => a.slice(i, i + 3).join(" ");
  const tmp = a.indexOf("/tmp");
  const root = a.indexOf("--ro-bind-try");
  const data = a.lastIndexOf("/tmp/ci/data", a.indexOf("--bind"));
  assert.ok(tmp < root && root < data, a.join(" "));
  assert.equal(at(root), "--ro-bind-try /tmp/ci /tmp/ci");
  assert.equal(at(root + 3), "--ro-bind-try /tmp/wats /tmp/wats");
  assert.equal(
    a[data - 1],
    "--tmpfs",
    "the data dir is hidden after the program's folder is bound",
  );
  assert.deepEqual(a.slice(-2), ["node", "/tmp/ci/agent.js"]);
});

Deno.test("a bind puts a path at another inside, after the data dir's tmpfs and before the secrets", () => {
  const sock = { from: "/h/.local/share/wats/agent/sock/r1.sock", to: `${req.dataDir}/mcp.sock` };
  const args = bwrapArgs(planSandbox({ ...req, binds: [sock] }, kinds));
  const at = (...xs: string[]) => args.findIndex((_, k) => xs.every((x, j) => args[k + j] === x));
  const data = at("--tmpfs", req.dataDir);
  const bind = at("--bind", sock.from, sock.to);
  const ssh = at("--tmpfs", "/h/.ssh");
  assert.ok(data >= 0 && data < bind && bind < ssh, args.join(" "));
  assert.equal(at("--bind", sock.to, sock.to), -1, "the socket is not bound to itself");
});
