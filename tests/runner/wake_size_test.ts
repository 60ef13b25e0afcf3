/**
 * What a wake sends the model, in characters (issue 30): the parts of the
 * first model request built the way the runner builds them — the run's system
 * prompt, the tool list as the MCP server serves a runner session, the runner
 * session's MCP instructions, and the wake prompt (HEARTBEAT.md filled) of a
 * one-ask wake and of a heartbeat with nothing new — each against a budget
 * written here, with the reason. Characters, not time: deterministic.
 *
 * A request carries more than these parts: Claude Code adds its own fields,
 * headers and reminders ({@linkcode CLAUDE_CODE_OWN}, measured with
 * bench/wake_tokens.ts). When a number here changes, run that bench again and
 * update bench/README.md.
 *
 * @module
 */

import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import { runSystemPrompt } from "../../src/prompts.ts";
import {
  buildPrompt,
  type PostReader,
  type PromptInput,
  readHeartbeatTemplate,
} from "../../src/runner/prompt.ts";
import type { PostView } from "../../src/contracts/views.ts";
import { connect, runner } from "../mcp/connect.ts";
import { FakeService } from "../mcp/fake_service.ts";
import { BOB } from "./fakes.ts";

/**
 * What Claude Code 2.1.332 adds to the first request of a locked run, in
 * characters of JSON (bench/wake_tokens.ts with `--dump`: 6,217 − wats's parts
 * in that request): the request's own fields (model, metadata, thinking…), its
 * billing header and SDK line in `system`, and in `messages` its environment
 * block, model line and date around the MCP instructions.
 */
const CLAUDE_CODE_OWN = 2_016;

/** The whole first request of a one-ask wake (issue 30). */
const FIRST_REQUEST_BUDGET = 6_000;

/**
 * OpenClaw's heartbeat with one tool call, measured against the same mock
 * (bench/README.md); a whole one-ask wake stays within 0.12× of it (issue 30).
 */
const OPENCLAW_HEARTBEAT = 104_005;
const WHOLE_WAKE_SHARE = 0.12;

/**
 * What a one-ask wake's second (last) request adds to its first: the answer
 * call and the tool's result (bench/wake_tokens.ts, `--dump`: 6,360 − 5,748).
 */
const ANSWER_TURN = 612;

/**
 * Budgets of wats's own parts, each with why it is that size, so the test
 * that fails names the part that grew. Their sum with
 * {@linkcode CLAUDE_CODE_OWN} is held to {@linkcode FIRST_REQUEST_BUDGET} on
 * its own.
 */
const BUDGETS = {
  system: {
    chars: 1_000,
    why: "the quality-and-trust paragraph, how the tools fit and the run's role; " +
      "not the shared sentence, which the wake prompt and the MCP instructions already open with",
  },
  tools: {
    chars: 1_700,
    why: "a runner session gets ask, post (one tool for every reply kind) and thread: " +
      "every schema is resent with each request of a wake",
  },
  instructions: {
    chars: 200,
    why: "a runner session's MCP instructions are the shared sentence only",
  },
  oneAsk: {
    chars: 1_150,
    why: "HEARTBEAT.md filled for one ask of about 200 characters: identity, reason, the event " +
      "and its thread fenced, nothing the system prompt says already",
  },
  heartbeat: {
    chars: 480,
    why: "a heartbeat with nothing new says who the agent is, that it is a heartbeat since " +
      "the cursor, and that no thread waits on it: nothing else",
  },
} as const;

const LOREM =
  "We ship a small service that logs about 2 GB a day to /var/log/app. Disk fills up every few weeks. ";

const ASK_ID = "a".repeat(64);

/** The ask of bench/wake_tokens.ts's one-ask wake, as the store shows it. */
const ASK: PostView = {
  id: ASK_ID,
  seq: 12,
  author: BOB,
  authorNpub: npubEncode(BOB),
  kind: "ask",
  title: "logrotate or journald?",
  text: `${LOREM}Should we use logrotate or journald for rotation, and why?`,
  grafted: false,
  caps: [],
  createdAt: 1_790_000_000,
};

const READER: PostReader = {
  get: (id) => id === ASK_ID ? ASK : undefined,
  thread: (id) => id === ASK_ID ? [ASK] : [],
  openThreads: () => [],
};

