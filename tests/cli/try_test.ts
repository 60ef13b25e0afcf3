/**
 * `wats try` (issue 20 §3): a throwaway second node asks, the agent of the running node wakes
 * and answers, with `agent.ignore_local` left at its default; a setting that keeps the ask from
 * waking the agent is named; what is missing (a daemon, a relay endpoint) is one error line; the
 * throwaway node's directory is gone afterwards. Real daemons, the real Claude Code CLI against
 * the mock model.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { runWats, startWats, tempDataDir } from "../support/cli.ts";
import { requireCli } from "../support/clis.ts";
import { agentEnv, answeringMock } from "../support/swarm.ts";
import {
  hasTool,
  type MockAnthropic,
  startMockAnthropic,
  text,
} from "../support/mock_anthropic.ts";
import { parseTryArgs, TRY_TEXT, TRY_TIMEOUT_MS } from "../../src/cli/try.ts";
import { freePort } from "../support/free_port.ts";

const claude = requireCli("claude");

/** The options of a test that drives the real CLI through daemons. */
const WITH_CLAUDE = { ignore: claude === null, sanitizeOps: false, sanitizeResources: false };

/** A loopback port free a moment ago. */

/** Starts `wats node --agent claude` serving a relay endpoint on a free loopback port. */
async function agentNode(dataDir: string, mock: MockAnthropic, env = {}) {
  const node = startWats(
    ["--data-dir", dataDir, "node", "--agent", "claude", "--listen", `127.0.0.1:${freePort()}`],
    { env: agentEnv(mock, env) },
  );
  await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
  return node;
}

/**
 * A data dir and `wats node --agent claude` on it against `mock`, which the scene owns: `await
 * using` stops the node, closes the mock and removes the dir.
 */
async function agentScene(mock: MockAnthropic, env: Record<string, string> = {}) {
  const dataDir = tempDataDir();
  const dispose = async (node?: { stop(): Promise<unknown> }) => {
    await node?.stop();
    await mock.close();
    Deno.removeSync(dataDir, { recursive: true });
  };
  const node = await agentNode(dataDir, mock, env).catch(async (err) => {
    await dispose();
    throw err;
  });
  return {
    dataDir,
    node,
    /** Runs `wats try ARGS` to its end, with the mock for its throwaway node's CLI. */
    try: (args: string[] = []) =>
      runWats(["--data-dir", dataDir, "try", ...args], {
        env: agentEnv(mock),
        timeoutMs: 180_000,
      }),
    [Symbol.asyncDispose]: () => dispose(node),
  };
}

/** The scratch directory `wats try` said it started its node in. */
function scratchOf(stdout: string): string {
  const m = stdout.match(/^starting a throwaway node in (\S+),/m);
  assert.ok(m, stdout);
  return m[1]!;
}

Deno.test("wats try's flags: --text, --to, --caps, --timeout with its default, and one clear line for a mistake", () => {
  assert.deepEqual(parseTryArgs([]), { help: false, text: TRY_TEXT, timeoutMs: TRY_TIMEOUT_MS });
  assert.deepEqual(parseTryArgs(["--text", "Hi?", "--timeout", "90s"]), {
    help: false,
    text: "Hi?",
    timeoutMs: 90_000,
  });
  assert.deepEqual(
    parseTryArgs(["--to", "npub1a", "--to", "b".repeat(64), "--caps", "rust, sql,"]),
    {
      help: false,
      text: TRY_TEXT,
      timeoutMs: TRY_TIMEOUT_MS,
      to: ["npub1a", "b".repeat(64)],
      caps: ["rust", "sql"],
    },
  );
  assert.deepEqual(parseTryArgs(["--caps", "Rust,cap:go"]).caps, ["rust", "go"]);
  assert.throws(() => parseTryArgs(["--caps", "rust,a/b"]), {
    message: '--caps: "a/b" is not a capability name: use 1 to 64 lowercase letters, digits ' +
      'and . _ + # -, starting with a letter or digit (e.g. "rust")',
  });
  assert.throws(() => parseTryArgs(["--timeout", "soon"]), {
    message: "--timeout soon is not a duration such as 90s or 10m",
  });
  assert.throws(() => parseTryArgs(["--nope"]), {
    message: "unknown flag --nope: see `wats try --help`",
  });
  assert.throws(() => parseTryArgs(["hello"]), {
    message: 'unexpected argument "hello": give the ask as --text "…"',
  });
});

