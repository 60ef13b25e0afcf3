/**
 * What a wake costs in model input (issue 13): real `claude -p` runs started by
 * the runner of a real daemon (`wats node --agent claude`) against the scripted
 * mock model, which records every request. For each request it reports the
 * characters of `system`, `tools` and `messages` as JSON (and the whole body),
 * and the requests per wake, in four scenarios:
 *
 * - `one ask`: another profile asks; the agent answers it.
 * - `clarify reply`: the agent had asked a clarify on an ask; the asker's reply
 *   to it wakes the agent, which answers.
 * - `heartbeat`: a heartbeat run with nothing new (three older threads stored).
 * - `five asks`: five asks land in one debounce window; one wake answers all.
 *
 * Each scenario runs in four variants, in the same run, on fresh data dirs:
 *
 * - `today` (the baseline): the wake as it ran before issue 13: Claude Code's
 *   default system prompt and no thread in the prompt, whose event list and
 *   heartbeat say what they said then ("Read the thread of each event (`thread`
 *   with its id) before you act on it", "Check the feed for anything you
 *   missed").
 * - `system`: only wats's own system prompt (`--system-prompt-file`).
 * - `threads`: only the threads in the wake prompt.
 * - `wats`: both: the runner as it is.
 *
 * The variants are built by the bench, not by the product: the daemon spawns
 * `claude` from PATH, and for the bench that is a small wrapper script that drops
 * the system prompt flag (`BENCH_DEFAULT_SYSTEM=1`) and rewrites the prompt on
 * stdin back to the old text without threads (`BENCH_NO_THREADS=1`) before it
 * runs the pinned CLI. Tool schemas and the runner session's MCP instructions are
 * the current ones in every variant (the bench cannot rebuild the old ones), so
 * `today` is smaller than the code before issue 13 was and the ratios understate
 * the saving; bench/README.md gives the figures measured on that code.
 *
 * The mock model acts like a model that follows its prompt: for each event the
 * prompt lists, in order, it first calls `thread` unless the event's post is
 * already shown to it (fenced, in the prompt or a tool result), then answers it;
 * on a heartbeat whose prompt says to check the feed it reads the feed once;
 * then it ends with a short text.
 *
 * Needs the pinned Claude CLI (`deno run -A tests/support/prepare.ts`).
 *
 * Run: deno run -A bench/wake_tokens.ts [--scenario NAME] [--variant NAME]
 */

import { parseArgs } from "node:util";
import { type RunningWats, startWats, tempDataDir } from "../tests/support/cli.ts";
import { cliPath, cliProblem, CLIS_DIR } from "../tests/support/clis.ts";
import {
  type MessagesRequest,
  type MockAnthropic,
  type Reply,
  startMockAnthropic,
  text,
  textOf,
  toolUse,
} from "../tests/support/mock_anthropic.ts";
import { call, eventIds, idIn, mcpClient } from "../tests/support/swarm.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    scenario: { type: "string", multiple: true },
    variant: { type: "string", multiple: true },
  },
});

const problem = cliProblem("claude");
if (problem !== null) {
  console.error(`error: ${problem}`);
  Deno.exit(1);
}

// ------------------------------------------------------------- variants

interface Variant {
  name: string;
  env: Record<string, string>;
}

const VARIANTS: Variant[] = [
  { name: "today", env: { BENCH_DEFAULT_SYSTEM: "1", BENCH_NO_THREADS: "1" } },
  { name: "system", env: { BENCH_NO_THREADS: "1" } },
  { name: "threads", env: { BENCH_DEFAULT_SYSTEM: "1" } },
  { name: "wats", env: {} },
];

/**
 * The `claude` the daemon finds on PATH in this bench. Without threads, the
 * prompt loses the block from "Their threads" to the line before "`thread`
 * shows a whole thread" and the heartbeat's open threads, and gets back the old
 * heartbeat and feed sentences.
 */