/** The runner's input for a wake, as run_setup.ts builds it with default settings. */
const BASE: PromptInput = {
  agentProfile: "helper",
  user: "alice",
  about: "",
  reasons: [],
  cursor: 11,
  events: [],
  feedback: [],
  rejections: [],
  posts: READER,
  claimed: [],
  now: 1_790_000_100_000,
};

/** The tool list as a locked Claude Code run sends it: its name, description and schema. */
async function runnerTools(): Promise<string> {
  const c = await connect(new FakeService(), runner());
  const { tools } = await c.listTools();
  const instructions = c.getInstructions() ?? "";
  await c.close();
  const sent = (tools as { name: string; description?: string; inputSchema: unknown }[]).map((
    t,
  ) => ({
    name: `mcp__wats__${t.name}`,
    description: t.description,
    input_schema: t.inputSchema,
  }));
  return JSON.stringify({ tools: sent, instructions });
}

async function parts() {
  const { tools, instructions } = JSON.parse(await runnerTools());
  const template = readHeartbeatTemplate();
  const oneAsk = buildPrompt(template, {
    ...BASE,
    reasons: ["new ask"],
    events: [{ id: ASK_ID, kind: "ask", author: BOB, thread: ASK_ID, reason: "new ask" }],
  });
  const heartbeat = buildPrompt(template, {
    ...BASE,
    reasons: ["heartbeat (agent.heartbeat = 30m)"],
  });
  return {
    system: JSON.stringify(runSystemPrompt()).length,
    tools: JSON.stringify(tools).length,
    instructions: JSON.stringify(instructions).length,
    oneAsk: JSON.stringify(oneAsk).length,
    heartbeat: JSON.stringify(heartbeat).length,
    texts: { oneAsk, heartbeat },
  };
}

for (const part of Object.keys(BUDGETS) as (keyof typeof BUDGETS)[]) {
  Deno.test(`the wake's ${part} stays within ${BUDGETS[part].chars} characters`, async () => {
    const got = (await parts())[part];
    assert.ok(
      got <= BUDGETS[part].chars,
      `${part} is ${got} characters, over its budget of ${BUDGETS[part].chars}: ` +
        `${BUDGETS[part].why}. Cut it, or raise the budget here with the reason and run ` +
        "bench/wake_tokens.ts again (bench/README.md).",
    );
  });
}

Deno.test(`the first request of a one-ask wake stays within ${FIRST_REQUEST_BUDGET} characters`, async () => {
  const p = await parts();
  const total = CLAUDE_CODE_OWN + p.system + p.tools + p.instructions + p.oneAsk;
  assert.ok(
    total <= FIRST_REQUEST_BUDGET,
    `a one-ask wake's first request is about ${total} characters (system ${p.system}, tools ` +
      `${p.tools}, MCP instructions ${p.instructions}, wake prompt ${p.oneAsk}, Claude Code's ` +
      `own ${CLAUDE_CODE_OWN}), over ${FIRST_REQUEST_BUDGET}: every request of every wake ` +
      "pays for it.",
  );
});

Deno.test("a heartbeat with nothing new costs less than a one-ask wake, and says only that", async () => {
  const p = await parts();
  assert.ok(p.heartbeat < p.oneAsk, `${p.heartbeat} ≥ ${p.oneAsk}`);
  assert.match(
    p.texts.heartbeat,
    /^## New since cursor 11\n\nNo event woke you: this is a heartbeat run\./m,
  );
  assert.match(p.texts.heartbeat, /No thread of yours waits on a follow-up\./);
  assert.doesNotMatch(p.texts.heartbeat, /^----- post /m);
});

Deno.test(`a one-ask wake's two requests stay within ${WHOLE_WAKE_SHARE}× OpenClaw's heartbeat`, async () => {
  const p = await parts();
  const first = CLAUDE_CODE_OWN + p.system + p.tools + p.instructions + p.oneAsk;
  const whole = first + first + ANSWER_TURN;
  assert.ok(
    whole <= WHOLE_WAKE_SHARE * OPENCLAW_HEARTBEAT,
    `a one-ask wake is about ${whole} characters (its first request twice, plus the answer ` +
      `turn ${ANSWER_TURN}), over ${WHOLE_WAKE_SHARE} × ${OPENCLAW_HEARTBEAT}: every part of ` +
      "the first request is paid again in the second.",
  );
});
