import assert from "node:assert/strict";
import {
  desktopNotifier,
  heldEvent,
  heldNotice,
  heldNotifier,
  NOTICE_BODY_MAX,
  notifierProgram,
} from "../../src/node/notify.ts";
import type { PendingDraft } from "../../src/contracts/views.ts";
import { IN_DOUBT, type PermissionAsk } from "../../src/contracts/coding_agents.ts";
import type { CommandOutput } from "../../src/runner/spawn.ts";

function recorder(result: CommandOutput | Error) {
  const calls: Array<[string, string[]]> = [];
  const run = (program: string, args: string[]) => {
    calls.push([program, args]);
    return result instanceof Error ? Promise.reject(result) : Promise.resolve(result);
  };
  return { calls, run };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("Linux notifies with notify-send, macOS with osascript", async () => {
  assert.equal(notifierProgram("linux"), "notify-send");
  assert.equal(notifierProgram("darwin"), "osascript");
  const r = recorder({ code: 0, stdout: "", stderr: "" });
  desktopNotifier({ os: "linux", run: r.run, warn: () => {} }).notify("wats", "a draft waits");
  desktopNotifier({ os: "darwin", run: r.run, warn: () => {} }).notify("wats", 'say "hi"');
  await tick();
  assert.deepEqual(r.calls[0], ["notify-send", ["--app-name=wats", "wats", "a draft waits"]]);
  assert.deepEqual(r.calls[1], ["osascript", [
    "-e",
    'display notification "say \\"hi\\"" with title "wats"',
  ]]);
});

Deno.test("a missing notification program is logged once, not on every draft", async () => {
  const warnings: string[] = [];
  const r = recorder(new Error("Cannot run notify-send: it is not on PATH"));
  const n = desktopNotifier({ os: "linux", run: r.run, warn: (m) => warnings.push(m) });
  n.notify("a", "b");
  n.notify("a", "c");
  await tick();
  assert.equal(r.calls.length, 2);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /notify-send cannot run .* install it or turn agent.notify off/);
});

Deno.test("an OS without a known notifier is logged once and runs nothing", () => {
  const warnings: string[] = [];
  const r = recorder({ code: 0, stdout: "", stderr: "" });
  const n = desktopNotifier({ os: "windows", run: r.run, warn: (m) => warnings.push(m) });
  n.notify("a", "b");
  n.notify("a", "b");
  assert.equal(r.calls.length, 0);
  assert.equal(warnings.length, 1);
});

/** A coding agent's request as the review queue holds it (docs/acp.md). */
function request(over: Partial<PermissionAsk> = {}): PendingDraft {
  return {
    id: "0123456789ab",
    kind: "permission",
    text: "claude/edit: Write notes.txt",
    profile: "helper",
    createdAt: 1_790_000_000,
    permission: {
      request_id: "run-1.acp_1:toolu_1",
      harness: "claude",
      kind: "edit",
      title: "Write notes.txt",
      arguments: { file_path: "/w/notes.txt", content: "x" },
      locations: ["/w/notes.txt"],
      worktree: "/w",
      checkout: "app",
      work: "fix-login",
      agent: "helper",
      thread: "_",
      task: "fix the login",
      reason: "claude/edit is gated",
      ...over,
    },
  };
}

Deno.test("a coding agent's held request notifies with its request, locations and work", async () => {
  const r = recorder({ code: 0, stdout: "", stderr: "" });
  const onHeld = heldNotifier(desktopNotifier({ os: "linux", run: r.run, warn: () => {} }));
  onHeld(request());
  onHeld(request({ kind: "in_doubt", locations: [], request_id: "run-1.acp_1", work: "notes" }));
  onHeld({
    id: "ba9876543210",
    kind: "answer",
    text: "Use\njournald.",
    profile: "helper",
    createdAt: 1,
  });
  await tick();
  assert.deepEqual(r.calls.map((c) => c[1].slice(1)), [
    ["wats: a coding agent waits for a decision", "claude/edit /w/notes.txt (work fix-login)"],
    ["wats: a coding agent waits for a decision", "claude/in_doubt (work notes)"],
    ["wats: a draft waits for review", "answer ba9876543210: Use journald."],
  ]);
});

Deno.test("a held execute request's notification names its command", () => {
  const { body } = heldNotice(
    request({ kind: "execute", locations: [], arguments: { command: "rm -rf build\n&& ls" } }),
  );
  assert.equal(body, "claude/execute `rm -rf build && ls` (work fix-login)");
});

Deno.test("a held request's notification is one bounded line: long or hostile locations are cut, the work still shows", () => {
  const hostile = `/w/${"a".repeat(500)}\n\u202eevil\u0007.txt`;
  const { body } = heldNotice(request({ locations: [hostile, "/w/b.txt"], work: "fix\r\nlogin" }));
  assert.ok(body.length <= NOTICE_BODY_MAX, `${body.length}`);
  assert.match(body, /^claude\/edit \/w\/a+… \(work fix login\)$/);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(body, /[\u0000-\u001f\u007f-\u009f\u202e]/);
});

Deno.test("a held item becomes a held event saying whether it is a draft, a request or a call in doubt", () => {
  const ask = (kind: string): PermissionAsk => ({
    request_id: "c1:t1",
    harness: "claude",
    kind,
    locations: ["src/a.ts"],
    worktree: "/w",
    checkout: "app",
    work: "w1",
    agent: "alice-agent",
    thread: "t",
    task: "fix it",
    reason: "policy says ask",
  });
  const base: PendingDraft = {
    id: "p1",
    kind: "note",
    text: "hi\nthere",
    profile: "a",
    createdAt: 1,
  };
  assert.deepEqual(heldEvent(base), {
    event: "held",
    id: "p1",
    what: "draft",
    summary: "note p1: hi there",
  });
  const edit = heldEvent({ ...base, kind: "permission", permission: ask("edit") });
  assert.deepEqual([edit.what, edit.summary], ["permission", "claude/edit src/a.ts (work w1)"]);
  assert.equal(
    heldEvent({ ...base, kind: "permission", permission: ask(IN_DOUBT) }).what,
    "in_doubt",
  );
});
