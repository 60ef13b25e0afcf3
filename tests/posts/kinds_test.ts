import assert from "node:assert/strict";
import {
  ACTIONABLE,
  FEEDBACK,
  isActionable,
  isFeedback,
  isWatsKind,
  KIND_BASE,
  NOSTR_KINDS,
  nostrKindOf,
  WATS_KINDS,
  watsKindOf,
} from "../../src/posts/kinds.ts";

Deno.test("wats kinds map to the contiguous block 4470–4481, presence to 14480, and back", () => {
  assert.equal(KIND_BASE, 4470);
  assert.equal(WATS_KINDS.length, 13);
  const expected = [
    ["ask", 4470],
    ["answer", 4471],
    ["clarify", 4472],
    ["offer", 4473],
    ["claim", 4474],
    ["release", 4475],
    ["react", 4476],
    ["vouch", 4477],
    ["progress", 4478],
    ["note", 4479],
    ["announce", 4480],
    ["halt", 4481],
    ["presence", 14480],
  ] as const;
  for (const [kind, n] of expected) {
    assert.equal(nostrKindOf(kind), n);
    assert.equal(watsKindOf(n), kind);
  }
  assert.deepEqual(NOSTR_KINDS, expected.map(([, n]) => n));
});

Deno.test("numbers outside the block are not wats kinds", () => {
  for (const n of [1, 4469, 4482, 4470.5, -1, NaN, 14481, 34480]) {
    assert.equal(watsKindOf(n), undefined);
  }
  assert.equal(isWatsKind("ask"), true);
  assert.equal(isWatsKind("toString"), false);
  assert.throws(() => nostrKindOf("bogus" as never), /Unknown wats kind/);
});

Deno.test("actionable and feedback kinds are the runner contract's lists; announce, halt and presence are neither", () => {
  assert.deepEqual([...ACTIONABLE], ["ask", "answer", "clarify", "offer", "claim", "release"]);
  assert.deepEqual([...FEEDBACK], ["react", "vouch", "progress", "note"]);
  for (const k of ["announce", "halt", "presence"] as const) {
    assert.equal(isActionable(k), false);
    assert.equal(isFeedback(k), false);
  }
  assert.equal(isActionable("clarify"), true);
  assert.equal(isFeedback("vouch"), true);
});
