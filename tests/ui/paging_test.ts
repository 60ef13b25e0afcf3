/**
 * The dashboard pages a big store instead of loading it: the posts page reads
 * the daemon's feed a page at a time (a real daemon, a store of 120 posts),
 * and the runs page shows one page of a long index.
 */

import assert from "node:assert/strict";
import { startWats, tempDataDir } from "../support/cli.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { Store } from "../../src/store/store.ts";
import { nostrKindOf } from "../../src/posts/kinds.ts";
import type { NostrEvent } from "../../src/posts/post.ts";
import { DaemonSource } from "../../src/ui/source.ts";
import { runsPage } from "../../src/ui/pages.ts";
import type { RunIndexEntry } from "../../src/contracts/runs.ts";

Deno.test({
  name: "the posts page walks the feed newest first, a page at a time, to the oldest post",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = tempDataDir();
    const paths = dataPaths(dir);
    // Well-formed unsigned events straight into the store (it does not verify).
    const store = Store.open(paths.store);
    const now = Math.floor(Date.now() / 1000);
    store.insert(
      Array.from({ length: 120 }, (_, i): NostrEvent => ({
        id: (i + 1).toString(16).padStart(64, "c"),
        pubkey: "1".repeat(64),
        created_at: now - 200 + i,
        kind: nostrKindOf("note"),
        tags: [["subject", `note ${i}`]],
        content: `note number ${i}`,
        sig: "0".repeat(128),
      })),
      { origin: "remote" },
    );
    store.close();
    const node = startWats(["--data-dir", dir, "node", "--agent", "none"]);
    const source = new DaemonSource(paths);
    try {
      await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
      const seen: number[] = [];
      let before: number | undefined;
      let pages = 0;
      do {
        const page = await source.posts(before, 50);
        pages++;
        assert.ok(page.posts.length <= 50);
        seen.push(...page.posts.map((p) => p.seq));
        before = page.older;
      } while (before !== undefined && pages < 10);
      assert.equal(pages, 3);
      assert.deepEqual(
        seen,
        Array.from({ length: 120 }, (_, i) => 120 - i),
        "newest first, each once",
      );
    } finally {
      await source.close();
      await node.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("the runs page shows one page of a long index, newest first, with a link to older runs", () => {
  const entries: RunIndexEntry[] = Array.from({ length: 1000 }, (_, i) => ({
    id: `20261101T000000000Z-${i.toString(16).padStart(6, "0")}`,
    trigger: "events",
    events: 1,
    started_at: "2026-11-01T00:00:00.000Z",
    ended_at: "2026-11-01T00:00:20.000Z",
    harness: "claude",
    status: "ok",
    exit_code: 0,
    duration_ms: 20_000,
  }));
  const html = runsPage({ csrf: "x" }, entries, [], { offset: 50, size: 50 });
  const ids = [...html.matchAll(/<a href="\/runs\/([^"]+)">/g)].map((m) => m[1]);
  assert.equal(ids.length, 50);
  assert.equal(ids[0], entries[949]!.id);
  assert.equal(ids.at(-1), entries[900]!.id);
  assert.match(html, /<a id="older" href="\/runs\?offset=100">/);
  const last = runsPage({ csrf: "x" }, entries, [], { offset: 950, size: 50 });
  assert.doesNotMatch(last, /id="older"/);
});
