/** The works pages from fixed `WorkDetail` data: states, actions, cut and binary files, hostile text. */

import assert from "node:assert/strict";
import { discardPage, workFilePage, workPage, worksPage } from "../../src/ui/works_pages.ts";
import {
  DIFF_INLINE_LINES,
  DIFF_OPEN_LINES,
  DIFF_PAGE_LINES,
  visible,
} from "../../src/ui/diff_view.ts";
import { bigFile, sampleWork, summaryOf, THREAD } from "../support/works_fixtures.ts";
import type { WorkState } from "../../src/contracts/works.ts";

const CTX = { csrf: "t0k" };

Deno.test("the works list shows each work's facts in the order given, links its page and thread, and pages", () => {
  const a = summaryOf(sampleWork({ id: "w2", work: "newer", state: "running" }));
  const b = summaryOf(sampleWork({ id: "w1", work: "older", state: "in doubt" }));
  const html = worksPage(CTX, { works: [a, b], next: 1 }, 0);
  assert.ok(html.indexOf("newer") < html.indexOf("older"), "in the daemon's order, newest first");
  for (
    const v of [
      "claude-acp",
      "app",
      "helper",
      "wats/helper/cccccccc/fix-logs",
      "running",
      "in doubt",
    ]
  ) {
    assert.ok(html.includes(v), v);
  }
  assert.match(html, /<a href="\/works\/w2">newer<\/a>/);
  assert.ok(html.includes(`href="/posts/thread/${THREAD}"`));
  assert.match(html, /id="older" href="\/works\?page=1"/);
  assert.doesNotMatch(html, /id="newer"/, "the first page has no newer link");
  assert.match(html, /<a href="\/works" class="active">Works<\/a>/, "the nav names Works");
  const last = worksPage(CTX, { works: [b] }, 2);
  assert.match(last, /id="newer" href="\/works\?page=1"/);
  assert.doesNotMatch(last, /id="older"/);
  assert.match(worksPage(CTX, { works: [] }, 0), /No works\./);
});

Deno.test("a work's page: facts, commits, a per-file diff with counts and coloured lines, a named binary file, the calls with refused requests", () => {
  const html = workPage(CTX, sampleWork());
  assert.match(html, /2 file\(s\) changed/);
  assert.match(html, /<span class="adds">\+1<\/span> <span class="dels">−1<\/span>/);
  assert.match(
    html,
    /<tr class="del"><td class="ln">2<\/td><td class="ln"><\/td><td class="code">- {2}rotate: &#34;weekly&#34;,<\/td><\/tr>/,
  );
  assert.match(
    html,
    /<tr class="add"><td class="ln"><\/td><td class="ln"><a href="\/works\/w1\?file=src%2Flogs.ts&#38;line=2#send">2<\/a><\/td><td class="code">\+ {2}rotate: &#34;daily&#34;,<\/td><\/tr>/,
  );
  assert.match(html, /<tr class="hunk"><td colspan="3">@@ -1,3 \+1,3 @@<\/td><\/tr>/);
  assert.match(html, /<code>docs\/logo.png<\/code>.*binary/s);
  assert.match(html, /Binary file: not shown\./);
  assert.match(html, /rotate logs daily/);
  assert.match(html, /make the logs rotate daily/);
  assert.match(html, /Done: logs rotate daily\./);
  assert.match(html, /Refused requests.*rm -rf \/ \(refused by the rules\)/s);
  assert.match(html, /href="\/works\/w1\?file=src%2Flogs.ts#send">comment<\/a>/);
  assert.match(html, /No transcript\./);
  // Every form carries the CSRF token.
  const forms = [
    ...html.matchAll(
      /<form method="post" action="([^"]+)"[^>]*><input type="hidden" name="csrf" value="t0k">/g,
    ),
  ]
    .map((m) => m[1]);
  assert.deepEqual(forms, ["/logout", "/works/w1/merge", "/works/w1/push", "/works/w1/send"]);
  assert.match(html, /name="draft_pr"/);
  assert.match(html, /href="\/works\/w1\/discard"/);
});

