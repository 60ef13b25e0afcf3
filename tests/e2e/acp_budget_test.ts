/**
 * The budget over a real coding agent (issue 30, item 4): the real
 * `@agentclientprotocol/claude-agent-acp` against the scripted Anthropic mock,
 * called through `AcpLayer` with the real runner's budget (on a fake clock).
 * Claude's ACP agent reports a prompt's cost (`usage_update` with `cost`) as
 * the prompt ends (docs/harness_facts.md): here a second work's call reports
 * more than was left beside the first's hold, and the first, mid-way in a
 * model request after a commit, is cancelled by the budget.
 */

import assert from "node:assert/strict";
import { AcpLayer } from "../../src/acp/calls.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import { readWorkState } from "../../src/acp/work_state.ts";
import { readCalls } from "../../src/acp/work_record.ts";
import { requireCli } from "../support/clis.ts";
import { waitFor } from "../support/swarm.ts";
import { gitRepo, tempDir } from "../support/rig.ts";
import { claudeAcpHarness } from "../support/harness_fixtures.ts";
import {
  lastUserContains,
  type MessagesRequest,
  startMockAnthropic,
  text,
  toolResultFor,
  toolUse,
} from "../support/mock_anthropic.ts";
import { rig as runnerRig } from "../runner/scheduler_rig.ts";

const acp = requireCli("claude-acp");
const opts = { ignore: acp === null, sanitizeOps: false, sanitizeResources: false };

/** The coding agent's working directory, as Claude Code tells its model (its worktree). */
function cwdIn(req: MessagesRequest): string | undefined {
  return JSON.stringify(req).match(/Primary working directory: (\/[^\s\\"]+)/)?.[1];
}

/** The subjects of the branch's commits that are not in main, newest first. */
function subjects(repo: string, branch: string): string[] {
  const out = new Deno.Command("git", {
    args: ["log", "--format=%s", `main..${branch}`],
    cwd: repo,
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
}

Deno.test({
  name: "a call the budget cancels mid-way (another work's cost used the money up) parks its " +
    "work as stopped: budget, and the commit it made before the cancel is kept",
  ...opts,
  async fn() {
    await using dir = tempDir("wats-acp-budget-");
    const root = dir.path;
    const repo = await gitRepo(`${root}/repo`, { identity: true });
    const home = `${root}/home`;
    Deno.mkdirSync(home);
    const toA = (r: MessagesRequest) => lastUserContains("TASK-A")(r) && cwdIn(r) !== undefined;
    await using mock = startMockAnthropic({
      rules: [
        // A's second model request, after its commit: the model hangs until the call is cancelled.
        { when: toolResultFor("Bash"), reply: { ...text("too late"), delayMs: 600_000 } },
        {
          when: toA,
          reply: toolUse("Bash", {
            command: "echo one > one.txt && git add one.txt && git commit -qm 'A: first step'",
            description: "commit the first step",
          }),
        },
        {
          // B's one reply reads a large input: it costs more than the budget has left.
          when: (r) => lastUserContains("TASK-B")(r) && cwdIn(r) !== undefined,
          reply: { ...text("B done"), usage: { input_tokens: 400_000, output_tokens: 10 } },
        },
      ],
    });
    const r = runnerRig({ "agent.max_usd_per_day": 1, "agent.reserve_usd": 0.4 });
    const harness = claudeAcpHarness(acp!, mock.url, home);
    harness.env = {
      ...harness.env,
      GIT_AUTHOR_NAME: "Coder",
      GIT_AUTHOR_EMAIL: "c@example.org",
      GIT_COMMITTER_NAME: "Coder",
      GIT_COMMITTER_EMAIL: "c@example.org",
    };
    const layer = new AcpLayer({
      worktrees: `${root}/data/worktrees`,
      harnesses: { claude: harness },
      checkouts: { app: { name: "app", path: repo, base: "main", fetch: false } },
      allowedCheckouts: [],
      policy: makePolicy(["claude/execute"], [], `${root}/data`),
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        TMPDIR: home,
        IS_SANDBOX: "1",
      },
      host: r.runner,
    });
    try {
      r.runner.start();
      const a = layer.call("claude", { agent: "bob", thread: "_", callId: "call-a" }, {
        task: "TASK-A: two steps",
        checkout: "app",
        work: "a",
      });
      await waitFor(
        "A's commit and its next model request",
        () => mock.messages().some((m) => m.body !== undefined && toolResultFor("Bash")(m.body)),
        120_000,
      );
      assert.equal(r.runner.status().budget.inFlight.count, 1);

      const rb = await layer.call("claude", { agent: "bob", thread: "_", callId: "call-b" }, {
        task: "TASK-B: read everything",
        checkout: "app",
        work: "b",
      });
      assert.equal(rb.stop_reason, "end_turn");
      assert.ok(rb.usd > 0.6, `B reported ${rb.usd}: more than the $0.60 A's hold left`);

      const ra = await a;
      assert.equal(ra.stopped, "budget", JSON.stringify(ra));
      assert.equal(ra.stop_reason, "cancelled");
      assert.match(ra.message, /^stopped: budget/);
      // The commit made before the cancel is on the work's branch in the checkout.
      assert.deepEqual(ra.commits.map((c) => c.subject), ["A: first step"]);
      assert.deepEqual(subjects(repo, ra.branch), ["A: first step"]);
      // The work is parked with the reason, to go on after the window resets.
      const stop = readWorkState(`${ra.worktree}.acp.json`).budgetStop;
      assert.equal(stop?.task, "TASK-A: two steps");
      assert.equal(
        readCalls(ra.worktree).find((c) => c.id === "call-a")?.outcome,
        "stopped: budget",
      );
      // Everything reported was counted.
      const b = r.runner.status().budget;
      assert.ok(Math.abs(b.usdToday - (ra.usd + rb.usd)) < 1e-9, JSON.stringify(b));
      assert.equal(b.inFlight.count, 0);
    } finally {
      await layer.close();
      await r.runner.stop();
      r.cleanup();
    }
  },
});
