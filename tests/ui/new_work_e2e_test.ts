/**
 * A person starts coding work from the dashboard (issue 29, item 3), end to
 * end: a real daemon, the real `claude-agent-acp` against the scripted
 * Anthropic mock, `wats ui` and Chromium over the DevTools protocol.
 *
 * The Works page's "New work" form hands the task to the coding agent as the
 * heartbeat agent's harness tool does; the work appears on the page, live,
 * with the coding agent's commit. A name already taken is refused, and while
 * agents are halted the form starts nothing: no worktree, no model request.
 * A notification's `/go/…` link opens the work in this browser's session.
 *
 * The fixture lives under /var/tmp: the coding agent's sandbox has a private /tmp.
 */

import assert from "node:assert/strict";
import { requireCli } from "../support/clis.ts";
import { requireTool } from "../support/debian_tools.ts";
import { worksRig } from "../support/works_rig.ts";
import { holds, openDashboard, shot } from "../support/dashboard.ts";

const acp = requireCli("claude-acp");
const bwrap = requireTool("bwrap");
const chromium = requireTool("chromium");

/** Fills the New work form and submits it. */
function submitNew(name: string, task: string): string {
  return `(() => { const f = document.querySelector('#new-work form');
    f.checkout.value = 'app'; f.work.value = ${JSON.stringify(name)};
    f.task.value = ${JSON.stringify(task)}; f.submit(); })()`;
}

Deno.test({
  name:
    "in the browser, New work starts the coding agent on a new branch and the work appears live with its commit; a taken name is refused; while halted it starts nothing; a /go/ link opens the work",
  ignore: acp === null || !bwrap || !chromium,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using works = await worksRig("wats-new-work-", acp!);
    const { data, home, mock } = works;
    await using dash = await openDashboard({ data, home });
    const { browser, page, base, text } = dash;
    await page.goto(`${base}/works`);
    assert.match(await text("#new-work"), /New work/);
    assert.deepEqual(
      await page.evaluate(
        "[...document.querySelectorAll('#new-checkout option')].map((o) => o.value)",
      ),
      ["app"],
    );
    await page.navigateBy(submitNew("from-page", "TASK-1: add a.txt"));
    const flash = await text("#flash");
    assert.match(
      flash,
      /^started: call new-\S+ on the new work from-page \(checkout app, coding agent claude\) with your task; `wats work show (\S+)` shows how it ends$/,
    );
    assert.equal(
      await page.evaluate("document.getElementById('flash').dataset.kind"),
      "done",
    );
    const id = flash.match(/`wats work show (\S+)`/)![1]!;
    // The list is live: the work appears, and its call ends idle with the commit.
    await holds(
      page,
      `document.querySelector('tr[data-id="${id}"]')?.innerText.includes('idle')`,
    );
    await shot(browser, "new_work");
    await page.goto(`${base}/works/${id}`);
    assert.match(await text("#commits"), /Add a/);
    assert.match(await text("#work"), /thread\s+none \(started outside a thread\)/);
    const task = mock.messages().find((m) => JSON.stringify(m).includes("TASK-1"));
    assert.ok(task, "the coding agent was given the person's task");

    // A name that exists is refused: continuing it is a send back.
    await page.goto(`${base}/works`);
    await page.navigateBy(submitNew("from-page", "TASK-1: again"));
    assert.match(await text("#flash"), /^error: .*nothing was started: work from-page exists/);
    assert.equal(
      await page.evaluate("document.getElementById('flash').dataset.kind"),
      "error",
    );

    // Halted: the form starts nothing.
    await page.goto(`${base}/halt`);
    await page.navigateBy(
      "(() => { const f = document.querySelector('form[action$=\"/halt\"]'); f.reason.value = 'hold on'; f.submit(); })()",
    );
    const asked = mock.messages().length;
    await page.goto(`${base}/works`);
    await page.navigateBy(submitNew("while-halted", "TASK-1: add a.txt"));
    assert.match(
      await text("#flash"),
      /^error: .*nothing was started: agents are halted .*so no coding agent call starts/,
    );
    assert.equal(mock.messages().length, asked, "the model was not asked");
    const made = [...Deno.readDirSync(`${data}/worktrees/claude/app`)].flatMap((a) =>
      [...Deno.readDirSync(`${data}/worktrees/claude/app/${a.name}/_`)].map((w) => w.name)
    );
    assert.ok(!made.some((n) => n.startsWith("while-halted")), made.join(" "));
    await page.goto(`${base}/halt`);
    await page.navigateBy("document.querySelector('form[action$=\"/resume\"] button').click()");

    // A notification's link opens the work in this browser's session.
    await page.goto(`${dash.origin}/go/works/${id}`);
    // go.js navigates on: polled, as a page that is navigating cannot be evaluated in.
    let arrived = false;
    for (let i = 0; i < 1200 && !arrived; i++) {
      arrived = await page.evaluate<boolean>(
        `new Promise((r) => setTimeout(() => r(location.pathname.endsWith('/works/${id}') && !!document.getElementById('commits')), 100))`,
      ).catch(() => false);
    }
    assert.ok(arrived, "the /go/ link never opened the work in the session");
    assert.equal(
      await page.evaluate("location.pathname"),
      `${new URL(base).pathname}/works/${id}`,
    );
  },
});
