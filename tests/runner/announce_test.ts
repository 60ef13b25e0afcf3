import assert from "node:assert/strict";
import { ANNOUNCED_META_KEY, markAnnounced, planAnnounce } from "../../src/runner/announce.ts";
import { FakeStore } from "./fakes.ts";

Deno.test("the first start announces: title = first line of about, text = about, caps as tags", () => {
  const meta = new FakeStore();
  const plan = planAnnounce("Rust reviewer\nI review Rust PRs.", ["rust", "review"], meta);
  assert.deepEqual(plan.draft, {
    kind: "announce",
    title: "Rust reviewer",
    text: "Rust reviewer\nI review Rust PRs.",
    caps: ["rust", "review"],
  });
  assert.equal(plan.warning, undefined);
});

Deno.test("no announce until about or caps change, remembered across restarts in the store", () => {
  const meta = new FakeStore();
  const first = planAnnounce("Rust reviewer", ["rust"], meta);
  assert.ok(first.draft);
  assert.ok(
    planAnnounce("Rust reviewer", ["rust"], meta).draft,
    "not marked yet: publish failed, try again",
  );
  markAnnounced(meta, first.hash);
  assert.equal(meta.getMeta(ANNOUNCED_META_KEY), first.hash);
  assert.equal(planAnnounce("Rust reviewer", ["rust"], meta).draft, undefined);
  assert.equal(
    planAnnounce("Rust reviewer", ["rust", "rust"], meta).draft,
    undefined,
    "caps compare as a set",
  );
  assert.ok(planAnnounce("Rust reviewer", ["rust", "go"], meta).draft, "caps changed");
  assert.ok(planAnnounce("Go reviewer", ["rust"], meta).draft, "about changed");
});

Deno.test("an empty about warns and announces nothing", () => {
  const plan = planAnnounce("  ", ["rust"], new FakeStore());
  assert.equal(plan.draft, undefined);
  assert.match(plan.warning!, /agent\.about is empty.*wats config set agent\.about/);
});
