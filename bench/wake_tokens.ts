/**
 * What a wake costs in model input (issues 13 and 30): real `claude -p` runs
 * started by the runner of a real daemon (`wats node --agent claude`, the locked
 * agent) against the scripted mock model, which records every request. For each
 * request it reports the characters of `system`, `tools` and `messages` as JSON
 * (and the whole body), and the requests per wake, in five scenarios:
 *
 * - `one ask`: another profile asks; the agent answers it.
 * - `clarify reply`: the agent had asked a clarify on an ask; the asker's reply
 *   to it wakes the agent, which answers.
 * - `five asks`: five asks land in one debounce window; one wake answers all.
 * - `heartbeat`: a heartbeat run with nothing new (three older threads stored).
 * - `heartbeat feedback`: a heartbeat run whose only news is one reaction to
 *   the agent's answer (feedback wakes nobody; the next run lists it).
 *
 * Each scenario runs on this checkout (`wats`) and, with `--baseline DIR`, on
 * another checkout of wats (`base`: e.g. `git archive 3d97b22 | tar -x -C DIR`),
 * in the same run, on fresh data dirs, with the same mock. The whole wake is
 * also given as a share of OpenClaw's heartbeat with one tool call, measured on
 * this mock in an earlier round (104,005 characters, bench/README.md).
 *
 * The mock model acts like a model that follows its prompt: for each event the
 * prompt lists, in order, it first calls `thread` unless the event's post is
 * already shown to it (fenced, in the prompt or a tool result), then answers it
 * (`post` with kind `answer`, or the `answer` tool where the checkout has one);
 * then it ends with a short text.
 *
 * Needs the pinned Claude CLI (`deno run -A tests/support/prepare.ts`).
 *
 * Run: deno run -A bench/wake_tokens.ts [--baseline DIR] [--scenario NAME] [--dump DIR]
 */

import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type RunningWats, startIsolated, tempDataDir } from "../tests/support/cli.ts";
import { LAUNCHER_FLAGS } from "../src/cli/permissions.ts";
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
import { eventIds, idIn, mcpEnv } from "../tests/support/swarm.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    baseline: { type: "string" },
    scenario: { type: "string", multiple: true },
    dump: { type: "string" },
  },
});

const problem = cliProblem("claude");
if (problem !== null) {
  console.error(`error: ${problem}`);
  Deno.exit(1);
}

/** OpenClaw's heartbeat with one tool call on this mock (bench/README.md, issue 30). */
const OPENCLAW_HEARTBEAT = 104_005;

// ------------------------------------------------------------- checkouts

/** A checkout of wats whose daemon and `wats mcp` the bench runs. */
interface Checkout {
  name: string;
  /** The command that runs its main.ts, as tests/support/cli.ts runs this one. */
  command: string[];
}

function checkout(name: string, root: string): Checkout {
  return {
    name,
    command: [
      Deno.execPath(),
      "run",
      ...LAUNCHER_FLAGS,
      "--quiet",
      "--config",
      `${root}/deno.json`,
      `${root}/main.ts`,
    ],
  };
}

const HERE = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const CHECKOUTS: Checkout[] = [
  checkout("wats", HERE),
  ...(values.baseline ? [checkout("base", values.baseline.replace(/\/$/, ""))] : []),
];

/** An MCP client of `profile` through the checkout's own `wats mcp`. */
async function client(co: Checkout, c: Ctx, profile: string): Promise<Client> {
  const cl = new Client({ name: `bench-${profile}`, version: "1" });
  const [command, ...args] = co.command;
  await cl.connect(
    new StdioClientTransport({
      command: command!,
      args: [...args, "--data-dir", c.dir, "mcp", "--profile", profile],
      env: mcpEnv(c.home),
      stderr: "pipe",
    }),
  );
  return cl;
}

/** Calls a tool and returns its text; a tool error stops the bench. */
async function call(cl: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const r = await cl.callTool({ name, arguments: args });
  const out = (r.content as Array<{ text?: string }>).map((x) => x.text ?? "").join("\n");
  if (r.isError) throw new Error(`${name} failed: ${out}`);
  return out;
}

/** Posts a reply of `kind`: through `post` where the checkout has it, else the kind's own tool. */
async function reply(cl: Client, kind: string, args: Record<string, unknown>): Promise<string> {
  const names = (await cl.listTools()).tools.map((t: { name: string }) => t.name);
  return names.includes("post")
    ? await call(cl, "post", { kind, ...args })
    : await call(cl, kind, args);
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
  const done = calls(req);
  const isAnswer = (c: { name: string; input: Record<string, unknown> }) =>
    c.name === "mcp__wats__answer" || (c.name === "mcp__wats__post" && c.input.kind === "answer");
  const answered = new Set(done.filter(isAnswer).map((c) => c.input.parent));
  const shown = shownPosts(req);
  const perKind = (req.tools ?? []).some((t) => t.name === "mcp__wats__answer");
  for (const id of eventIds(req)) {
    if (answered.has(id)) continue;
    if (!shown.has(id)) return toolUse("mcp__wats__thread", { id });
    const answer = { parent: id, text: "Use journald: it rotates itself." };
    return perKind
      ? toolUse("mcp__wats__answer", answer)
      : toolUse("mcp__wats__post", { kind: "answer", ...answer });
  }
  return text("Done.");
}