Deno.test({
  name:
    "wats try: an ask from a throwaway node wakes the agent (agent.ignore_local at its default) and its answer arrives",
  ...WITH_CLAUDE,
  async fn() {
    const mock = answeringMock();
    await using scene = await agentScene(mock);
    const { dataDir, node } = scene;
    const r = await scene.try(["--text", "logrotate or journald?"]);
    assert.equal(
      r.code,
      0,
      `stdout:\n${r.stdout}\nstderr:\n${r.stderr}\nnode:\n${node.stderr()}`,
    );
    const lines = r.stdout.split("\n");
    // The answer may arrive while the run is still ending: then `run … ended`
    // is not printed (try stops at the answer); when printed, it comes before it.
    const ended = lines.findIndex((l) => /^run \S+ ended: ok$/.test(l));
    const order = [
      /^starting a throwaway node in /,
      /^posted: ask [0-9a-f]{12} as "try" on the throwaway node$/,
      /^the ask reached this node$/,
      /^agent woke: run \S+ started/,
      ...(ended >= 0 ? [/^run \S+ ended: ok$/] : []),
      /^the answer arrived on the throwaway node:$/,
      /^----- post [0-9a-f]{64} · answer · by npub1\S+ · unverified: content, not instructions -----$/,
    ].map((re) => lines.findIndex((l) => re.test(l)));
    assert.ok(order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1]!)), r.stdout);
    assert.match(r.stdout, /Use journald \(1\)\./);
    assert.ok(!existsSync(scratchOf(r.stdout)), "the throwaway node's directory is removed");
    const status = await runWats(["--data-dir", dataDir, "status"]);
    assert.doesNotMatch(status.stdout, /kept from waking/, "nothing was skipped");
    // The throwaway node posted no presence: it leaves no known agent behind.
    assert.match(status.stdout, /^known agents: 1$/m, status.stdout);
    assert.match(status.stdout, /^ {2}- npub1\S+ \(this node\) · /m);
  },
});

Deno.test({
  name:
    "wats try names the setting that kept its ask from waking the agent, and wats status lists it",
  ...WITH_CLAUDE,
  async fn() {
    const mock = answeringMock();
    await using scene = await agentScene(mock, { WATS_AGENT_ALLOW: "b".repeat(64) });
    const { dataDir, node } = scene;
    const r = await runWats(["--data-dir", dataDir, "try"], { env: agentEnv(mock) });
    assert.equal(r.code, 1, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
    assert.match(
      r.stdout,
      /^this node did not wake its agent: did not wake the agent: ask [0-9a-f]{12} is by an author not in agent\.allow$/m,
    );
    assert.ok(!existsSync(scratchOf(r.stdout)));
    assert.doesNotMatch(node.stderr(), /run \S+ started/, "no run");
    const status = await runWats(["--data-dir", dataDir, "status"]);
    assert.match(
      status.stdout,
      /^ {2}- \S+Z agent\.allow: did not wake the agent: ask [0-9a-f]{12} is by an author not in agent\.allow \(author npub1\S+\)$/m,
    );
    assert.match(
      node.stderr(),
      /did not wake the agent: ask [0-9a-f]{12} is by an author not in agent\.allow; more like it/,
      "logged at info, the node's default level",
    );
  },
});

Deno.test({
  name: "wats try without a relay endpoint or without a daemon says what to do in one line",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dataDir = tempDataDir();
    try {
      const none = await runWats(["--data-dir", dataDir, "try"]);
      assert.equal(none.code, 1);
      assert.equal(
        none.stderr,
        `error: no wats daemon answers on ${dataDir}/mcp.sock: start it with \`wats\` (or \`wats node\`)\n`,
      );
      const node = startWats(["--data-dir", dataDir, "node", "--agent", "none"]);
      try {
        await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
        const r = await runWats(["--data-dir", dataDir, "try"]);
        assert.equal(r.code, 1);
        assert.equal(
          r.stderr,
          'error: this node runs no agent: set one up with `wats setup claude --about "…"` (or ' +
            "`wats setup codex`), restart `wats`, then run `wats try` again\n",
        );
      } finally {
        await node.stop();
      }
    } finally {
      Deno.removeSync(dataDir, { recursive: true });
    }
  },
});

Deno.test({
  name: "wats try on a node with an agent but no relay endpoint says what to set",
  ...WITH_CLAUDE,
  async fn() {
    const dataDir = tempDataDir();
    const mock = answeringMock();
    const node = startWats(["--data-dir", dataDir, "node", "--agent", "claude"], {
      env: agentEnv(mock),
    });
    try {
      await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
      const r = await runWats(["--data-dir", dataDir, "try"]);
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr,
        "error: this node serves no relay endpoint for a second node to connect to: stop it and " +
          "start it with `wats --listen 127.0.0.1:7447` (or `wats config set listen " +
          "127.0.0.1:7447`, then restart it), then run `wats try` again\n",
      );
      assert.equal(r.stdout, "");
    } finally {
      await node.stop();
      await mock.close();
      Deno.removeSync(dataDir, { recursive: true });
    }
  },
});

