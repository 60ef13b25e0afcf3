import assert from "node:assert/strict";
import { loadPending, PENDING_META_KEY, savePending } from "../../src/runner/pending.ts";
import { MemoryLog } from "./fakes.ts";

function metaStore(initial?: string) {
  const meta = new Map<string, string>();
  if (initial !== undefined) meta.set(PENDING_META_KEY, initial);
  return {
    meta,
    getMeta: (k: string) => meta.get(k),
    setMeta: (k: string, v: string) => void meta.set(k, v),
  };
}

Deno.test("what is owed to a future run is saved and read back", () => {
  const store = metaStore();
  const log = new MemoryLog();
  savePending(store, { events: ["e1", "e2"], feedback: ["f1"] }, log);
  assert.deepEqual(loadPending(store, log), { events: ["e1", "e2"], feedback: ["f1"] });
});

Deno.test("nothing saved, or a saved value of another shape, owes nothing", () => {
  const log = new MemoryLog();
  assert.equal(loadPending(metaStore(), log), undefined);
  assert.equal(loadPending(metaStore('{"events":[]}'), log), undefined);
  assert.deepEqual(loadPending(metaStore('{"events":["a",7],"feedback":[null,"b"]}'), log), {
    events: ["a"],
    feedback: ["b"],
  });
  assert.equal(log.lines.length, 0);
});

Deno.test("a saved queue that does not parse is dropped with a warning", () => {
  const log = new MemoryLog();
  assert.equal(loadPending(metaStore("{oops"), log), undefined);
  assert.equal(log.matching("(runner.pending) does not parse; it is dropped").length, 1);
});

Deno.test("a queue that cannot be saved is a warning, not a failure", () => {
  const log = new MemoryLog();
  savePending(
    {
      setMeta: () => {
        throw new Error("disk full");
      },
    },
    { events: [], feedback: [] },
    log,
  );
  assert.equal(log.matching("cannot save the runner's queue: disk full").length, 1);
});

Deno.test("asks held for a claim are saved and read back apart from the queued events", () => {
  const store = metaStore();
  const log = new MemoryLog();
  savePending(store, { events: ["e1"], feedback: [], claimed: ["c1", "c2"] }, log);
  assert.deepEqual(loadPending(store, log), {
    events: ["e1"],
    feedback: [],
    claimed: ["c1", "c2"],
  });
  // A save from before claims has none; a damaged list keeps its ids only.
  assert.equal("claimed" in loadPending(metaStore('{"events":[],"feedback":[]}'), log)!, false);
  assert.deepEqual(
    loadPending(metaStore('{"events":[],"feedback":[],"claimed":["c",3]}'), log)?.claimed,
    ["c"],
  );
});
