import assert from "node:assert/strict";
import type { NostrEvent } from "nostr-tools/core";
// Each nostr-tools entry point has its own copy of the symbol: use pure's, whose
// finalizeEvent and verifyEvent set and trust it.
import { finalizeEvent, verifiedSymbol, verifyEvent as cachedVerify } from "nostr-tools/pure";
import { deriveProfileKey } from "../../src/identity/profile_key.ts";
import { buildPost, MAX_CAPS, MAX_TEXT_BYTES, MAX_TO } from "../../src/posts/post.ts";
import { validateEvent, type ValidateOptions } from "../../src/posts/validate.ts";
import { initVerifier, verifyEvent } from "../../src/posts/verify.ts";

const alice = deriveProfileKey(new Uint8Array(32).fill(2), "alice");
const bob = deriveProfileKey(new Uint8Array(32).fill(2), "bob");
const NOW_MS = 1_790_000_000_000;
const T = NOW_MS / 1000;
const OPTS: ValidateOptions = { nowMs: NOW_MS, maxSkewMs: 10 * 60_000 };

/** Signs any template, valid or not as a wats post, so only the rule under test fails. */
function sign(t: Partial<NostrEvent>): NostrEvent {
  const e = finalizeEvent(
    { kind: 4470, created_at: T, tags: [], content: "hello", ...t },
    alice.secret,
  );
  return { ...e };
}

async function rejects(input: unknown, code: string, reason: RegExp, opts = OPTS) {
  const r = await validateEvent(input, opts);
  assert.equal(r.ok, false, `expected ${code}`);
  if (!r.ok) {
    assert.equal(r.code, code, r.reason);
    assert.match(r.reason, reason);
  }
}

Deno.test("a signed wats post is accepted as a fresh plain copy", async () => {
  const event = buildPost({ kind: "ask", text: "how?", title: "q", createdAt: T }, alice.secret);
  const input = { ...event, extra: "ignored" };
  const r = await validateEvent(input, OPTS);
  assert.ok(r.ok);
  assert.deepEqual(r.event, event);
  assert.notEqual(r.event, input);
  assert.equal("extra" in r.event, false);
});

Deno.test("validation rejects what is not an event object, naming the field", async () => {
  const good = sign({});
  await rejects(null, "malformed", /not a JSON object/);
  await rejects([good], "malformed", /not a JSON object/);
  await rejects("event", "malformed", /not a JSON object/);
  await rejects({ ...good, id: good.id.toUpperCase() }, "malformed", /id is not 64 lowercase hex/);
  await rejects({ ...good, pubkey: 5 }, "malformed", /pubkey/);
  await rejects({ ...good, sig: good.sig.slice(2) }, "malformed", /sig is not 128/);
  await rejects({ ...good, kind: 4470.5 }, "malformed", /kind is not an integer/);
  await rejects({ ...good, created_at: -1 }, "malformed", /created_at/);
  await rejects({ ...good, created_at: "1" }, "malformed", /created_at/);
  await rejects({ ...good, content: null }, "malformed", /content is not a string/);
  await rejects({ ...good, tags: {} }, "malformed", /tags is not an array/);
  await rejects({ ...good, tags: [[]] }, "malformed", /tag 0 is not a non-empty array/);
  await rejects({ ...good, tags: [["t", 1]] }, "malformed", /not a string/);
});

Deno.test("validation rejects text over 32 KiB (UTF-8 bytes) and accepts exactly 32 KiB", async () => {
  const exact = sign({ content: "é".repeat(MAX_TEXT_BYTES / 2) });
  assert.ok((await validateEvent(exact, OPTS)).ok);
  await rejects(sign({ content: "é".repeat(MAX_TEXT_BYTES / 2) + "x" }), "too_large", /32 KiB/);
  await rejects(sign({ content: "x".repeat(MAX_TEXT_BYTES + 1) }), "too_large", /32 KiB/);
});

Deno.test("validation rejects an event over 64 KiB in total", async () => {
  const tags = Array.from({ length: 40 }, () => ["x", "y".repeat(2000)]);
  await rejects(sign({ tags }), "too_large", /over 65536 bytes|65536/);
});

Deno.test("validation rejects more than 64 tags and accepts 64", async () => {
  // Plain topic tags: an ask holds at most 16 `cap:` tags (the routing bound, tested below).
  const tags = (n: number) => Array.from({ length: n }, (_, i) => ["t", `topic${i}`]);
  assert.ok((await validateEvent(sign({ tags: tags(64) }), OPTS)).ok);
  await rejects(sign({ tags: tags(65) }), "too_many_tags", /65 tags; the limit is 64/);
});

Deno.test("validation rejects a kind outside the wats block, though well signed", async () => {
  await rejects(
    sign({ kind: 1 }),
    "unknown_kind",
    /kind 1 is not a wats kind \(4470–4481, or 14480 presence\)/,
  );
  await rejects(sign({ kind: 4482 }), "unknown_kind", /4482/);
});

