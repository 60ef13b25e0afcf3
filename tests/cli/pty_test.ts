/**
 * No command of wats ever stops for a Deno permission prompt (issue 20 §2).
 * Each command runs in a pseudo-terminal, as a person at a terminal runs it:
 * only there does Deno ask "Allow? [y/n/A]" instead of throwing, and the
 * question waits for an answer that never comes. Each test fails as soon as the
 * terminal shows a prompt, and waits for what the command must reach (a run's
 * end, the banner, its exit) with no time limit but the overall safety net.
 */

import assert from "node:assert/strict";
import { tempDataDir } from "../support/cli.ts";
import { CLIS_DIR, requireCli } from "../support/clis.ts";
import { requireTool } from "../support/debian_tools.ts";
import { agentEnv, answeringMock, call, idIn, mcpClient } from "../support/swarm.ts";
import { runWatsInPty, startWatsInPty, waitForLineNoPrompt } from "../support/pty.ts";
import { startMockOpenAI, text } from "../support/mock_openai.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { codexStateDir, readSelfCheck } from "../../src/runner/runtimes/codex/lock.ts";
import { freePort } from "../support/free_port.ts";

const pty = requireTool("script");
const claude = pty ? requireCli("claude") : null;
const codex = pty ? requireCli("codex") : null;
const opts = { sanitizeOps: false, sanitizeResources: false };
/** The overall safety net of one wait: a frozen command fails the test long before. */
const SAFETY_MS = 300_000;

const started = (l: string) => l.includes('"event":"started"');

Deno.test({
  ...opts,
  ignore: claude === null,
  name:
    "in a terminal, the daemon's Claude run ends without a permission prompt, and so do `wats status`, `wats agent logs -f`, `wats work list` and `wats ui` beside it",
  async fn() {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    const mock = answeringMock();
    const node = startWatsInPty(
      ["--data-dir", dir, "node", "--agent", "claude", "--agent-profile", "helper"],
      { home, env: agentEnv(mock, { WATS_AGENT_IGNORE_LOCAL: "false" }), timeoutMs: SAFETY_MS },
    );
    try {
      await waitForLineNoPrompt(node, started, SAFETY_MS);
      const alice = await mcpClient(dir, "alice", home);
      try {
        const askId = idIn(await call(alice, "ask", { title: "Logs", text: "journald?" }));
        // The run's process group is signalled when the CLI exits: at a terminal
        // that was a prompt, and the run never ended.
        const ended = JSON.parse(
          await waitForLineNoPrompt(node, (l) => l.includes('"event":"run_ended"'), SAFETY_MS),
        );
        assert.equal(ended.status, "ok", JSON.stringify(ended));
        assert.match(await call(alice, "thread", { id: askId }), /Use journald \(1\)\./);
      } finally {
        await alice.close();
      }

      const status = await runWatsInPty(["--data-dir", dir, "status"], { home });
      assert.equal(status.code, 0, status.output);
      assert.match(status.output, /runs today/);

      const logs = await runWatsInPty(["--data-dir", dir, "agent", "logs", "-f"], { home });
      assert.equal(logs.code, 0, logs.output);
      assert.match(logs.output, /Answered\./);

      const works = await runWatsInPty(["--data-dir", dir, "work", "list"], { home });
      assert.equal(works.code, 0, works.output);
      assert.match(works.output, /no works yet/);

      const port = freePort();
      const ui = startWatsInPty(["--data-dir", dir, "ui", "--listen", `127.0.0.1:${port}`], {
        home,
      });
      try {
        const line = await waitForLineNoPrompt(ui, (l) => l.includes("/login?token="), SAFETY_MS);
        const login = await fetch(line.match(/http:\/\/\S+/)![0], { redirect: "manual" });
        await login.body?.cancel();
        const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
        // The session lives under the random path the login redirects to.
        const sessionUrl = new URL(login.headers.get("location")!, `http://127.0.0.1:${port}/`);
        const page = await fetch(sessionUrl, { headers: { cookie } });
        assert.equal(page.status, 200);
        await page.body?.cancel();
        await waitForLineNoPrompt(ui, (l) => l.includes("Ctrl-C stops the dashboard"));
      } finally {
        await ui.stop();
      }
    } finally {
      await node.stop();
      await mock.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  ...opts,
  ignore: codex === null,
  name: "in a terminal, the daemon's Codex self-check passes without a permission prompt",
  async fn() {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    await Deno.mkdir(`${home}/.codex`);
    // The self-check asks the model nothing it must answer well.
    const mock = startMockOpenAI({ rules: [{ when: () => true, reply: text("Nothing new.") }] });
    const node = startWatsInPty(
      ["--data-dir", dir, "node", "--agent", "codex", "--agent-profile", "helper"],
      {
        home,
        env: {
          PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
          CODEX_HOME: `${home}/.codex`,
          WATS_AGENT_EVERY: "0",
          WATS_AGENT_HEARTBEAT: "0",
          WATS_AGENT_CODEX_BASE_URL: `${mock.url}/v1`,
        },
        timeoutMs: SAFETY_MS,
      },
    );
    try {
      // The self-check runs before the banner and the started event.
      await waitForLineNoPrompt(node, started, SAFETY_MS);
      const check = readSelfCheck(codexStateDir(dataPaths(dir).agentDir));
      assert.equal(check?.ok, true, JSON.stringify(check));
    } finally {
      await node.stop();
      await mock.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  ...opts,
  ignore: claude === null,
  name:
    "in a terminal, `wats setup claude` and `wats service install` finish without a permission prompt",
  async fn() {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    const env = {
      PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
      XDG_CONFIG_HOME: `${home}/.config`,
    };
    try {
      const setup = await runWatsInPty(
        ["--data-dir", dir, "setup", "claude", "--about", "Answers Debian questions"],
        { home, env },
      );
      assert.equal(setup.code, 0, setup.output);
      assert.match(setup.output, /added wats in Claude Code/);

      const service = await runWatsInPty(["--data-dir", dir, "service", "install"], {
        home,
        env,
      });
      assert.equal(service.code, 0, service.output);
      assert.ok(
        Deno.statSync(`${home}/.config/systemd/user/wats.service`).isFile,
        service.output,
      );
    } finally {
      await Deno.remove(home, { recursive: true });
      await Deno.remove(dir, { recursive: true });
    }
  },
});
