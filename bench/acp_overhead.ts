/**
 * What the ACP layer adds (issue 10, benchmarks), measured in the same run and
 * interleaved (the machines are shared and noisy):
 *
 * - call: one scripted call through `AcpLayer.call` (start claude-agent-acp,
 *   initialize, session/new with wats's `_meta`, set the asking mode, prompt,
 *   then head and commits from git, stop) against the same prompt sent by a bare
 *   ACP client (`@agentclientprotocol/sdk`: spawn, initialize, session/new,
 *   set_mode, prompt, stop) to the same agent and mock model. Each call gets a
 *   fresh work whose worktree was cut beforehand, so both sides start cold.
 * - sandbox: the same call through `AcpLayer.call` with the OS sandbox
 *   (bubblewrap, `sandbox.mode = required`) against it without (issue 21, goal
 *   <= 1.05x), each on fresh works.
 * - worktree: `ensureWorktree` (wats's checks plus `git worktree add -b`) for a
 *   repository of 10,000 files, against `git worktree add -b` alone.
 *
 * Needs the pinned claude-agent-acp (`deno run -A tests/support/prepare.ts`).
 *
 * Run: deno run -A bench/acp_overhead.ts [--runs 5] [--files 10000]
 */

import { parseArgs } from "node:util";
import { startBareAcp } from "./bare_acp.ts";
import * as acp from "@agentclientprotocol/sdk";
import { AcpLayer } from "../src/acp/calls.ts";
import { makePolicy } from "../src/acp/policy.ts";
import { ensureWorktree, git, workPlace } from "../src/acp/worktrees.ts";
import type { HarnessConfig } from "../src/config/acp_tables.ts";
import { Sandboxer } from "../src/safety/sandboxer.ts";
import { cliCommand, cliProblem } from "../tests/support/clis.ts";
import { startMockAnthropic, text } from "../tests/support/mock_anthropic.ts";
import { splitArgv } from "./argv.ts";
import { AGENTS, harnessAgent } from "../src/runner/runtimes/agents.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { runs: { type: "string", default: "5" }, files: { type: "string", default: "10000" } },
});
const RUNS = Number(values.runs);
const FILES = Number(values.files);

const problem = cliProblem("claude-acp");
if (problem !== null) {
  console.error(`error: ${problem}`);
  Deno.exit(1);
}
const acpAgent = splitArgv(cliCommand("claude-acp"));

