/**
 * docs/getting-started.md followed as written, with the real Claude Code CLI
 * in a temp HOME and the default data directory: `wats setup claude --mcp`
 * ("Connect your MCP host"), then `wats setup claude --about "…"` and `wats`
 * ("Let the node wake your agent"). The second setup's `claude mcp get` checks
 * the registered server's health: that runs `wats mcp`, which starts a node in
 * the background. The foreground `wats` must take over from it, then run the
 * agent (issue 8 item 23).
 */

import assert from "node:assert/strict";
import { runWats, startWats } from "../support/cli.ts";
import { requireCli } from "../support/clis.ts";
import { agentEnv, answeringMock, call, idIn, mcpClient, waitFor } from "../support/swarm.ts";

const claude = requireCli("claude");

/** True while `pid` runs (an exited process nobody has reaped yet does not count). */
function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return true; // no /proc: the signal's answer is all there is
  }
}

function lockPid(dataDir: string): number | undefined {
  try {
    const n = Number.parseInt(Deno.readTextFileSync(`${dataDir}/daemon.lock`).trim(), 10);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

Deno.test({
  name:
    "getting started as written: `wats setup claude --about …` then `wats` starts and runs the agent",
  ignore: claude === null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    const dataDir = `${home}/.local/share/wats`;
    const mock = answeringMock();
    // The model is the mock; the askers below are profiles of this same node,
    // and a debounce of 0 keeps the test short. Nothing else is set.
    const env = agentEnv(mock, { WATS_AGENT_IGNORE_LOCAL: "false" });
    const leftovers: number[] = [];
    let node: ReturnType<typeof startWats> | undefined;
    try {
      const mcp = await runWats(["setup", "claude", "--mcp"], { home, env });
      assert.equal(mcp.code, 0, mcp.stderr);
      assert.match(mcp.stdout, /added wats in Claude Code/);
      const setup = await runWats(
        ["setup", "claude", "--about", "Answers questions about our Debian servers"],
        { home, env },
      );
      assert.equal(setup.code, 0, setup.stderr);
      assert.match(setup.stdout, /already has wats/);
      const background = lockPid(dataDir);
      assert.ok(
        background !== undefined && alive(background),
        "setup's `claude mcp get` left a node running in the background (the case under test)",
      );
      leftovers.push(background);

      node = startWats([], { home, env });
      const started = node;
      await waitFor("the banner", () => {
        // A refused start ends with an error line: fail with it at once.
        assert.doesNotMatch(started.stderr(), /^error:/m);
        return /agent +claude as /.test(started.stderr());
      }, 90_000);
      const said = started.stderr().split("\n").filter((l) => l.includes("took over"));
      assert.deepEqual(said, [
        `wats: took over from the background node that \`wats mcp\` started (pid ${background}); it has stopped`,
      ]);
      await waitFor("the background node to end", () => !alive(background), 30_000);
      assert.equal(lockPid(dataDir), started.process.pid);

      // It runs: an ask wakes the agent, whose answer lands in the thread.
      const alice = await mcpClient(dataDir, "alice", home);
      try {
        const askId = idIn(
          await call(alice, "ask", { title: "Logs", text: "logrotate or journald?" }),
        );
        let thread = "";
        const end = Date.now() + 120_000;
        while (!/Use journald \(1\)\./.test(thread)) {
          assert.ok(Date.now() < end, `no answer from the agent; stderr:\n${started.stderr()}`);
          await new Promise((r) => setTimeout(r, 250));
          thread = await call(alice, "thread", { id: askId });
        }
      } finally {
        await alice.close();
      }
      const stopped = await started.stop();
      assert.equal(stopped.code, 0, stopped.stderr);
    } finally {
      await node?.stop();
      for (const pid of leftovers) {
        if (alive(pid)) Deno.kill(pid, "SIGTERM");
      }
      await mock.close();
      await waitFor("every node to end", () => leftovers.every((p) => !alive(p)), 30_000)
        .catch(() => {});
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});