Deno.test("the actions offered follow the state: no merge or send back once merged or swept, no push without a remote", () => {
  const actions = (over: Parameters<typeof sampleWork>[0]) =>
    [
      ...workPage(CTX, sampleWork(over)).matchAll(
        /action="\/works\/w1\/(\w+)"|href="\/works\/w1\/(discard)"/g,
      ),
    ]
      .map((m) => m[1] ?? m[2]).sort();
  const states: WorkState[] = ["running", "parked", "in doubt", "idle"];
  for (const state of states) {
    assert.deepEqual(actions({ state }), ["discard", "merge", "push", "send"], state);
  }
  assert.deepEqual(actions({ state: "merged" }), ["discard", "push"]);
  assert.match(
    workPage(CTX, sampleWork({ state: "parked" })),
    /id="waiting">A request of this work&#39;s call waits for you: decide it on the <a href="\/review">review page<\/a>/,
  );
  assert.match(
    workPage(CTX, sampleWork({ state: "in doubt" })),
    /id="waiting">A call of this work is in doubt/,
  );
  assert.doesNotMatch(workPage(CTX, sampleWork({ state: "running" })), /id="waiting"/);
  assert.deepEqual(
    actions({ state: "swept" }),
    ["discard", "push", "send"],
    "the branch remains: a send back continues it",
  );
  assert.deepEqual(actions({ state: "swept", head: undefined }), [], "nothing left to act on");
  assert.deepEqual(actions({ remote: undefined }), ["discard", "merge", "send"]);
  // A base that is no local branch: push instead, and the page says why.
  assert.deepEqual(actions({ mergeInto: undefined }), ["discard", "push", "send"]);
  assert.match(
    workPage(CTX, sampleWork({ base: "origin/main", mergeInto: undefined })),
    /id="no-merge">The base <code>origin\/main<\/code> is not a local branch, so the work cannot be merged into it here: push it and merge it there/,
  );
  // No commit to merge: only send back and discard (and push of the branch).
  assert.deepEqual(actions({ commits: [] }), ["discard", "push", "send"]);
});

Deno.test("a work whose commit never happened shows its uncommitted changes with their diff, and offers send back", () => {
  const html = workPage(
    CTX,
    sampleWork({
      commits: [],
      diff: [],
      uncommitted: {
        diff: [{
          path: "notes.txt",
          status: "added",
          binary: false,
          additions: 1,
          deletions: 0,
          cut: false,
          hunks: [{ header: "@@ -0,0 +1 @@", lines: [{ op: "+", text: "written", new: 1 }] }],
        }],
        cut: false,
      },
    }),
  );
  assert.match(html, /<h2 id="uncommitted">Uncommitted changes<\/h2>/);
  assert.match(html, /holds 1 file\(s\) changed but not committed on the branch/);
  assert.match(html, /<td class="code">\+written<\/td>/);
  assert.match(html, /id="send-back"/);
  assert.doesNotMatch(html, /id="merge"/);
  assert.doesNotMatch(workPage(CTX, sampleWork()), /id="uncommitted"/);
});

Deno.test("a long file is collapsed, a cut file and a cut diff name the `git diff` that shows them, short files are open", () => {
  const w = sampleWork({
    diff: [
      sampleWork().diff[0]!,
      bigFile("big.ts", DIFF_OPEN_LINES + 1),
      { ...bigFile("huge.ts", 10), cut: true, hunks: [], additions: 90_000 },
    ],
    diffCut: true,
  });
  const html = workPage(CTX, w);
  assert.match(html, /<details class="diff-file" data-path="src\/logs.ts" open>/);
  assert.match(html, /<details class="diff-file" data-path="big.ts">/);
  assert.match(html, /\(\d+ lines, collapsed\)/);
  assert.match(
    html,
    /data-path="huge.ts" open>.*too long to show here \(\+90000 −0\): see all of it with <code>git diff main...wats\/helper\/cccccccc\/fix-logs -- huge.ts<\/code> in the checkout/s,
  );
  assert.match(
    html,
    /id="diff-cut">The diff is cut \(as in <code>wats work show w1<\/code>\): see all of it with <code>git diff main...wats\/helper\/cccccccc\/fix-logs<\/code>/,
  );
});

