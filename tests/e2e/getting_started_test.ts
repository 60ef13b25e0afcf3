/**
 * docs/getting-started.md followed as written, with the real Claude Code CLI
 * in a temp HOME and the default data directory: `wats setup claude --mcp`
 * ("Connect your MCP host"), then `wats setup claude --about "…"`,
 * `wats config set listen 127.0.0.1:7447` and `wats` ("Let the node wake your
 * agent"). The second setup's `claude mcp get` checks the registered server's
 * health: that runs `wats mcp`, which starts a node in the background. The
 * foreground `wats` must take over from it (issue 8 item 23). Then "See it
 * wake": an ask from the person's own profile wakes nothing and `wats status`
 * names agent.ignore_local; `wats try` shows the agent waking and answering
 * (issue 20 §3). No WATS_* variable is set: the settings are the page's. The
 * only environment is what points Claude Code at the mock model.
 */

import assert from "node:assert/strict";
import { runWats, startWats } from "../support/cli.ts";
import { requireCli } from "../support/clis.ts";
import { answeringMock, call, idIn, mcpClient, waitFor } from "../support/swarm.ts";
import { closing, tempDir } from "../support/rig.ts";
import { CLIS_DIR } from "../support/clis.ts";

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
    "getting started as written: `wats setup claude --about …`, `wats`, then `wats try` shows the agent waking; the person's own ask names agent.ignore_local",
  ignore: claude === null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using tmp = tempDir("wats-home-");
    const home = tmp.path;
    const dataDir = `${home}/.local/share/wats`;
    await using mock = answeringMock();
    // Claude Code as the person has it, but talking to the mock model. No wats setting.
    const env = {
      PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: "test-key",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    };
    const leftovers: number[] = [];
    await using _leftovers = {
      async [Symbol.asyncDispose]() {
        for (const pid of leftovers) {
          if (alive(pid)) Deno.kill(pid, "SIGTERM");
        }
        await waitFor("every node to end", () => leftovers.every((p) => !alive(p)), 30_000)
          .catch(() => {});
      },
    };
    const mcp = await runWats(["setup", "claude", "--mcp"], { home, env });
    assert.equal(mcp.code, 0, mcp.stderr);
    assert.match(mcp.stdout, /added wats in Claude Code/);
    const setup = await runWats(
      ["setup", "claude", "--about", "Answers questions about our Debian servers"],
      { home, env },
    );
    assert.equal(setup.code, 0, setup.stderr);
    assert.match(setup.stdout, /already has wats/);
    const listen = await runWats(["config", "set", "listen", "127.0.0.1:7447"], { home, env });
    assert.equal(listen.code, 0, listen.stderr);
    // Setup reads Claude Code's entry as data (issue 26): it starts no `wats mcp`, so no node is
    // left running in the background for the foreground node to take over from.
    const background = lockPid(dataDir);
    assert.ok(background === undefined || !alive(background), "setup left no node running");

    await using started = startWats([], { home, env });
    await waitFor("the banner", () => {
      // A refused start ends with an error line: fail with it at once.
      assert.doesNotMatch(started.stderr(), /^error:/m);
      return /agent +claude as /.test(started.stderr());
    }, 90_000);
    assert.doesNotMatch(started.stderr(), /took over/);
    assert.equal(lockPid(dataDir), started.process.pid);

    // "See it wake": the person's own ask wakes nothing, and status says which setting.
    {
      await using alice = closing(await mcpClient(dataDir, "alice", home));
      const askId = idIn(
        await call(alice, "ask", { title: "Mine", text: "does this wake my agent?" }),
      );
      const said = `agent.ignore_local: did not wake the agent: ask ${askId.slice(0, 12)} ` +
        "is by another profile of this node";
      let status = "";
      const end = Date.now() + 60_000;
      while (!status.includes(said)) {
        assert.ok(Date.now() < end, `wats status never named agent.ignore_local:\n${status}`);
        status = (await runWats(["status"], { home, env })).stdout;
      }
      assert.match(status, /^posts a setting kept from waking the agent \(newest last\):$/m);
    }

    // `wats try`: a throwaway node asks, the agent wakes and its answer arrives.
    const tried = await runWats(["try"], { home, env, timeoutMs: 400_000 });
    assert.equal(
      tried.code,
      0,
      `stdout:\n${tried.stdout}\nstderr:\n${tried.stderr}\nnode:\n${started.stderr()}`,
    );
    assert.match(tried.stdout, /^agent woke: run \S+ started/m);
    assert.match(tried.stdout, /^the answer arrived on the throwaway node:$/m);
    assert.match(tried.stdout, /^Use journald \(1\)\.$/m);
    const stopped = await started.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
  },
});
