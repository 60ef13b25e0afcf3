import assert from "node:assert/strict";
import { desktopNotifier, notifierProgram } from "../../src/node/notify.ts";
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
  assert.match(warnings[0], /notify-send cannot run .* install it or turn agent.notify off/);
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
