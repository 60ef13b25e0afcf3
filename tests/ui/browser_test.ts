/**
 * `wats ui` in a real browser (Debian's Chromium over the DevTools protocol)
 * against a real daemon whose agent (the real Claude Code CLI, the scripted
 * mock model) has answered two asks into the review queue. What a user does on
 * each page, and what the daemon then says through `wats mcp`, `wats status`
 * and the agent's next prompt.
 *
 * A second test holds a coding agent's request (the real claude-agent-acp,
 * the same mock) and approves it from the review page.
 *
 * With WATS_SCREENSHOTS=DIR the pages' screenshots are saved there
 * (docs/img/ for docs/ui.md); otherwise they are only taken.
 */

import assert from "node:assert/strict";
import { runWats, startWats, tempDataDir } from "../support/cli.ts";
import { CLIS_DIR, requireCli } from "../support/clis.ts";
import { requireTool } from "../support/debian_tools.ts";
import { answeringMock, call, idIn, mcpClient, startAgentNode, waitFor } from "../support/swarm.ts";
import {
  lastUserContains,
  startMockAnthropic,
  text,
  textOf,
  toolResultFor,
  toolUse,
} from "../support/mock_anthropic.ts";
import { type Browser, launchChromium } from "../support/cdp.ts";
import { git } from "../../src/acp/worktrees.ts";
import { freePort } from "../support/free_port.ts";

const ready = requireCli("claude") !== null && requireTool("chromium");
const acp = requireCli("claude-acp");

/** Saves `name`.png in $WATS_SCREENSHOTS when set (docs/img/ for docs/ui.md). */
async function shot(browser: Browser, name: string): Promise<void> {
  const png = await browser.page.screenshot();
  assert.ok(png.length > 1000, `screenshot ${name}`);
  const dir = Deno.env.get("WATS_SCREENSHOTS");
  if (dir) await Deno.writeFile(`${dir}/${name}.png`, png);
}

