/**
 * How soon a daemon event reaches an open dashboard page (issue 19 item 4):
 * `deno run -A bench/ui_live.ts [--posts 100]`.
 *
 * A real daemon (`wats node`), a real `wats ui` and headless Chromium on the
 * overview, which listens to the session's `/events` as live.js does. The
 * bench posts `--posts` asks through `wats mcp`, one at a time, and reads in
 * the page when each one's `post_stored` event arrived (epoch ms from the
 * page's clock, the same machine's). The daemon emits the event before the
 * tool call returns, so `arrival - call start` is an upper bound of
 * emit → page; the baseline is the tool call's own round trip, same run.
 * Goal: p95 of emit → page ≤ 100 ms on loopback.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { startWats, tempDataDir } from "../tests/support/cli.ts";
import { launchChromium } from "../tests/support/cdp.ts";
import { call, idIn, mcpClient } from "../tests/support/swarm.ts";
import { freePort } from "../tests/support/free_port.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { posts: { type: "string", default: "100" } },
});
const POSTS = Number(values.posts);

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

const dir = tempDataDir();
const home = Deno.makeTempDirSync({ prefix: "wats-home-" });
const node = startWats(["--data-dir", dir, "node"], { home });
await node.waitForLine((l) => l.includes('"event":"started"'), 90_000);
const port = freePort();
const ui = startWats(["--data-dir", dir, "ui", "--listen", `127.0.0.1:${port}`], { home });
const browser = await launchChromium();
const alice = await mcpClient(dir, "alice", home);
try {
  const login = await ui.waitForLine((l) => l.includes("/login?token="), 90_000);
  await browser.page.goto(login.match(/http:\/\/\S+/)![0]);
  // Until the dashboard's watch of the daemon is on, an event could be missed.
  for (let i = 0; i < 600; i++) {
    const text = await browser.page.evaluate<string>(
      "document.getElementById('activity').textContent",
    );
    if (/watching the daemon/.test(text)) break;
    await new Promise((r) => setTimeout(r, 100));
    await browser.page.goto(await browser.page.evaluate<string>("location.href"));
  }
  await browser.page.evaluate(`(() => {
    window.__arrivals = {};
    const es = new EventSource(document.getElementById('live-events').href);
    es.addEventListener('activity', (m) => {
      const a = JSON.parse(m.data);
      const id = (a.href || '').split('/').pop();
      if (a.event === 'post_stored') window.__arrivals[id] = performance.timeOrigin + performance.now();
    });
    return new Promise((resolve) => es.addEventListener('open', resolve));
  })()`);
  const toPage: number[] = [];
  const roundTrip: number[] = [];
  for (let i = 0; i < POSTS; i++) {
    const t0 = Date.now();
    const id = idIn(await call(alice, "ask", { title: `live ${i}`, text: "how soon?" }));
    const t1 = Date.now();
    roundTrip.push(t1 - t0);
    let at: number | undefined;
    for (let k = 0; k < 2000 && at === undefined; k++) {
      at = await browser.page.evaluate<number | undefined>(
        `window.__arrivals[${JSON.stringify(id)}]`,
      );
      if (at === undefined) await new Promise((r) => setTimeout(r, 5));
    }
    if (at === undefined) throw new Error(`the event of post ${id} never reached the page`);
    toPage.push(at - t0);
  }
  const p95 = percentile(toPage, 95);
  const base = percentile(roundTrip, 95);
  console.log(`posts: ${POSTS}`);
  console.log(
    `event → page (upper bound: call start → arrival): p50 ${
      percentile(toPage, 50).toFixed(1)
    } ms, p95 ${p95.toFixed(1)} ms`,
  );
  console.log(
    `baseline, the tool call's round trip: p50 ${percentile(roundTrip, 50).toFixed(1)} ms, p95 ${
      base.toFixed(1)
    } ms`,
  );
  console.log(`ratio p95 event → page / p95 round trip: ${(p95 / base).toFixed(2)}`);
  console.log(`goal p95 ≤ 100 ms: ${p95 <= 100 ? "met" : "NOT met"}`);
} finally {
  await alice.close().catch(() => {});
  await browser.close();
  await ui.stop();
  await node.stop();
  Deno.removeSync(dir, { recursive: true });
  Deno.removeSync(home, { recursive: true });
}
