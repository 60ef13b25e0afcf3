/**
 * Runs that ended before the agent could act, end to end (issue 27, docs/runner.md "A run that
 * could not act"): a real daemon, the real `claude -p` through the run's real `wats mcp`, the
 * scripted mock model. Each fault hits the first run only — the model API answering 529, a CLI
 * that exits at once, the wats tools not connected — and the ask is answered by the later run,
 * exactly once. And an ask the agent answered before its daemon was SIGKILLed is not run again.
 *
 * Claude Code retries a 529 itself; `CLAUDE_CODE_MAX_RETRIES=0` makes it give up at the first,
 * as it does after its own retries when an overload lasts.
 */

import assert from "node:assert/strict";
import { CLIS_DIR, requireCli } from "../support/clis.ts";
import { call, eventIds, idIn, waitFor } from "../support/swarm.ts";
import { jsonLines, type NodeRig, nodeRig, tempDir } from "../support/rig.ts";
import {
  apiError,
  hasTool,
  type MockAnthropic,
  type Rule,
  startMockAnthropic,
  text,
  toolResultFor,
  toolUse,
} from "../support/mock_anthropic.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { RETRY_TRIES } from "../../src/runner/retry.ts";

const claude = requireCli("claude");

const opts = { ignore: claude === null, sanitizeOps: false, sanitizeResources: false };

const REAL_CLAUDE = `${CLIS_DIR}/node_modules/.bin/claude`;

/**
 * A mock model that answers the newest event it was woken for with `Use journald.`; `first`
 * comes before its rules (a fault), `holdAfterAnswer` makes it hang once the first answer is
 * posted.
 */
function answering(o: { first?: Rule; holdAfterAnswer?: boolean } = {}): MockAnthropic {
  let held = !o.holdAfterAnswer;
  return startMockAnthropic({
    rules: [
      ...(o.first ? [o.first] : []),
      {
        when: toolResultFor("mcp__wats__post"),
        reply: () => {
          if (held) return text("Answered.");
          held = true;
          return { ...text("Answered."), delayMs: 600_000 };
        },
      },
      {
        when: hasTool("mcp__wats__post"),
        reply: (req) => {
          const ids = eventIds(req);
          if (ids.length === 0) return text("Nothing new.");
          return toolUse("mcp__wats__post", {
            kind: "answer",
            parent: ids.at(-1),
            text: "Use journald.",
          });
        },
      },
    ],
  });
}

/**
 * A `claude` for the daemon's PATH: its first run (`-p`) meets `fault` (shell), every later run
 * and every other call is the pinned CLI. Returns the PATH to give the daemon.
 */
function faultyClaude(bin: string, fault: string): string {
  Deno.writeTextFileSync(
    `${bin}/claude`,
    [
      "#!/bin/sh",
      `case " $* " in *" -p "*) ;; *) exec ${JSON.stringify(REAL_CLAUDE)} "$@" ;; esac`,
      `mkdir ${JSON.stringify(`${bin}/faulted`)} 2>/dev/null || exec ${
        JSON.stringify(REAL_CLAUDE)
      } "$@"`,
      fault,
      "",
    ].join("\n"),
  );
  Deno.chmodSync(`${bin}/claude`, 0o755);
  return `${bin}:${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`;
}

/** The run's `--mcp-config` swapped for one whose wats server exits at once: no wats tools. */
function withoutTools(bin: string): string {
  const config = `${bin}/no-wats.json`;
  Deno.writeTextFileSync(
    config,
    JSON.stringify({ mcpServers: { wats: { command: "/bin/false", args: [] } } }),
  );
  return [
    "first=1",
    'for a in "$@"; do',
    '  if [ "$first" = 1 ]; then set --; first=0; fi',
    `  if [ "$prev" = "--mcp-config" ]; then a=${JSON.stringify(config)}; fi`,
    '  set -- "$@" "$a"; prev="$a"',
    "done",
    `exec ${JSON.stringify(REAL_CLAUDE)} "$@"`,
  ].join("\n");
}

/**
 * Asks, then checks the runs: the first ended before acting and was marked for a retry, the
 * second answered; the thread holds one answer, and a marker ask behind it wakes the agent
 * without the answered ask.
 */