Deno.test("validation rejects created_at beyond the accepted skew, not within it", async () => {
  assert.ok((await validateEvent(sign({ created_at: T + 9 * 60 }), OPTS)).ok);
  assert.ok((await validateEvent(sign({ created_at: T - 86_400 * 365 }), OPTS)).ok);
  await rejects(sign({ created_at: T + 11 * 60 }), "future", /660 s in the future; at most 600 s/);
});

Deno.test("validation rejects malformed thread tags", async () => {
  const id = "c".repeat(64);
  await rejects(
    sign({ tags: [["e", id, "", "reply"]] }),
    "bad_thread",
    /reply without one marked root/,
  );
  await rejects(sign({ tags: [["e", "xyz", "", "root"]] }), "bad_thread", /not a 64-hex id/);
  await rejects(
    sign({ tags: [["e", id, "", "root"], ["e", id, "", "root"]] }),
    "bad_thread",
    /more than one e tag marked root/,
  );
  // Unmarked e tags are ignored, not errors.
  assert.ok((await validateEvent(sign({ tags: [["e", "whatever"]] }), OPTS)).ok);
});

Deno.test("validation rejects an id that is not the hash, and a wrong signature", async () => {
  const good = sign({});
  await rejects({ ...good, content: "changed" }, "bad_id", /id is not the sha256/);
  const other = buildPost({ kind: "ask", text: "hello", createdAt: T }, bob.secret);
  await rejects({ ...good, sig: other.sig }, "bad_sig", /signature does not match/);
  await rejects({ ...good, pubkey: bob.pubkey }, "bad_id", /sha256/);
  // Right id for Bob's pubkey, but Alice's signature.
  const forged = sign({});
  const asBob = buildPost({ kind: "ask", text: "hello", createdAt: T }, bob.secret);
  await rejects({ ...asBob, sig: forged.sig }, "bad_sig", /signature/);
});

Deno.test("wasm and pure-JS verification agree", async () => {
  assert.equal(await initVerifier(), "wasm");
  const good = sign({ content: 'snowman ☃ and \u0000 and "quotes"', tags: [["t", "é"]] });
  const cases: [NostrEvent, string][] = [
    [good, "ok"],
    [{ ...good, content: "x" }, "bad_id"],
    [{ ...good, sig: sign({ content: "other" }).sig }, "bad_sig"],
    [{ ...good, pubkey: "f".repeat(64) }, "bad_id"],
  ];
  for (const [event, expected] of cases) {
    assert.equal(await verifyEvent(event, "wasm"), expected);
    assert.equal(await verifyEvent(event, "js"), expected);
    const r = await validateEvent(event, { ...OPTS, backend: "js" });
    assert.equal(r.ok ? "ok" : r.code, expected);
  }
});

Deno.test("a cached verification mark on the input is never trusted", async () => {
  const event = finalizeEvent(
    { kind: 4470, created_at: T, tags: [], content: "real" },
    alice.secret,
  );
  assert.equal(event[verifiedSymbol], true);
  event.content = "tampered";
  assert.equal(cachedVerify(event), true, "nostr-tools trusts its cached mark");
  await rejects(event, "bad_id", /sha256/);
  const sigOnly = finalizeEvent(
    { kind: 4470, created_at: T, tags: [], content: "real" },
    alice.secret,
  );
  sigOnly.sig = sign({ content: "x" }).sig;
  await rejects(sigOnly, "bad_sig", /signature/);
});

Deno.test("fields are read once: a getter cannot swap the content after the check", async () => {
  const good = sign({ content: "checked" });
  let reads = 0;
  const tricky = {
    ...good,
    get content() {
      reads++;
      return reads === 1 ? "checked" : "swapped";
    },
  };
  const r = await validateEvent(tricky, OPTS);
  assert.ok(r.ok);
  assert.equal(r.event.content, "checked");
  assert.equal(reads, 1);
});

Deno.test("an ask's routing tags are bounded and must parse: more is dropped as bad_route", async () => {
  const keys = (n: number) =>
    Array.from({ length: n }, (_, i) => ["p", i.toString(16).padStart(64, "0")]);
  const caps = (n: number) => Array.from({ length: n }, (_, i) => ["t", `cap:c${i}`]);
  // At the bounds an ask is accepted.
  assert.ok((await validateEvent(sign({ tags: [...keys(MAX_TO), ...caps(MAX_CAPS)] }), OPTS)).ok);
  await rejects(sign({ tags: keys(MAX_TO + 1) }), "bad_route", /more than 16 p tags on an ask/);
  await rejects(sign({ tags: caps(MAX_CAPS + 1) }), "bad_route", /more than 16 cap: tags/);
  await rejects(sign({ tags: [["p", "npub1abc"]] }), "bad_route", /"npub1abc", not a 64-hex key/);
  await rejects(sign({ tags: [["p"]] }), "bad_route", /not a 64-hex key/);
  await rejects(sign({ tags: [["t", "cap:Two Words"]] }), "bad_route", /not a capability name/);
  // Other kinds keep their p tags as they are (a halt's targets, a reply's parent author).
  const reply = sign({ kind: 4471, tags: [["e", "a".repeat(64), "", "root"], ["p", "x"]] });
  assert.ok((await validateEvent(reply, OPTS)).ok);
});
