/**
 * The works pages in a real browser (Debian's Chromium over the DevTools
 * protocol): the real handler and gate served on 127.0.0.1, with a recording
 * source of fixed works (tests/support/fake_ui_source.ts) in place of the
 * daemon, whose `work_*` ops are the works helper's part. What a person does:
 * open the list, a work, its diff (coloured by the stylesheet under the CSP),
 * comment on a file, send back, merge, push as a draft PR, discard after the
 * confirmation; each ends on a page with the outcome as its flash line.
 *
 * With WATS_SCREENSHOTS=DIR the pages' screenshots are saved there
 * (docs/img/ for docs/ui.md).
 */

import assert from "node:assert/strict";
import { requireTool } from "../support/debian_tools.ts";
import { type Browser, launchChromium } from "../support/cdp.ts";
import { Gate } from "../../src/ui/security.ts";
import { uiHandler } from "../../src/ui/server.ts";
import { serveUi } from "../../src/ui/http.ts";
import { recordingSource } from "../support/fake_ui_source.ts";
import { bigFile, sampleWork } from "../support/works_fixtures.ts";

const ready = requireTool("chromium");

async function shot(browser: Browser, name: string): Promise<void> {
  const png = await browser.page.screenshot();
  assert.ok(png.length > 1000, `screenshot ${name}`);
  const dir = Deno.env.get("WATS_SCREENSHOTS");
  if (dir) await Deno.writeFile(`${dir}/${name}.png`, png);
}

const A40 = JSON.stringify("a".repeat(40));

Deno.test({
  ignore: !ready,
  name:
    "in the browser: the works list, a work's coloured diff, comment on a file and send back, merge, push as a draft PR, discard after its confirmation",
  async fn() {
    const work = sampleWork({
      id: "w1",
      state: "idle",
      diff: [...sampleWork().diff, bigFile("src/generated.ts", 400), bigFile("src/huge.ts", 2000)],
    });
    const merged = sampleWork({
      id: "w0",
      work: "add-tests",
      branch: "wats/helper/cccccccc/add-tests",
      state: "merged",
      updatedAt: Date.parse("2026-11-30T16:20:00Z"),
    });
    const source = recordingSource([work, merged]);
    const handlers: Array<(r: Request) => Promise<Response>> = [];
    const server = serveUi({
      hostname: "127.0.0.1",
      port: 0,
      report: (line) => console.error(line),
    }, (r) => handlers[0]!(r));
    const host = `127.0.0.1:${server.addr.port}`;
    const gate = new Gate(host);
    handlers.push(uiHandler({ gate, source }));
    const browser = await launchChromium();
    const page = browser.page;
    const text = (sel: string) =>
      page.evaluate<string>(`document.querySelector(${JSON.stringify(sel)}).textContent`);
    try {
      await page.goto(`http://${host}/login?token=${gate.token}`);
      const base = (await page.evaluate<string>("location.href")).replace(/\/$/, "");

      // The list, from the nav.
      await page.navigateBy(
        "[...document.querySelectorAll('nav a')].find((a) => a.textContent === 'Works').click()",
      );
      assert.equal(await page.evaluate("location.href"), `${base}/works`);
      assert.equal(
        await page.evaluate("document.querySelectorAll('#works tr[data-id]').length"),
        2,
      );
      assert.match(await text("#works"), /fix-logs\s*idle\s*claude-acp\s*app\s*helper/);
      await shot(browser, "works");

      // A work: its diff, coloured by the stylesheet; the long file collapsed, the binary one named,
      // the file over the page's budget linked to its own pages.
      await page.navigateBy("document.querySelector('#works a').click()");
      assert.equal(await page.evaluate("location.href"), `${base}/works/w1`);
      assert.equal(
        await page.evaluate("getComputedStyle(document.querySelector('tr.add')).backgroundColor"),
        "rgb(218, 251, 225)",
      );
      assert.equal(
        await page.evaluate("getComputedStyle(document.querySelector('tr.del')).backgroundColor"),
        "rgb(255, 235, 233)",
      );
      assert.deepEqual(
        await page.evaluate(
          "[...document.querySelectorAll('details.diff-file')].map((d) => d.open)",
        ),
        [true, true, false, true],
      );
      assert.match(await text("details.diff-file[data-path='docs/logo.png']"), /binary/);
      assert.match(await text("#calls-live article"), /rm -rf \/ \(refused by the rules\)/);
      await shot(browser, "work");
      await page.navigateBy(
        "document.querySelector(\"details[data-path='src/huge.ts'] a.file-page\").click()",
      );
      assert.equal(await page.evaluate("document.querySelectorAll('tr.add').length"), 450);
      await page.navigateBy("document.getElementById('later').click()");
      assert.match(await text("main"), /Hunks 10–18 of 40/);
      await page.goto(`${base}/works/w1`);

      // Comment on a file: the form comes prefilled with it; send back.
      await page.navigateBy(
        "document.querySelector(\"details[data-path='src/logs.ts'] a.comment\").click()",
      );
      assert.equal(
        await page.evaluate("document.querySelector('input[name=file]').value"),
        "src/logs.ts",
      );
      await page.navigateBy(
        "(() => { const f = document.querySelector('form.send'); f.text.value = 'rotate weekly on Sundays'; f.line.value = '2'; f.submit(); })()",
      );
      assert.equal(await page.evaluate("location.href"), `${base}/works/w1`);
      assert.equal(await text("#flash"), "workSend done");

      // A new line's number: the form comes prefilled with its file and line.
      await page.navigateBy(
        "document.querySelector(\"details[data-path='src/logs.ts'] tr.add td.ln a\").click()",
      );
      assert.deepEqual(
        await page.evaluate(
          "[document.querySelector('input[name=file]').value, document.querySelector('input[name=line]').value]",
        ),
        ["src/logs.ts", "2"],
      );

      // Merge; push with the draft PR box ticked.
      await page.navigateBy("document.getElementById('merge').click()");
      assert.equal(
        await page.evaluate("location.href"),
        `${base}/works`,
        "the sweep may have removed it",
      );
      assert.equal(await text("#flash"), "workMerge done");
      await page.goto(`${base}/works/w1`);
      await page.navigateBy(
        "(() => { document.querySelector('input[name=draft_pr]').checked = true; document.getElementById('push').click(); })()",
      );
      assert.equal(await text("#flash"), "workPush done");

      // Discard: the confirmation says what is lost; confirming goes back to the list.
      await page.navigateBy("document.getElementById('discard').click()");
      assert.match(
        await text("main"),
        /These 1 commit\(s\) are not in main and are lost:\s*aaaaaaaaaa rotate logs daily/,
      );
      assert.deepEqual(
        source.calls.slice(-1),
        [`workPush ["w1",true,${A40}]`],
        "the confirmation page does nothing",
      );
      await shot(browser, "work_discard");
      await page.navigateBy("document.getElementById('confirm-discard').click()");
      assert.equal(await page.evaluate("location.href"), `${base}/works`);
      assert.equal(await text("#flash"), "workDiscard done");

      assert.deepEqual(source.calls, [
        'workSend ["w1","rotate weekly on Sundays","src/logs.ts",2]',
        // Each carries the head the page showed.
        `workMerge ["w1",${A40}]`,
        `workPush ["w1",true,${A40}]`,
        `workDiscard ["w1",${A40}]`,
      ]);
    } finally {
      await browser.close();
      await server.shutdown();
    }
  },
});