/** True while `pid` runs (a zombie nobody reaped does not count). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return false;
  }
}

Deno.test({
  name: "Ctrl-C during wats try stops the throwaway node and removes its directory (exit 130)",
  ignore: claude === null || Deno.build.os !== "linux",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const mock = answeringMock();
    // A long debounce: the ask waits, so Ctrl-C comes while `wats try` watches.
    await using scene = await agentScene(mock, { WATS_AGENT_EVERY: "10m" });
    const { dataDir } = scene;
    const tried = startWats(["--data-dir", dataDir, "try"], { env: agentEnv(mock) });
    try {
      await tried.waitForLine((l) => l.startsWith("posted: ask "), 90_000);
      const scratch = scratchOf(tried.stdoutLines.join("\n"));
      const pid = Number.parseInt(Deno.readTextFileSync(`${scratch}/daemon.lock`).trim(), 10);
      assert.ok(alive(pid), "the throwaway node runs");
      const r = await tried.stop("SIGINT");
      assert.equal(r.code, 130, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
      assert.match(r.stdout, /^stopped: the throwaway node is being removed$/m);
      assert.ok(!existsSync(scratch), "its directory is removed");
      assert.ok(!alive(pid), "the throwaway node has ended");
    } finally {
      await tried.stop();
    }
  },
});

Deno.test("wats try --help, and wats --help lists it", async () => {
  const help = await runWats(["try", "--help"]);
  assert.equal(help.code, 0);
  assert.match(
    help.stdout,
    /^Usage: wats try \[--text "…"\] \[--to KEY\]… \[--caps a,b\] \[--timeout D\]$/m,
  );
  assert.match(help.stdout, /^ {2}--to KEY {7}address the ask to a profile/m);
  assert.match(help.stdout, /^Exit codes: 0 the answer arrived;/m);
  const main = await runWats(["--help"]);
  assert.match(
    main.stdout,
    /^ {2}wats try \[--text "…"\] \[--to KEY\] \[--caps a,b\] +see your agent wake/m,
  );
});

Deno.test({
  name: "wats try gives up after --timeout, saying where the ask got to (exit 1)",
  ...WITH_CLAUDE,
  async fn() {
    const mock = answeringMock();
    // A long debounce: no run comes within the timeout.
    await using scene = await agentScene(mock, { WATS_AGENT_EVERY: "10m" });
    const { dataDir } = scene;
    const r = await runWats(["--data-dir", dataDir, "try", "--timeout", "2s"], {
      env: agentEnv(mock),
    });
    assert.equal(r.code, 1, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
    assert.match(
      r.stdout,
      /^no answer within 2s: (the agent has not woken yet: nothing holds its runs back, so agent\.every still debounces it .*|the ask has not reached this node)$/m,
    );
    assert.ok(!existsSync(scratchOf(r.stdout)));
  },
});

Deno.test({
  name: "wats try says when the agent's run ended without answering (exit 1)",
  ...WITH_CLAUDE,
  async fn() {
    // The model is woken with the wats tools but answers nothing.
    const mock = startMockAnthropic({
      rules: [{ when: hasTool("mcp__wats__post"), reply: text("Not answering.") }],
    });
    await using scene = await agentScene(mock);
    const r = await scene.try();
    assert.equal(r.code, 1, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
    assert.match(r.stdout, /^run (\S+) ended: ok$/m);
    const run = r.stdout.match(/^run (\S+) ended: ok$/m)![1];
    assert.match(
      r.stdout,
      new RegExp(
        `^the run ended without answering the ask: \`wats agent logs --run ${run}\` shows why$`,
        "m",
      ),
    );
  },
});

/** Waits until the node's own agent is among its known agents (its presence is stored). */
async function ownAgentKnown(dataDir: string): Promise<string> {
  for (;;) {
    const status = await runWats(["--data-dir", dataDir, "status"]);
    const npub = status.stdout.match(/^ {2}- (npub1\S+) \(this node\) · /m)?.[1];
    if (npub !== undefined) return npub;
    await new Promise((r) => setTimeout(r, 200));
  }
}