function wrapperScript(real: string): string {
  return `#!/bin/bash
args=()
skip=0
for a in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  if [ "$BENCH_DEFAULT_SYSTEM" = 1 ] && { [ "$a" = --system-prompt-file ] || [ "$a" = --append-system-prompt-file ]; }; then
    skip=1; continue
  fi
  args+=("$a")
done
if [ "$BENCH_NO_THREADS" = 1 ]; then
  awk '
    /^Their threads / { skip = 1 }
    /^\`thread\` shows a whole thread/ {
      skip = 0
      match($0, /= [0-9]+/)
      print "Everything that arrived since your last run is in the \`feed\` tool with \`since\` " substr($0, RSTART, RLENGTH) ". Read the thread of each event (\`thread\` with its id) before you act on it."
      next
    }
    /^Nothing new woke you: this is a heartbeat run\\./ {
      print "No new events woke you: this is a heartbeat run. Check the feed for anything you missed."
      next
    }
    /^No thread of yours waits on a follow-up\\./ { next }
    /^Threads whose newest post is yours/ { open = 1; next }
    open && /^- thread / { next }
    { open = 0 }
    !skip
  ' | "${real}" "\${args[@]}"
else
  exec "${real}" "\${args[@]}"
fi
`;
}

// ------------------------------------------------------------- the model

/** Every post id shown fenced anywhere in the request (prompt or tool results). */
function shownPosts(req: MessagesRequest): Set<string> {
  const all = req.messages.map((m) => textOf(m.content)).join("\n");
  return new Set([...all.matchAll(/^----- post ([0-9a-f]{64}) · /gm)].map((m) => m[1]!));
}

/** Tool calls the model already made in this conversation. */
function calls(req: MessagesRequest): { name: string; input: Record<string, unknown> }[] {
  const out: { name: string; input: Record<string, unknown> }[] = [];
  for (const m of req.messages) {
    if (m.role !== "assistant" || typeof m.content === "string") continue;
    for (const b of m.content) {
      if (b.type === "tool_use") {
        out.push({ name: b.name ?? "", input: (b.input ?? {}) as Record<string, unknown> });
      }
    }
  }
  return out;
}

/** A model that does what its prompt says, one tool call a turn. */
function model(req: MessagesRequest): Reply {
  const prompt = textOf(req.messages[0]?.content);
  const done = calls(req);
  const answered = new Set(
    done.filter((c) => c.name === "mcp__wats__answer").map((c) => c.input.parent),
  );
  const shown = shownPosts(req);
  for (const id of eventIds(req)) {
    if (answered.has(id)) continue;
    if (!shown.has(id)) return toolUse("mcp__wats__thread", { id });
    return toolUse("mcp__wats__answer", { parent: id, text: "Use journald: it rotates itself." });
  }
  const cursor = prompt.match(/`since` = (\d+)/)?.[1];
  if (
    /Check the feed/.test(prompt) && cursor !== undefined &&
    !done.some((c) => c.name === "mcp__wats__feed")
  ) {
    return toolUse("mcp__wats__feed", { since: Number(cursor) });
  }
  return text("Done.");
}

// ------------------------------------------------------------- scenarios

interface Ctx {
  dir: string;
  home: string;
}

interface Scenario {
  name: string;
  /** Extra settings of the agent node. */
  env: Record<string, string>;
  /** Posts stored before the runner starts (they wake nobody). */
  seed?: (c: Ctx) => Promise<void>;
  /** What wakes the agent once the runner runs. */
  trigger: (c: Ctx, node: RunningWats) => Promise<void>;
}

const LOREM =
  "We ship a small service that logs about 2 GB a day to /var/log/app. Disk fills up every few weeks. ";