async function answeredOnceAfterRetry(rig: NodeRig, mock: MockAnthropic, why: RegExp) {
  const alice = await rig.mcp("alice");
  const askId = idIn(await call(alice, "ask", { title: "Logs", text: "logrotate or journald?" }));
  const first = await rig.waitEvent("run_ended");
  assert.equal(first.status, "error", JSON.stringify(first) + rig.node.stderr());
  assert.match(String(first.error), why, JSON.stringify(first));
  const retry = first.retry as { try?: number; of?: number; at?: string } | undefined;
  assert.equal(retry?.try, 1, `marked as ended before acting: ${JSON.stringify(first)}`);
  assert.equal(retry?.of, RETRY_TRIES);
  assert.ok(retry?.at, "with the time of its next try");
  assert.match(rig.node.stderr(), /ended before the agent could act/);
  const second = await rig.waitEvent("run_ended");
  assert.equal(second.status, "ok", JSON.stringify(second) + rig.node.stderr());
  assert.equal(second.retry, undefined);

  const thread = await call(alice, "thread", { id: askId });
  assert.equal(thread.match(/Use journald\./g)?.length, 1, thread);
  // Exactly once: a marker ask behind it wakes the agent, and that run lists the marker alone.
  const marker = idIn(await call(alice, "ask", { title: "Marker", text: "Anyone?" }));
  const third = await rig.waitEvent("run_ended");
  assert.equal(third.status, "ok", JSON.stringify(third));
  const index = jsonLines(dataPaths(rig.dataDir).runsIndex);
  const events = index.map((e) =>
    jsonLines(`${dataPaths(rig.dataDir).runsDir}/${e.id}.jsonl`)[0]!.events
  );
  assert.deepEqual(events, [[askId], [askId], [marker]]);
  const woken = mock.messages().flatMap((r) => r.body ? eventIds(r.body) : []);
  assert.ok(woken.includes(marker), "the marker woke the agent");
  assert.equal(
    (await call(alice, "thread", { id: askId })).match(/Use journald\./g)?.length,
    1,
    "still one answer",
  );
}

Deno.test({
  ...opts,
  name:
    "the model API answers 529 to the first run: the ask is answered by the retry, exactly once",
  async fn() {
    let overloaded = 0;
    await using mock = answering({
      first: {
        when: (req) => hasTool("mcp__wats__post")(req) && overloaded++ === 0,
        reply: apiError(529, "overloaded_error", "Overloaded"),
      },
    });
    await using rig = await nodeRig({
      agent: { mock, settings: { CLAUDE_CODE_MAX_RETRIES: "0" } },
    });
    await answeredOnceAfterRetry(rig, mock, /529|overloaded/i);
    assert.equal(overloaded >= 1, true);
  },
});

Deno.test({
  ...opts,
  name: "a CLI that exits at once on the first run: the ask is answered by the retry, exactly once",
  async fn() {
    await using bin = tempDir("wats-faulty-claude-");
    await using mock = answering();
    await using rig = await nodeRig({
      agent: { mock },
      env: { PATH: faultyClaude(bin.path, "exit 1") },
    });
    await answeredOnceAfterRetry(rig, mock, /exit|code 1/);
  },
});

Deno.test({
  ...opts,
  name:
    "the wats tools not connected in the first run: the ask is answered by the retry, exactly once",
  async fn() {
    await using bin = tempDir("wats-faulty-claude-");
    await using mock = answering();
    await using rig = await nodeRig({
      agent: { mock },
      env: { PATH: faultyClaude(bin.path, withoutTools(bin.path)) },
    });
    await answeredOnceAfterRetry(rig, mock, /wats/);
  },
});

Deno.test({
  ...opts,
  name:
    "an ask the agent answered before its daemon was SIGKILLed is not run again after the restart",
  async fn() {
    await using data = tempDir("wats-data-");
    await using home = tempDir("wats-home-");
    await using mock = answering({ holdAfterAnswer: true });
    const askId = await (async () => {
      await using rig = await nodeRig({ dataDir: data.path, home: home.path, agent: { mock } });
      const alice = await rig.mcp("alice");
      const id = idIn(await call(alice, "ask", { title: "Logs", text: "logrotate or journald?" }));
      // The answer's tool result reached the model: the answer is stored; the model now hangs.
      await waitFor(
        "the answer's tool result at the model",
        () => mock.messages().some((r) => toolResultFor("mcp__wats__post")(r.body!)),
        120_000,
      );
      rig.node.process.kill("SIGKILL");
      await rig.node.stop();
      return id;
    })();
    await using rig = await nodeRig({
      dataDir: data.path,
      home: home.path,
      agent: { mock },
      retryRefusedMs: 30_000,
    });
    const bob = await rig.mcp("bob");
    const marker = idIn(await call(bob, "ask", { title: "Marker", text: "Anyone?" }));
    const ended = await rig.waitEvent("run_ended");
    assert.equal(ended.status, "ok", JSON.stringify(ended) + rig.node.stderr());
    const index = jsonLines(dataPaths(data.path).runsIndex);
    assert.deepEqual(index.map((e) => e.status), ["interrupted", "ok"]);
    const events = index.map((e) =>
      jsonLines(`${dataPaths(data.path).runsDir}/${e.id}.jsonl`)[0]!.events
    );
    assert.deepEqual(events, [[askId], [marker]], "the answered ask is not in the next run");
    const thread = await call(bob, "thread", { id: askId });
    assert.equal(thread.match(/Use journald\./g)?.length, 1, thread);
  },
});
