/**
 * The dashboard's own posts reach a real daemon through the MCP tools: a new
 * ask through `ask`, and every reply kind its thread page offers through
 * `post` with that kind (issue 30 merged the per-kind tools).
 */

import assert from "node:assert/strict";
import { startWats, tempDataDir } from "../support/cli.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { DaemonSource } from "../../src/ui/source.ts";
import { REPLY_KINDS } from "../../src/ui/compose.ts";

Deno.test({
  name: "the dashboard posts an ask and each reply kind of its menu through a real daemon",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = tempDataDir();
    const paths = dataPaths(dir);
    const node = startWats(["--data-dir", dir, "node", "--agent", "none"]);
    const source = new DaemonSource(paths);
    try {
      await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
      const asked = await source.post("ask", { title: "Logs", text: "logrotate or journald?" });
      const ask = asked.match(/^Posted ask ([0-9a-f]{64})\./)?.[1];
      assert.ok(ask !== undefined, asked);
      for (const kind of REPLY_KINDS) {
        const r = await source.post(kind, { parent: ask, text: `a ${kind}` });
        assert.match(r, new RegExp(`^Posted ${kind} [0-9a-f]{64}\\. Thread: ${ask}\\.`), r);
      }
    } finally {
      await source.close();
      await node.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
