import assert from "node:assert/strict";
import {
  ensureClaudeRegistration,
  parseMcpGet,
  personEntry,
} from "../../src/runner/harnesses/claude_registration.ts";
import type { CommandOutput } from "../../src/runner/spawn.ts";

/** `claude mcp get wats` output of Claude Code 2.1.197. */
function getOutput(scope: string, command: string, args: string): string {
  return `wats:
  Scope: ${scope}
  Status: ✘ Failed to connect
  Type: stdio
  Command: ${command}
  Args: ${args}
  Environment:

To remove this server, run: claude mcp remove wats -s user
`;
}

function fakeClaude(get: CommandOutput) {
  const calls: string[][] = [];
  const run = (program: string, args: string[]): Promise<CommandOutput> => {
    calls.push([program, ...args]);
    if (args[1] === "get") return Promise.resolve(get);
    return Promise.resolve({ code: 0, stdout: "", stderr: "" });
  };
  return { calls, run };
}

const ENTRY = personEntry({ command: "/usr/local/bin/wats", args: [] }, "alice");

Deno.test("registration adds the wats entry when Claude Code has none", async () => {
  const c = fakeClaude({ code: 1, stdout: "", stderr: 'No MCP server named "wats".' });
  const out = await ensureClaudeRegistration({ run: c.run, entry: ENTRY });
  assert.equal(out.action, "added");
  assert.deepEqual(c.calls, [
    ["claude", "mcp", "get", "wats"],
    [
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
    ],
  ]);
});

Deno.test("registration is silent and changes nothing when the entry is the same", async () => {
  const c = fakeClaude({
    code: 0,
    stdout: getOutput(
      "User config (available in all your projects)",
      "/usr/local/bin/wats",
      "mcp --profile alice",
    ),
    stderr: "",
  });
  const out = await ensureClaudeRegistration({ run: c.run, entry: ENTRY });
  assert.equal(out.action, "unchanged");
  assert.equal(c.calls.length, 1);
});

Deno.test("registration replaces a different entry in the scope it was found", async () => {
  const c = fakeClaude({
    code: 0,
    stdout: getOutput(
      "Local config (private to you in this project)",
      "/old/wats",
      "mcp --profile alice",
    ),
    stderr: "",
  });
  const out = await ensureClaudeRegistration({ run: c.run, entry: ENTRY });
  assert.equal(out.action, "replaced");
  assert.equal(out.previous?.command, "/old/wats");
  assert.deepEqual(c.calls.slice(1), [
    ["claude", "mcp", "remove", "wats", "-s", "local"],
    [
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
    ],
  ]);
});

Deno.test("a failing claude mcp add is an error that says what to do", async () => {
  const run = (_p: string, args: string[]) =>
    Promise.resolve(
      args[1] === "get"
        ? { code: 1, stdout: "", stderr: "" }
        : { code: 1, stdout: "", stderr: "bad scope" },
    );
  await assert.rejects(
    ensureClaudeRegistration({ run, entry: ENTRY }),
    /could not add the wats entry .*bad scope.*wats setup claude/,
  );
});

Deno.test("mcp get output is read for scope, command and args", () => {
  assert.deepEqual(
    parseMcpGet(getOutput("Project config (shared via .mcp.json)", "/path with space/wats", "")),
    {
      scope: "project",
      command: "/path with space/wats",
      args: "",
    },
  );
  assert.equal(parseMcpGet("wats:\n  Type: http\n  URL: http://x\n"), undefined);
  assert.deepEqual(personEntry({ command: "wats", args: [] }, "bob", "/data").args, [
    "mcp",
    "--profile",
    "bob",
    "--data-dir",
    "/data",
  ]);
});
