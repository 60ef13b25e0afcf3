import assert from "node:assert/strict";
import { ReviewQueue } from "../../src/node/review_queue.ts";

async function queue(ttlMs = 24 * 3_600_000) {
  const dir = await Deno.makeTempDir({ prefix: "wats-review-" });
  let now = 1_700_000_000_000;
  const warnings: string[] = [];
  const q = new ReviewQueue({
    dir: `${dir}/pending`,
    rejectionsFile: `${dir}/rejections.jsonl`,
    ttlMs,
    now: () => now,
    warn: (m) => warnings.push(m),
  });
  const draft = (text: string) => ({
    kind: "answer",
    text,
    parent: "a".repeat(64),
    thread: "a".repeat(64),
    profile: "helper",
    runId: "r1",
    createdAt: Math.floor(now / 1000),
  });
  return { dir, q, draft, warnings, advance: (ms: number) => now += ms };
}

Deno.test("a held draft is listed, can be edited, and is gone once removed", async () => {
  const { q, draft } = await queue();
  const held = q.hold(draft("first"));
  assert.match(held.id, /^[0-9a-f]{12}$/);
  assert.deepEqual(q.list().map((d) => d.text), ["first"]);
  assert.equal(q.edit(held.id, "edited").text, "edited");
  q.remove(held.id);
  assert.deepEqual(q.list(), []);
  assert.throws(() => q.get(held.id), /no draft .* is waiting: see `wats agent pending`/);
});

Deno.test("a rejection keeps its reason for the next run, once", async () => {
  const { q, draft } = await queue();
  const held = q.hold(draft("vague"));
  q.reject(held.id, "cite the docs");
  assert.deepEqual(q.list(), []);
  const r = q.drainRejections();
  assert.equal(r.length, 1);
  assert.equal(r[0]!.reason, "cite the docs");
  assert.equal(r[0]!.text, "vague");
  assert.deepEqual(q.drainRejections(), [], "told once");
});

Deno.test("drafts expire after agent.review_ttl and the next run hears why", async () => {
  const { q, draft, advance } = await queue(60_000);
  q.hold(draft("old"));
  advance(30_000);
  q.hold(draft("new"));
  advance(40_000);
  assert.deepEqual(q.list().map((d) => d.text), ["new"]);
  assert.match(q.drainRejections()[0]!.reason, /expired after agent.review_ttl/);
});

Deno.test("an id that is not a draft id is refused before any file is touched", async () => {
  const { q } = await queue();
  assert.throws(() => q.get("../../config"), /is not a draft id/);
});

Deno.test("a damaged draft is reported once, kept, and does not hide the others", async () => {
  const { q, draft, dir, warnings } = await queue();
  q.hold(draft("good"));
  await Deno.writeTextFile(`${dir}/pending/0123456789ab.json`, '{"id":');
  assert.deepEqual(q.list().map((d) => d.text), ["good"]);
  assert.deepEqual(q.list().map((d) => d.text), ["good"]);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /0123456789ab\.json is unreadable .*: fix or remove the file/);
  assert.equal(await Deno.readTextFile(`${dir}/pending/0123456789ab.json`), '{"id":');
});

Deno.test("expiry applies on every read: get, edit and the CLI's read, not only list", async () => {
  const { q, draft, advance, dir } = await queue(60_000);
  const a = q.hold(draft("old"));
  const b = q.hold(draft("old too"));
  advance(61_000);
  assert.deepEqual(q.read(), [], "`wats agent pending` does not show expired drafts");
  assert.ok(await Deno.stat(`${dir}/pending/${a.id}.json`), "read() changes nothing");
  assert.throws(() => q.get(a.id), /draft [0-9a-f]{12} expired after agent\.review_ttl/);
  assert.throws(() => q.edit(b.id, "new text"), /expired after agent\.review_ttl/);
  assert.deepEqual(
    q.drainRejections().map((r) => r.reason),
    [
      "expired after agent.review_ttl without review",
      "expired after agent.review_ttl without review",
    ],
  );
  assert.throws(() => q.get(a.id), /no draft .* is waiting/);
});

Deno.test("a draft whose publishing started cannot be rejected or edited, and does not expire", async () => {
  const { q, draft, advance } = await queue(60_000);
  const held = q.hold(draft("approved"));
  const signed = {
    id: "e".repeat(64),
    pubkey: "f".repeat(64),
    created_at: 1,
    kind: 4471,
    tags: [],
    content: "approved",
    sig: "0".repeat(128),
  };
  q.markSigned(held.id, signed);
  assert.throws(() => q.reject(held.id, "no"), /was approved as post e{64} .*approve it again/);
  assert.throws(() => q.edit(held.id, "x"), /approve it again to finish/);
  advance(120_000);
  assert.deepEqual(q.get(held.id).signed, signed, "an approved draft no longer expires");
  q.remove(held.id);
  q.remove(held.id);
  assert.deepEqual(q.list(), []);
});
