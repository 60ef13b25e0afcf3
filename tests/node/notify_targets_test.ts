import assert from "node:assert/strict";
import type { NotifyTarget } from "../../src/config/notify_tables.ts";
import type { NodeEvent } from "../../src/contracts/node_events.ts";
import {
  backoffMs,
  MAX_ATTEMPTS,
  QUEUE_MAX,
  retryAfterMs,
  type SenderWorld,
  startNotifyTargets,
} from "../../src/node/notify_targets.ts";
import { FakeTime, flush } from "../runner/fakes.ts";

const T0 = Date.UTC(2026, 0, 1);

const HOOK: NotifyTarget = {
  name: "hook",
  type: "webhook",
  url: "https://hooks.example.org/x",
  events: ["halted", "draft"],
  secretEnv: "HOOK_SECRET",
  timeoutMs: 1000,
};

function halt(reason: string): NodeEvent {
  return { event: "halted", id: "h", by: "b", reason };
}

/** A fake network: answers each request from `answers` in turn (the last repeats) and records when. */
function rig(answers: Array<number | Error | [number, Record<string, string>]>, random = 0.5) {
  const time = new FakeTime(T0);
  const calls: Array<{ at: number; url: string; body: string; headers: Record<string, string> }> =
    [];
  const warnings: string[] = [];
  let hang: Array<(r: Response) => void> | undefined;
  const world: SenderWorld = {
    fetch: (url, init) => {
      calls.push({
        at: time.now(),
        url,
        body: String(init.body),
        headers: init.headers as Record<string, string>,
      });
      if (hang) return new Promise((resolve) => hang!.push(resolve));
      const a = answers[Math.min(calls.length - 1, answers.length - 1)]!;
      if (a instanceof Error) return Promise.reject(a);
      const [status, headers] = Array.isArray(a) ? a : [a, {}];
      return Promise.resolve(new Response(null, { status, headers }));
    },
    timers: time,
    now: time.now,
    random: () => random,
    warn: (m) => warnings.push(m),
  };
  return {
    time,
    calls,
    warnings,
    world,
    hangAll: () => hang = [],
    start: (
      targets: Record<string, NotifyTarget> = { hook: HOOK },
      env: Record<string, string> = { HOOK_SECRET: "s" },
    ) =>
      startNotifyTargets({
        targets,
        readEnv: (n) => env[n],
        node: "n1",
        world,
      }),
  };
}

Deno.test("backoff doubles from 1 s up to 30 s with ±20% jitter; Retry-After replaces it", () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((a) => backoffMs(a, 0.5)), [
    1000,
    2000,
    4000,
    8000,
    16000,
    30000,
    30000,
  ]);
  assert.equal(backoffMs(1, 0), 800);
  assert.equal(backoffMs(1, 0.999999), 1200);
  assert.equal(backoffMs(3, 0.2, 7000), 7000);
  assert.equal(retryAfterMs("3", T0), 3000);
  assert.equal(retryAfterMs(new Date(T0 + 5000).toUTCString(), T0), 5000);
  assert.equal(retryAfterMs("soon", T0), undefined);
  assert.equal(retryAfterMs(null, T0), undefined);
});

Deno.test("a target that answers 500 twice and then 200 gets the notice on the third attempt, 1 s and 2 s apart", async () => {
  const r = rig([500, 503, 200]);
  const targets = r.start();
  targets.onEvent(halt("x"));
  await r.time.advance(60_000);
  assert.deepEqual(r.calls.map((c) => c.at - T0), [0, 1000, 3000]);
  // The same notice each time, signed anew with the attempt's time.
  assert.equal(new Set(r.calls.map((c) => c.headers["X-Wats-Delivery"])).size, 1);
  assert.deepEqual(targets.stats().hook, { sent: 1, failed: 0, dropped: 0, retries: 2, queued: 0 });
  assert.deepEqual(r.warnings, []);
});

Deno.test("network errors and 429 are retried up to 5 attempts, then the notice is given up with a warning", async () => {
  const r = rig([
    new TypeError("error sending request for url (https://hooks.example.org/x): refused"),
    [429, { "Retry-After": "7" }],
    502,
  ]);
  const targets = r.start();
  targets.onEvent(halt("x"));
  await r.time.advance(120_000);
  assert.equal(r.calls.length, MAX_ATTEMPTS);
  // 1 s, then Retry-After's 7 s, then 4 s and 8 s.
  assert.deepEqual(r.calls.map((c) => c.at - T0), [0, 1000, 8000, 12000, 20000]);
  assert.deepEqual(targets.stats().hook, { sent: 0, failed: 1, dropped: 0, retries: 4, queued: 0 });
  assert.equal(r.warnings.length, 1);
  assert.match(
    r.warnings[0]!,
    /^notify\.hook: gave up on a halted notice after 5 attempts: the target answered 502/,
  );
});

