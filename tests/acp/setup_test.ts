import assert from "node:assert/strict";
import { acpLayerFor, sweepNow } from "../../src/acp/setup.ts";
import { IN_DOUBT } from "../../src/contracts/coding_agents.ts";
import { resolveSettings } from "../../src/config/settings.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { ConfigError } from "../../src/errors.ts";
import type { AgentHost } from "../../src/contracts/agent_host.ts";
import type { NodeBudget } from "../../src/contracts/budget.ts";
import { AcpSpendFile } from "../../src/acp/spend.ts";
import { git } from "../../src/acp/worktrees.ts";

/** A runner that only has a budget. */
type AcpBudget = Pick<AgentHost, "budget">;

/** A budget that admits every call, with `over` in place of its parts. */
function budgetOf(over: Partial<NodeBudget> = {}): AcpBudget {
  return {
    budget: {
      blocked: () => undefined,
      addSpend: () => {},
      admitCall: () => ({
        admitted: true,
        hold: {
          spent: () => true,
          settle: () => {},
          heldUsd: 1,
          onStop: () => {},
          park: () => {},
          resume: () => true,
        },
      }),
      afterBudgetReset: () => {},
      ...over,
    },
  };
}

function setup(text: string, dataDir = "/d", budget?: AcpBudget, now?: () => number) {
  const r = resolveSettings({
    fileText: text,
    filePath: "/d/config.toml",
    env: {},
    flags: {},
    user: "alice",
  });
  return () =>
    acpLayerFor({
      acp: r.acp,
      settings: r.values,
      paths: dataPaths(dataDir),
      env: {},
      reserved: ["ask", "status"],
      host: budget && {
        ...budget,
        threadOfRun: () => undefined,
        noteAcp: () => {},
        permissionDecided: () => {},
      },
      now,
    });
}

Deno.test("no enabled harness: no layer, so no harness tool", () => {
  assert.equal(setup("")(), undefined);
  assert.equal(setup('[harnesses.c]\ncommand = "x"\nenabled = false\n')(), undefined);
});

Deno.test("the layer offers the enabled harnesses and the checkouts agent.checkouts allows", () => {
  const layer = setup(
    '[harnesses.c]\ncommand = "x"\n[harnesses.d]\ncommand = "y"\nenabled = false\n' +
      '[checkouts.a]\npath = "/a"\n[checkouts.b]\npath = "/b"\n[agent]\ncheckouts = ["b"]\n',
  )()!.layer;
  assert.deepEqual(layer.harnessNames(), ["c"]);
  assert.deepEqual(layer.checkoutNames(), ["b"]);
});

Deno.test("a harness named like a wats tool, or an unknown agent.checkouts entry, stops the start", () => {
  assert.throws(
    setup('[harnesses.status]\ncommand = "x"\n'),
    (e) =>
      e instanceof ConfigError &&
      /\[harnesses\.status\] is named like the wats tool/.test(e.message),
  );
  assert.throws(
    setup('[harnesses.c]\ncommand = "x"\n[agent]\ncheckouts = ["nope"]\n'),
    (e) =>
      e instanceof ConfigError &&
      /agent\.checkouts names "nope", but config\.toml has no/.test(e.message),
  );
});

Deno.test("a call to a checkout the agent may not use is refused before anything starts", async () => {
  const layer = setup(
    '[harnesses.c]\ncommand = "/nonexistent"\n[checkouts.a]\npath = "/a"\n[checkouts.b]\npath = "/b"\n' +
      '[agent]\ncheckouts = ["b"]\n',
  )()!.layer;
  await assert.rejects(
    () =>
      layer.call("c", { agent: "x", thread: "_", callId: "1" }, {
        task: "t",
        checkout: "a",
        work: "w",
      }),
    /checkout "a" is not one this agent may use; use one of: b/,
  );
  await assert.rejects(
    () =>
      layer.call("c", { agent: "x", thread: "_", callId: "1" }, {
        task: "t",
        checkout: "b",
        work: "../w",
      }),
    /work "..\/w" is not a usable name/,
  );
});

const ONE = '[harnesses.c]\ncommand = "/nonexistent"\n[checkouts.a]\npath = "/a"\n';

Deno.test("a reached budget refuses new calls before anything starts", async () => {
  const spent = "the daily budget is spent ($2.00 of agent.max_usd_per_day = $2.00)";
  const budget = budgetOf({
    blocked: () => spent,
    admitCall: () => ({ admitted: false, reason: spent }),
  });
  const layer = setup(ONE, "/d", budget)()!.layer;
  await assert.rejects(
    () =>
      layer.call("c", { agent: "x", thread: "_", callId: "1" }, {
        task: "t",
        checkout: "a",
        work: "w",
      }),
    /^CallError: no coding agent call now: the daily budget is spent/,
  );
});