function median(xs: number[]): number {
  const m = [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  if (m === undefined) throw new Error("error: no samples were taken; run at least one iteration");
  return m;
}
const ms = (x: number) => `${x.toFixed(0)} ms`;

async function repoWith(dir: string, files: number): Promise<void> {
  Deno.mkdirSync(dir, { recursive: true });
  await git(["init", "-q", "-b", "main"], dir);
  for (let i = 0; i < files; i++) {
    const sub = `${dir}/d${Math.floor(i / 500)}`;
    if (i % 500 === 0) Deno.mkdirSync(sub);
    Deno.writeTextFileSync(`${sub}/f${i}.txt`, `file ${i}\n`);
  }
  await git(["add", "-A"], dir);
  await git(["-c", "user.email=b@example.org", "-c", "user.name=B", "commit", "-qm", "init"], dir);
}

const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-bench-acp-" }));
try {
  // ---- worktree creation -------------------------------------------------------
  const big = `${root}/big`;
  await repoWith(big, FILES);
  const co = { name: "big", path: big, base: "main", fetch: false };
  const wtWats: number[] = [];
  const wtGit: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let t = performance.now();
    await git(["worktree", "add", "-q", "-b", `plain/${i}`, `${root}/plain/${i}`, "main"], big);
    wtGit.push(performance.now() - t);
    t = performance.now();
    await ensureWorktree(
      co,
      workPlace(`${root}/wt`, {
        harness: "claude",
        checkout: "big",
        agent: "bench",
        thread: "_",
        work: `w${i}`,
      }),
    );
    wtWats.push(performance.now() - t);
  }

  // ---- one call ---------------------------------------------------------------
  const small = `${root}/small`;
  await repoWith(small, 10);
  const mock = startMockAnthropic({ default: text("Done.") });
  const home = `${root}/home`;
  // Claude's state folder exists, as it does once Claude has run: the sandbox keeps it writable.
  Deno.mkdirSync(`${home}/.claude`, { recursive: true });
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    TMPDIR: home,
  };
  const harnessEnv = {
    ANTHROPIC_BASE_URL: mock.url,
    ANTHROPIC_API_KEY: "bench",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CONFIG_DIR: `${home}/.claude`,
  };
  const harness: HarnessConfig = {
    name: "claude",
    command: acpAgent.command,
    args: acpAgent.args,
    env: harnessEnv,
    meta: {},
    context: [],
    idle: 0,
    enabled: true,
  };
  const checkouts = { small: { name: "small", path: small, base: "main", fetch: false } };
  const data = `${root}/data`;
  const worktrees = `${data}/worktrees`;
  for (let i = 0; i <= RUNS; i++) {
    for (const w of [`call${i}`, `sbx${i}`]) {
      await ensureWorktree(
        checkouts.small,
        workPlace(worktrees, {
          harness: "claude",
          checkout: "small",
          agent: "bench",
          thread: "_",
          work: w,
        }),
      );
    }
  }
  const sandbox = new Sandboxer({
    agents: AGENTS,
    mode: "required",
    hide: [],
    dataDir: data,
    home,
  });

  const viaWats = async (i: number, sandboxed = false) => {
    const layer = new AcpLayer({
      worktrees,
      harnesses: { claude: harness },
      checkouts,
      allowedCheckouts: [],
      policy: makePolicy([], [], data),
      env,
      sandbox: sandboxed ? sandbox : undefined,
      agentOf: harnessAgent,
    });
    const t = performance.now();
    const r = await layer.call("claude", { agent: "bench", thread: "_", callId: `c${i}` }, {
      task: "Say done.",
      checkout: "small",
      work: sandboxed ? `sbx${i}` : `call${i}`,
    });
    await layer.close();
    const took = performance.now() - t;
    if (r.message !== "Done.") throw new Error(`unexpected message: ${r.message}`);
    return took;
  };

  const bare = async (i: number) => {
    const cwd = workPlace(worktrees, {
      harness: "claude",
      checkout: "small",
      agent: "bench",
      thread: "_",
      work: `call${i}`,
    }).dir;
    const t = performance.now();
    const bareAcp = startBareAcp({
      command: acpAgent.command,
      args: acpAgent.args,
      cwd: worktrees,
      env: { ...env, ...harnessEnv },
    });
    const conn = bareAcp.conn;
    await conn.agent.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const s = await conn.agent.request("session/new", { cwd, mcpServers: [] });
    await conn.agent.request("session/set_mode", { sessionId: s.sessionId, modeId: "default" });
    await conn.agent.request("session/prompt", {
      sessionId: s.sessionId,
      prompt: [{ type: "text", text: "Say done." }],
    });
    await bareAcp.stop();
    const took = performance.now() - t;
    const message = bareAcp.message();
    if (message.trim() !== "Done.") throw new Error(`unexpected message: ${message}`);
    return took;
  };

  // One untimed call each: npm and Node caches warm up.
  await viaWats(0);
  await viaWats(0, true);
  await bare(0);
  const w: number[] = [];
  const b: number[] = [];
  const sb: number[] = [];
  for (let i = 1; i <= RUNS; i++) {
    if (i % 2) {
      w.push(await viaWats(i));
      sb.push(await viaWats(i, true));
      b.push(await bare(i));
    } else {
      b.push(await bare(i));
      sb.push(await viaWats(i, true));
      w.push(await viaWats(i));
    }
  }
  await mock.close();

  console.log(`runs: ${RUNS}; repository for worktrees: ${FILES} files`);
  console.log(
    `call via wats: median ${ms(median(w))} (${w.map(ms).join(", ")})\n` +
      `bare ACP client: median ${ms(median(b))} (${b.map(ms).join(", ")})\n` +
      `call overhead ratio (wats / bare): ${(median(w) / median(b)).toFixed(3)} (goal <= 1.1)`,
  );
  console.log(
    `call via wats, sandboxed: median ${ms(median(sb))} (${sb.map(ms).join(", ")})\n` +
      `sandbox ratio (sandboxed / unsandboxed): ${(median(sb) / median(w)).toFixed(3)} ` +
      "(goal <= 1.05)",
  );
  console.log(
    `worktree via ensureWorktree: median ${ms(median(wtWats))} (${wtWats.map(ms).join(", ")})\n` +
      `git worktree add alone: median ${ms(median(wtGit))} (${wtGit.map(ms).join(", ")})\n` +
      `worktree ratio (wats / git): ${(median(wtWats) / median(wtGit)).toFixed(3)}`,
  );
} finally {
  Deno.removeSync(root, { recursive: true });
}
