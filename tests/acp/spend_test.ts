/**
 * What a call in flight reported, kept as it reports it (src/acp/spend.ts
 * `SpendNote`): bounded writes, and a restart that counts each call once.
 */

import assert from "node:assert/strict";
import { AcpSpendFile, SPEND_NOTE_EVERY_MS, SpendNote } from "../../src/acp/spend.ts";

const T0 = Date.UTC(2026, 10, 15, 12);

/** A clock and one-shot timers the test moves by hand. */
function fakeTime() {
  let now = T0;
  const due: Array<{ at: number; fn: () => void }> = [];
  return {
    now: () => now,
    later: (ms: number, fn: () => void) => {
      const t = { at: now + ms, fn };
      due.push(t);
      return () => void due.splice(due.indexOf(t), 1);
    },
    pending: () => due.length,
    advance(ms: number) {
      now += ms;
      for (const t of due.filter((t) => t.at <= now)) {
        due.splice(due.indexOf(t), 1);
        t.fn();
      }
    },
  };
}

function spendRig() {
  const dir = Deno.makeTempDirSync({ prefix: "wats-spend-" });
  const file = new AcpSpendFile(dir);
  const time = fakeTime();
  const sessions: number[] = [];
  const note = new SpendNote({
    file,
    harness: "claude",
    call: "run-1.acp_ab",
    session: (total) => sessions.push(total),
    now: time.now,
    later: time.later,
  });
  const open = () => {
    try {
      return JSON.parse(Deno.readTextFileSync(file.openPath("claude", "run-1.acp_ab")));
    } catch {
      return undefined;
    }
  };
  return {
    dir,
    file,
    time,
    note,
    open,
    sessions,
    [Symbol.dispose]: () => Deno.removeSync(dir, { recursive: true }),
  };
}

Deno.test("a call's reported spend is written when it changes, at most once a second, the last change of a second at its end", () => {
  using r = spendRig();
  r.note.report(0.1, 0.6);
  assert.deepEqual(r.open(), { at: T0, usd: 0.1, harness: "claude", call: "run-1.acp_ab" });
  assert.deepEqual(r.sessions, [0.6], "the session's cumulative cost is noted with it");
  // Three more reports within the second: none is written now, one timer waits.
  r.note.report(0.2, 0.7);
  r.note.report(0.3, 0.8);
  r.note.report(0.3, 0.8);
  assert.equal(r.open().usd, 0.1);
  assert.equal(r.time.pending(), 1);
  r.time.advance(SPEND_NOTE_EVERY_MS - 1);
  assert.equal(r.open().usd, 0.1);
  r.time.advance(1);
  assert.equal(r.open().usd, 0.3, "the last change is written at the second's end");
  assert.deepEqual(r.sessions, [0.6, 0.8]);
  // An unchanged cost writes nothing.
  r.time.advance(5 * SPEND_NOTE_EVERY_MS);
  r.note.report(0.3, 0.8);
  assert.deepEqual(r.sessions, [0.6, 0.8]);
  // The call's end: its line is added by the caller, the note goes, no timer is left.
  r.note.report(0.4, 0.9);
  r.note.report(0.5, 1.0);
  assert.equal(r.time.pending(), 1);
  r.note.drop();
  assert.equal(r.time.pending(), 0);
  assert.equal(r.open(), undefined);
});

Deno.test("a call that ends without a final count keeps what it reported as its line", () => {
  using r = spendRig();
  r.note.report(0.25, 0.25);
  r.note.settle();
  assert.equal(r.open(), undefined);
  assert.deepEqual(r.file.month(T0).map((x) => [x.call, x.usd]), [["run-1.acp_ab", 0.25]]);
});

Deno.test("at start, the notes a killed daemon left become lines, once: a call whose line was added already is not counted again", () => {
  using r = spendRig();
  r.note.report(0.3, 0.3);
  // Another call whose end line was added before the kill, but whose note was not yet removed.
  const other = new SpendNote({ file: r.file, harness: "claude", call: "b", now: r.time.now });
  other.report(0.2, 0.2);
  r.file.add({ at: T0 + 5, usd: 0.25, harness: "claude", call: "b" });
  // A damaged note counts nothing.
  Deno.writeTextFileSync(r.file.openPath("claude", "c"), '{"at": 1, "us');

  assert.equal(r.file.recoverOpen(T0 + 10), 1);
  assert.deepEqual(r.file.month(T0 + 10).map((x) => [x.call, x.usd, x.at]), [
    ["b", 0.25, T0 + 5],
    ["run-1.acp_ab", 0.3, T0],
  ]);
  assert.deepEqual([...Deno.readDirSync(`${r.dir}/acp_spend_open`)], [], "every note is gone");
  // A second start counts nothing more.
  assert.equal(r.file.recoverOpen(T0 + 20), 0);
  assert.equal(r.file.month(T0 + 20).length, 2);
});
