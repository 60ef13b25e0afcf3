/**
 * Every surface shows the same spend (issue 29, item 4): a real daemon with a
 * heartbeat agent (Claude Code against the answering mock) and a coding agent
 * (`claude-agent-acp` against its own mock), two heartbeat runs and one
 * coding-agent call, then `wats agent runs`, `wats status`, `wats work show`, the dashboard's
 * overview, runs page, work page and chart data, each read as a person reads
 * it, must show the sum of what the runs index and the call's spend file hold.
 *
 * The fixture lives under /var/tmp: the coding agent's sandbox has a private /tmp.
 */

import assert from "node:assert/strict";
import { requireCli } from "../support/clis.ts";
import { requireTool } from "../support/debian_tools.ts";
import { promptContains, startMockAnthropic, text } from "../support/mock_anthropic.ts";
import { commitFile, step, worksConfig } from "../support/works_rig.ts";
import { answeringMock, call, idIn } from "../support/swarm.ts";
import { gitRepo, jsonLines, nodeRig, tempDir } from "../support/rig.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { Gate } from "../../src/ui/security.ts";
import { uiHandler } from "../../src/ui/server.ts";
import { DaemonSource } from "../../src/ui/source.ts";
import { usd } from "../../src/money.ts";

const claude = requireCli("claude");
const acp = requireCli("claude-acp");
const bwrap = requireTool("bwrap");

const HOST = "127.0.0.1:9";

/** The text of the element `id` in `html`, tags removed. */
function textOf(html: string, id: string, closing = "p|b|span|script|a"): string {
  const m = html.match(new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(?:${closing})>`));
  assert.ok(m, `no #${id} in the page`);
  return m[1]!.replace(/<[^>]+>/g, "").replace(/&#34;/g, '"').trim();
}

Deno.test({
  name:
    "after heartbeat runs and a coding-agent call, wats agent runs, wats status, wats work show, the overview, the runs page, the work page and the charts show the same spend",
  ignore: claude === null || acp === null || !bwrap,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using dir = tempDir("wats-figures-", "/var/tmp");
    const data = `${dir.path}/data`;
    const home = `${dir.path}/home`;
    Deno.mkdirSync(`${data}/worktrees`, { recursive: true });
    Deno.mkdirSync(`${home}/.claude`, { recursive: true });
    const repo = await gitRepo(`${dir.path}/repo`, { identity: true });
    await using heartbeat = answeringMock();
    await using coding = startMockAnthropic({
      rules: [{
        when: promptContains("TASK-1"),
        reply: (r) => step(r) === 0 ? commitFile("a.txt", "one", "Add a") : text("Added a.txt."),
      }],
    });
    Deno.writeTextFileSync(
      `${data}/config.toml`,
      worksConfig({ acp: acp!, mockUrl: coding.url, home, repo }),
    );
    await using rig = await nodeRig({
      dataDir: data,
      home,
      agent: { mock: heartbeat },
      env: { IS_SANDBOX: "1" },
    });
    const alice = await rig.mcp("alice", home);

    // Two heartbeat runs, one at a time, and one coding-agent call.
    for (const title of ["Logs", "Disks"]) {
      idIn(await call(alice, "ask", { title, text: `${title}: which tool?` }));
      const ended = await rig.waitEvent("run_ended");
      assert.equal(ended.status, "ok", rig.node.stderr());
    }
    const coded = await alice.callTool({
      name: "claude",
      arguments: { task: "TASK-1: add a.txt", checkout: "app", work: "feat" },
    });
    assert.ok(!coded.isError, JSON.stringify(coded.content));

    // The truth, read from the files the figures come from.
    const paths = dataPaths(data);
    const runs = jsonLines(paths.runsIndex);
    assert.equal(runs.length, 2);
    const runsUsd = runs.reduce((s, r) => s + Number(r.cost_usd ?? 0), 0);
    const calls = jsonLines(`${paths.agentDir}/acp_spend.jsonl`);
    assert.equal(calls.length, 1, "the call reported its cost");
    const callsUsd = Number(calls[0]!.usd);
    assert.ok(runsUsd > 0 && callsUsd > 0, `${runsUsd} ${callsUsd}`);
    const total = usd(runsUsd + callsUsd);

    // The CLI.
    const table = await rig.wats(["agent", "runs"]);
    assert.equal(table.code, 0, table.stderr);
    const cli = table.stdout.match(/spend today (\$[\d.]+) of \S+ · this month (\$[\d.]+) of/);
    assert.ok(cli, table.stdout);
    assert.deepEqual([cli[1], cli[2]], [total, total]);
    assert.match(
      table.stdout,
      new RegExp(
        `of which heartbeat runs \\${usd(runsUsd)} and coding-agent calls \\${usd(callsUsd)} today`,
      ),
    );
    const status = await rig.wats(["status"]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, new RegExp(`budget today: \\${total} of`), status.stdout);
    assert.match(status.stdout, new RegExp(`budget this month: \\${total} of`));
    assert.match(status.stdout, /drafts held for review: 0; permission requests waiting: 0/);
    const shown = await rig.wats(["work", "show", "app~alice~_~feat"]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      new RegExp(`^spend {5}\\${usd(callsUsd)} this month \\(its calls\\)$`, "m"),
    );
    const shownJson = await rig.wats(["work", "show", "app~alice~_~feat", "--json"]);
    assert.equal(usd(JSON.parse(shownJson.stdout).spentUsd), usd(callsUsd));

    // The dashboard, through its real handler and the daemon's socket.
    const gate = new Gate(HOST);
    const source = new DaemonSource(paths);
    const handler = uiHandler({ gate, source });
    try {
      const login = await handler(
        new Request(`http://${HOST}/login?token=${gate.token}`, { headers: { host: HOST } }),
      );
      const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
      const base = login.headers.get("location")!.replace(/\/$/, "");
      const get = async (path: string) => {
        const r = await handler(
          new Request(`http://${HOST}${base}${path}`, { headers: { host: HOST, cookie } }),
        );
        assert.equal(r.status, 200, path);
        return await r.text();
      };
      const overview = await get("/");
      assert.match(textOf(overview, "budget"), new RegExp(`^spend today \\${total} of`));
      assert.equal(textOf(overview, "spend-today"), total);
      assert.equal(textOf(overview, "spend-month"), total);
      assert.match(
        textOf(overview, "spend", "p"),
        new RegExp(`heartbeat runs \\${usd(runsUsd)}, coding-agent calls \\${usd(callsUsd)}\\)`),
      );
      assert.equal(textOf(overview, "held-drafts"), "0");
      assert.equal(textOf(overview, "held-requests"), "0");
      const chart = JSON.parse(textOf(overview, "chart-data"));
      assert.equal(usd(chart.days.usd.at(-1)), total, "today's bar");
      assert.equal(usd(chart.days.usd.reduce((a: number, b: number) => a + b, 0)), total);
      assert.equal(chart.days.runs.at(-1), 2, "a call is no run");

      const runsPage = await get("/runs");
      assert.equal(textOf(runsPage, "spend-today"), total);
      assert.equal(textOf(runsPage, "spend-month"), total);

      const work = await get("/works/app~alice~_~feat");
      assert.equal(textOf(work, "work-spend"), usd(callsUsd));
    } finally {
      await source.close();
    }
  },
});
