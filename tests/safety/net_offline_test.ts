/**
 * A tool wats runs over what an agent wrote (the work's git upload-pack, src/acp/work_import.ts)
 * runs `offline`: a network namespace of its own, with no relay and no proxy, whatever
 * `sandbox.network` says. Real bubblewrap.
 */

import assert from "node:assert/strict";
import { Sandboxer } from "../../src/safety/sandboxer.ts";
import { modelSocketPath, SandboxNetwork } from "../../src/safety/net_gate.ts";
import { requireTool } from "../support/debian_tools.ts";
import { tempDir } from "../support/rig.ts";
import { AGENTS } from "../../src/runner/runtimes/agents.ts";

const bwrap = requireTool("bwrap");

for (const network of ["model-only", "open"] as const) {
  Deno.test({
    name: `an offline sandbox (sandbox.network = ${network}) reaches no 127.0.0.1 listener ` +
      "and starts no relay",
    ignore: !bwrap,
    async fn() {
      await using dir = tempDir("wats-offline-", "/var/tmp");
      const root = dir.path;
      for (const d of ["home", "data/agent", "work"]) {
        Deno.mkdirSync(`${root}/${d}`, { recursive: true });
      }
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = listener.addr.port;
      let accepted = 0;
      (async () => {
        for await (const c of listener) {
          accepted++;
          c.close();
        }
      })().catch(() => {});
      const self = ["/nonexistent/wats"];
      const sandbox = new Sandboxer({
        agents: AGENTS,
        mode: "required",
        hide: [],
        dataDir: `${root}/data`,
        home: `${root}/home`,
        self,
        network: new SandboxNetwork({
          network,
          mode: "required",
          socket: modelSocketPath(`${root}/data/agent`),
          hosts: [],
          self,
        }),
      });
      try {
        const wrap = await sandbox.prepare({
          what: "git in work w",
          cwd: `${root}/work`,
          env: {},
          writable: [],
          offline: true,
        });
        const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED || echo REFUSED`;
        const w = wrap("bash", ["-c", probe]);
        assert.ok(w.sandboxed);
        assert.ok(!w.args.includes("/nonexistent/wats"), "no relay in front of the tool");
        assert.ok(w.args.includes("--unshare-net"), w.args.join(" "));
        const out = await new Deno.Command(w.program, {
          args: w.args,
          stdout: "piped",
          stderr: "piped",
        })
          .output();
        assert.match(new TextDecoder().decode(out.stdout), /REFUSED/);
        assert.equal(accepted, 0);
      } finally {
        listener.close();
      }
    },
  });
}