Deno.test("hostile file names, diff lines, subjects and call texts are shown as text; bidi characters are made visible", () => {
  const evil = '<script>alert(1)</script><img src=x onerror="alert(2)">';
  const w = sampleWork({
    work: `${evil}\u202e`,
    branch: `${evil}\u2066`,
    commits: [{ sha: "b".repeat(40), subject: evil, author: evil, at: 0 }],
    diff: [{
      path: `${evil}.ts`,
      oldPath: `old${evil}`,
      status: "renamed",
      binary: false,
      additions: 1,
      deletions: 0,
      cut: false,
      hunks: [{
        header: evil,
        lines: [{ op: "+", text: `</td></tr></table>${evil}\u202e`, new: 1 }],
      }],
    }],
    calls: [{ id: evil, at: 0, task: evil, message: evil, outcome: evil, refused: [evil] }],
    transcript: [evil],
  });
  for (
    const html of [
      workPage(CTX, w, { file: evil }),
      discardPage(CTX, w),
      worksPage(CTX, { works: [summaryOf(w)] }, 0),
    ]
  ) {
    assert.ok(!html.includes("<script>alert"), html);
    assert.ok(!html.includes("<img src=x"));
    assert.equal(
      html.split("</table>").length,
      html.split("<table").length,
      "a line cannot close the diff's table",
    );
    assert.match(html, /&#60;script&#62;alert\(1\)&#60;\/script&#62;/);
    assert.ok(!/[\u202e\u2066]/.test(html), "no bidi character is applied");
  }
  const page = workPage(CTX, w);
  assert.ok(page.includes("⟨U+202E⟩"), "the right-to-left override is shown, not applied");
  assert.ok(!page.includes("\u202e"));
  assert.ok(
    page.includes(`href="/works/w1?file=%3Cscript%3Ealert(1)%3C%2Fscript%3E`),
    "the comment link is encoded",
  );
  assert.equal(visible("a\tb\u2066c\nd"), "a\tb⟨U+2066⟩c⟨U+000A⟩d");
});

Deno.test("the send-back form is prefilled with the file and line asked for", () => {
  const html = workPage(CTX, sampleWork(), { file: "src/logs.ts", line: 2 });
  assert.match(html, /<input name="file" value="src\/logs.ts"/);
  assert.match(html, /<input name="line" value="2"/);
});

Deno.test("the discard page says what is lost: the worktree, the branch and the commits not in the base", () => {
  const html = discardPage(CTX, sampleWork());
  assert.match(html, /removes the worktree <code>\/tmp\/wats\/worktrees\/app\/fix-logs<\/code>/);
  assert.match(html, /the branch <code>wats\/helper\/cccccccc\/fix-logs<\/code>/);
  assert.match(
    html,
    /These 1 commit\(s\) are not in <code>main<\/code> and are lost:.*aaaaaaaaaa<\/code> rotate logs daily/s,
  );
  assert.match(html, /action="\/works\/w1\/discard"><input type="hidden" name="csrf" value="t0k">/);
  assert.match(
    discardPage(CTX, sampleWork({ commits: [] })),
    /no commits that <code>main<\/code> does not have/,
  );
});

Deno.test("a 5,000-line diff: the work page stays within its budget of lines and links the file's own pages, which page by whole hunks", () => {
  const big = bigFile("src/generated.ts", 5000);
  const w = sampleWork({ diff: [big, ...sampleWork().diff] });
  const html = workPage(CTX, w);
  const rows = (h: string) => (h.match(/<tr class="(add|del|ctx)">/g) ?? []).length;
  assert.ok(rows(html) <= DIFF_INLINE_LINES, `${rows(html)} rows`);
  assert.equal(rows(html), 4, "the small file after the big one is still shown");
  assert.match(
    html,
    /<a class="file-page" href="\/works\/w1\/diff\?file=src%2Fgenerated.ts">/,
  );
  // Its pages: whole hunks of 50 lines, at most DIFF_PAGE_LINES rows each, covering every line once.
  const seen: string[] = [];
  let hunk: number | undefined = 0;
  let pages = 0;
  while (hunk !== undefined) {
    const page = workFilePage(CTX, w, "src/generated.ts", hunk);
    const lines = [...page.matchAll(/line (\d+)<\/td>/g)].map((m) => m[1]!);
    assert.ok(
      lines.length + lines.length / 50 <= DIFF_PAGE_LINES,
      `page ${pages}: ${lines.length}`,
    );
    seen.push(...lines);
    const later = page.match(
      /id="later" href="\/works\/w1\/diff\?file=src%2Fgenerated.ts&#38;hunk=(\d+)"/,
    );
    if (pages > 0) assert.match(page, /id="earlier"/);
    hunk = later ? Number(later[1]) : undefined;
    pages++;
  }
  assert.equal(seen.length, 5000);
  assert.deepEqual(seen, Array.from({ length: 5000 }, (_, i) => String(i)));
  assert.equal(
    pages,
    Math.ceil(100 / Math.floor(DIFF_PAGE_LINES / 51)),
    "hunks of 50 lines and a header",
  );
  assert.match(workFilePage(CTX, w, "nope<b>", 0), /No file <code>nope&#60;b&#62;<\/code>/);
});

Deno.test("the transcript renders the call's events as a run's transcript does, and shows any other entry as it is", () => {
  const base = { harness: "claude", agent: "alice", call: "c1" };
  const lines = [
    {
      type: "acp_update",
      ...base,
      update: { sessionUpdate: "tool_call", title: "Write a.txt", kind: "edit" },
    },
    {
      type: "acp_update",
      ...base,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Added " } },
    },
    {
      type: "acp_update",
      ...base,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "a.txt." } },
    },
    {
      type: "acp_permission",
      ...base,
      id: "p1",
      request: "claude/execute",
      locations: [],
      verdict: "allow",
      answer: "allowed",
      reason: "policy",
      labels: [],
    },
    { type: "wats_cut", reason: "the work's transcript is full" },
  ].map((l) => JSON.stringify(l));
  const html = workPage(CTX, sampleWork({ transcript: lines }));
  const shown = html.match(/<pre class="acp">([^<]*)<\/pre>/)![1]!;
  assert.equal(
    shown,
    [
      "   claude│ → Write a.txt [edit]",
      "   claude│ Added a.txt.",
      "   claude│ ? claude/execute → allowed (allow: policy)",
      "{&#34;type&#34;:&#34;wats_cut&#34;,&#34;reason&#34;:&#34;the work&#39;s transcript is full&#34;}",
    ].join("\n"),
  );
  assert.match(html, /show the transcript \(5 entries\)/);
});

