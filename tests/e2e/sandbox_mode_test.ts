/**
 * `sandbox.mode` at daemon start (issue 21 item 3), on a machine without
 * bubblewrap, simulated by a PATH that has none: `required` refuses in one
 * line that says what to install; `auto` starts, and the banner and `wats
 * status` warn that the agent runs unsandboxed.
 */

import assert from "node:assert/strict";
import { runWats, startWats } from "../support/cli.ts";

/** A data dir, a workspace and a PATH with git but no bwrap. */
function fixture() {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-sbm-" }));
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
  return { root, data: `${root}/data`, home: `${root}/home`, env };
}

Deno.test('sandbox.mode = "required" without bubblewrap: the daemon refuses to start, in one line', async () => {
  const f = fixture();
  try {
    const r = await runWats(["--data-dir", f.data, "node", "--agent", "claude"], { env: f.env });
    assert.notEqual(r.code, 0, r.stderr);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("error:"));
    assert.deepEqual(errors, [
      'error: starting the agents is refused: sandbox.mode = "required" and the OS sandbox ' +
      "cannot run (bwrap is not on PATH); install bubblewrap (Debian/Ubuntu: apt-get install " +
      "bubblewrap), or accept running unsandboxed with `wats config set sandbox.mode auto`",
    ], r.stderr);
  } finally {
    Deno.removeSync(f.root, { recursive: true });
  }
});

Deno.test({
  name: 'sandbox.mode = "auto" without bubblewrap: the daemon starts, and the banner and ' +
    "`wats status` warn that the agent runs unsandboxed",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const f = fixture();
    Deno.mkdirSync(f.home);
    const node = startWats(["--data-dir", f.data, "node", "--agent", "claude"], {
      home: f.home,
      env: { ...f.env, WATS_SANDBOX_MODE: "auto" },
    });
    try {
      await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
      const warning = "warning: unsandboxed (sandbox.mode = auto): bwrap is not on PATH";
      assert.ok(node.stderr().includes(warning), node.stderr());
      const status = await runWats(["--data-dir", f.data, "status"], { home: f.home });
      assert.equal(status.code, 0, status.stderr);
      assert.ok(
        status.stdout.split("\n").includes(`sandbox: agent runs (claude): ${warning}`),
        status.stdout,
      );
    } finally {
      await node.stop();
      Deno.removeSync(f.root, { recursive: true });
    }
  },
});
