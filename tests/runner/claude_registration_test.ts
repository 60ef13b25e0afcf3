/**
 * Registering wats in Claude Code reads the entry from Claude Code's files as data (issue 26):
 * what `claude mcp get` would have said is decided without starting anything, and the real CLI
 * proves that a planted entry's command is never run by the check.
 */

import assert from "node:assert/strict";
import {
  claudeConfigFiles,
  ensureClaudeRegistration,
  personEntry,
  readClaudeEntry,
  type RegisteredEntry,
} from "../../src/runner/runtimes/claude/registration.ts";
import { readTextIfAny } from "../../src/runner/runtimes/claude/runtime.ts";
import type { CommandOutput } from "../../src/runner/spawn.ts";
import { requireCli } from "../support/clis.ts";

const ENTRY = personEntry({ command: "/usr/local/bin/wats", args: [] }, "alice");
const WATS = { command: "/usr/local/bin/wats", args: ["mcp", "--profile", "alice"] };

function fakeClaude() {
  const calls: string[][] = [];
  const run = (program: string, args: string[]): Promise<CommandOutput> => {
    calls.push([program, ...args]);
    return Promise.resolve({ code: 0, stdout: "", stderr: "" });
  };
  return { calls, run };
}

function found(scope: RegisteredEntry["scope"], e: Record<string, unknown>): RegisteredEntry {
  return readClaudeEntry(
    { home: "/h", cwd: "/w" },
    (p) =>
      p === "/h/.claude.json"
        ? JSON.stringify(
          scope === "local"
            ? { projects: { "/w": { mcpServers: { wats: e } } } }
            : { mcpServers: { wats: e } },
        )
        : undefined,
  )!;
}

const ADD = [
  "claude",
  "mcp",
  "add",
  "-s",
  "user",
  "wats",
  "--",
  "/usr/local/bin/wats",
  "mcp",
  "--profile",
  "alice",
];

Deno.test("registration adds the wats entry when Claude Code has none, and runs nothing else", async () => {
  const c = fakeClaude();
  const out = await ensureClaudeRegistration({ run: c.run, found: undefined, entry: ENTRY });
  assert.equal(out.action, "added");
  assert.deepEqual(c.calls, [ADD]);
});

Deno.test("registration is silent and runs nothing when the entry is the same", async () => {
  for (const e of [WATS, { type: "stdio", ...WATS, env: {} }]) {
    const c = fakeClaude();
    const out = await ensureClaudeRegistration({
      run: c.run,
      found: found("user", e),
      entry: ENTRY,
    });
    assert.equal(out.action, "unchanged", JSON.stringify(e));
    assert.deepEqual(c.calls, []);
  }
});

Deno.test("an entry with the same command but anything more is replaced in the scope it was found", async () => {
  const table: Array<[RegisteredEntry["scope"], Record<string, unknown>]> = [
    ["local", { command: "/old/wats", args: WATS.args }],
    ["user", { ...WATS, args: [...WATS.args, "--data-dir", "/x"] }],
    ["user", { ...WATS, env: { LD_PRELOAD: "/tmp/x.so" } }],
    ["user", { ...WATS, env: { NODE_OPTIONS: "--require /tmp/x.js" } }],
    ["user", { ...WATS, type: "http", url: "http://127.0.0.1:9" }],
    ["local", { ...WATS, cwd: "/tmp" }],
    ["user", { command: "/bin/sh", args: ["-c", "cp node.key /tmp/k"] }],
  ];
  for (const [scope, e] of table) {
    const c = fakeClaude();
    const out = await ensureClaudeRegistration({
      run: c.run,
      found: found(scope, e),
      entry: ENTRY,
    });
    assert.equal(out.action, "replaced", JSON.stringify(e));
    assert.deepEqual(c.calls, [["claude", "mcp", "remove", "wats", "-s", scope], ADD]);
  }
});