Deno.test("a warning never shows the target's URL, which may be a secret", async () => {
  const r = rig([
    new TypeError("error sending request for url (https://hooks.example.org/x): refused"),
  ]);
  const targets = r.start();
  targets.onEvent(halt("x"));
  await r.time.advance(120_000);
  assert.equal(targets.stats().hook?.failed, 1);
  assert.equal(r.warnings.length, 1);
  assert.match(r.warnings[0]!, /error sending request for url \(<url>\): refused/);
  assert.doesNotMatch(r.warnings[0]!, /hooks\.example\.org/);
});

Deno.test("a 4xx other than 429, or a redirect, is not retried; the next notice still goes", async () => {
  for (const status of [400, 401, 404, 302]) {
    const r = rig([status, 200]);
    const targets = r.start();
    targets.onEvent(halt("one"));
    targets.onEvent(halt("two"));
    await r.time.advance(60_000);
    assert.equal(r.calls.length, 2, String(status));
    assert.deepEqual(targets.stats().hook, {
      sent: 1,
      failed: 1,
      dropped: 0,
      retries: 0,
      queued: 0,
    });
  }
});

Deno.test("a Retry-After beyond 5 minutes gives the notice up at once", async () => {
  const r = rig([[503, { "Retry-After": "3600" }]]);
  const targets = r.start();
  targets.onEvent(halt("x"));
  await r.time.advance(3_600_000);
  assert.equal(r.calls.length, 1);
  assert.equal(targets.stats().hook?.failed, 1);
});

Deno.test("a target that never answers keeps at most 50 notices, dropping the oldest and counting them", async () => {
  const r = rig([200]);
  r.hangAll();
  const targets = r.start();
  for (let i = 0; i < QUEUE_MAX + 10; i++) targets.onEvent(halt(`n${i}`));
  await flush();
  // One in flight, the rest waiting: onEvent never waited for any of it.
  assert.equal(r.calls.length, 1);
  assert.match(r.calls[0]!.body, /"halted: n0"/);
  assert.deepEqual(targets.stats().hook, {
    sent: 0,
    failed: 0,
    dropped: 10,
    retries: 0,
    queued: QUEUE_MAX,
  });
  assert.equal(r.warnings.length, 1);
  assert.match(r.warnings[0]!, /more than 50 notices wait, so the oldest are dropped/);
  targets.stop();
  assert.equal(targets.stats().hook?.queued, 0);
});

Deno.test("each target gets only the events it chose", async () => {
  const r = rig([200]);
  const phone: NotifyTarget = {
    name: "phone",
    type: "ntfy",
    url: "https://ntfy.example.org/a",
    events: ["run_failed"],
    timeoutMs: 1000,
  };
  const targets = r.start({ hook: HOOK, phone });
  targets.onEvent(halt("x"));
  targets.onEvent({ event: "budget_paused", reason: "r", until: T0 });
  targets.onEvent({ event: "resumed" });
  await r.time.advance(1000);
  assert.deepEqual(r.calls.map((c) => c.url), ["https://hooks.example.org/x"]);
  assert.equal(targets.stats().phone?.sent, 0);
});

Deno.test("a target whose variable is not set is off, with a warning naming the variable", async () => {
  const r = rig([200]);
  const targets = r.start({ hook: HOOK }, { HOOK_SECRET: "" });
  targets.onEvent(halt("x"));
  await r.time.advance(1000);
  assert.equal(r.calls.length, 0);
  assert.deepEqual(targets.stats(), {});
  assert.deepEqual(r.warnings, [
    "notify.hook is off: the variable HOOK_SECRET is not set; set it where wats starts " +
    "(for wats service, in its environment) and restart",
  ]);
});

Deno.test("a url_env target posts to its variable's URL; one whose variable holds no URL is off", async () => {
  const r = rig([200]);
  const team: NotifyTarget = {
    name: "team",
    type: "slack",
    urlEnv: "SLACK_URL",
    events: ["halted"],
    timeoutMs: 1000,
  };
  const targets = r.start({ team }, { SLACK_URL: "https://slack.example.org/services/T/B/X" });
  targets.onEvent(halt("x"));
  await r.time.advance(1000);
  assert.deepEqual(r.calls.map((c) => c.url), ["https://slack.example.org/services/T/B/X"]);

  const bad = rig([200]);
  const off = bad.start({ team }, { SLACK_URL: "slack.example.org" });
  off.onEvent(halt("x"));
  await bad.time.advance(1000);
  assert.equal(bad.calls.length, 0);
  assert.deepEqual(bad.warnings, [
    "notify.team is off: the variable SLACK_URL does not hold an http or https URL without a " +
    "password; set it to the target's URL and restart",
  ]);
});

Deno.test("stop aborts the attempt in flight and cancels the retry timer", async () => {
  const r = rig([500]);
  const targets = r.start();
  targets.onEvent(halt("x"));
  await flush();
  assert.equal(r.time.pending(), 1);
  targets.stop();
  assert.equal(r.time.pending(), 0);
  targets.onEvent(halt("after"));
  await r.time.advance(60_000);
  assert.equal(r.calls.length, 1);
  assert.deepEqual(r.warnings, []);
});
