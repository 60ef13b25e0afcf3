/**
 * `wats status` shows the Codex lock's self-check only while Codex is, or may
 * be, the runtime: a node that last started with another runtime is not
 * described by an old Codex check.
 */
import assert from "node:assert/strict";
import { dataPaths } from "../../src/config/paths.ts";
import { codexStateDir, writeSelfCheck } from "../../src/runner/runtimes/codex/lock.ts";
import { writeRunnerState } from "../../src/runner/state_file.ts";
import { runWats, tempDataDir } from "../support/cli.ts";

const LIMITS = { usdPerDay: 2, usdPerMonth: 20, runsPerDay: 48 };

async function statusWith(
  runtime: string | undefined,
  checkedAt = "2026-11-30T12:00:00Z",
  startedAt = "2026-11-30T12:30:00Z",
): Promise<string> {
  const dataDir = tempDataDir();
  try {
    const paths = dataPaths(dataDir);
    Deno.mkdirSync(paths.agentDir, { recursive: true });
    await writeSelfCheck(codexStateDir(paths.agentDir), {
      ok: true,
      key: "k",
      version: "codex-cli 0.171.0",
      program: "codex",
      checked_at: checkedAt,
      tools: ["mcp__wats/answer"],
    });
    if (runtime !== undefined) {
      writeRunnerState(paths.agentDir, {
        runtime,
        limits: LIMITS,
        started_at: startedAt,
      });
    }
    const r = await runWats(["status"], { dataDir });
    assert.equal(r.code, 1, "no daemon runs");
    return r.stdout;
  } finally {
    Deno.removeSync(dataDir, { recursive: true });
  }
}

Deno.test("status shows the Codex lock while Codex runs or no runtime is known", async () => {
  assert.match(await statusWith("codex"), /^codex lock: self-check passed/m);
  assert.match(await statusWith(undefined), /^codex lock: self-check passed/m);
});

Deno.test("status leaves out an old Codex check once the node ran another runtime", async () => {
  assert.doesNotMatch(await statusWith("claude"), /codex lock/);
});

Deno.test("status shows a Codex refusal made after a node of another runtime last started", async () => {
  const out = await statusWith("claude", "2026-11-30T13:00:00Z", "2026-11-30T12:30:00Z");
  assert.match(out, /^codex lock: /m);
});
