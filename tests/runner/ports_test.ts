import assert from "node:assert/strict";
import { literalLog, threadOf } from "../../src/runner/ports.ts";
import { MemoryLog } from "./fakes.ts";

Deno.test("runner log messages reach LogTape as literal text: braces are escaped", () => {
  const mem = new MemoryLog();
  literalLog(mem).warn('run failed: {"error":"x"}');
  assert.deepEqual(mem.lines, [{ level: "warn", message: 'run failed: {{"error":"x"}}' }]);
});

Deno.test("a post's thread is its root, or itself", () => {
  assert.equal(threadOf({ id: "a" }), "a");
  assert.equal(threadOf({ id: "b", root: "a" }), "a");
});