Deno.test("a work's page binds its merge, push and discard to the head it shows, and says when the work moved past it", () => {
  const older = "a".repeat(40);
  const newer = "d".repeat(40);
  const moved = sampleWork({
    head: newer,
    commits: [
      { sha: newer, subject: "arrived later", author: "Agent", at: 0 },
      ...sampleWork().commits,
    ],
  });
  const fresh = workPage(CTX, sampleWork());
  const heads = [...fresh.matchAll(/<input type="hidden" name="head" value="([^"]*)">/g)]
    .map((m) => m[1]);
  assert.deepEqual(heads, [older, older], "merge and push carry the head shown");
  assert.match(fresh, new RegExp(`data-live-query="since=${older}&#38;bound=${older}"`));
  assert.doesNotMatch(fresh, /id="changed"/);
  assert.doesNotMatch(discardPage(CTX, sampleWork()), /name="head" value=""/);
  assert.match(discardPage(CTX, sampleWork()), new RegExp(`name="head" value="${older}"`));

  // A live redraw asks as against the head the page opened with: the new commit is marked,
  // and the page says its actions still carry the old head.
  const live = workPage(CTX, moved, { since: older, bound: older });
  assert.match(
    live,
    /id="changed">This work changed while you were reading: its head is now <code>dddddddddddd<\/code>, with 1 new commit\(s\), marked new below\. .*still carry head <code>aaaaaaaaaaaa<\/code>/,
  );
  assert.match(live, new RegExp(`<tr data-sha="${newer}" class="new">`));
  assert.match(live, new RegExp(`<tr data-sha="${older}">`));

  // After a refused merge: the page opens on the new head, marks what came since the old one.
  const after = workPage(CTX, moved, { since: older });
  assert.match(
    after,
    /id="changed">This work changed since you looked at it: its head is now <code>dddddddddddd<\/code>, with 1 new commit\(s\), marked new below\. The actions below act on what this page shows now\./,
  );
  assert.match(after, new RegExp(`name="head" value="${newer}"`));

  // A rewritten branch is said as such; a stale banner never outlives the state.
  const rewritten = workPage(CTX, sampleWork({ head: newer, commits: [] }), { bound: older });
  assert.match(rewritten, /its branch no longer holds <code>aaaaaaaaaaaa<\/code> \(rewritten\)/);
  assert.doesNotMatch(workPage(CTX, sampleWork({ state: "idle" })), /id="waiting"|id="running"/);
  assert.match(
    workPage(CTX, sampleWork({ state: "parked" })),
    /id="work-banner"[^>]*>.*id="waiting"/s,
  );
  assert.match(workPage(CTX, sampleWork({ state: "running" })), /id="running"/);
  // A query's head that is no commit id is ignored.
  assert.doesNotMatch(workPage(CTX, moved, { since: "x<y", bound: "HEAD" }), /id="changed"/);
});

Deno.test("a live redraw of a work's page keeps asking as against the head its forms carry", () => {
  const older = "a".repeat(40);
  const moved = sampleWork({ head: "d".repeat(40) });
  assert.match(
    workPage(CTX, moved, { since: older, bound: older }),
    new RegExp(`data-live-query="since=${older}&#38;bound=${older}"`),
  );
});
