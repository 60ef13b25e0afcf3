import assert from "node:assert/strict";
import { isRunId, newRunId, Transcripts } from "../../src/runner/transcripts.ts";

const DAY = 24 * 3_600_000;

function tempTranscripts(): { t: Transcripts; dir: string } {
  const dir = Deno.makeTempDirSync({ prefix: "wats-runner-test-" });
  return {
    t: new Transcripts({ runsDir: `${dir}/agent/runs`, runsIndex: `${dir}/agent/runs.jsonl` }),
    dir,
  };
}

function addRun(t: Transcripts, startMs: number, cost?: number): string {
  const id = newRunId(startMs);
  const w = t.begin({
    id,
    trigger: "events",
    events: ["e1"],
    started_at: new Date(startMs).toISOString(),
    harness: "claude",
  });
  w.line('{"type":"system","subtype":"init"}');
  w.end({
    status: "ok",
    exit_code: 0,
    duration_ms: 1000,
    turns: 2,
    ...(cost !== undefined ? { cost_usd: cost } : {}),
  }, startMs + 1000);
  return id;
}

Deno.test("a transcript is a wats_run header, the CLI lines as is, and a wats_end footer; the index gets one line", () => {
  const { t, dir } = tempTranscripts();
  try {
    const start = Date.UTC(2026, 9, 15, 12, 0, 0, 123);
    const id = newRunId(start, () => 0.5);
    assert.equal(id, "20261015T120000123Z-800000");
    const w = t.begin({
      id,
      trigger: "heartbeat",
      events: [],
      started_at: new Date(start).toISOString(),
      harness: "claude",
    });
    w.line('{"type":"assistant","message":{"content":[]}}');
    w.line("not json at all");
    const entry = w.end({
      status: "error",
      exit_code: 1,
      duration_ms: 4200,
      turns: 3,
      cost_usd: 0.05,
      error: "boom",
    }, start + 4200);
    const lines = t.read(id);
    assert.equal(lines.length, 4);
    assert.deepEqual(JSON.parse(lines[0]!), {
      type: "wats_run",
      id,
      trigger: "heartbeat",
      events: [],
      started_at: "2026-10-15T12:00:00.123Z",
      harness: "claude",
    });
    assert.equal(lines[1], '{"type":"assistant","message":{"content":[]}}');
    assert.equal(lines[2], "not json at all");
    assert.deepEqual(JSON.parse(lines[3]!), {
      type: "wats_end",
      status: "error",
      exit_code: 1,
      duration_ms: 4200,
      turns: 3,
      cost_usd: 0.05,
      error: "boom",
    });
    assert.deepEqual(t.index(), [entry]);
    assert.equal(entry.ended_at, "2026-10-15T12:00:04.323Z");
    assert.equal(entry.events, 0);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("run ids sort by time and are the only names a transcript path accepts", () => {
  const a = newRunId(Date.UTC(2026, 0, 1, 0, 0, 0, 5), () => 0.99);
  const b = newRunId(Date.UTC(2026, 0, 1, 0, 0, 0, 6), () => 0);
  const c = newRunId(Date.UTC(2026, 0, 2), () => 0.5);
  assert.deepEqual([c, b, a].sort(), [a, b, c]);
  assert.ok(isRunId(a));
  const { t, dir } = tempTranscripts();
  try {
    assert.throws(() => t.path("../../etc/passwd"), /not a run id/);
    assert.throws(() => t.read(a), /no transcript for run/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("retention keeps the newest 200 runs", () => {
  const { t, dir } = tempTranscripts();
  try {
    const now = Date.UTC(2026, 9, 15);
    const ids: string[] = [];
    for (let i = 0; i < 205; i++) ids.push(addRun(t, now - (205 - i) * 60_000));
    const removed = t.prune(now);
    assert.deepEqual(removed, ids.slice(0, 5));
    assert.deepEqual(t.index().map((e) => e.id), ids.slice(5));
    assert.deepEqual(t.transcriptIds(), ids.slice(5));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("retention drops runs older than 30 days", () => {
  const { t, dir } = tempTranscripts();
  try {
    const now = Date.UTC(2026, 9, 15);
    const old = addRun(t, now - 31 * DAY);
    const young = addRun(t, now - 29 * DAY);
    assert.deepEqual(t.prune(now), [old]);
    assert.deepEqual(t.index().map((e) => e.id), [young]);
    assert.deepEqual(t.transcriptIds(), [young]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("retention keeps the transcript of the run in progress", () => {
  const { t, dir } = tempTranscripts();
  try {
    const now = Date.UTC(2026, 9, 15);
    const id = newRunId(now - 40 * DAY);
    t.begin({
      id,
      trigger: "events",
      events: [],
      started_at: new Date(now - 40 * DAY).toISOString(),
      harness: "claude",
    });
    t.prune(now);
    assert.deepEqual(t.transcriptIds(), [id]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a transcript left open by a crash is closed as interrupted and indexed", () => {
  const { t, dir } = tempTranscripts();
  try {
    const start = Date.UTC(2026, 9, 15, 12);
    const id = newRunId(start);
    const w = t.begin({
      id,
      trigger: "events",
      events: ["x"],
      started_at: new Date(start).toISOString(),
      harness: "claude",
    });
    w.line('{"type":"system","subtype":"init"}');
    const done = addRun(t, start + 60_000, 0.1);
    assert.deepEqual(t.recoverInterrupted(start + 120_000), [id]);
    const entry = t.index().find((e) => e.id === id)!;
    assert.equal(entry.status, "interrupted");
    assert.equal(entry.cost_usd, undefined);
    assert.equal(JSON.parse(t.read(id).at(-1)!).type, "wats_end");
    assert.deepEqual(t.recoverInterrupted(start + 180_000), [], "only once");
    assert.ok(t.index().some((e) => e.id === done));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("an interrupted run lasts until it was last seen alive, not until its last output line", () => {
  const { t, dir } = tempTranscripts();
  try {
    // Started 8 s ago by the wall clock; its one output line was written now
    // (the file's mtime), a second after the start in the run's own terms.
    const start = Date.now() - 8_000;
    const id = newRunId(start);
    const w = t.begin({
      id,
      trigger: "events",
      events: ["x"],
      started_at: new Date(start).toISOString(),
      harness: "claude",
    });
    w.line('{"type":"system","subtype":"init"}');
    const written = Deno.statSync(t.path(id)).mtime!.getTime();
    Deno.utimeSync(t.path(id), (start + 800) / 1000, (start + 800) / 1000);
    assert.deepEqual(
      t.recoverInterrupted(written + 60_000, (x) => x === id ? start + 8_000 : undefined),
      [id],
    );
    const entry = t.index()[0]!;
    assert.equal(entry.status, "interrupted");
    assert.equal(entry.duration_ms, 8_000);
    assert.equal(entry.ended_at, new Date(start + 8_000).toISOString());
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("spend of runs retention removed still counts for this month's budget", () => {
  const { t, dir } = tempTranscripts();
  try {
    const now = Date.UTC(2026, 9, 15, 12);
    addRun(t, Date.UTC(2026, 8, 30, 12), 5); // last month: never counts
    for (let i = 0; i < 204; i++) {
      addRun(t, now - (204 - i) * 60_000, i % 2 === 0 ? 0.01 : undefined);
    }
    t.prune(now);
    assert.equal(t.index().length, 200);
    const spend = t.spend(now);
    const usd = spend.reduce((s, l) => s + (l.costUsd ?? 0), 0);
    assert.ok(Math.abs(usd - 102 * 0.01) < 1e-9, String(usd));
    assert.equal(spend.filter((l) => l.costUsd === undefined).length, 102);
    // Pruning again (nothing more to remove) keeps the carried spend.
    t.prune(now + 1000);
    assert.equal(t.spend(now + 1000).filter((l) => l.costUsd === undefined).length, 102);
    // Next month, nothing carries over.
    assert.deepEqual(t.spend(Date.UTC(2026, 10, 1)), []);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
