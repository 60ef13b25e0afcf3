/**
 * A person's decision binds to what their page showed (issue 29), end to
 * end: a real daemon, the real `claude-agent-acp` against the scripted
 * Anthropic mock, `wats ui` and Chromium over the DevTools protocol.
 *
 * The coding agent commits after the work's page loaded: the page shows the
 * new commit live and says the work changed under the reader; Merge, still
 * carrying the head the page opened with, is refused with nothing changed,
 * and the page it comes back to marks the new commit. A send back during a
 * halt starts no call. The merge that lands names the other work its sweep
 * removed (same patches), and so does the overview's activity.
 *
 * The fixture lives under /var/tmp: the coding agent's sandbox has a private /tmp.
 */

import assert from "node:assert/strict";
import { ensureWorktree, git, workPlace } from "../../src/acp/worktrees.ts";
import { requireCli } from "../support/clis.ts";
import { requireTool } from "../support/debian_tools.ts";
import { worksRig } from "../support/works_rig.ts";
import { holds, openDashboard, shot } from "../support/dashboard.ts";

const acp = requireCli("claude-acp");
const bwrap = requireTool("bwrap");
const chromium = requireTool("chromium");

Deno.test({
  name:
    "in the browser, a merge bound to the page's head is refused once the agent committed after it loaded; a halt stops a send back; the sweep names what it removed",
  ignore: acp === null || !bwrap || !chromium,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using works = await worksRig("wats-works-bind-", acp!);
    const { data, home, repo, wt, rig, mock } = works;
    const client = await rig.mcp("alice", home);
    const first = await client.callTool({
      name: "claude",
      arguments: { task: "TASK-1: add a.txt", checkout: "app", work: "feat" },
    });
    assert.ok(!first.isError, `${JSON.stringify(first.content)}\n${rig.node.stderr()}`);
    const main0 = (await git(["rev-parse", "main"], repo)).trim();

    await using dash = await openDashboard({ data, home });
    const { browser, page, base, text } = dash;
    try {
      const workUrl = `${base}/works/app~alice~_~feat`;

      // The page loads on the first commit and follows the daemon's events.
      await page.goto(workUrl);
      const seen = await text("#head");
      assert.match(seen, /^[0-9a-f]{40}$/);
      await holds(page, "document.body.dataset.live === 'open'");

      // The agent commits after the page loaded.
      const later = await client.callTool({
        name: "claude",
        arguments: { task: "LATER-3: add c.txt", checkout: "app", work: "feat" },
      });
      assert.ok(!later.isError, JSON.stringify(later.content));
      const now = (await git(["rev-parse", "wats/alice/_/feat"], repo)).trim();
      assert.notEqual(now, seen);

      // Live: the new commit is marked, the state is idle again, and the page says what moved.
      await holds(
        page,
        "document.querySelector('#commits tr.new')?.innerText.includes('Add c') && " +
          "!document.getElementById('running')",
      );
      assert.equal(await text("#head"), now);
      assert.match(await text("#work"), /state\s+idle/);
      assert.equal(await text("#running"), "");
      assert.match(
        await text("#changed"),
        new RegExp(
          `^This work changed while you were reading: its head is now ${
            now.slice(0, 12)
          }, with 1 new commit\\(s\\), marked new below\\..*still carry head ${seen.slice(0, 12)}`,
        ),
      );
      assert.equal(
        await page.evaluate("document.querySelector('#merge').form.head.value"),
        seen,
        "the form still carries the head the page opened with",
      );
      await shot(browser, "work_changed");

      // Merge refuses: nothing changed, and the page it comes back to shows the new commit.
      await page.navigateBy("document.getElementById('merge').click()");
      assert.match(
        await text("#flash"),
        new RegExp(
          `^error: .*work feat: not merged: it changed since you were shown head ${
            seen.slice(0, 12)
          }: its head is now ${
            now.slice(0, 12)
          }, with 1 new commit\\(s\\): [0-9a-f]{12} Add c; nothing was changed`,
        ),
      );
      assert.equal((await git(["rev-parse", "main"], repo)).trim(), main0);
      assert.equal(await page.evaluate("location.search"), `?since=${seen}`);
      assert.deepEqual(
        await page.evaluate(
          "[...document.querySelectorAll('#commits tr.new')].map((r) => r.dataset.sha)",
        ),
        [now],
      );
      assert.match(await text("#changed"), /^This work changed since you looked at it/);
      assert.equal(await page.evaluate("document.querySelector('#merge').form.head.value"), now);

      // Halted: a send back from the page starts no call.
      await page.goto(`${base}/halt`);
      await page.navigateBy(
        "(() => { const f = document.querySelector('form[action$=\"/halt\"]'); f.reason.value = 'stop for review'; f.submit(); })()",
      );
      assert.match(await text("#flash"), /^halt [0-9a-f]{12}…[0-9a-f]{6} posted/);
      const asked = mock.messages().length;
      const callsBefore = Deno.readTextFileSync(`${wt}.calls.jsonl`);
      await page.goto(workUrl);
      await page.navigateBy(
        "(() => { const f = document.querySelector('form.send'); f.text.value = 'REVIEW-2: also add b.txt'; f.submit(); })()",
      );
      assert.match(
        await text("#flash"),
        /^error: .*work feat: not sent: agents are halted \(halt [0-9a-f]{12} by [0-9a-f]{12}: stop for review; run `wats resume` to end it\), so no coding agent call starts/,
      );
      assert.equal(Deno.readTextFileSync(`${wt}.calls.jsonl`), callsBefore);
      assert.equal(mock.messages().length, asked, "the model was not asked");
      await page.goto(`${base}/halt`);
      await page.navigateBy("document.querySelector('form[action$=\"/resume\"] button').click()");
      assert.match(await text("#flash"), /^resumed/);

      // Another work holding the same patches: the merge's sweep removes it, and says so.
      const co = { name: "app", path: repo, base: "main", fetch: false };
      const twin = workPlace(`${data}/worktrees`, {
        harness: "claude",
        checkout: "app",
        agent: "alice",
        thread: "_",
        work: "twin",
      });
      await ensureWorktree(co, twin);
      const feats = (await git(["rev-list", "--reverse", `main..${now}`], repo)).trim().split("\n");
      await git(
        ["-c", "user.email=t@example.org", "-c", "user.name=T", "cherry-pick", ...feats],
        twin.dir,
      );
      await page.goto(workUrl);
      await page.navigateBy("document.getElementById('merge').click()");
      assert.match(
        await text("#flash"),
        new RegExp(
          `^fast-forwarded main: work feat .* is in the base; the sweep removed its worktree ${wt}; it also removed 1 other work\\(s\\) whose commits were all in their base already \\(merged, squashed or with equal patches\\): ${twin.dir}$`,
        ),
      );
      assert.equal((await git(["rev-parse", "main"], repo)).trim(), now);
      assert.throws(() => Deno.statSync(twin.dir));
      await page.goto(`${base}/`);
      await holds(
        page,
        "/the sweep removed 2 work\\(s\\) already in their base: feat, twin/.test(" +
          "document.getElementById('activity').innerText)",
      );
    } finally {
      await client.close();
    }
  },
});