Deno.test({
  ignore: !ready,
  sanitizeOps: false,
  sanitizeResources: false,
  name:
    "in the browser: overview shows spend and its chart, a transcript shows tool calls, approve publishes, reject reaches the next prompt, halt and resume change `wats status`",
  async fn() {
    const dir = tempDataDir();
    const mock = answeringMock();
    const node = await startAgentNode(dir, mock, {
      WATS_AGENT_REVIEW: "true",
      PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
    });
    const alice = await mcpClient(dir, "alice", node.home);
    const wats = (...args: string[]) => runWats(["--data-dir", dir, ...args], { home: node.home });
    const port = freePort();
    const ui = startWats(["--data-dir", dir, "ui", "--listen", `127.0.0.1:${port}`], {
      home: node.home,
    });
    const browser = await launchChromium();
    const page = browser.page;
    // The session's pages live under a random path the login redirects to.
    let base = "";
    try {
      const ask1 = idIn(
        await call(alice, "ask", { title: "Logs", text: "logrotate or journald?" }),
      );
      await node.waitForLine((l) => l.includes('"event":"run_ended"'), 120_000);
      const ask2 = idIn(await call(alice, "ask", { title: "Backups", text: "restic or borg?" }));
      await node.waitForLine((l) => l.includes('"event":"run_ended"'), 120_000);

      const login = await ui.waitForLine((l) => l.includes("/login?token="), 90_000);
      await page.goto(login.match(/http:\/\/\S+/)![0]);
      base = (await page.evaluate<string>("location.href")).replace(/\/$/, "");

      // Overview: the spend of the two runs, and the chart drawn by uPlot.
      assert.match(await page.evaluate("location.pathname"), /^\/[0-9a-f]{32}\/$/);
      const budget = await page.evaluate<string>("document.getElementById('budget').textContent");
      assert.match(budget, /spend today \$0\.\d+ of \$\d+\.\d\d · this month \$/);
      assert.doesNotMatch(budget, /spend today \$0\.00 /, "the runs' cost is counted");
      assert.equal(
        await page.evaluate("document.getElementById('chart-days').dataset.rendered"),
        "true",
        await page.evaluate<string>(
          "document.readyState + JSON.stringify(performance.getEntriesByType('resource').map((e) => e.name + ' ' + e.responseStatus))",
        ),
      );
      assert.ok(
        await page.evaluate<number>("document.querySelectorAll('#chart-days canvas').length") > 0,
      );
      assert.match(
        await page.evaluate<string>("document.getElementById('node').textContent"),
        /held drafts2/,
      );
      await shot(browser, "overview");

      // Runs, then a transcript with the agent's tool call and its result.
      await page.goto(`${base}/runs`);
      assert.equal(await page.evaluate("document.querySelectorAll('#runs tr').length"), 3);
      await shot(browser, "runs");
      await page.navigateBy("document.querySelector('#runs a').click()");
      const calls = await page.evaluate<string[]>(
        "[...document.querySelectorAll('.tool-call')].map((e) => e.textContent)",
      );
      assert.ok(
        calls.some((c) => c.includes("mcp__wats__post") && c.includes("parent")),
        calls.join("\n"),
      );
      assert.ok(
        await page.evaluate<number>("document.querySelectorAll('.tool-result').length") > 0,
      );
      assert.match(
        await page.evaluate<string>("document.getElementById('run-end').textContent"),
        /end: ok/,
      );
      await shot(browser, "transcript");

      // Posts: the feed, a search, a thread.
      await page.goto(`${base}/posts`);
      const feed = await page.evaluate<string>("document.querySelector('main').textContent");
      assert.match(feed, /restic or borg\?/);
      assert.match(feed, /logrotate or journald\?/);
      await shot(browser, "posts");
      await page.goto(`${base}/posts/search?q=restic`);
      assert.equal(await page.evaluate("document.querySelectorAll('.post').length"), 1);
      await page.goto(`${base}/posts/thread/${ask1}`);
      assert.match(
        await page.evaluate<string>("document.querySelector('main').textContent"),
        /journald/,
      );

      // Review: edit the answer to ask 1 and approve it; reject the other.
      await page.goto(`${base}/review`);
      assert.equal(await page.evaluate("document.querySelectorAll('.draft').length"), 2);
      await shot(browser, "review");
      const sel = (thread: string) =>
        `[...document.querySelectorAll('.draft')].find((d) => d.querySelector('.answers a')?.getAttribute('href')?.endsWith('/posts/thread/${thread}'))`;
      await page.navigateBy(
        `(() => { const d = ${
          sel(ask1)
        }; d.querySelector('.approve textarea').value = 'Edited in the dashboard: use journald.'; d.querySelector('.approve button').click(); })()`,
      );
      assert.match(
        await page.evaluate<string>(
          "document.getElementById('flash')?.textContent ?? document.body.textContent",
        ),
        /Approved draft \w+: published as post/,
      );
      assert.match(
        await call(alice, "thread", { id: ask1 }),
        /Edited in the dashboard: use journald\./,
        "published, with the edit, as `wats mcp` shows",
      );
      await page.navigateBy(
        `(() => { const d = ${
          sel(ask2)
        }; d.querySelector('.reject input[name=reason]').value = 'too vague: cite the docs'; d.querySelector('.reject button').click(); })()`,
      );
      assert.match(
        await page.evaluate<string>("document.getElementById('flash').textContent"),
        /Rejected draft/,
      );
      assert.equal(await page.evaluate("document.querySelectorAll('.draft').length"), 0);
      assert.doesNotMatch(await call(alice, "thread", { id: ask2 }), /Use journald/);
      await call(alice, "ask", { title: "Three", text: "Third question" });
      await node.waitForLine((l) => l.includes('"event":"run_ended"'), 120_000);
      const prompts = mock.messages().map((r) => textOf(r.body!.messages[0]!.content));
      assert.ok(
        prompts.some((p) => p.includes("too vague: cite the docs")),
        "the reason is in the next prompt",
      );

      // Halt, then resume, as `wats status` sees them.
      await page.goto(`${base}/halt`);
      await page.navigateBy(
        "(() => { document.querySelector('form[action$=\"/halt\"] input[name=reason]').value = 'enough for today'; document.querySelector('form[action$=\"/halt\"] button').click(); })()",
      );
      assert.match((await wats("status")).stdout, /halted: yes.*enough for today/);
      assert.match(
        await page.evaluate<string>("document.getElementById('halt-state').textContent"),
        /Halted by user \d+s ago: enough for today/,
      );
      await shot(browser, "halt");
      await page.navigateBy("document.querySelector('form[action$=\"/resume\"] button').click()");
      assert.doesNotMatch((await wats("status")).stdout, /halted: yes/);
      assert.match(
        await page.evaluate<string>("document.getElementById('halt-state').textContent"),
        /The agent runs/,
      );
    } finally {
      await browser.close();
      await ui.stop();
      await alice.close();
      await node.stop();
      await mock.close();
    }
  },
});

