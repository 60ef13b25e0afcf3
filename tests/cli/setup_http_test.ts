/**
 * `wats setup claude --http` / `wats setup codex --http`: the hosts get the node's MCP over HTTP
 * endpoint with a new token of the person's profile, instead of the stdio bridge; with
 * mcp.listen off there is nothing to register and nothing is written.
 */

import assert from "node:assert/strict";
import { parse } from "smol-toml";
import { runWats, tempDataDir } from "../support/cli.ts";
import { CLIS_DIR, requireCli } from "../support/clis.ts";
import { readTokens, tokenHash } from "../../src/mcp/http_tokens.ts";
import { dataPaths } from "../../src/config/paths.ts";

const claude = requireCli("claude");
const codex = requireCli("codex");
const env = { PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`, USER: "maria" };

Deno.test({
  name: "`wats setup claude --http` registers the endpoint with a token of the person's profile",
  ignore: claude === null,
  async fn() {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    try {
      const off = await runWats(["--data-dir", dir, "setup", "claude", "--mcp", "--http"], {
        home,
        env,
      });
      assert.equal(off.code, 1);
      assert.match(off.stderr, /mcp\.listen is off.*wats config set mcp\.listen/);
      await Deno.writeTextFile(`${dir}/config.toml`, '[mcp]\nlisten = "127.0.0.1:7449"\n');
      const r = await runWats(["--data-dir", dir, "setup", "claude", "--mcp", "--http"], {
        home,
        env,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /added wats in Claude Code \(user scope\): http:\/\/127\.0\.0\.1:7449\/mcp/,
      );
      const entry = JSON.parse(await Deno.readTextFile(`${home}/.claude.json`)).mcpServers.wats;
      assert.equal(entry.type, "http");
      assert.equal(entry.url, "http://127.0.0.1:7449/mcp");
      const token = String(entry.headers.Authorization).replace(/^Bearer /, "");
      const [made] = await readTokens(dataPaths(dir).mcpTokens);
      assert.equal(made?.profile, "maria");
      assert.equal(made?.sha256, await tokenHash(token));
      assert.equal(made?.label, "claude code");
    } finally {
      await Deno.remove(home, { recursive: true });
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "`wats setup codex --http` writes url and the bearer header, and drops the command",
  ignore: codex === null,
  async fn() {
    const dir = tempDataDir();
    const home = await Deno.makeTempDir({ prefix: "wats-home-" });
    try {
      await Deno.mkdir(`${home}/.codex`);
      await Deno.writeTextFile(`${home}/.codex/config.toml`, '# mine\nmodel = "o3"\n');
      await Deno.writeTextFile(`${dir}/config.toml`, '[mcp]\nlisten = "127.0.0.1:7449"\n');
      const stdio = await runWats(["--data-dir", dir, "setup", "codex", "--mcp"], { home, env });
      assert.equal(stdio.code, 0, stdio.stderr);
      const r = await runWats(["--data-dir", dir, "setup", "codex", "--mcp", "--http"], {
        home,
        env,
      });
      assert.equal(r.code, 0, r.stderr);
      const text = await Deno.readTextFile(`${home}/.codex/config.toml`);
      assert.match(text, /^# mine\nmodel = "o3"\n/);
      const wats = (parse(text) as { mcp_servers: { wats: Record<string, unknown> } })
        .mcp_servers.wats;
      assert.equal(wats.url, "http://127.0.0.1:7449/mcp");
      assert.equal(wats.command, undefined);
      assert.equal(wats.args, undefined);
      const header = (wats.http_headers as Record<string, string>).Authorization!;
      const [made] = await readTokens(dataPaths(dir).mcpTokens);
      assert.equal(made?.sha256, await tokenHash(header.replace(/^Bearer /, "")));
    } finally {
      await Deno.remove(home, { recursive: true });
      await Deno.remove(dir, { recursive: true });
    }
  },
});
