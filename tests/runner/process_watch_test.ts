/**
 * Watching a run's processes (src/runner/process_watch.ts) and the Codex rule
 * (src/runner/runtimes/codex/harness.ts `codexProcessRule`), on the process tree a
 * real Codex 0.171 run showed (`ps -e -o pid,ppid,pgid,args`) and on real processes.
 */

import assert from "node:assert/strict";
import { listProcesses, type ProcessRow, strayProcesses } from "../../src/runner/process_watch.ts";
import { codexProcessRule } from "../../src/runner/runtimes/codex/harness.ts";
import type { HarnessCommand, RunContext } from "../../src/runner/harness.ts";
import { spawnProcessGroup } from "../../src/runner/spawn.ts";

const ARGS = ["exec", "--json", "-c", 'mcp_servers.wats.args=["mcp"]', "-"];
const cmd: HarnessCommand = {
  program: "codex",
  args: ARGS,
  env: {},
  cwd: "/d/agent/run",
  stdin: "",
  files: [],
};
const ctx = {
  agentProfile: "helper",
  dataDir: "/d",
  selfCommand: { command: "/usr/bin/deno", args: ["run", "-A", "/src/main.ts"] },
} as RunContext;
const rule = codexProcessRule(cmd, ctx);
const own = ARGS.join(" ");

/** A locked run as measured: launcher, native codex, its system probe, wats mcp and its node. */
const LOCKED: ProcessRow[] = [
  { pid: 100, ppid: 50, pgid: 100, args: `node /x/@openai/codex/bin/codex.js ${own}` },
  { pid: 101, ppid: 100, pgid: 100, args: `/x/bin/codex ${own}` },
  { pid: 102, ppid: 101, pgid: 100, args: "/bin/sh /usr/bin/lsb_release -a" },
  { pid: 103, ppid: 102, pgid: 100, args: "getopt --name lsb_release -o hvidrcas -- -a" },
  {
    pid: 104,
    ppid: 101,
    pgid: 104,
    args: "/usr/bin/deno run -A /src/main.ts mcp --profile helper --data-dir /d",
  },
  { pid: 105, ppid: 104, pgid: 105, args: "/usr/bin/deno run -A /src/main.ts node --agent none" },
  { pid: 7, ppid: 1, pgid: 7, args: "sleep 60" },
];

Deno.test("a locked Codex run's own processes are not stray, and nothing outside the run is looked at", () => {
  assert.deepEqual(strayProcesses(LOCKED, 100, rule), []);
});

Deno.test("a shell command Codex starts is stray, though it left the run's process group", () => {
  const rows: ProcessRow[] = [
    ...LOCKED,
    {
      pid: 110,
      ppid: 101,
      pgid: 110,
      args: "bwrap --as-pid-1 --new-session -- /x/sandbox -- sleep",
    },
    { pid: 111, ppid: 110, pgid: 111, args: "/x/arg0/codex-linux-sandbox --sandbox-policy-cwd /d" },
    { pid: 112, ppid: 111, pgid: 111, args: "sleep 60" },
  ];
  assert.deepEqual(strayProcesses(rows, 100, rule).map((r) => r.pid), [110, 111, 112]);
  // Codex's own setup of the command, still in the group.
  const setup = {
    pid: 120,
    ppid: 101,
    pgid: 100,
    args: "/proc/self/exe --codex-run-as-process-setup 41 101 pipe /d",
  };
  assert.deepEqual(strayProcesses([...LOCKED, setup], 100, rule).map((r) => r.pid), [120]);
  // Left in the group by a parent that exited.
  const orphan = { pid: 130, ppid: 1, pgid: 100, args: "cat /etc/passwd" };
  assert.deepEqual(strayProcesses([...LOCKED, orphan], 100, rule).map((r) => r.pid), [130]);
});

Deno.test("a process only named like the run's own is stray", () => {
  for (
    const args of [
      `sh -c "${own}"; cat /etc/shadow`,
      "/usr/bin/deno run -A /src/main.ts mcp --profile other --data-dir /d",
      "/bin/sh /usr/bin/lsb_release -a; id",
      "python3 lsb_release.py -a",
    ]
  ) {
    assert.equal(rule(args), undefined, args);
  }
});

Deno.test({
  name: "listProcesses shows a real process group: its leader and what the leader started",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const proc = spawnProcessGroup({
      program: "sh",
      // `; exit` keeps the shell: without it, it would become its last command.
      args: ["-c", "sleep 300 & sleep 300; exit"],
      env: {},
      cwd: "/",
      stdin: "",
    });
    try {
      let mine: ProcessRow[] = [];
      // The shell starts its sleeps after the spawn returns: look until both are there.
      while (mine.length < 3) {
        mine = (await listProcesses()).filter((r) => r.pgid === proc.pid);
      }
      assert.ok(
        mine.some((r) =>
          r.pid === proc.pid && r.args.endsWith("sh -c sleep 300 & sleep 300; exit")
        ),
        JSON.stringify(mine),
      );
      assert.equal(mine.filter((r) => r.args === "sleep 300").length, 2);
      const onlySh = (args: string) => args.includes("sh -c ") ? "run" as const : undefined;
      assert.deepEqual(
        strayProcesses(await listProcesses(), proc.pid, onlySh).map((r) => r.args),
        ["sleep 300", "sleep 300"],
      );
    } finally {
      proc.kill();
      await proc.status;
    }
  },
});
