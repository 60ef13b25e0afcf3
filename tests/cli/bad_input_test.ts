/**
 * Bad input never loses anything and always says what to do (issue 5): a
 * malformed config.toml, a truncated safety.json, a truncated pending draft.
 */

import assert from "node:assert/strict";
import { runWats, startWats, tempDataDir } from "../support/cli.ts";
import { dataPaths } from "../../src/config/paths.ts";

Deno.test("a malformed config.toml stops the daemon with file, line and what to do; the file is kept", async () => {
  const dir = tempDataDir();
  const broken = "# my settings\n[agent\nmax_turns = 4\n";
  await Deno.writeTextFile(`${dir}/config.toml`, broken);
  const r = await runWats(["--data-dir", dir]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /config\.toml:2/);
  assert.match(r.stderr, /fix or remove the line/);
  assert.equal(await Deno.readTextFile(`${dir}/config.toml`), broken);
});

Deno.test("a truncated safety.json is reported by status and the daemon, kept, and replaced only by `wats config ack`", async () => {
  const dir = tempDataDir();
  const paths = dataPaths(dir);
  await Deno.writeTextFile(paths.safety, '{"version":1,"acknowl');
  const offline = await runWats(["--data-dir", dir, "status"]);
  assert.equal(offline.code, 1);
  assert.match(
    offline.stdout,
    /safety\.json is unreadable \(not valid JSON\); run `wats config ack`/,
  );

  const node = startWats(["--data-dir", dir, "node"]);
  try {
    await node.waitForLine((l) => l.includes('"event":"started"'));
    assert.match(node.stderr(), /safety\.json is unreadable/);
    const live = await runWats(["--data-dir", dir, "status"], { home: node.home });
    assert.equal(live.code, 0, live.stderr);
    assert.match(live.stdout, /safety\.json is unreadable/);
    assert.equal(await Deno.readTextFile(paths.safety), '{"version":1,"acknowl', "kept as it was");
  } finally {
    await node.stop();
  }
  const ack = await runWats(["--data-dir", dir, "config", "ack"]);
  assert.equal(ack.code, 0, ack.stderr);
  assert.equal(JSON.parse(await Deno.readTextFile(paths.safety)).version, 1);
  assert.match((await runWats(["--data-dir", dir, "status"])).stdout, /^(?!.*unreadable)/s);
});

Deno.test("a truncated pending draft is named with what to do; the other drafts still show and nothing is deleted", async () => {
  const dir = tempDataDir();
  const paths = dataPaths(dir);
  await Deno.mkdir(paths.pendingDir, { recursive: true });
  await Deno.writeTextFile(`${paths.pendingDir}/aaaaaaaaaaaa.json`, '{"id":"aaaa');
  await Deno.writeTextFile(
    `${paths.pendingDir}/bbbbbbbbbbbb.json`,
    JSON.stringify({
      id: "bbbbbbbbbbbb",
      kind: "answer",
      text: "A good answer",
      parent: "c".repeat(64),
      profile: "helper",
      createdAt: Math.floor(Date.now() / 1000),
    }),
  );
  const r = await runWats(["--data-dir", dir, "agent", "pending"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /bbbbbbbbbbbb .*A good answer/);
  assert.match(r.stderr, /aaaaaaaaaaaa\.json is unreadable .*: fix or remove the file/);
  assert.equal(await Deno.readTextFile(`${paths.pendingDir}/aaaaaaaaaaaa.json`), '{"id":"aaaa');

  // The daemon's status still works and counts the readable draft.
  const node = startWats(["--data-dir", dir, "node"]);
  try {
    await node.waitForLine((l) => l.includes('"event":"started"'));
    const s = await runWats(["--data-dir", dir, "status"], { home: node.home });
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, /drafts held for review: 1/);
  } finally {
    await node.stop();
  }
});