const SCENARIOS: Scenario[] = [
  {
    name: "one ask",
    env: {},
    trigger: async (c) => {
      const alice = await mcpClient(c.dir, "alice", c.home);
      await call(alice, "ask", {
        title: "logrotate or journald?",
        text: `${LOREM}Should we use logrotate or journald for rotation, and why?`,
      });
      await alice.close();
    },
  },
  {
    name: "clarify reply",
    env: {},
    seed: async (c) => {
      const alice = await mcpClient(c.dir, "alice", c.home);
      const helper = await mcpClient(c.dir, "helper", c.home);
      const ask = idIn(
        await call(alice, "ask", { title: "Log rotation", text: `${LOREM}What should we use?` }),
      );
      await call(helper, "clarify", {
        parent: ask,
        text: "Does the service log to stdout or to its own files?",
      });
      await Deno.writeTextFile(`${c.dir}/bench-ask`, ask);
      await alice.close();
      await helper.close();
    },
    trigger: async (c) => {
      const alice = await mcpClient(c.dir, "alice", c.home);
      const ask = await Deno.readTextFile(`${c.dir}/bench-ask`);
      const thread = await call(alice, "thread", { id: ask });
      const clarify = thread.match(/^----- post ([0-9a-f]{64}) · clarify/m)?.[1];
      if (clarify === undefined) {
        throw new Error(`error: the thread has no clarify post:\n${thread}`);
      }
      await call(alice, "answer", { parent: clarify, text: "Its own files, under /var/log/app." });
      await alice.close();
    },
  },
  {
    name: "heartbeat",
    env: { WATS_AGENT_HEARTBEAT: "2s" },
    seed: async (c) => {
      const alice = await mcpClient(c.dir, "alice", c.home);
      for (let i = 1; i <= 3; i++) {
        const ask = idIn(
          await call(alice, "ask", { title: `Older question ${i}`, text: `${LOREM}(${i})` }),
        );
        await call(alice, "note", { parent: ask, text: "Still open." });
      }
      await alice.close();
    },
    trigger: async () => {},
  },
  {
    name: "five asks",
    // One call a turn: the old way needs 11 turns (5 × thread + answer, then
    // the end), past the default agent.max_turns of 10.
    env: { WATS_AGENT_EVERY: "3s", WATS_AGENT_MAX_TURNS: "20" },
    trigger: async (c) => {
      const alice = await mcpClient(c.dir, "alice", c.home);
      for (let i = 1; i <= 5; i++) {
        await call(alice, "ask", { title: `Question ${i}`, text: `${LOREM}Question ${i}?` });
      }
      await alice.close();
    },
  },
];

// ------------------------------------------------------------- running

const wrapperDir = await Deno.makeTempDir({ prefix: "wats-bench-tokens-" });
await Deno.writeTextFile(`${wrapperDir}/claude`, wrapperScript(cliPath("claude")), { mode: 0o755 });