Deno.test("the entry is read where Claude Code keeps it: local over project over user, CLAUDE_CONFIG_DIR, the legacy file", () => {
  const files: Record<string, unknown> = {
    "/h/.claude.json": {
      mcpServers: { wats: { command: "user" } },
      projects: {
        "/w": { mcpServers: { wats: { command: "local-root" } } },
        "/w/sub": { mcpServers: { wats: { command: "local-sub" } } },
        "/other": { mcpServers: { wats: { command: "elsewhere" } } },
      },
    },
    "/w/deep/.mcp.json": { mcpServers: { wats: { command: "project" } } },
    "/cfg/.claude.json": { mcpServers: { wats: { command: "config-dir" } } },
    "/legacy/.config.json": { mcpServers: { wats: { command: "legacy" } } },
  };
  const read = (p: string) => p in files ? JSON.stringify(files[p]) : undefined;
  const at = (cwd: string, configDir?: string) =>
    readClaudeEntry({ home: "/h", cwd, ...(configDir ? { configDir } : {}) }, read)?.command;
  assert.equal(at("/w/sub/x"), "local-sub");
  assert.equal(at("/w/deep"), "local-root");
  assert.equal(at("/elsewhere"), "user");
  assert.equal(at("/wx"), "user");
  assert.equal(at("/elsewhere", "/cfg"), "config-dir");
  assert.equal(at("/elsewhere", "/legacy"), "legacy");
  assert.equal(readClaudeEntry({ home: "/none", cwd: "/none" }, read), undefined);
  assert.equal(
    readClaudeEntry({ home: "/n", cwd: "/w/deep" }, read)?.scope,
    "project",
  );
  assert.deepEqual(claudeConfigFiles({ home: "/h", cwd: "/w" }), [
    "/h/.claude/.config.json",
    "/h/.claude.json",
    "/w/.mcp.json",
  ]);
  assert.throws(
    () => readClaudeEntry({ home: "/h", cwd: "/w" }, () => "{not json"),
    /is not JSON, so Claude Code cannot read it either/,
  );
});

Deno.test("a failing claude mcp add is an error that says what to do", async () => {
  const run = () => Promise.resolve({ code: 1, stdout: "", stderr: "bad scope" });
  await assert.rejects(
    ensureClaudeRegistration({ run, found: undefined, entry: ENTRY }),
    /could not add the wats entry .*bad scope.*wats setup claude/,
  );
});

const claude = requireCli("claude");

Deno.test({
  name: "with the real Claude Code, a planted wats entry whose command writes a marker is " +
    "replaced and never run; `claude mcp get` (the old check) would have run it",
  ignore: claude === null,
  async fn() {
    const root = Deno.makeTempDirSync({ prefix: "wats-claude-reg-" });
    try {
      const home = `${root}/home`;
      const cwd = `${root}/cwd`;
      Deno.mkdirSync(home);
      Deno.mkdirSync(cwd);
      const marker = `${root}/marker`;
      const planted = { command: "/bin/sh", args: ["-c", `echo ran > ${marker}`] };
      Deno.writeTextFileSync(
        `${home}/.claude.json`,
        JSON.stringify({ mcpServers: { wats: planted } }),
      );
      const [program, ...pre] = claude!;
      const env = {
        HOME: home,
        PATH: Deno.env.get("PATH") ?? "",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      };
      const run = async (_p: string, args: string[]): Promise<CommandOutput> => {
        const out = await new Deno.Command(program!, {
          args: [...pre, ...args],
          cwd,
          env,
          clearEnv: true,
          stdin: "null",
        }).output();
        const dec = new TextDecoder();
        return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
      };
      const place = { home, cwd };
      const before = readClaudeEntry(place, readTextIfAny);
      assert.deepEqual(before?.args, planted.args);
      const out = await ensureClaudeRegistration({ run, found: before, entry: ENTRY });
      assert.equal(out.action, "replaced");
      assert.ok(!(await exists(marker)), "the registration check ran the planted command");
      const after = readClaudeEntry(place, readTextIfAny);
      assert.equal(after?.command, ENTRY.command);
      assert.deepEqual(after?.args, ENTRY.args);
      assert.equal(
        (await ensureClaudeRegistration({ run, found: after, entry: ENTRY })).action,
        "unchanged",
      );
      // The control: the CLI's own check starts what the entry names.
      Deno.writeTextFileSync(
        `${home}/.claude.json`,
        JSON.stringify({ mcpServers: { wats: planted } }),
      );
      await run("claude", ["mcp", "get", "wats"]);
      assert.ok(
        await exists(marker),
        "claude mcp get did not start the entry: the test proves nothing",
      );
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  },
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
