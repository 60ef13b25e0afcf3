/**
 * A web page of another local port against MCP over HTTP (issue 32), in the real Chromium: even
 * a page that knows a token cannot use it (no CORS: the preflight fails), a simple cross-origin
 * request is refused for its Origin, and a form posted across origins meets the same 403; no
 * session opens and nothing is stored. Real parts: a daemon with `mcp.listen`, a token of
 * `wats mcp token create`, Debian's Chromium over the DevTools protocol, a second `Deno.serve`.
 */

import assert from "node:assert/strict";
import { requireTool } from "../support/debian_tools.ts";
import { launchChromium } from "../support/cdp.ts";
import { freePort } from "../support/free_port.ts";
import { nodeRig } from "../support/rig.ts";

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "p", version: "1" },
  },
});

Deno.test({
  ignore: !requireTool("chromium"),
  sanitizeOps: false,
  sanitizeResources: false,
  name: "a page of another local port gets nothing from MCP over HTTP, even holding a token",
  async fn() {
    const port = freePort();
    await using rig = await nodeRig({ config: `[mcp]\nlisten = "127.0.0.1:${port}"\n` });
    const made = await rig.wats(["mcp", "token", "create", "--profile", "alice"]);
    assert.equal(made.code, 0, made.stderr);
    const token = made.stdout.trim();
    const endpoint = `http://127.0.0.1:${port}/mcp`;
    const other = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () =>
        new Response(
          `<!doctype html><title>dev server</title>
<form id=f method=POST action="${endpoint}" enctype="text/plain">
<input type=hidden name='${INIT.slice(0, -1)}' value='}'></form>`,
          { headers: { "content-type": "text/html" } },
        ),
    );
    const browser = await launchChromium();
    try {
      await browser.page.goto(`http://127.0.0.1:${other.addr.port}/`);
      // With the token: the Authorization header needs a preflight, which gets no CORS answer.
      const withToken = await browser.page.evaluate<string>(`
        fetch(${JSON.stringify(endpoint)}, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            authorization: ${JSON.stringify(`Bearer ${token}`)},
          },
          body: ${JSON.stringify(INIT)},
        }).then((r) => "answered " + r.status, (e) => "failed: " + e.name)`);
      assert.equal(withToken, "failed: TypeError");
      // A simple request (no preflight) goes out, opaque to the page; the node refuses it.
      const simple = await browser.page.evaluate<string>(`
        fetch(${JSON.stringify(endpoint)}, {
          method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" },
          body: ${JSON.stringify(INIT)},
        }).then((r) => r.type, (e) => "failed: " + e.name)`);
      assert.equal(simple, "opaque");
      // A form posted across origins: the browser shows the node's answer, a refusal.
      await browser.page.navigateBy(`document.getElementById("f").submit()`);
      const shown = await browser.page.evaluate<string>("document.body.innerText");
      assert.match(shown, /requests from web pages of other origins are refused/);
      // No session opened and nothing stored.
      const stderr = rig.node.stderr();
      assert.doesNotMatch(stderr, /mcp http session opened/);
      assert.equal(rig.events("post_stored").length, 0);
    } finally {
      await browser.close();
      await other.shutdown();
    }
  },
});