Deno.test({
  name:
    "wats try refuses --caps the agent lacks and --to naming no agent of this node, saying why, before starting a node",
  ...WITH_CLAUDE,
  async fn() {
    const mock = answeringMock();
    await using scene = await agentScene(mock, { WATS_AGENT_CAPS: "rust" });
    const { dataDir, node } = scene;
    const own = await ownAgentKnown(dataDir);
    const caps = await runWats(["--data-dir", dataDir, "try", "--caps", "cobol"]);
    assert.equal(caps.code, 1, `stdout:\n${caps.stdout}\nstderr:\n${caps.stderr}`);
    assert.equal(
      caps.stdout,
      "--caps cobol: this node's agent holds caps rust, and an ask naming only caps it lacks " +
        "never wakes it: use --caps rust, leave --caps out, or add the cap with " +
        "`wats config set agent.caps …`\n",
    );
    const to = await runWats(["--data-dir", dataDir, "try", "--to", "c".repeat(64)]);
    assert.equal(to.code, 1, `stdout:\n${to.stdout}\nstderr:\n${to.stderr}`);
    assert.equal(
      to.stdout,
      `--to names no agent of this node, so the ask would wake none here: give --to ${own}, ` +
        `or leave --to out (this node's agent: ${own})\n`,
    );
    assert.doesNotMatch(node.stderr(), /run \S+ started/, "no run");
  },
});

Deno.test({
  name:
    "wats try says the agent's answer is held for review, and how to see it, instead of 'ended without answering'",
  ...WITH_CLAUDE,
  async fn() {
    const mock = answeringMock();
    await using scene = await agentScene(mock, { WATS_AGENT_REVIEW: "true" });
    const { dataDir } = scene;
    const r = await scene.try();
    assert.equal(r.code, 1, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
    const held = r.stdout.match(
      /^the agent answered, and its answer is held for review on this node \(agent\.review\): `wats agent pending show (\S+)` shows it, `wats agent approve \1` sends it/m,
    );
    assert.ok(held, r.stdout);
    assert.doesNotMatch(r.stdout, /without answering/);
    const shown = await runWats(["--data-dir", dataDir, "agent", "pending", "show", held[1]!]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /Use journald \(1\)\./);
  },
});

Deno.test({
  name: "wats try names the hourly cap when it holds the agent's run back",
  ...WITH_CLAUDE,
  async fn() {
    const mock = answeringMock();
    await using scene = await agentScene(mock, { WATS_AGENT_MAX_RUNS_PER_HOUR: "1" });
    const { dataDir } = scene;
    const first = await scene.try();
    assert.equal(first.code, 0, `stdout:\n${first.stdout}\nstderr:\n${first.stderr}`);
    const second = startWats(["--data-dir", dataDir, "try"], { env: agentEnv(mock) });
    try {
      const line = await second.waitForLine(
        (l) => l.startsWith("the agent has not woken yet"),
        90_000,
      );
      assert.match(
        line,
        /^the agent has not woken yet: the hourly cap is reached \(agent\.max_runs_per_hour = 1\); the next run may start at \S+Z$/,
      );
      const status = await runWats(["--data-dir", dataDir, "status"]);
      assert.match(
        status.stdout,
        /^agent runs wait for the hourly cap \(agent\.max_runs_per_hour = 1\): the next may start at \S+Z$/m,
      );
    } finally {
      await second.stop("SIGINT");
    }
  },
});

Deno.test({
  name:
    "SIGKILL of wats try: its throwaway node stops by itself, and the next wats try removes the directory it left",
  ignore: claude === null || Deno.build.os !== "linux",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const tmp = Deno.makeTempDirSync({ prefix: "wats-tmp-" });
    const mock = answeringMock();
    // A long debounce: the ask waits, so the kill comes while `wats try` watches.
    await using scene = await agentScene(mock, { WATS_AGENT_EVERY: "10m" });
    const { dataDir } = scene;
    const env = agentEnv(mock, { WATS_AGENT_EVERY: "10m", TMPDIR: tmp });
    const tried = startWats(["--data-dir", dataDir, "try"], { env });
    try {
      await tried.waitForLine((l) => l.startsWith("posted: ask "), 90_000);
      const scratch = scratchOf(tried.stdoutLines.join("\n"));
      assert.ok(scratch.startsWith(`${tmp}/wats-try-`), scratch);
      const pid = Number.parseInt(Deno.readTextFileSync(`${scratch}/daemon.lock`).trim(), 10);
      assert.ok(alive(pid), "the throwaway node runs");
      const killed = await tried.stop("SIGKILL");
      assert.equal(killed.code, 137);
      while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
      assert.ok(existsSync(`${scratch}/node.key`), "a killed wats try removes nothing itself");

      const own = await ownAgentKnown(dataDir);
      const next = await runWats(["--data-dir", dataDir, "try", "--to", "c".repeat(64)], { env });
      assert.equal(next.code, 1, `stdout:\n${next.stdout}\nstderr:\n${next.stderr}`);
      assert.match(next.stdout, new RegExp(`give --to ${own}`));
      assert.ok(!existsSync(scratch), "the next wats try removed the stale directory");
      assert.deepEqual([...Deno.readDirSync(tmp)].map((e) => e.name), []);
    } finally {
      await tried.stop();
      Deno.removeSync(tmp, { recursive: true });
    }
  },
});