// ------------------------------------------------------------- scenarios

interface Ctx {
  dir: string;
  home: string;
  co: Checkout;
}

interface Scenario {
  name: string;
  /** Extra settings of the agent node. */
  env: Record<string, string>;
  /** Posts stored before the runner starts (they wake nobody). */
  seed?: (c: Ctx) => Promise<void>;
  /** What wakes the agent once the runner runs. */
  trigger: (c: Ctx, node: RunningWats) => Promise<void>;
  /** Which run is the scenario's wake, from its first request (default: the first run). */
  isWake?: (first: MessagesRequest) => boolean;
}

const LOREM =
  "We ship a small service that logs about 2 GB a day to /var/log/app. Disk fills up every few weeks. ";

const SCENARIOS: Scenario[] = [
  {
    name: "one ask",
    env: {},
    trigger: async (c) => {
      const alice = await client(c.co, c, "alice");
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
      const alice = await client(c.co, c, "alice");
      const helper = await client(c.co, c, "helper");
      const ask = idIn(
        await call(alice, "ask", { title: "Log rotation", text: `${LOREM}What should we use?` }),
      );
      await reply(helper, "clarify", {
        parent: ask,
        text: "Does the service log to stdout or to its own files?",
      });
      await Deno.writeTextFile(`${c.dir}/bench-ask`, ask);
      await alice.close();
      await helper.close();
    },
    trigger: async (c) => {
      const alice = await client(c.co, c, "alice");
      const ask = await Deno.readTextFile(`${c.dir}/bench-ask`);
      const thread = await call(alice, "thread", { id: ask });
      const clarify = thread.match(/^----- post ([0-9a-f]{64}) · clarify/m)?.[1];
      if (clarify === undefined) {
        throw new Error(`error: the thread has no clarify post:\n${thread}`);
      }
      await reply(alice, "answer", { parent: clarify, text: "Its own files, under /var/log/app." });
      await alice.close();
    },
  },
  {
    name: "five asks",
    // One call a turn and the threads in the prompt: 6 turns.
    env: { WATS_AGENT_EVERY: "3s", WATS_AGENT_MAX_TURNS: "20" },
    trigger: async (c) => {
      const alice = await client(c.co, c, "alice");
      for (let i = 1; i <= 5; i++) {
        await call(alice, "ask", { title: `Question ${i}`, text: `${LOREM}Question ${i}?` });
      }
      await alice.close();
    },
  },
  {
    name: "heartbeat",
    env: { WATS_AGENT_HEARTBEAT: "2s" },
    seed: async (c) => {
      const alice = await client(c.co, c, "alice");
      for (let i = 1; i <= 3; i++) {
        const ask = idIn(
          await call(alice, "ask", { title: `Older question ${i}`, text: `${LOREM}(${i})` }),
        );
        await reply(alice, "note", { parent: ask, text: "Still open." });
      }
      await alice.close();
    },
    trigger: async () => {},
  },
  {
    name: "heartbeat feedback",
    env: { WATS_AGENT_HEARTBEAT: "5s" },
    seed: async (c) => {
      const alice = await client(c.co, c, "alice");
      const helper = await client(c.co, c, "helper");
      const ask = idIn(
        await call(alice, "ask", { title: "Log rotation", text: `${LOREM}What should we use?` }),
      );
      const answer = idIn(await reply(helper, "answer", { parent: ask, text: "Use journald." }));
      await Deno.writeTextFile(`${c.dir}/bench-answer`, answer);
      await alice.close();
      await helper.close();
    },
    trigger: async (c) => {
      const alice = await client(c.co, c, "alice");
      const answer = await Deno.readTextFile(`${c.dir}/bench-answer`);
      await reply(alice, "react", { parent: answer, text: "Thanks, that worked." });
      await alice.close();
    },
    // Heartbeats before the reaction arrived list no feedback: the wake is the one that does.
    isWake: (first) => /Feedback on your posts/.test(textOf(first.messages[0]?.content)),
  },
];

// ------------------------------------------------------------- running

const wrapperDir = await Deno.makeTempDir({ prefix: "wats-bench-tokens-" });
// The daemon finds `claude` on PATH: the pinned CLI, as the tests run it.
await Deno.symlink(cliPath("claude"), `${wrapperDir}/claude`);

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
  bodies: MessagesRequest[];
}

/** The requests of each run, in order: a run's requests share its first user message. */
function runsOf(bodies: MessagesRequest[]): MessagesRequest[][] {
  const runs = new Map<string, MessagesRequest[]>();
  for (const b of bodies) {
    const key = JSON.stringify(b.messages[0]);
    runs.set(key, [...(runs.get(key) ?? []), b]);
  }
  return [...runs.values()];
}

