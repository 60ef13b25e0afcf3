/**
 * `wats setup codex` (issue 9): registers wats in Codex's own config.toml, checked with the real
 * Codex CLI (`codex mcp list`), and sets `agent.runtime = "codex"`; idempotent, saying what
 * changed, keeping every other byte of Codex's file. And `wats setup openclaw`, whose entry
 * speaks as the agent profile.
 */

import assert from "node:assert/strict";
import { parse } from "smol-toml";
import { runWats, tempDataDir } from "../support/cli.ts";
import { CLIS_DIR, requireCli } from "../support/clis.ts";
import { setupCommand } from "../../src/cli/setup.ts";
import type { CommandContext } from "../../src/cli/context.ts";
import { dataPaths } from "../../src/config/paths.ts";

const codex = requireCli("codex");
/** A PATH with the pinned `codex` on it: `wats setup codex` checks it is installed. */
const env = { PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}` };

/** A Codex config.toml of a user: comments, odd spacing, tables before and after. */
const USERS_CODEX_CONFIG = `# my Codex settings
model   = "gpt-5.5"   # the plain one

[profiles.work]
model = "o3"

[mcp_servers.other]
command = "other-server"
args = ["--flag"]
`;

/** `codex mcp list` in `home`, as the user would run it. */
async function codexMcpList(home: string): Promise<string> {
  const [cmd, ...args] = codex!;
  assert.ok(cmd, "the codex CLI has a command");
  const out = await new Deno.Command(cmd, {
    args: [...args, "mcp", "list"],
    env: { HOME: home, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, dec.decode(out.stderr));
  return dec.decode(out.stdout);
}

Deno.test({
  name:
    "`wats setup codex` registers wats where Codex sees it and sets agent.runtime = codex; a second run changes nothing; the user's file is kept byte for byte",
  ignore: codex === null,
  async fn() {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    const file = `${home}/.codex/config.toml`;
    try {
      await Deno.mkdir(`${home}/.codex`);
      await Deno.writeTextFile(file, USERS_CODEX_CONFIG);
      const first = await runWats(["--data-dir", dir, "setup", "codex"], { home, env });
      assert.equal(first.code, 0, first.stderr);
      assert.match(
        first.stdout,
        /^registered wats in Codex: \[mcp_servers\.wats\] in .*: .* mcp --profile /m,
      );
      assert.match(first.stdout, /^set agent\.runtime = codex in .*config\.toml \(was /m);

      const text = await Deno.readTextFile(file);
      // One line added, every other byte as it was.
      const added = text.match(/^mcp_servers\.wats = .*\n/gm) ?? [];
      assert.equal(added.length, 1, text);
      assert.equal(text.replace(added[0], ""), USERS_CODEX_CONFIG);
      const cfg = parse(text) as { mcp_servers: Record<string, { args: string[] }> };
      assert.deepEqual(cfg.mcp_servers.wats!.args.slice(-2), ["--data-dir", dir]);

      const listed = await codexMcpList(home);
      assert.match(listed, /^wats\s+\S+/m, listed);
      assert.match(listed, /mcp --profile/);
      assert.match(listed, /^other\s+other-server/m, "the user's server is still there");

      const wats = await Deno.readTextFile(`${dir}/config.toml`);
      assert.equal((parse(wats) as { agent: { runtime: string } }).agent.runtime, "codex");

      const second = await runWats(["--data-dir", dir, "setup", "codex"], { home, env });
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, /^Codex already has wats \(.*\); nothing changed$/m);
      assert.match(second.stdout, /^agent\.runtime is already codex in .*; nothing changed$/m);
      assert.equal(await Deno.readTextFile(file), text, "nothing changed");
      assert.equal(await Deno.readTextFile(`${dir}/config.toml`), wats);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "`wats setup codex --mcp` leaves agent.runtime alone; `--agent` leaves Codex's file alone",
  ignore: codex === null,
  async fn() {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    try {
      const mcp = await runWats(["--data-dir", dir, "setup", "codex", "--mcp"], { home, env });
      assert.equal(mcp.code, 0, mcp.stderr);
      assert.doesNotMatch(mcp.stdout, /agent\.runtime/);
      const runtime = await runWats(["--data-dir", dir, "config", "get", "agent.runtime"], {
        home,
      });
      assert.equal(runtime.stdout.trim(), "none");

      const home2 = await Deno.makeTempDir({ prefix: "wats-home-" });
      try {
        const agent = await runWats(["--data-dir", dir, "setup", "codex", "--agent"], {
          home: home2,
          env,
        });
        assert.equal(agent.code, 0, agent.stderr);
        assert.match(agent.stdout, /set agent\.runtime = codex/);
        assert.doesNotMatch(agent.stdout, /Codex/);
        await assert.rejects(Deno.stat(`${home2}/.codex`), Deno.errors.NotFound);
      } finally {
        await Deno.remove(home2, { recursive: true });
      }
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test("`wats setup openclaw` prints an entry that speaks as the agent profile, or as --profile", async () => {
  const dir = tempDataDir();
  const env = { USER: "maria" };
  const r = await runWats(["--data-dir", dir, "setup", "openclaw"], { env });
  assert.equal(r.code, 0, r.stderr);
  const entry = JSON.parse(r.stdout);
  const args: string[] = entry.mcp.servers["wats-agent"].args;
  assert.deepEqual(args.slice(-4), ["--profile", "maria-agent", "--data-dir", dir]);
  assert.deepEqual(entry.tools.allow, ["wats-agent__*"]);

  const other = await runWats(["--data-dir", dir, "setup", "openclaw", "--profile", "scout"], {
    env,
  });
  assert.equal(other.code, 0, other.stderr);
  assert.deepEqual(
    JSON.parse(other.stdout).mcp.servers["wats-agent"].args.slice(-4),
    ["--profile", "scout", "--data-dir", dir],
  );

  const wrong = await runWats(["--data-dir", dir, "setup", "codex", "--profile", "x"], { env });
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /--profile is for `wats setup openclaw`/);
});

Deno.test("`wats setup codex` run from a Deno in npx's cache warns, on stderr, that npm may delete the entry's program", async () => {
  const home = await Deno.makeTempDir({ prefix: "wats-home-" });
  const deno = `${home}/.npm/_npx/6a2b9c/node_modules/deno/bin/deno`;
  const ctx: CommandContext = {
    argv: ["codex", "--mcp"],
    words: ["setup"],
    paths: dataPaths(`${home}/data`),
    env: { HOME: home },
    cwd: home,
    os: "linux",
    user: "maria",
    self: [deno, "run", "main.ts"],
    stdinIsTerminal: false,
    stdoutIsTerminal: false,
    verbose: false,
    signal: new AbortController().signal,
  };
  const asked: string[] = [];
  // Only `codex --version` is run: answered as an installed Codex would.
  const run = (program: string, args: string[]) => {
    asked.push([program, ...args].join(" "));
    return Promise.resolve({ code: 0, stdout: "codex-cli 0.171.0\n", stderr: "" });
  };
  const said: string[] = [];
  const { error, log } = console;
  console.error = (...a: unknown[]) => said.push(a.join(" "));
  console.log = () => {};
  try {
    assert.equal(await setupCommand(ctx, run), 0);
  } finally {
    console.error = error;
    console.log = log;
    await Deno.remove(home, { recursive: true });
  }
  assert.deepEqual(asked, ["codex --version"]);
  assert.deepEqual(said, [
    `warning: ${deno} is in npx's cache, which npm may delete, and the Codex entry with it: ` +
    "install Deno (npm i -g deno@2.9.6) or use the compiled wats binary, then run this again",
  ]);
});