function nodeEnv(mock: MockAnthropic, extra: Record<string, string>): Record<string, string> {
  return {
    PATH: `${wrapperDir}:${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
    ANTHROPIC_BASE_URL: mock.url,
    ANTHROPIC_API_KEY: "test-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    WATS_AGENT_EVERY: "0",
    WATS_AGENT_HEARTBEAT: "0",
    // The askers are other profiles of the same node.
    WATS_AGENT_IGNORE_LOCAL: "false",
    ...extra,
  };
}

/** Characters of one request, as JSON. */
interface Sizes {
  system: number;
  tools: number;
  messages: number;
  total: number;
}

function sizes(body: MessagesRequest): Sizes {
  const len = (v: unknown) => v === undefined ? 0 : JSON.stringify(v).length;
  return {
    system: len(body.system),
    tools: len(body.tools),
    messages: len(body.messages),
    total: len(body),
  };
}

interface Wake {
  requests: Sizes[];
  toolCalls: string[];
}

async function runWake(s: Scenario, v: Variant): Promise<Wake> {
  const dir = tempDataDir();
  const home = await Deno.makeTempDir({ prefix: "wats-home-" });
  const mock = startMockAnthropic({ default: model });
  try {
    if (s.seed) {
      const seeder = startWats(["--data-dir", dir, "node"], { home, env: nodeEnv(mock, {}) });
      try {
        await seeder.waitForLine((l) => l.includes('"event":"started"'), 90_000);
        await s.seed({ dir, home });
      } finally {
        await seeder.stop();
      }
    }
    const node = startWats(
      ["--data-dir", dir, "node", "--agent", "claude", "--agent-profile", "helper"],
      { home, env: nodeEnv(mock, { ...s.env, ...v.env }) },
    );
    try {
      await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
      await s.trigger({ dir, home }, node);
      const ended = JSON.parse(
        await node.waitForLine((l) => l.includes('"event":"run_ended"'), 180_000),
      );
      if (ended.status !== "ok") {
        throw new Error(`${s.name}/${v.name}: the run failed: ${JSON.stringify(ended)}`);
      }
    } finally {
      await node.stop();
    }
    const bodies = mock.messages().map((r) => r.body!).filter((b) =>
      (b.tools ?? []).some((t) => t.name.startsWith("mcp__wats__"))
    );
    const last = bodies.at(-1);
    return {
      requests: bodies.map(sizes),
      toolCalls: last ? calls(last).map((c) => c.name.replace("mcp__wats__", "")) : [],
    };
  } finally {
    await mock.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}

const scenarios = SCENARIOS.filter((s) => !values.scenario || values.scenario.includes(s.name));
const variants = VARIANTS.filter((v) => !values.variant || values.variant.includes(v.name));
const results = new Map<string, Wake>();
const t0 = performance.now();
for (const s of scenarios) {
  for (const v of variants) {
    const w = await runWake(s, v);
    results.set(`${s.name}/${v.name}`, w);
    console.error(
      `${s.name} / ${v.name}: ${w.requests.length} request(s), ` +
        `${w.requests.reduce((a, r) => a + r.total, 0)} characters; calls: ${
          w.toolCalls.join(", ") || "none"
        }`,
    );
  }
}
await Deno.remove(wrapperDir, { recursive: true });

// ------------------------------------------------------------- report

const n = (x: number) => x.toLocaleString("en-US");
console.log(
  `\nwake_tokens: ${scenarios.length} scenario(s) × ${variants.length} variant(s) in ${
    ((performance.now() - t0) / 1000).toFixed(0)
  } s (characters of JSON per request: system / tools / messages = total)\n`,
);
console.log(
  "| scenario | variant | requests | first request (system / tools / messages = total) | whole wake | × today | calls |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const s of scenarios) {
  const base = results.get(`${s.name}/today`);
  const baseTotal = base?.requests.reduce((a, r) => a + r.total, 0);
  for (const v of variants) {
    const w = results.get(`${s.name}/${v.name}`)!;
    const f = w.requests[0];
    const whole = w.requests.reduce((a, r) => a + r.total, 0);
    const ratio = baseTotal ? (whole / baseTotal).toFixed(2) + "x" : "—";
    console.log(
      `| ${s.name} | ${v.name} | ${w.requests.length} | ${
        f ? `${n(f.system)} / ${n(f.tools)} / ${n(f.messages)} = ${n(f.total)}` : "—"
      } | ${n(whole)} | ${ratio} | ${w.toolCalls.join(", ") || "none"} |`,
    );
  }
}

const verdicts: string[] = [];
const one = results.get("one ask/wats");
if (one) {
  // A wake that never called the model has no first request: not met, and said so.
  const first = one.requests[0]?.total;
  verdicts.push(
    `first request of a one-ask wake ≤ 10,000: ${
      first !== undefined && first <= 10_000 ? "met" : "NOT met"
    } (${first === undefined ? "no request made" : n(first)})`,
  );
}
for (const s of scenarios) {
  const base = results.get(`${s.name}/today`);
  const wats = results.get(`${s.name}/wats`);
  if (!base || !wats) continue;
  const r = wats.requests.reduce((a, x) => a + x.total, 0) /
    base.requests.reduce((a, x) => a + x.total, 0);
  verdicts.push(
    `${s.name}: whole wake ≤ 0.6× today: ${r <= 0.6 ? "met" : "NOT met"} (${r.toFixed(2)}x)`,
  );
}
if (verdicts.length > 0) console.log(`\n${verdicts.map((v) => `- ${v}`).join("\n")}`);
