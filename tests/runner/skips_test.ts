import assert from "node:assert/strict";
import { SkipLog, SKIPS_KEPT } from "../../src/runner/skips.ts";
import { BOB, CAROL, MemoryLog } from "./fakes.ts";

const MIN = 60_000;
const T0 = Date.UTC(2026, 9, 15, 12);

function skip(n: number, author: string, setting: string, at: number) {
  return { at, post: String(n).padStart(64, "0"), kind: "ask", author, setting, reason: `r${n}` };
}

Deno.test("a skip is logged at info once per setting and author an hour, the rest at debug", () => {
  const log = new MemoryLog();
  const skips = new SkipLog(log);
  skips.add(skip(1, BOB, "agent.ignore_local", T0));
  skips.add(skip(2, BOB, "agent.ignore_local", T0 + 59 * MIN));
  skips.add(skip(3, CAROL, "agent.ignore_local", T0 + 59 * MIN));
  skips.add(skip(4, BOB, "agent.allow", T0 + 59 * MIN));
  skips.add(skip(5, BOB, "agent.ignore_local", T0 + 60 * MIN));
  const info = log.lines.filter((l) => l.level === "info").map((l) => l.message.split(";")[0]);
  assert.deepEqual(info, ["r1", "r3", "r4", "r5"]);
  assert.deepEqual(log.lines.filter((l) => l.level === "debug").map((l) => l.message), ["r2"]);
  assert.match(log.lines[0]!.message, /^r1; more like it from this author within the hour: debug/);
});

Deno.test("status keeps only the newest skips, oldest first", () => {
  const skips = new SkipLog(new MemoryLog());
  for (let i = 0; i < SKIPS_KEPT + 3; i++) skips.add(skip(i, BOB, "agent.allow", T0 + i));
  const kept = skips.recent().map((s) => s.reason);
  assert.equal(kept.length, SKIPS_KEPT);
  assert.equal(kept[0], "r3");
  assert.equal(kept.at(-1), `r${SKIPS_KEPT + 2}`);
});
