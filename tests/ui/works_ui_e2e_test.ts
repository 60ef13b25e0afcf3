/**
 * A coding agent's work finished from the dashboard, end to end (issue 19):
 * a real daemon, the real `claude-agent-acp` against the scripted Anthropic
 * mock, a temp checkout with a bare remote, `wats ui` and Chromium over the
 * DevTools protocol. The agent's call commits on a work; the works page lists
 * it and its page shows the diff; send back from the page (a comment on a
 * line) makes the next call on the same work, which commits; push from the
 * page puts the branch on the remote; merge from the page fast-forwards the
 * base and the sweep removes the worktree; discard, after its confirmation
 * page, removes another work.
 *
 * The fixture lives under /var/tmp: the coding agent's sandbox has a private /tmp.
 */

import assert from "node:assert/strict";
import { git } from "../../src/acp/worktrees.ts";
import { requireCli } from "../support/clis.ts";
import { startWats } from "../support/cli.ts";
import { requireTool } from "../support/debian_tools.ts";
import { waitFor } from "../support/swarm.ts";
import { worksRig } from "../support/works_rig.ts";
import { launchChromium } from "../support/cdp.ts";
import { freePort } from "../support/free_port.ts";

const acp = requireCli("claude-acp");
const bwrap = requireTool("bwrap");
const chromium = requireTool("chromium");
const opts = {
  ignore: acp === null || !bwrap || !chromium,
  sanitizeOps: false,
  sanitizeResources: false,
};

Deno.test({
  name:
    "in the browser, a person finishes a coding agent's work: its diff, send back, push, merge, discard",
  ...opts,
  async fn() {
    await using works = await worksRig("wats-works-ui-", acp!);
    const { data, home, repo, bare, wt, rig } = works;
    const client = await rig.mcp("alice", home);
    const r = await client.callTool({
      name: "claude",
      arguments: { task: "TASK-1: add a.txt", checkout: "app", work: "feat" },
    });
    assert.ok(!r.isError, `${(r.content as { text: string }[])[0]!.text}\n${rig.node.stderr()}`);
    await client.close();

    const port = freePort();
    const ui = startWats(["--data-dir", data, "ui", "--listen", `127.0.0.1:${port}`], { home });
    const browser = await launchChromium();
    const page = browser.page;
    const main = () => page.evaluate<string>("document.querySelector('main').innerText");
    try {
      const login = await ui.waitForLine((l) => l.includes("/login?token="), 90_000);
      await page.goto(login.match(/http:\/\/\S+/)![0]);
      const base = (await page.evaluate<string>("location.href")).replace(/\/$/, "");

      // The list, then the work's page with its diff.
      await page.goto(`${base}/works`);
      assert.match(
        await page.evaluate<string>("document.getElementById('works').innerText"),
        /feat\s+idle\s+claude\s+app\s+alice/,
      );
      await page.navigateBy("document.querySelector('#works a').click()");
      assert.equal(
        await page.evaluate("location.pathname"),
        `${new URL(base).pathname}/works/app~alice~_~feat`,
      );
      assert.deepEqual(
        await page.evaluate(
          "[...document.querySelectorAll('tr.add td.code')].map((t) => t.textContent)",
        ),
        ["+one"],
      );
      assert.match(await main(), /Add a/);
      assert.match(await main(), /Added a\.txt\./);
      assert.match(
        await page.evaluate<string>("document.querySelector('#transcript pre').textContent"),
        /claude│ Added a\.txt\./,
      );

      // Send back, from the line's number: the next call on the same work commits.
      await page.navigateBy(
        "document.querySelector(\"details[data-path='a.txt'] tr.add td.ln a\").click()",
      );
      await page.navigateBy(
        "(() => { const f = document.querySelector('form.send'); f.text.value = 'REVIEW-2: also add b.txt'; f.submit(); })()",
      );
      assert.match(
        await page.evaluate<string>("document.getElementById('flash').textContent"),
        /^sent back: call send-\S+ on work feat started/,
      );
      await waitFor("the sent-back call to end", () => {
        try {
          return Deno.readTextFileSync(`${wt}.calls.jsonl`).split("\n")
            .filter((l) => l.includes('"outcome"')).length === 2;
        } catch {
          return false;
        }
      }, 180_000);
      await page.goto(`${base}/works/app~alice~_~feat`);
      assert.deepEqual(
        await page.evaluate(
          "[...document.querySelectorAll('#commits tr td:nth-child(2)')].map((t) => t.textContent)",
        ),
        ["Add b", "Add a"],
      );
      assert.match(await main(), /sent it back with this comment on a\.txt:1/);
      const head = (await git(["rev-parse", "wats/alice/_/feat"], repo)).trim();

      // Push as a branch (no draft PR: no gh here).
      await page.navigateBy("document.getElementById('push').click()");
      assert.equal(
        await page.evaluate("document.getElementById('flash').textContent"),
        "pushed wats/alice/_/feat to origin",
      );
      assert.equal((await git(["rev-parse", "refs/heads/wats/alice/_/feat"], bare)).trim(), head);

      // Merge: the base has the commits, the sweep removed the worktree.
      await page.navigateBy("document.getElementById('merge').click()");
      assert.match(
        await page.evaluate<string>("document.getElementById('flash').textContent"),
        /^fast-forwarded main: .*the sweep removed its worktree/,
      );
      assert.equal((await git(["rev-parse", "main"], repo)).trim(), head);
      assert.throws(() => Deno.statSync(wt));

      // Discard another work after its confirmation page.
      const other = `${data}/worktrees/claude/app/alice/_/other`;
      await git(["worktree", "add", "-q", "-b", "wats/alice/_/other", other, "main"], repo);
      await git([
        "-c",
        "user.email=a@example.org",
        "-c",
        "user.name=Agent",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "Try other",
      ], other);
      await page.goto(`${base}/works/app~alice~_~other/discard`);
      assert.match(
        await main(),
        /These 1 commit\(s\) are not in main and are lost:\s*[0-9a-f]{10} Try other/,
      );
      Deno.statSync(other);
      await page.navigateBy("document.getElementById('confirm-discard').click()");
      assert.match(
        await page.evaluate<string>("document.getElementById('flash').textContent"),
        /^discarded work other: removed worktree/,
      );
      assert.throws(() => Deno.statSync(other));
    } finally {
      await browser.close();
      await ui.stop();
    }
  },
});
