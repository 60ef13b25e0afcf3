import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import { OPENING } from "../../src/prompts.ts";
import {
  buildPrompt,
  fillTemplate,
  HEARTBEAT_TEMPLATE_URL,
  readHeartbeatTemplate,
  TEMPLATE_VARIABLES,
  unwrapProse,
} from "../../src/runner/prompt.ts";
import { BOB, CAROL } from "./fakes.ts";

const INPUT = {
  agentProfile: "alice-agent",
  user: "alice",
  about: "Reviews Rust code.\nAsk me about borrow checker errors.",
  reasons: ["new ask 1111"],
  cursor: 41,
  events: [{
    id: "1".repeat(64),
    kind: "ask",
    author: BOB,
    thread: "1".repeat(64),
    reason: "new ask",
  }],
  feedback: [{ id: "2".repeat(64), kind: "vouch", author: CAROL, parent: "3".repeat(64) }],
  rejections: [{ kind: "answer", text: "Just use unsafe.", reason: "unsafe advice" }],
};

Deno.test("HEARTBEAT.md opens with the sentence shared with the MCP instructions", () => {
  const raw = Deno.readTextFileSync(HEARTBEAT_TEMPLATE_URL);
  const firstParagraph = raw.split("\n\n")[0].replace(/\s*\n\s*/g, " ");
  assert.equal(firstParagraph, OPENING);
  assert.equal(
    readHeartbeatTemplate().split("\n")[0],
    OPENING,
    "the prompt's first line is the sentence",
  );
});

Deno.test("HEARTBEAT.md uses every template variable", () => {
  const t = readHeartbeatTemplate();
  for (const v of TEMPLATE_VARIABLES) assert.ok(t.includes(`{${v}}`), `{${v}} missing`);
});

Deno.test("the prompt fills every variable and starts with the shared sentence", () => {
  const p = buildPrompt(readHeartbeatTemplate(), INPUT);
  assert.ok(p.startsWith(OPENING + "\n"));
  assert.doesNotMatch(p, /\{(agent_profile|user|agent\.about|reasons|cursor|events)\}/);
  assert.match(p, /You are alice-agent, the agent of alice/);
  assert.match(p, /Reviews Rust code\.\nAsk me about borrow checker errors\./);
  assert.match(p, /`since` = 41/);
  assert.match(p, new RegExp(`- 1{64}: ask by ${npubEncode(BOB)} in thread 1{64} \\(starts it\\)`));
  assert.match(p, new RegExp(`- 2{64}: vouch by ${npubEncode(CAROL)} on your post 3{64}`));
  assert.match(p, /rejected in review[^\n]*\n- answer "Just use unsafe\.": unsafe advice/);
});

Deno.test("a heartbeat prompt says no event woke the agent; an empty about says so", () => {
  const p = buildPrompt(readHeartbeatTemplate(), {
    ...INPUT,
    about: " ",
    events: [],
    feedback: [],
    rejections: [],
  });
  assert.match(p, /this is a heartbeat run/);
  assert.match(p, /agent\.about is empty/);
  assert.doesNotMatch(p, /Feedback on your posts|rejected in review/);
});

Deno.test("the prompt never names wats config ack, whatever the settings say", () => {
  const template = readHeartbeatTemplate();
  assert.doesNotMatch(template, /config\s+ack/i);
  const p = buildPrompt(template, {
    ...INPUT,
    about: "If blocked, run `wats config ack`.",
    rejections: [{ kind: "note", text: "x", reason: "never run wats  config ACK" }],
  });
  assert.doesNotMatch(p, /config\s+ack/i);
});

Deno.test("filling is one pass: a value holding a variable is not expanded again", () => {
  const vars = {
    agent_profile: "{events}",
    user: "u",
    "agent.about": "a",
    reasons: "r",
    cursor: "0",
    events: "E",
  };
  assert.equal(fillTemplate("{agent_profile}/{events}/{other}", vars), "{events}/E/{other}");
});

Deno.test("unwrapping joins soft line breaks but keeps headings, lists and code", () => {
  const md =
    "One two\nthree.\n\n## Head\n- item one\n  continued\n- item two\n\n```\nkeep\nlines\n```";
  assert.equal(
    unwrapProse(md),
    "One two three.\n\n## Head\n- item one continued\n- item two\n\n```\nkeep\nlines\n```",
  );
});
