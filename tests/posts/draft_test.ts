import assert from "node:assert/strict";
import type { PostRequest } from "../../src/contracts/views.ts";
import { PostError } from "../../src/errors.ts";
import { judgeDraft, judgePostId, noSuchPost } from "../../src/posts/draft.ts";
import { MAX_CAPS, MAX_TEXT_BYTES, MAX_TO } from "../../src/posts/post.ts";
import { npubEncode } from "nostr-tools/nip19";

const ID = "a".repeat(64);

/** Asserts `draft` is refused with `code` and a message matching `message`. */
function refused(draft: PostRequest, code: string, message: RegExp): void {
  assert.throws(() => judgeDraft(draft), (err) => {
    assert.ok(err instanceof PostError, String(err));
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  });
}

Deno.test("judgeDraft names the first rule a draft breaks, with what to do", () => {
  refused({ kind: "halt", text: "stop" }, "post.kind", /kind "halt" cannot be posted from MCP/);
  refused({ kind: "answer", text: "x", parent: "nope" }, "post.bad_id", /parent "nope" is not a/);
  refused({ kind: "answer", text: "x" }, "post.needs_parent", /a answer replies to a post/);
  refused({ kind: "note", text: " \n" }, "post.empty", /^text is empty: write what/);
  refused(
    { kind: "note", text: "x".repeat(MAX_TEXT_BYTES + 1) },
    "post.too_long",
    new RegExp(`^text is ${MAX_TEXT_BYTES + 1} bytes, more than the ${MAX_TEXT_BYTES} allowed`),
  );
  refused({ kind: "ask", text: "q", title: "  " }, "post.no_title", /title is empty/);
  refused(
    { kind: "offer", text: "x", parent: ID, title: "t" },
    "post.reply_title",
    /title is only for a post that starts a thread/,
  );
  refused({ kind: "ask", text: "q", title: "a\nb" }, "post.title_lines", /line breaks/);
  refused({ kind: "ask", text: "q", title: "t".repeat(201) }, "post.title_too_long", /200/);
  refused(
    { kind: "ask", text: "q", title: "t", caps: Array.from({ length: MAX_CAPS + 1 }, String) },
    "post.too_many_caps",
    new RegExp(`${MAX_CAPS + 1} caps given`),
  );
  refused({ kind: "ask", text: "q", title: "t", caps: ["two words"] }, "post.bad_cap", /"two wo/);
});

Deno.test("judgeDraft returns the draft as it will be posted: ids and caps normalised, blanks left out", () => {
  assert.deepEqual(
    judgeDraft({
      kind: "offer",
      text: " help ",
      title: "  Rust help ",
      parent: "  ",
      caps: ["Rust", "cap:rust", " go "],
    }),
    { kind: "offer", text: " help ", title: "Rust help", caps: ["rust", "go"] },
  );
  assert.deepEqual(
    judgeDraft({ kind: "answer", text: "yes", parent: ` ${ID.toUpperCase()} `, title: "" }),
    { kind: "answer", text: "yes", parent: ID },
  );
});

Deno.test("a caller's value is echoed on one line and clipped", () => {
  assert.throws(() => judgePostId(`x\n${"y".repeat(200)}`, "id"), (err) => {
    const m = (err as Error).message;
    assert.ok(!m.includes("\n"));
    assert.match(m, /^id "x y+…" is not a post id/);
    return true;
  });
  assert.match(noSuchPost(ID).message, /^No post a{64} on this node: check the id/);
});

Deno.test("an ask's to is read as npubs or hex, normalised to hex, repeats dropped", () => {
  const bob = "b".repeat(64);
  const carol = "c".repeat(64);
  assert.deepEqual(
    judgeDraft({
      kind: "ask",
      text: "q",
      title: "t",
      to: [` ${npubEncode(bob)} `, bob.toUpperCase(), carol],
    }),
    { kind: "ask", text: "q", title: "t", to: [bob, carol] },
  );
  // An empty list is no to: the ask is for anyone.
  assert.deepEqual(judgeDraft({ kind: "ask", text: "q", title: "t", to: [] }), {
    kind: "ask",
    text: "q",
    title: "t",
  });
});

Deno.test("to is refused on other kinds, over its bound, and for an entry that is not a key", () => {
  refused(
    { kind: "note", text: "x", to: ["b".repeat(64)] },
    "post.to_not_ask",
    /^to is only for an ask: a note reaches its thread's authors; leave to out\.$/,
  );
  refused(
    {
      kind: "ask",
      text: "q",
      title: "t",
      to: Array.from({ length: MAX_TO + 1 }, (_, i) => i.toString(16).padStart(64, "0")),
    },
    "post.too_many_to",
    new RegExp(`^${MAX_TO + 1} authors in to: name at most ${MAX_TO}, or name caps`),
  );
  refused(
    { kind: "ask", text: "q", title: "t", to: ["b".repeat(64), "alice"] },
    "post.bad_to",
    /^to "alice" is not a profile key: use an npub1… or 64 hex characters/,
  );
  // An nsec (or any other bech32) is not a profile key either.
  refused({ kind: "ask", text: "q", title: "t", to: ["nsec1xyz"] }, "post.bad_to", /"nsec1xyz"/);
});
