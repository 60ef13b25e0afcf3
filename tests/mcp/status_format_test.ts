/**
 * What the status tool (and so `wats status`) says about the runner's pauses
 * and money (issue 8, item 20).
 */

import assert from "node:assert/strict";
import { formatStatus } from "../../src/mcp/format.ts";
import type { NodeStatus } from "../../src/contracts/views.ts";

function status(over: Partial<NodeStatus> = {}): NodeStatus {
  return {
    node: "node-test",
    profile: { name: "alice", npub: "npub1alice" },
    dataDir: "/tmp/wats-test",
    relays: [],
    agent: { runtime: "claude", profile: "helper" },
    pendingDrafts: 0,
    safetyNotices: [],
    halted: null,
    budget: {
      usdToday: 0.051,
      usdPerDay: 0.05,
      usdMonth: 0.018,
      usdPerMonth: 20,
      runsToday: 3,
      runsPerDay: 48,
    },
    storedPosts: 0,
    ...over,
  };
}

Deno.test("status shows money to the cent's fraction that matters, and spend over its limit as over", () => {
  const text = formatStatus(status());
  assert.match(text, /^budget today: \$0\.051 of \$0\.05 spent, \$0\.00 left$/m);
  assert.match(text, /^budget this month: \$0\.018 of \$20\.00 spent, \$19\.98 left$/m);
});

Deno.test("status says runs today counts only runs without a reported cost", () => {
  assert.match(
    formatStatus(status()),
    /^runs today without a reported cost: 3 of 48 \(agent\.max_runs_per_day\)$/m,
  );
});

Deno.test("status shows what runs and calls in flight hold beside what was spent, only while any is", () => {
  const budget = status().budget!;
  const held = formatStatus(
    status({ budget: { ...budget, reserved: { usd: 0.8, count: 2, spentUsd: 0.42 } } }),
  );
  assert.match(
    held,
    /^budget reserved: \$0\.80 by 2 run\(s\) and coding agent call\(s\) in flight \(\$0\.42 of it spent so far\)$/m,
  );
  const none = formatStatus(
    status({ budget: { ...budget, reserved: { usd: 0, count: 0, spentUsd: 0 } } }),
  );
  assert.doesNotMatch(none, /reserved/);
});

Deno.test("status shows a budget pause and each loop-paused thread with its reason", () => {
  const until = Date.UTC(2026, 9, 16);
  const text = formatStatus(status({
    pauses: {
      budget: {
        reason: "the daily budget is spent ($0.051 of agent.max_usd_per_day = $0.05)",
        until,
      },
      threads: [
        { thread: "a".repeat(64), reason: "loop detected: 31 turns" },
        { thread: "b".repeat(64), reason: "loop detected: 40 turns" },
      ],
    },
  }));
  assert.match(
    text,
    /^agent runs paused: the daily budget is spent \(\$0\.051 of agent\.max_usd_per_day = \$0\.05\); they resume at 2026-10-16T00:00:00Z$/m,
  );
  assert.match(text, new RegExp(`^thread ${"a".repeat(64)} paused: loop detected: 31 turns$`, "m"));
  assert.match(text, new RegExp(`^thread ${"b".repeat(64)} paused: loop detected: 40 turns$`, "m"));
  assert.doesNotMatch(formatStatus(status()), /paused/);
});

Deno.test("status lists the asks held for other agents' claims, with who and until when", () => {
  const text = formatStatus(status({
    pauses: {
      threads: [],
      claimed: {
        count: 12,
        asks: [
          { ask: "a".repeat(64), by: "npub1carol", lapsesAt: Date.UTC(2026, 9, 15, 12, 30) },
          { ask: "b".repeat(64), by: "npub1dave" },
        ],
      },
    },
  }));
  assert.match(text, /^asks other agents claimed, not waking this one \(12\):$/m);
  assert.match(
    text,
    new RegExp(
      `^  - ask ${
        "a".repeat(64)
      }: claimed by npub1carol, until 2026-10-15T12:30:00Z unless they post again$`,
      "m",
    ),
  );
  assert.match(
    text,
    new RegExp(
      `^  - ask ${"b".repeat(64)}: claimed by npub1dave, answered by them: until they release it$`,
      "m",
    ),
  );
  assert.match(text, /^ {2}- and 10 more$/m);
  assert.doesNotMatch(formatStatus(status()), /claimed/);
});

Deno.test("status says which asks are retrying in how long, and which were given up after how many tries", () => {
  const text = formatStatus(status({
    pauses: {
      threads: [],
      retrying: [{
        what: "new ask 1a2b3c4d5e6f",
        post: "1a2b3c4d5e6f".padEnd(64, "0"),
        tries: 1,
        of: 4,
        at: Date.UTC(2026, 9, 15, 12, 0, 30),
        inMs: 25_000,
        error: "the CLI exited with code 1 without reporting a result",
      }],
      gaveUp: [{
        what: "new ask 9f8e7d6c5b4a",
        tries: 4,
        of: 4,
        at: Date.UTC(2026, 9, 15, 11, 0, 0),
        error: "API Error: 529 overloaded",
      }],
    },
  }));
  assert.match(
    text,
    /^new ask 1a2b3c4d5e6f: retrying in 25s \(try 2 of 4; its last run ended before the agent could act: the CLI exited with code 1 without reporting a result\)$/m,
  );
  assert.match(
    text,
    /^new ask 9f8e7d6c5b4a: gave up after 4 tries at 2026-10-15T11:00:00Z \(each run ended before the agent could act; last: API Error: 529 overloaded\)$/m,
  );
  assert.doesNotMatch(formatStatus(status()), /retrying|gave up/);
});

Deno.test("status shows each relay with the bytes received from it (a benchmark reads them)", () => {
  const text = formatStatus(status({
    relays: ["ws://127.0.0.1:7447", "ws://127.0.0.1:7448"],
    network: {
      relays: [
        { url: "ws://127.0.0.1:7447", connected: true, bytesReceived: 123456 },
        { url: "ws://127.0.0.1:7448", connected: false, lastError: "refused", bytesReceived: 0 },
      ],
      outbox: 0,
    },
  }));
  assert.match(text, /^relay: ws:\/\/127\.0\.0\.1:7447 connected, 123456 bytes received$/m);
  assert.match(
    text,
    /^relay: ws:\/\/127\.0\.0\.1:7448 not connected \(refused\), 0 bytes received$/m,
  );
});

Deno.test("status says per relay who it authenticated as, why it refused, and what it keeps refused; the endpoint's net.auth", () => {
  const text = formatStatus(status({
    network: {
      relays: [
        { url: "wss://a.example", connected: true, auth: { as: "npub1alice" } },
        {
          url: "wss://b.example",
          connected: true,
          auth: { as: "npub1alice", refused: "refuses the node's posts: restricted: no" },
          refused: 2,
        },
      ],
      outbox: 2,
      listenPort: 7447,
      listenHost: "0.0.0.0",
      listenAuth: "required",
      listenClients: { connected: 3, members: 2 },
    },
  }));
  assert.match(text, /^relay: wss:\/\/a\.example connected, authenticated as npub1alice$/m);
  assert.match(
    text,
    /^relay: wss:\/\/b\.example connected, authenticated as npub1alice, refuses the node's posts: restricted: no, 2 post\(s\) refused and kept queued$/m,
  );
  assert.match(
    text,
    /^relay endpoint: 0\.0\.0\.0:7447, members only \(net\.auth = required\), 2 of 3 client\(s\) authenticated as members$/m,
  );
});
