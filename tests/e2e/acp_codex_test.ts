/**
 * The ACP layer with the real `@agentclientprotocol/codex-acp` (it drives its
 * own `codex app-server`) against the scripted Responses API mock, in a temp
 * git repository. Codex asks only for commands the model marks as needing to
 * leave the read-only sandbox (`sandbox_permissions: "require_escalated"`); a
 * rejection ends its turn `cancelled` (docs/harness_facts.md).
 */

import assert from "node:assert/strict";
import { AcpLayer, type CallEvent } from "../../src/acp/calls.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import { requireCli } from "../support/clis.ts";
import {
  functionCall,
  type MockOpenAI,
  startMockOpenAI,
  text,
  trailingCallOutputs,
  userText,
} from "../support/mock_openai.ts";
import { gitRepo, tempDir } from "../support/rig.ts";
import { codexAcpHarness } from "../support/harness_fixtures.ts";

const codexAcp = requireCli("codex-acp");
const opts = { ignore: codexAcp === null, sanitizeOps: false, sanitizeResources: false };

function layer(
  at: { root: string; repoDir: string },
  mock: MockOpenAI,
  allow: string[],
  events: CallEvent[],
): AcpLayer {
  const { root, repoDir } = at;
  const home = `${root}/home`;
  return new AcpLayer({
    worktrees: `${root}/data/worktrees`,
    harnesses: { codex: codexAcpHarness(codexAcp!, mock.url, `${home}/.codex`) },
    checkouts: { app: { name: "app", path: repoDir, base: "main", fetch: false } },
    allowedCheckouts: [],
    policy: makePolicy(allow, [], `${root}/data`),
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, IS_SANDBOX: "1" },
    onEvent: (e) => events.push(e),
  });
}

/** Holds when the turn being answered carries the output of `cmd`. */
function ranCommand(cmd: string) {
  return (req: Parameters<typeof trailingCallOutputs>[0]) =>
    trailingCallOutputs(req).some((o) => String(o.call?.arguments ?? "").includes(cmd));
}

/** A command Codex runs only after asking (it leaves the read-only sandbox). */
function escalated(cmd: string) {
  return functionCall(undefined, "exec_command", {
    cmd,
    sandbox_permissions: "require_escalated",
    justification: "it writes a file",
  });
}

Deno.test({
  name:
    "codex-acp: a refused command ends the turn cancelled and is listed; an allowed one runs; " +
    "the same work continues its session after a restart",
  ...opts,
  async fn() {
    await using tmp = tempDir("wats-acp-codex-");
    const root = tmp.path;
    const repoDir = await gitRepo(`${root}/repo`);
    const wt = `${root}/data/worktrees/codex/app/bob/_/w`;
    await using mock = startMockOpenAI({
      rules: [
        {
          when: (r) => userText(r).includes("TASK-3") && userText(r).includes("TASK-2"),
          reply: text("CONTINUED"),
        },
        // After a cancelled turn the old call's output is still the trailing item: match the new one.
        { when: ranCommand("touch allowed.txt"), reply: text("Ran it.") },
        { when: (r) => userText(r).includes("TASK-2"), reply: escalated("touch allowed.txt") },
        { when: (r) => userText(r).includes("TASK-1"), reply: escalated("touch refused.txt") },
      ],
    });
    const events: CallEvent[] = [];
    let acpLayer = layer({ root, repoDir }, mock, [], events);
    await using _layer = { [Symbol.asyncDispose]: () => acpLayer.close() };
    const origin = { agent: "bob", thread: "_", callId: "c1" };
    const args = { checkout: "app", work: "w" };
    const r1 = await acpLayer.call("codex", origin, { task: "TASK-1", ...args });
    assert.equal(r1.worktree, wt);
    assert.equal(r1.branch, "wats/bob/_/w");
    assert.equal(r1.stop_reason, "cancelled", JSON.stringify(r1));
    assert.equal(r1.refused.length, 1, JSON.stringify(r1.refused));
    assert.equal(r1.refused[0]!.request, "codex/execute");
    assert.match(r1.refused[0]!.id, /^c1:/);
    assert.throws(() => Deno.statSync(`${wt}/refused.txt`));
    // Codex reports no cost.
    assert.equal(r1.usd, 0);

    // An explicit rule allows commands; the daemon restarts in between.
    await acpLayer.close();
    acpLayer = layer({ root, repoDir }, mock, ["codex/execute"], events);
    const r2 = await acpLayer.call("codex", { ...origin, callId: "c2" }, {
      task: "TASK-2",
      ...args,
    });
    assert.equal(r2.stop_reason, "end_turn", JSON.stringify(r2));
    assert.ok(r2.message.endsWith("Ran it."), r2.message);
    assert.deepEqual(r2.refused, []);
    // The restarted layer loaded the work's session: TASK-2 went to the model with TASK-1.
    assert.ok(
      mock.requests.some((q) =>
        q.body && userText(q.body).includes("TASK-2") && userText(q.body).includes("TASK-1")
      ),
    );
    Deno.statSync(`${wt}/allowed.txt`);
    const answers = events.filter((e) => e.type === "acp_permission")
      .map((e) => e.type === "acp_permission" && [e.request, e.answer]);
    assert.deepEqual(answers, [["codex/execute", "reject_once"], [
      "codex/execute",
      "allow_once",
    ]]);

    const r3 = await acpLayer.call("codex", { ...origin, callId: "c3" }, {
      task: "TASK-3",
      ...args,
    });
    assert.ok(r3.message.endsWith("CONTINUED"), r3.message);
  },
});
