/**
 * `wats ask` and `wats thread` from the terminal against a real daemon (docs/asks.md): stdout,
 * stderr and exit code of each, their --help, and the mistakes a person makes.
 *
 * @module
 */

import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import { runWats, tempDataDir } from "../support/cli.ts";
import { nodeRig } from "../support/rig.ts";
import { parseAskArgs } from "../../src/cli/ask.ts";
import { parseThreadArgs } from "../../src/cli/thread.ts";
import { UsageError } from "../../src/errors.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  ...opts,
  name:
    "wats ask posts as the person and prints the ask's state; wats thread prints it above the posts",
  async fn() {
    await using rig = await nodeRig();
    const asked = await rig.wats([
      "ask",
      "Logs",
      "--text",
      "logrotate or journald?",
      "--caps",
      "rust,go",
    ]);
    assert.equal(asked.stderr, "");
    assert.equal(asked.code, 0);
    const id = asked.stdout.match(/^Posted ask ([0-9a-f]{64})\. It starts a new thread/)?.[1];
    assert.ok(id, asked.stdout);
    // A node with no relay keeps it, and knows no agent: the sender is told both.
    assert.match(asked.stdout, /- sent: kept on this node \(no relay in infra\)/);
    assert.match(
      asked.stdout,
      new RegExp(`State of ask ${id}: none will wake: no known agent has caps \\[rust, go\\]\\.`),
    );
    const stored = await rig.waitEvent("post_stored", { where: (e) => e.id === id });
    // The node's person signed it (the first profile `started` names), not its agent.
    const [person] = Object.values(rig.started.profiles);
    assert.equal(npubEncode(stored.author), person);

    const thread = await rig.wats(["thread", id]);
    assert.equal(thread.stderr, "");
    assert.equal(thread.code, 0);
    assert.match(
      thread.stdout,
      new RegExp(`^Thread ${id}: 1 post\\(s\\)\\.\\nState of ask ${id}: `),
    );
    assert.match(thread.stdout, /logrotate or journald\?/);
  },
});

Deno.test({
  ...opts,
  name: "wats ask and wats thread --help print their usage on stdout and exit 0, with no daemon",
  async fn() {
    for (const [cmd, first] of [["ask", "Usage: wats ask"], ["thread", "Usage: wats thread"]]) {
      const r = await runWats(["--data-dir", tempDataDir(), cmd!, "--help"]);
      assert.equal(r.code, 0);
      assert.equal(r.stderr, "");
      assert.ok(r.stdout.startsWith(first!), r.stdout);
      assert.match(r.stdout, /docs\/asks\.md/);
    }
    const top = await runWats(["--help"]);
    assert.match(top.stdout, /wats ask "TITLE"/);
    assert.match(top.stdout, /wats thread ID/);
  },
});

Deno.test({
  ...opts,
  name: "without a daemon, wats ask and wats thread fail with exit 1 and say how to start it",
  async fn() {
    const dir = tempDataDir();
    const a = await runWats(["--data-dir", dir, "ask", "Logs", "--text", "hi"]);
    assert.equal(a.code, 1);
    assert.equal(a.stdout, "");
    assert.match(a.stderr, /^error: no wats daemon answers on .*mcp\.sock: start it with `wats`/);
    const t = await runWats(["--data-dir", dir, "thread", "a".repeat(64)]);
    assert.equal(t.code, 1);
    assert.match(t.stderr, /^error: no wats daemon answers/);
  },
});

Deno.test({
  ...opts,
  name: "a thread the node does not have is an error naming what to use, exit 1",
  async fn() {
    await using rig = await nodeRig();
    const r = await rig.wats(["thread", "b".repeat(64)]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^error: .*b{64}/);
  },
});

Deno.test("wats ask's and wats thread's mistakes are usage errors naming the fix", async () => {
  await assert.rejects(
    () => parseAskArgs([]),
    (e) => e instanceof UsageError && /needs a title/.test(e.message),
  );
  await assert.rejects(
    () => parseAskArgs(["Logs"]),
    (e) => e instanceof UsageError && /needs the question: --text/.test(e.message),
  );
  await assert.rejects(
    () => parseAskArgs(["Logs", "--text", "x", "more"]),
    (e) => e instanceof UsageError && /unexpected argument "more" for wats ask/.test(e.message),
  );
  await assert.rejects(
    () => parseAskArgs(["Logs", "--bogus"]),
    (e) => e instanceof UsageError && /unknown flag --bogus for wats ask/.test(e.message),
  );
  assert.deepEqual(
    await parseAskArgs(
      ["Logs", "--text", "-", "--to", "k1", "--to", "k2", "--caps", "a, b"],
      () => Promise.resolve("from stdin"),
    ),
    { help: false, title: "Logs", text: "from stdin", to: ["k1", "k2"], caps: ["a", "b"] },
  );
  assert.throws(() => parseThreadArgs([]), /needs a post's id/);
  assert.throws(() => parseThreadArgs(["x", "--limit", "0"]), /--limit must be a whole number/);
  assert.deepEqual(parseThreadArgs(["x", "--limit", "5"]), { help: false, id: "x", limit: 5 });
});

Deno.test({
  ...opts,
  name: "a usage mistake exits 2 with one line on stderr",
  async fn() {
    const r = await runWats(["--data-dir", tempDataDir(), "ask", "--text", "hi"]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^error: wats ask needs a title/);
  },
});
