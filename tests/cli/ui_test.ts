/**
 * `wats ui` as a user runs it: where it may listen, what it prints, and what
 * it says with no daemon. The pages themselves are tested in tests/ui/.
 */

import assert from "node:assert/strict";
import { runWats, startWats, tempDataDir } from "../support/cli.ts";
import { freePort } from "../support/free_port.ts";

Deno.test("`wats ui` refuses a non-loopback ui.listen from the config and names the flag that allows it", async () => {
  const dir = tempDataDir();
  try {
    const r = await runWats(["--data-dir", dir, "ui"], { env: { WATS_UI_LISTEN: "0.0.0.0:7448" } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /error: ui\.listen is 0\.0\.0\.0:7448, which is not a loopback address/);
    assert.match(r.stderr, /wats ui --listen 0\.0\.0\.0:7448/);
    assert.doesNotMatch(r.stdout, /token=/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("`wats ui --listen` naming a non-loopback address warns before it serves", async () => {
  const dir = tempDataDir();
  try {
    // 192.0.2.1 (TEST-NET-1) is no address of this machine: the warning comes,
    // then binding fails, so nothing ever listens beyond loopback here.
    const r = await runWats(["--data-dir", dir, "ui", "--listen", "192.0.2.1:7448"]);
    assert.match(
      r.stderr,
      /warning: serving the dashboard on 192\.0\.2\.1:7448, which is not loopback/,
    );
    assert.equal(r.code, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("`wats ui --help` prints its usage and exits 0", async () => {
  const r = await runWats(["--data-dir", tempDataDir(), "ui", "--help"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Usage: wats ui \[--listen HOST:PORT\]/);
  assert.match(r.stdout, /opens no browser/);
});

Deno.test("`wats ui` rejects an address it cannot read as HOST:PORT", async () => {
  const r = await runWats(["--data-dir", tempDataDir(), "ui", "--listen", "7448"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /error: "7448" is not an address to listen on: use HOST:PORT/);
});

Deno.test("`wats ui` with no daemon says so in the terminal and on the page, and prints a one-time login URL", async () => {
  const dir = tempDataDir();
  const port = freePort();
  const ui = startWats(["--data-dir", dir, "ui", "--listen", `127.0.0.1:${port}`]);
  try {
    const line = await ui.waitForLine((l) => l.includes("/login?token="), 90_000);
    const url = line.match(/http:\/\/\S+/)![0];
    assert.match(url, new RegExp(`^http://127\\.0\\.0\\.1:${port}/login\\?token=[0-9a-f]{64}$`));
    assert.match(ui.stderr(), /no daemon runs on .*: start it with `wats`/);
    const login = await fetch(url, { redirect: "manual" });
    await login.body?.cancel();
    assert.equal(login.status, 303);
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const session = login.headers.get("location")!;
    const page = await fetch(`http://127.0.0.1:${port}${session}`, { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /id="no-daemon"[^>]*>no wats daemon runs on this data dir/);
    // The worker may read its assets (one read grant outside the data dir).
    for (const asset of ["style.css", "dashboard.js", "uPlot.iife.min.js", "uPlot.min.css"]) {
      const r = await fetch(`http://127.0.0.1:${port}/assets/${asset}`, { headers: { cookie } });
      const body = await r.text();
      assert.equal(r.status, 200, `${asset}: ${body}`);
    }
    // Nothing was written: the data dir holds no file of `wats ui`.
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), []);
  } finally {
    await ui.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("`wats ui --listen localhost:PORT` is refused: a browser may reach whoever holds [::1]:PORT", async () => {
  const dir = tempDataDir();
  try {
    const r = await runWats(["--data-dir", dir, "ui", "--listen", "localhost:7448"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /^error: localhost:7448 names two addresses \(127\.0\.0\.1 and ::1\).*use --listen 127\.0\.0\.1:7448/m,
    );
    assert.doesNotMatch(r.stdout, /token=/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("`wats ui` prints the address it bound, and a Host the URL parser refuses gets 403 with nothing of the request on the terminal", async () => {
  const dir = tempDataDir();
  const port = freePort();
  const ui = startWats(["--data-dir", dir, "ui", "--listen", `127.0.0.1:${port}`]);
  try {
    const line = await ui.waitForLine((l) => l.includes("/login?token="), 90_000);
    const url = new URL(line.match(/http:\/\/\S+/)![0]);
    assert.equal(url.host, `127.0.0.1:${port}`);
    const token = url.searchParams.get("token")!;
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new TextEncoder().encode(
      `GET /login?token=${token} HTTP/1.1\r\nhost: 127.0.0.1:${port}.\r\nconnection: close\r\n\r\n`,
    ));
    const answer = await new Response(conn.readable).text();
    assert.match(answer, /^HTTP\/1\.1 403 /);
    // The token still works: the refused request did not spend it.
    const login = await fetch(url, { redirect: "manual" });
    await login.body?.cancel();
    assert.equal(login.status, 303);
    const out = await ui.stop();
    assert.doesNotMatch(ui.stderr() + out.stderr, new RegExp(token));
    assert.doesNotMatch(ui.stderr(), /error|Error/);
  } finally {
    await ui.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