Deno.test("this month's earlier calls count in the budget again after a restart", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const now = Date.UTC(2026, 10, 30, 12);
    const file = new AcpSpendFile(dataPaths(dir).agentDir);
    file.add({ at: Date.UTC(2026, 9, 31, 23), usd: 5, harness: "c", call: "old" });
    file.add({ at: Date.UTC(2026, 10, 2), usd: 0.25, harness: "c", call: "a" });
    // A new month's first line drops last month's.
    assert.equal(Deno.readTextFileSync(file.path).split("\n").filter((l) => l).length, 1);
    file.add({ at: Date.UTC(2026, 10, 30, 1), usd: 0.5, harness: "c", call: "b" });
    const added: [number, number | undefined][] = [];
    const budget = budgetOf({ addSpend: (at, usd) => void added.push([at, usd]) });
    setup(ONE + '[agent]\nsweep = "0"\n', dir, budget, () => now)()!.start();
    assert.deepEqual(added, [[Date.UTC(2026, 10, 2), 0.25], [Date.UTC(2026, 10, 30, 1), 0.5]]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("`wats agent sweep` on a node without coding agents says why nothing happens", async () => {
  assert.match(await sweepNow(undefined), /^no coding agents: config\.toml has no enabled/);
});

Deno.test("at start, a checkout that is not a repository with a commit stops the daemon, named", async () => {
  const dir = Deno.realPathSync(Deno.makeTempDirSync());
  try {
    const repo = `${dir}/repo`;
    Deno.mkdirSync(repo);
    await git(["init", "-q"], repo);
    const text = `[harnesses.c]\ncommand = "x"\n[checkouts.empty]\npath = "${repo}"\n` +
      `[checkouts.gone]\npath = "${dir}/gone"\n`;
    await assert.rejects(
      () => setup(text, dir)()!.check(),
      (e) =>
        e instanceof ConfigError &&
        /checkout empty: .*repo is not a git repository with at least one commit; fix \[checkouts\.empty\] path in config\.toml; checkout gone: /
          .test(e.message),
    );
    Deno.writeTextFileSync(`${repo}/a`, "a\n");
    await git(["add", "a"], repo);
    await git(["-c", "user.email=t@example.org", "-c", "user.name=T", "commit", "-qm", "a"], repo);
    await setup(`[harnesses.c]\ncommand = "x"\n[checkouts.app]\npath = "${repo}"\n`, dir)()!
      .check();
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("agent.sweep = infinity (or 0): no sweep at start or later; a duration sweeps at start", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const sweeps = async (value: string) => {
      const r = resolveSettings({
        fileText: `${ONE}[agent]\nsweep = ${value}\n`,
        filePath: `${dir}/config.toml`,
        env: {},
        flags: {},
        user: "alice",
      });
      let n = 0;
      const acp = acpLayerFor({
        acp: r.acp,
        settings: r.values,
        paths: dataPaths(dir),
        env: {},
        reserved: [],
        onSweep: () => n++,
      })!;
      acp.start();
      // close() waits for a sweep under way: the count is final after it.
      await acp.close();
      return n;
    };
    assert.equal(await sweeps('"infinity"'), 0);
    assert.equal(await sweeps("0"), 0);
    assert.equal(await sweeps('"24h"'), 1);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a person's decision reaches the runner (its host) as a wake about the work's thread", () => {
  const woken: Array<[string, string | undefined]> = [];
  const host: AgentHost = {
    ...budgetOf(),
    threadOfRun: () => undefined,
    noteAcp: () => {},
    permissionDecided: (reason, thread) => woken.push([reason, thread]),
  };
  const r = resolveSettings({
    fileText: ONE,
    filePath: "/d/config.toml",
    env: {},
    flags: {},
    user: "a",
  });
  const root = Deno.makeTempDirSync();
  try {
    const acp = acpLayerFor({
      acp: r.acp,
      settings: r.values,
      paths: dataPaths(root),
      env: {},
      reserved: [],
      host,
    })!;
    const ask = {
      request_id: "c1",
      harness: "c",
      kind: IN_DOUBT,
      locations: [],
      worktree: `${root}/gone`,
      checkout: "a",
      work: "w",
      agent: "x",
      thread: "t1",
      task: "t",
      reason: "in doubt",
    };
    // A rejected call in doubt sends nothing to any agent; the runner is told all the same.
    acp.layer.answer("p1", false, ask);
    acp.layer.answer("p2", false, { ...ask, thread: "_" });
    assert.deepEqual(woken, [
      ["permission decided: c/in_doubt on work w was rejected", "t1"],
      ["permission decided: c/in_doubt on work w was rejected", undefined],
    ]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
