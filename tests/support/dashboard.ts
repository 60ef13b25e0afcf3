/**
 * The dashboard in a real browser, for the end-to-end UI tests: `wats ui` on a
 * free port of a daemon's data dir, headless Chromium logged in through the
 * token link `wats ui` prints, and the two waits those tests share (a
 * screenshot kept when `WATS_SCREENSHOTS` names a folder, a condition the page
 * comes to hold).
 *
 * @module
 */

import assert from "node:assert/strict";
import { type Browser, type BrowserPage, launchChromium } from "./cdp.ts";
import { type RunningWats, startWats } from "./cli.ts";
import { freePort } from "./free_port.ts";

/** `wats ui` and a browser logged in to it; `await using` closes the browser, then stops `ui`. */
export interface Dashboard extends AsyncDisposable {
  ui: RunningWats;
  browser: Browser;
  page: BrowserPage;
  /** `wats ui`'s address, `http://127.0.0.1:PORT`. */
  origin: string;
  /** The session's root (a random path the login redirected to), without its trailing slash. */
  base: string;
  /** The `innerText` of the first element `selector` matches, or "" when none does. */
  text(selector: string): Promise<string>;
}

/**
 * Starts `wats ui` on `data` (run with `home`), launches Chromium and logs in.
 * Requires `--allow-all` and the `chromium` Debian package.
 */
export async function openDashboard(o: { data: string; home: string }): Promise<Dashboard> {
  const port = freePort();
  const ui = startWats(["--data-dir", o.data, "ui", "--listen", `127.0.0.1:${port}`], {
    home: o.home,
  });
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const page = browser.page;
    const login = await ui.waitForLine((l) => l.includes("/login?token="), 90_000);
    await page.goto(login.match(/http:\/\/\S+/)![0]);
    const base = (await page.evaluate<string>("location.href")).replace(/\/$/, "");
    const opened = browser;
    return {
      ui,
      browser: opened,
      page,
      origin: `http://127.0.0.1:${port}`,
      base,
      text: (selector) =>
        page.evaluate<string>(
          `document.querySelector(${JSON.stringify(selector)})?.innerText ?? ""`,
        ),
      async [Symbol.asyncDispose]() {
        await opened.close();
        await ui.stop();
      },
    };
  } catch (err) {
    await browser?.close();
    await ui.stop();
    throw err;
  }
}

/** A screenshot of the page: checked not to be empty, kept in `WATS_SCREENSHOTS` when set. */
export async function shot(browser: Browser, name: string): Promise<void> {
  const png = await browser.page.screenshot();
  assert.ok(png.length > 1000, `screenshot ${name}`);
  const dir = Deno.env.get("WATS_SCREENSHOTS");
  if (dir) await Deno.writeFile(`${dir}/${name}.png`, png);
}

/**
 * Resolves once `condition` (an expression) holds in the page: checked now and
 * at each change of the document, so the wait is on the page's own redraw.
 * Fails, naming it, if it has not held after two minutes (a page that never
 * redraws must fail the test, not hang it).
 */
export async function holds(page: BrowserPage, condition: string): Promise<void> {
  const held = await page.evaluate<boolean>(`new Promise((resolve) => {
    const ok = () => { try { return Boolean(${condition}); } catch { return false; } };
    if (ok()) return resolve(true);
    setTimeout(() => resolve(false), 120000);
    new MutationObserver((_, o) => { if (ok()) { o.disconnect(); resolve(true); } })
      .observe(document.documentElement, { subtree: true, childList: true, attributes: true, characterData: true });
  })`);
  assert.ok(held, `the page never came to hold: ${condition}`);
}
