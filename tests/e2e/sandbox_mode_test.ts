/**
 * `sandbox.mode` at daemon start (issue 21 item 3), on a machine without
 * bubblewrap, simulated by a PATH that has none: `required` refuses in one
 * line that says what to install; `auto` starts, and the banner and `wats
 * status` warn that the agent runs unsandboxed.
 */

import assert from "node:assert/strict";
import { runWats } from "../support/cli.ts";
import { nodeRig, tempDir } from "../support/rig.ts";

/** A data dir, a workspace and a PATH with git but no bwrap; removed when its scope ends. */
function fixture() {
  const dir = tempDir("wats-sbm-");
  const root = dir.path;
  const bin = `${root}/bin`;
  Deno.mkdirSync(bin);
  Deno.symlinkSync("/usr/bin/git", `${bin}/git`);
  Deno.mkdirSync(`${root}/work`);
  const env = {
    PATH: bin,
    WATS_AGENT_ACCESS: "workspace",
    WATS_AGENT_WORKDIR: `${root}/work`,
    WATS_AGENT_TOOLS: "Bash",
  };
  return {
    root,
    data: `${root}/data`,
    home: `${root}/home`,
    env,
    [Symbol.asyncDispose]: dir[Symbol.asyncDispose],
  };
}

Deno.test('sandbox.mode = "required" without bubblewrap: the daemon refuses to start, in one line', async () => {
  await using f = fixture();
  const r = await runWats(["--data-dir", f.data, "node", "--agent", "claude"], { env: f.env });
  assert.notEqual(r.code, 0, r.stderr);
  const errors = r.stderr.split("\n").filter((l) => l.startsWith("error:"));
  assert.deepEqual(errors, [
    'error: starting the agents is refused: sandbox.mode = "required" and the OS sandbox ' +
    "cannot run (bwrap is not on PATH); install bubblewrap (Debian/Ubuntu: apt-get install " +
    "bubblewrap), or accept running unsandboxed with `wats config set sandbox.mode auto`",
  ], r.stderr);
});

Deno.test({
  name: 'sandbox.mode = "auto" without bubblewrap: the daemon starts, and the banner and ' +
    "`wats status` warn that the agent runs unsandboxed",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using f = fixture();
    Deno.mkdirSync(f.home);
    await using rig = await nodeRig({
      dataDir: f.data,
      home: f.home,
      args: ["--agent", "claude"],
      env: { ...f.env, WATS_SANDBOX_MODE: "auto" },
    });
    const node = rig.node;
    const warning = "warning: unsandboxed (sandbox.mode = auto): bwrap is not on PATH";
    assert.ok(node.stderr().includes(warning), node.stderr());
    const status = await runWats(["--data-dir", f.data, "status"], { home: f.home });
    assert.equal(status.code, 0, status.stderr);
    assert.ok(
      status.stdout.split("\n").includes(`sandbox: agent runs (claude): ${warning}`),
      status.stdout,
    );
  },
});
