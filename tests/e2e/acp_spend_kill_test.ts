/**
 * Spend a coding agent call reports mid-way survives a SIGKILL of its daemon
 * (docs/decisions/budget_holds.md, "Settling"): a real daemon calls a real
 * agent process (tests/support/metered_acp_main.ts) that reports $0.30 and
 * works on; the daemon is killed; the next start counts the $0.30, once.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { dataPaths } from "../../src/config/paths.ts";
import { gitRepo, nodeRig, tempDir } from "../support/rig.ts";
import { waitFor } from "../support/swarm.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const AGENT = fileURLToPath(new URL("../support/metered_acp_main.ts", import.meta.url));

function config(repo: string): string {
  return [
    "[agent]",
    "max_usd_per_day = 1",
    "",
    "[sandbox]",
    // The agent is a test program in this checkout; the sandbox is not what is tested here.
    'mode = "off"',
    "",
    "[harnesses.meter]",
    `command = ${JSON.stringify(Deno.execPath())}`,
    `args = ["run", "--no-config", "--no-lock", "--allow-read", ${JSON.stringify(AGENT)}, "0.3"]`,
    "",
    "[checkouts.app]",
    `path = "${repo}"`,
    'base = "main"',
    "",
  ].join("\n");
}

/** What the spend file holds, one object a line. */
function lines(path: string): Array<{ usd?: number; call: string }> {
  try {
    return Deno.readTextFileSync(path).split("\n").filter((l) => l !== "").map((l) =>
      JSON.parse(l)
    );
  } catch {
    return [];
  }
}

Deno.test({
  name: "spend a call reported before its daemon was SIGKILLed counts in the budget after the " +
    "restart, once",
  ...opts,
  async fn() {
    await using dir = tempDir("wats-spend-kill-", "/var/tmp");
    const data = `${dir.path}/data`;
    const home = `${dir.path}/home`;
    Deno.mkdirSync(data, { recursive: true });
    Deno.mkdirSync(home, { recursive: true });
    const repo = await gitRepo(`${dir.path}/repo`, { identity: true });
    Deno.writeTextFileSync(`${data}/config.toml`, config(repo));
    const agentDir = dataPaths(data).agentDir;
    const openDir = `${agentDir}/acp_spend_open`;
    const notes = () => {
      try {
        return [...Deno.readDirSync(openDir)].filter((e) => e.name.endsWith(".json"))
          .map((e) => JSON.parse(Deno.readTextFileSync(`${openDir}/${e.name}`)));
      } catch {
        return [];
      }
    };
    {
      await using rig = await nodeRig({ dataDir: data, home });
      const alice = await rig.mcp("alice", home);
      // The call does not end: the agent works on after its reply.
      const pending = alice.callTool({
        name: "meter",
        arguments: { task: "TASK: work on", checkout: "app", work: "w" },
      }).catch(() => {});
      await waitFor("the call's reported spend noted", () => notes()[0]?.usd === 0.3, 120_000);
      assert.deepEqual(lines(`${agentDir}/acp_spend.jsonl`), [], "no line before the call ends");
      rig.node.process.kill("SIGKILL");
      await rig.node.stop();
      void pending;
    }
    await using rig = await nodeRig({ dataDir: data, home, retryRefusedMs: 30_000 });
    const status = await rig.wats(["status"]);
    assert.match(
      status.stdout,
      /budget today: \$0\.30 of \$1\.00 spent/,
      status.stdout + status.stderr,
    );
    // The note became the call's one line, and is gone: a later start counts it once.
    const spend = lines(`${agentDir}/acp_spend.jsonl`);
    assert.equal(spend.length, 1, JSON.stringify(spend));
    assert.equal(spend[0]!.usd, 0.3);
    assert.deepEqual(notes(), []);
  },
});