async function runWake(s: Scenario, co: Checkout): Promise<Wake> {
  const dir = tempDataDir();
  const home = await Deno.makeTempDir({ prefix: "wats-home-" });
  const mock = startMockAnthropic({ default: model });
  const c = { dir, home, co };
  const start = (extra: Record<string, string>, agent: boolean) =>
    startIsolated([
      ...co.command,
      "--data-dir",
      dir,
      "node",
      ...(agent ? ["--agent", "claude", "--agent-profile", "helper"] : []),
    ], { home, env: nodeEnv(mock, extra) });
  try {
    if (s.seed) {
      const seeder = start({}, false);
      try {
        await seeder.waitForLine((l) => l.includes('"event":"started"'), 90_000);
        await s.seed(c);
      } finally {
        await seeder.stop();
      }
    }
    const node = start(s.env, true);
    let wake: MessagesRequest[] | undefined;
    try {
      await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
      await s.trigger(c, node);
      // Each wait reads past the lines before: the next run's end.
      while (wake === undefined) {
        const ended = JSON.parse(
          await node.waitForLine((l) => l.includes('"event":"run_ended"'), 180_000),
        );
        if (ended.status !== "ok") {
          throw new Error(`${s.name}/${co.name}: the run failed: ${JSON.stringify(ended)}`);
        }
        const bodies = mock.messages().map((r) => r.body!).filter((b) =>
          (b.tools ?? []).some((t) => t.name.startsWith("mcp__wats__"))
        );
        wake = runsOf(bodies).find((r) => (s.isWake ?? (() => true))(r[0]!));
      }
    } finally {
      await node.stop();
    }
    const last = wake.at(-1);
    return {
      requests: wake.map(sizes),
      toolCalls: last ? calls(last).map((x) => x.name.replace("mcp__wats__", "")) : [],
      bodies: wake,
    };
  } finally {
    await mock.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}

const scenarios = SCENARIOS.filter((s) => !values.scenario || values.scenario.includes(s.name));
const results = new Map<string, Wake>();
const t0 = performance.now();
for (const s of scenarios) {
  for (const co of CHECKOUTS) {
    const w = await runWake(s, co);
    results.set(`${s.name}/${co.name}`, w);
    if (values.dump) {
      await Deno.mkdir(values.dump, { recursive: true });
      await Deno.writeTextFile(
        `${values.dump}/${s.name.replace(/ /g, "_")}.${co.name}.json`,
        JSON.stringify(w.bodies, null, 1),
      );
    }
    console.error(
      `${s.name} / ${co.name}: ${w.requests.length} request(s), ` +
        `${w.requests.reduce((a, r) => a + r.total, 0)} characters; calls: ${
          w.toolCalls.join(", ") || "none"
        }`,
    );
  }
}
await Deno.remove(wrapperDir, { recursive: true });

// ------------------------------------------------------------- report

const n = (x: number) => x.toLocaleString("en-US");
const whole = (w: Wake) => w.requests.reduce((a, r) => a + r.total, 0);
console.log(
  `\nwake_tokens: ${scenarios.length} scenario(s) × ${CHECKOUTS.length} checkout(s) in ${
    ((performance.now() - t0) / 1000).toFixed(0)
  } s (characters of JSON per request: system / tools / messages = total)\n`,
);
console.log(
  "| scenario | checkout | requests | first request (system / tools / messages = total) | whole wake | × base | × OpenClaw heartbeat | calls |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const s of scenarios) {
  const base = results.get(`${s.name}/base`);
  for (const co of CHECKOUTS) {
    const w = results.get(`${s.name}/${co.name}`)!;
    const f = w.requests[0];
    const ratio = base ? (whole(w) / whole(base)).toFixed(2) + "x" : "—";
    console.log(
      `| ${s.name} | ${co.name} | ${w.requests.length} | ${
        f ? `${n(f.system)} / ${n(f.tools)} / ${n(f.messages)} = ${n(f.total)}` : "—"
      } | ${n(whole(w))} | ${ratio} | ${(whole(w) / OPENCLAW_HEARTBEAT).toFixed(3)}x | ${
        w.toolCalls.join(", ") || "none"
      } |`,
    );
  }
}

const verdicts: string[] = [];
const one = results.get("one ask/wats");
if (one) {
  // A wake that never called the model has no first request: not met, and said so.
  const first = one.requests[0]?.total;
  verdicts.push(
    `first request of a one-ask wake ≤ 6,000: ${
      first !== undefined && first <= 6_000 ? "met" : "NOT met"
    } (${first === undefined ? "no request made" : n(first)})`,
  );
  const r = whole(one) / OPENCLAW_HEARTBEAT;
  verdicts.push(
    `one-ask wake ≤ 0.12× OpenClaw's heartbeat: ${r <= 0.12 ? "met" : "NOT met"} (${
      r.toFixed(3)
    }x)`,
  );
}
const hb = results.get("heartbeat/wats");
if (hb && one) {
  verdicts.push(
    `heartbeat with nothing new: ${n(whole(hb))} characters in ${hb.requests.length} ` +
      `request(s), beside ${n(whole(one))} for a one-ask wake`,
  );
}
if (verdicts.length > 0) console.log(`\n${verdicts.map((v) => `- ${v}`).join("\n")}`);
