/**
 * `wats setup` registers wats in the real Claude Code CLI and in Codex's
 * config.toml, and sets the agent runtime.
 */

import assert from "node:assert/strict";
import { parse } from "smol-toml";
import { denoDir, runWats, tempDataDir } from "../support/cli.ts";
import { CLIS_DIR, requireCli } from "../support/clis.ts";

const claude = requireCli("claude");
const codex = requireCli("codex");
/** A PATH with the pinned CLIs (`claude`, `codex`) on it. */
const CLIS_ON_PATH = { PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}` };

Deno.test({
  name:
    "`wats setup claude` registers `wats mcp --profile <you>` in Claude Code and sets agent.runtime",
  ignore: claude === null,
  sanitizeResources: false,
  async fn() {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    const env = { PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`, USER: "maria" };
    try {
      const r = await runWats([
        "--data-dir",
        dir,
        "setup",
        "claude",
        "--about",
        "Answers Debian questions",
      ], {
        home,
        env,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /added wats in Claude Code \(user scope\)/);
      const again = await runWats(["--data-dir", dir, "setup", "claude", "--mcp"], { home, env });
      assert.match(again.stdout, /already has wats/);
      const got = await new Deno.Command(`${CLIS_DIR}/node_modules/.bin/claude`, {
        args: ["mcp", "get", "wats"],
        env: {
          HOME: home,
          PATH: env.PATH,
          DENO_DIR: denoDir(),
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        },
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const shown = new TextDecoder().decode(got.stdout);
      assert.match(shown, new RegExp(`Args: .*main\\.ts mcp --profile maria --data-dir ${dir}`));
      const runtime = await runWats(["--data-dir", dir, "config", "get", "agent.runtime"], {
        home,
      });
      assert.equal(runtime.stdout.trim(), "claude");
      const about = await runWats(["--data-dir", dir, "config", "get", "agent.about"], { home });
      assert.equal(about.stdout.trim(), "Answers Debian questions");
    } finally {
      // `claude mcp get` checks the server's health: that starts a background node.
      const pid = Number((await Deno.readTextFile(`${dir}/daemon.lock`).catch(() => "0")).trim());
      if (pid > 0) Deno.kill(pid, "SIGTERM");
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "`wats setup codex` adds [mcp_servers.wats] to Codex's config.toml and keeps what was there",
  ignore: codex === null,
  async fn() {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    try {
      await Deno.mkdir(`${home}/.codex`);
      await Deno.writeTextFile(`${home}/.codex/config.toml`, '# mine\nmodel = "o3"\n');
      const r = await runWats(["--data-dir", dir, "setup", "codex"], { home, env: CLIS_ON_PATH });
      assert.equal(r.code, 0, r.stderr);
      const text = await Deno.readTextFile(`${home}/.codex/config.toml`);
      assert.ok(text.startsWith('# mine\nmodel = "o3"\n'), text);
      const cfg = parse(text) as { mcp_servers: { wats: { command: string; args: string[] } } };
      assert.deepEqual(cfg.mcp_servers.wats.args.slice(-5), [
        "mcp",
        "--profile",
        cfg.mcp_servers.wats.args.at(-3),
        "--data-dir",
        dir,
      ]);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "`wats setup codex` creates Codex's folder when Codex has never run",
  ignore: codex === null,
  async fn() {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    try {
      const r = await runWats(["--data-dir", dir, "setup", "codex"], { home, env: CLIS_ON_PATH });
      assert.equal(r.code, 0, r.stderr);
      assert.match(await Deno.readTextFile(`${home}/.codex/config.toml`), /mcp_servers/);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

for (
  const [host, name, pkg] of [
    ["claude", "Claude Code", "@anthropic-ai/claude-code"],
    ["codex", "Codex", "@openai/codex"],
  ] as const
) {
  Deno.test(`\`wats setup ${host}\` without ${host} on PATH says how to install it and writes nothing`, async () => {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    try {
      // A PATH where no CLI can be: an empty folder.
      const r = await runWats(["--data-dir", dir, "setup", host], { home, env: { PATH: home } });
      assert.equal(r.stdout, "");
      assert.equal(
        r.stderr,
        `error: ${host} is not on PATH: install ${name} (npm i -g ${pkg}), then run wats setup ${host} again\n`,
      );
      assert.equal(r.code, 1);
      await assert.rejects(Deno.stat(`${dir}/config.toml`), Deno.errors.NotFound);
      await assert.rejects(Deno.stat(`${home}/.codex`), Deno.errors.NotFound);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  });
}

Deno.test("`wats setup` without a host explains what to name", async () => {
  const r = await runWats(["setup"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /name one MCP host: claude, codex or openclaw/);
});