Deno.test({
  ignore: acp === null || !requireTool("chromium"),
  sanitizeOps: false,
  sanitizeResources: false,
  name:
    "in the browser: a coding agent's held request shows its request, location, arguments and task, and approving it from the page lets the coding agent write",
  async fn() {
    const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-ui-acp-" }));
    const data = `${root}/data`;
    const repo = `${root}/repo`;
    const home = `${root}/home`;
    Deno.mkdirSync(data);
    Deno.mkdirSync(repo);
    Deno.mkdirSync(home);
    await git(["init", "--quiet", "-b", "main"], repo);
    await git(["config", "user.email", "t@example.org"], repo);
    await git(["config", "user.name", "T"], repo);
    Deno.writeTextFileSync(`${repo}/README.md`, "the app\n");
    await git(["add", "README.md"], repo);
    await git(["commit", "--quiet", "-m", "first"], repo);
    const wt = `${data}/worktrees/claude/app/alice/_/notes`;
    const mock = startMockAnthropic({
      rules: [
        { when: toolResultFor("Write"), reply: text("Wrote the notes.") },
        {
          when: lastUserContains("TASK-UI"),
          reply: toolUse("Write", { file_path: `${wt}/notes.txt`, content: "reviewed\n" }),
        },
      ],
    });
    // The harness and checkout as docs/acp.md configures them; review holds the edit.
    Deno.writeTextFileSync(
      `${data}/config.toml`,
      [
        "[harnesses.claude]",
        'command = "node"',
        `args = [${JSON.stringify(acp![1])}]`,
        `env = { ANTHROPIC_BASE_URL = "${mock.url}", ANTHROPIC_API_KEY = "test-key", ` +
        `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1", CLAUDE_CONFIG_DIR = "${home}/.claude" }`,
        "[checkouts.app]",
        `path = "${repo}"`,
        'base = "main"',
        "[agent]",
        "review = true",
        "",
      ].join("\n"),
    );
    const node = startWats(["--data-dir", data, "node"], { env: { IS_SANDBOX: "1" } });
    const port = freePort();
    let ui: ReturnType<typeof startWats> | undefined;
    let browser: Browser | undefined;
    let client: Awaited<ReturnType<typeof mcpClient>> | undefined;
    try {
      await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
      client = await mcpClient(data, "alice", home);
      const r = await client.callTool({
        name: "claude",
        arguments: { task: "TASK-UI: write the notes", checkout: "app", work: "notes" },
      });
      const out = (r.content as { text: string }[])[0]!.text;
      const parked = JSON.parse(out.slice(out.indexOf("\n") + 1)).parked as { id: string };
      assert.ok(parked?.id, out);

      ui = startWats(["--data-dir", data, "ui", "--listen", `127.0.0.1:${port}`], { home });
      browser = await launchChromium();
      const page = browser.page;
      const login = await ui.waitForLine((l) => l.includes("/login?token="), 90_000);
      await page.goto(login.match(/http:\/\/\S+/)![0]);
      await page.goto(`${await page.evaluate<string>("location.href")}review`);
      const card = `document.querySelector('.request[data-id="${parked.id}"]')`;
      assert.equal(
        await page.evaluate(`${card}.querySelector('code.request').textContent`),
        "claude/edit",
      );
      assert.deepEqual(
        await page.evaluate(
          `[...${card}.querySelectorAll('.locations li')].map((e) => e.textContent)`,
        ),
        [`${wt}/notes.txt`],
      );
      assert.match(
        await page.evaluate<string>(`${card}.querySelector('pre.arguments').textContent`),
        /"content": "reviewed\\n"/,
      );
      assert.equal(
        await page.evaluate(`${card}.querySelector('pre.task').textContent`),
        "TASK-UI: write the notes",
      );
      assert.match(await page.evaluate<string>(`${card}.textContent`), new RegExp(`worktree${wt}`));
      assert.throws(() => Deno.statSync(`${wt}/notes.txt`), "nothing written before the decision");
      await shot(browser, "review_request");

      await page.navigateBy(`${card}.querySelector('.approve button').click()`);
      assert.match(
        await page.evaluate<string>("document.getElementById('flash').textContent"),
        new RegExp(
          `Request ${parked.id} approved claude/edit: the coding agent claude got the answer`,
        ),
      );
      assert.equal(await page.evaluate("document.querySelectorAll('.draft').length"), 0);
      await waitFor(
        "the coding agent's write",
        () => {
          try {
            return Deno.readTextFileSync(`${wt}/notes.txt`) === "reviewed\n";
          } catch {
            return false;
          }
        },
        120_000,
      );
      const answers = node.stdoutLines.map((l) => JSON.parse(l)).filter((e) =>
        e.event === "acp_permission" && e.request === "claude/edit"
      ).map((e) => e.answer);
      assert.deepEqual(answers, ["parked", "allow_once"]);
    } finally {
      await browser?.close();
      await ui?.stop();
      await client?.close().catch(() => {});
      await node.stop();
      await mock.close();
      Deno.removeSync(root, { recursive: true });
    }
  },
});
