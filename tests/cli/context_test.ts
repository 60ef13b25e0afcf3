/**
 * The launcher's environment for a command (src/cli/context.ts): a PATH on which npx's
 * `node_modules/.bin` folders around the checkout and relative entries choose no program, and,
 * for the daemon only, the variables its runs may get.
 */

import assert from "node:assert/strict";
import { launchEnv, trustedPath } from "../../src/cli/context.ts";

Deno.test("trustedPath leaves out npx's node_modules/.bin folders around the cwd, npx's cache and relative entries", () => {
  const cwd = "/tmp/wats";
  // entry → kept
  const table: ReadonlyArray<[string, boolean]> = [
    ["/tmp/wats/node_modules/.bin", false],
    ["/tmp/node_modules/.bin", false],
    ["/tmp/node_modules/.bin/", false],
    ["/node_modules/.bin", false],
    ["/root/.npm/_npx/4e1b/node_modules/.bin", false],
    ["/root/.npm/_npx/4e1b/node_modules/deno/bin", false],
    [".", false],
    ["", false],
    ["bin", false],
    ["node_modules/.bin", false],
    // Folders the person put on PATH.
    ["/usr/local/bin", true],
    ["/usr/bin", true],
    ["/home/me/.npm-global/bin", true],
    ["/opt/tools/node_modules/.bin", true],
    ["/tmp/wats/sub/node_modules/.bin", true],
    ["/tmp/watsy/node_modules/.bin", true],
  ];
  for (const [entry, kept] of table) {
    const out = trustedPath(`/a:${entry}:/b`, cwd);
    assert.equal(out.path, kept ? `/a:${entry}:/b` : "/a:/b", JSON.stringify(entry));
    assert.deepEqual(out.dropped, kept ? [] : [entry], JSON.stringify(entry));
  }
  assert.deepEqual(trustedPath("", cwd), { path: "", dropped: [] });
  // The order of what stays is kept.
  assert.equal(
    trustedPath("/tmp/wats/node_modules/.bin:/x:/tmp/node_modules/.bin:/y", cwd).path,
    "/x:/y",
  );
});

Deno.test("the daemon gets its runs' variables beside the filtered copy; other commands do not", () => {
  const env = {
    PATH: "/tmp/w/node_modules/.bin:/usr/bin",
    HOME: "/h",
    ANTHROPIC_API_KEY: "k",
    GH_TOKEN: "gh",
    WATS_AGENT_ACCESS: "workspace",
  };
  const daemon = launchEnv(env, "/tmp/w", true);
  assert.deepEqual(daemon.droppedPath, ["/tmp/w/node_modules/.bin"]);
  assert.equal(daemon.env.PATH, "/usr/bin");
  assert.equal(daemon.env.GH_TOKEN, undefined);
  assert.equal(daemon.env.ANTHROPIC_API_KEY, undefined);
  assert.deepEqual(daemon.agentEnv, { PATH: "/usr/bin", HOME: "/h", ANTHROPIC_API_KEY: "k" });
  const status = launchEnv(env, "/tmp/w", false);
  assert.equal(status.agentEnv, undefined);
  assert.equal(status.env.WATS_AGENT_ACCESS, "workspace");
});
