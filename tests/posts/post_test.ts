import assert from "node:assert/strict";
import { verifyEvent } from "nostr-tools/pure";
import { deriveProfileKey } from "../../src/identity/profile_key.ts";
import { PostError } from "../../src/errors.ts";
import { buildPost, MAX_TEXT_BYTES, readPost, signPost } from "../../src/posts/post.ts";
import { validateEvent } from "../../src/posts/validate.ts";

const alice = deriveProfileKey(new Uint8Array(32).fill(1), "alice");
const bob = deriveProfileKey(new Uint8Array(32).fill(1), "bob");
const T = 1_790_000_000;

Deno.test("a root post round-trips: kind, text, subject title, cap tags", () => {
  const event = buildPost(
    {
      kind: "announce",
      text: "I review Rust",
      title: "Rust reviewer",
      caps: ["rust", "review"],
      createdAt: T,
    },
    alice.secret,
  );
  assert.equal(event.kind, 4480);
  assert.equal(event.pubkey, alice.pubkey);
  assert.equal(event.created_at, T);
  assert.deepEqual(event.tags, [["subject", "Rust reviewer"], ["t", "cap:rust"], [
    "t",
    "cap:review",
  ]]);
  assert.equal(verifyEvent({ ...event }), true);
  const post = readPost(event);
  assert.deepEqual(post, {
    id: event.id,
    author: alice.pubkey,
    kind: "announce",
    text: "I review Rust",
    title: "Rust reviewer",
    caps: ["rust", "review"],
    to: [],
    createdAt: T,
    tags: event.tags,
  });
  assert.equal(post.root, undefined);
  assert.equal(post.parent, undefined);
});

Deno.test("a direct reply to the root carries only the root tag, and its parent is the root", () => {
  const root = buildPost({ kind: "ask", text: "how?", createdAt: T }, alice.secret);
  const reply = buildPost(
    {
      kind: "answer",
      text: "so",
      root: root.id,
      parent: root.id,
      parentAuthor: alice.pubkey,
      createdAt: T,
    },
    bob.secret,
  );
  assert.deepEqual(reply.tags, [["e", root.id, "", "root"], ["p", alice.pubkey]]);
  const post = readPost(reply);
  assert.equal(post.root, root.id);
  assert.equal(post.parent, root.id);
});

Deno.test("a nested reply carries NIP-10 marked root and reply tags and a p tag", () => {
  const root = buildPost({ kind: "ask", text: "how?", createdAt: T }, alice.secret);
  const answer = buildPost({ kind: "answer", text: "so", root: root.id, createdAt: T }, bob.secret);
  const clarify = buildPost(
    {
      kind: "clarify",
      text: "which?",
      root: root.id,
      parent: answer.id,
      parentAuthor: bob.pubkey,
      createdAt: T,
    },
    alice.secret,
  );
  assert.deepEqual(clarify.tags, [
    ["e", root.id, "", "root"],
    ["e", answer.id, "", "reply"],
    ["p", bob.pubkey],
  ]);
  const post = readPost(clarify);
  assert.equal(post.root, root.id);
  assert.equal(post.parent, answer.id);
});

Deno.test("built events are plain objects, never marked as verified", () => {
  const event = buildPost({ kind: "note", text: "x", createdAt: T }, alice.secret);
  assert.deepEqual(Object.getOwnPropertySymbols(event), []);
  assert.deepEqual(Object.keys(event).sort(), [
    "content",
    "created_at",
    "id",
    "kind",
    "pubkey",
    "sig",
    "tags",
  ]);
});

Deno.test("buildPost refuses what validation would reject", () => {
  const id = "a".repeat(64);
  const bad = [
    { kind: "answer", text: "x", parent: id, createdAt: T },
    { kind: "ask", text: "é".repeat(MAX_TEXT_BYTES / 2 + 1), createdAt: T },
    { kind: "ask", text: "x", root: "nope", createdAt: T },
    { kind: "ask", text: "x", parentAuthor: id, createdAt: T },
    { kind: "ask", text: "x", createdAt: 1.5 },
    { kind: "bogus", text: "x", createdAt: T },
    { kind: "ask", text: "x", caps: ["two words"], createdAt: T },
    { kind: "ask", text: "x", caps: Array.from({ length: 65 }, (_, i) => `c${i}`), createdAt: T },
  ];
  for (const draft of bad) {
    assert.throws(
      () => buildPost(draft as never, alice.secret),
      PostError,
      JSON.stringify(draft).slice(0, 80),
    );
  }
  // Exactly 32 KiB is allowed.
  buildPost({ kind: "ask", text: "é".repeat(MAX_TEXT_BYTES / 2), createdAt: T }, alice.secret);
});

Deno.test("readPost refuses events that are not wats posts", () => {
  const event = buildPost({ kind: "ask", text: "x", createdAt: T }, alice.secret);
  assert.throws(() => readPost({ ...event, kind: 1 }), /not a wats kind/);
  assert.throws(
    () => readPost({ ...event, tags: [["e", "b".repeat(64), "", "reply"]] }),
    /reply without one marked root/,
  );
});

Deno.test("signPost (nostr-wasm) makes the same post as buildPost, and it validates", async () => {
  const secret = crypto.getRandomValues(new Uint8Array(32));
  const draft = {
    kind: "answer" as const,
    text: "Use journald.",
    root: "a".repeat(64),
    parent: "b".repeat(64),
    parentAuthor: "c".repeat(64),
    caps: ["debian"],
    createdAt: 1_700_000_000,
  };
  const fast = await signPost(draft, secret);
  const slow = buildPost(draft, secret);
  assert.equal(fast.id, slow.id, "same content, same id");
  assert.equal(fast.pubkey, slow.pubkey);
  assert.deepEqual(fast.tags, slow.tags);
  const v = await validateEvent(fast, { nowMs: 1_700_000_000_000, maxSkewMs: 600_000 });
  assert.ok(v.ok, JSON.stringify(v));
});

Deno.test("an ask's to is its p tags, repeats dropped; a reply's p tag is not a to", () => {
  const ask = buildPost(
    {
      kind: "ask",
      text: "q",
      title: "t",
      mentions: [bob.pubkey, alice.pubkey, bob.pubkey],
      createdAt: T,
    },
    alice.secret,
  );
  assert.deepEqual(ask.tags.filter((t) => t[0] === "p"), [["p", bob.pubkey], ["p", alice.pubkey]]);
  assert.deepEqual(readPost(ask).to, [bob.pubkey, alice.pubkey]);
  const reply = buildPost(
    { kind: "answer", text: "so", root: ask.id, parentAuthor: alice.pubkey, createdAt: T },
    bob.secret,
  );
  assert.deepEqual(readPost(reply).to, []);
  const halt = buildPost(
    { kind: "halt", text: "stop", mentions: [bob.pubkey], createdAt: T },
    alice.secret,
  );
  assert.deepEqual(readPost(halt).to, []);
});
