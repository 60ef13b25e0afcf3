/**
 * What became of an ask, as its sender sees it (src/node/ask_state.ts): a table over what the
 * node observes — relay acknowledgements, routing, claims, answers, the review queue, the clock.
 */

import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import { type AskObservations, askState, nextChange } from "../../src/node/ask_state.ts";
import type { ClaimPost } from "../../src/runner/claims.ts";
import type { AskPhase } from "../../src/contracts/views.ts";
import { formatAskState } from "../../src/mcp/format.ts";

const key = (c: string) => c.repeat(64);
const ASKER = key("a");
const X = key("b");
const Y = key("c");
const ASK = key("1");
const T0 = 1_800_000_000; // the ask's created_at, seconds
const MIN = 60_000;

function post(id: string, kind: string, author: string, atS: number): ClaimPost {
  return { id, seq: atS - T0 + 2, author, kind, parent: ASK, createdAt: atS };
}
const askPost: ClaimPost = { id: ASK, seq: 1, author: ASKER, kind: "ask", createdAt: T0 };

function observe(over: Partial<AskObservations> = {}): AskObservations {
  return {
    ask: { id: ASK, author: ASKER, title: "Logs", caps: ["rust"], createdAt: T0 },
    local: true,
    relays: { of: 2, waiting: 0 },
    reach: { matching: 2, reachable: 1 },
    thread: [askPost],
    heldDrafts: [],
    claimTtlMs: 30 * MIN,
    askTimeoutMs: 60 * MIN,
    now: T0 * 1000 + 5 * MIN,
    ...over,
  };
}

const cases: Array<[string, Partial<AskObservations>, AskPhase]> = [
  ["just sent, agents match: waiting", {}, "waiting"],
  [
    "no known agent has its caps: unroutable",
    { reach: { matching: 0, reachable: 0 } },
    "unroutable",
  ],
  [
    "another author's claim holds it: claimed",
    { thread: [askPost, post(key("2"), "claim", X, T0 + 60)] },
    "claimed",
  ],
  [
    "the claim lapsed and the timeout passed: no taker",
    { thread: [askPost, post(key("2"), "claim", X, T0 + 60)], now: T0 * 1000 + 61 * MIN },
    "no_taker",
  ],
  [
    "a claim that still holds past the timeout keeps it claimed",
    {
      thread: [askPost, post(key("2"), "claim", X, T0 + 50 * 60)],
      now: T0 * 1000 + 61 * MIN,
    },
    "claimed",
  ],
  [
    "an answer by another author: answered, whatever else",
    {
      thread: [askPost, post(key("2"), "claim", X, T0 + 60), post(key("3"), "answer", X, T0 + 90)],
      reach: { matching: 0, reachable: 0 },
      now: T0 * 1000 + 90 * MIN,
    },
    "answered",
  ],
  [
    "the asker's own reply is no answer",
    { thread: [askPost, post(key("3"), "answer", ASKER, T0 + 90)] },
    "waiting",
  ],
  ["an answer held for review on this node: held", { heldDrafts: ["d1"] }, "held"],
  ["nothing by the timeout: no taker", { now: T0 * 1000 + 60 * MIN }, "no_taker"],
  [
    "agent.ask_timeout off: never no taker",
    { askTimeoutMs: 0, now: T0 * 1000 + 600 * MIN },
    "waiting",
  ],
  [
    "the asker's own claim does not count as a taker",
    { thread: [askPost, post(key("2"), "claim", ASKER, T0 + 60)] },
    "waiting",
  ],
  [
    "a released claim opens it again",
    {
      thread: [
        askPost,
        post(key("2"), "claim", X, T0 + 60),
        post(key("4"), "release", X, T0 + 120),
      ],
    },
    "waiting",
  ],
];

for (const [name, over, phase] of cases) {
  Deno.test(`ask state: ${name}`, () => {
    assert.equal(askState(observe(over)).phase, phase);
  });
}

Deno.test("ask state: a local ask counts the relays that acknowledged it; another's says nothing of relays", () => {
  assert.deepEqual(askState(observe({ relays: { of: 3, waiting: 1 } })).sent, { acked: 2, of: 3 });
  const remote = askState(observe({ local: false }));
  assert.equal(remote.sent, undefined);
});

Deno.test("ask state: routing, claim, answers and the no-taker time are reported as observed", () => {
  const s = askState(observe({
    ask: { id: ASK, author: ASKER, caps: [], to: [Y], createdAt: T0 },
    reach: { matching: 1, reachable: 0 },
    thread: [
      askPost,
      post(key("2"), "claim", X, T0 + 60),
      post(key("5"), "answer", Y, T0 + 200),
      post(key("3"), "answer", X, T0 + 90),
    ],
  }));
  assert.deepEqual(s.routing, { caps: [], to: [npubEncode(Y)], matching: 1, reachable: 0 });
  assert.deepEqual(s.answers.map((a) => a.by), [npubEncode(X), npubEncode(Y)], "oldest first");
  assert.equal(s.claim?.by, npubEncode(X));
  assert.equal(s.noTakerAt, T0 * 1000 + 60 * MIN);
  assert.equal(s.by, npubEncode(ASKER));
});

Deno.test("ask state: the next change by the clock is the claim's lapse, then the no-taker time", () => {
  const claimed = askState(observe({ thread: [askPost, post(key("2"), "claim", X, T0 + 60)] }));
  assert.equal(claimed.phase, "claimed");
  assert.equal(nextChange(claimed, T0 * 1000 + 5 * MIN), (T0 + 60) * 1000 + 30 * MIN);
  const waiting = askState(observe());
  assert.equal(nextChange(waiting, T0 * 1000 + 5 * MIN), T0 * 1000 + 60 * MIN);
  const answered = askState(observe({ thread: [askPost, post(key("3"), "answer", X, T0 + 9)] }));
  assert.equal(nextChange(answered, T0 * 1000), undefined);
});

Deno.test("ask state: a relay that refused the ask (restricted:) is named with its reason, not counted as acknowledged", () => {
  const refused = [{ relay: "wss://team.example", reason: "restricted: not a member" }];
  const s = askState(observe({ relays: { of: 2, waiting: 1, refused } }));
  assert.deepEqual(s.sent, { acked: 1, of: 2, refused });
  const text = formatAskState(s, T0 * 1000 + 5 * MIN);
  assert.match(
    text,
    /^- refused by wss:\/\/team\.example: restricted: not a member \(kept queued for it; see wats status\)$/m,
  );
});
