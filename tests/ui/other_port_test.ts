/**
 * Another program on another loopback port (any dev server a coding agent
 * starts) against a browser logged in to `wats ui`: browsers send a host's
 * cookies to every port of it, and two ports of 127.0.0.1 are the same site.
 * Real parts: a real daemon (`wats node --agent none`), the real `wats ui`,
 * Debian's Chromium over the DevTools protocol, and a second `Deno.serve` on
 * 127.0.0.1 that logs every header it receives and plants cookies of the
 * dashboard's old name on the dashboard's paths.
 */

import assert from "node:assert/strict";
import { runWats, startWats, tempDataDir } from "../support/cli.ts";
import { requireTool } from "../support/debian_tools.ts";
import { launchChromium } from "../support/cdp.ts";
import { freePort } from "../support/free_port.ts";

/** What the other port plants: a session cookie on each of the dashboard's paths. */
const PLANTED = ["/", "/halt", "/review"].map((p) => `wats_session=0; Path=${p}`);

/** One raw HTTP/1.1 request to the dashboard; the status and body. */
async function send(
  port: number,
  lines: string[],
  body = "",
): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const text = `${lines.join("\r\n")}\r\ncontent-length: ${body.length}\r\n` +
    `connection: close\r\n\r\n${body}`;
  await conn.write(new TextEncoder().encode(text));
  const answer = await new Response(conn.readable).text();
  return { status: Number(answer.split(" ")[1]), body: answer };
}

Deno.test({
  ignore: !requireTool("chromium"),
  sanitizeOps: false,
  sanitizeResources: false,
  name:
    "another loopback port gets no cookie of the dashboard's session, what it gets opens nothing, and the cookies it plants do not lock the person out; logout ends the session",
  async fn() {
    const dir = tempDataDir();
    const node = startWats(["--data-dir", dir, "node", "--agent", "none"]);
    const uiPort = freePort();
    const ui = startWats(["--data-dir", dir, "ui", "--listen", `127.0.0.1:${uiPort}`], {
      home: node.home,
    });
    // The other port: it logs every header and plants the dashboard's old cookie.
    const seen: Array<{ path: string; headers: Array<[string, string]> }> = [];
    const other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
      seen.push({ path: new URL(req.url).pathname, headers: [...req.headers] });
      const headers = new Headers({ "content-type": "text/html" });
      for (const c of PLANTED) headers.append("set-cookie", c);
      return new Response("<!doctype html><title>dev server</title><p>hello", { headers });
    });
    const otherBase = `http://127.0.0.1:${other.addr.port}`;
    const browser = await launchChromium();
    const page = browser.page;
    const wats = (...args: string[]) => runWats(["--data-dir", dir, ...args], { home: node.home });
    try {
      await node.waitForLine((l) => l.includes('"event":"started"'), 120_000);
      const login = await ui.waitForLine((l) => l.includes("/login?token="), 90_000);
      await page.goto(login.match(/http:\/\/\S+/)![0]);
      const base = (await page.evaluate<string>("location.href")).replace(/\/$/, "");
      await page.goto(`${base}/halt`);
      assert.ok(await page.evaluate("document.getElementById('halt-state') !== null"));

      // The person opens the other port's pages at the dashboard's own paths.
      for (const path of ["/", "/halt", "/review", "/runs", "/login"]) {
        await page.goto(`${otherBase}${path}`);
      }
      await page.goto(`${otherBase}/`);
      assert.equal(seen.length >= 6, true, JSON.stringify(seen));

      // It received no cookie but the ones it planted itself.
      const planted = new Set(PLANTED.map((c) => c.split(";")[0]));
      for (const { path, headers } of seen) {
        for (const [name, value] of headers) {
          if (name !== "cookie") continue;
          for (const c of value.split(";").map((s) => s.trim())) {
            assert.ok(planted.has(c), `the other port got the cookie ${c} on ${path}`);
          }
        }
      }

      // Replayed against the dashboard (its Host, a forged Origin), every
      // header set it got opens no page and changes nothing.
      const host = `127.0.0.1:${uiPort}`;
      for (const { path, headers } of seen) {
        const forward = headers.filter(([n]) => n !== "host" && n !== "origin")
          .map(([n, v]) => `${n}: ${v}`);
        for (const target of ["/", "/halt", "/review", path]) {
          const r = await send(uiPort, [`GET ${target} HTTP/1.1`, `host: ${host}`, ...forward]);
          assert.equal(r.status, 403, `GET ${target} with what ${path} got: ${r.body}`);
        }
        const halt = await send(
          uiPort,
          [
            "POST /halt HTTP/1.1",
            `host: ${host}`,
            `origin: http://${host}`,
            "content-type: application/x-www-form-urlencoded",
            ...forward,
          ],
          "csrf=0&reason=taken+over",
        );
        assert.equal(halt.status, 403, halt.body);
      }
      assert.doesNotMatch((await wats("status")).stdout, /halted: yes/);

      // The planted cookies did not lock the person out: the Halt page works.
      await page.goto(`${base}/halt`);
      await page.navigateBy(
        "(() => { document.querySelector('form[action$=\"/halt\"] input[name=reason]').value = 'mine'; document.querySelector('form[action$=\"/halt\"] button').click(); })()",
      );
      assert.match((await wats("status")).stdout, /halted: yes.*mine/);

      // Log out: the browser drops the cookie, and the session's pages are closed.
      await page.navigateBy("document.getElementById('logout').click()");
      assert.match(await page.evaluate<string>("document.body.textContent"), /Logged out/);
      await page.goto(`${base}/halt`);
      assert.match(await page.evaluate<string>("document.body.textContent"), /no session/);
    } finally {
      await browser.close();
      await other.shutdown();
      await ui.stop();
      await node.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
