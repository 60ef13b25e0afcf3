/**
 * `wats agent approve --edit` and `wats help TOPIC` as a user runs them.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { runWats, startWats, tempDataDir } from "../support/cli.ts";
import { dataPaths } from "../../src/config/paths.ts";

Deno.test("`wats agent approve ID --edit` publishes the text as edited in $EDITOR, and the draft is gone", async () => {
  const dir = tempDataDir();
  const paths = dataPaths(dir);
  await Deno.mkdir(paths.pendingDir, { recursive: true });
  const id = "0123456789ab";
  await Deno.writeTextFile(
    `${paths.pendingDir}/${id}.json`,
    JSON.stringify({
      id,
      kind: "note",
      text: "first draft",
      profile: "helper",
      createdAt: Math.floor(Date.now() / 1000),
    }),
  );
  // An "editor" that rewrites the file it is given, as a person would.
  const bin = await Deno.makeTempDir({ prefix: "wats-editor-" });
  await Deno.writeTextFile(`${bin}/edit.sh`, '#!/bin/sh\nprintf "edited by a person\\n" > "$1"\n', {
    mode: 0o755,
  });
  const node = startWats(["--data-dir", dir, "node"]);
  try {
    await node.waitForLine((l) => l.includes('"event":"started"'));
    const r = await runWats(["--data-dir", dir, "agent", "approve", id, "--edit"], {
      home: node.home,
      env: { EDITOR: `${bin}/edit.sh` },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Approved draft ${id}: published as post [0-9a-f]{64}`));
    const stored = JSON.parse(
      await node.waitForLine((l) =>
        l.includes('"event":"post_stored"') && l.includes('"kind":"note"')
      ),
    );
    const found = await runWats(["--data-dir", dir, "agent", "pending"], { home: node.home });
    assert.match(found.stdout, /no drafts waiting/);
    // The published text is the edited one.
    const db = new DatabaseSync(paths.store, { readOnly: true });
    const row = db.prepare("SELECT text FROM events WHERE id = ?").get(stored.id) as {
      text: string;
    };
    db.close();
    assert.equal(row.text, "edited by a person");
  } finally {
    await node.stop();
    await Deno.remove(bin, { recursive: true });
  }
});

Deno.test("an editor that fails leaves the draft as it was", async () => {
  const dir = tempDataDir();
  const paths = dataPaths(dir);
  await Deno.mkdir(paths.pendingDir, { recursive: true });
  const draft = JSON.stringify({
    id: "abcdefabcdef",
    kind: "note",
    text: "keep me",
    profile: "helper",
    createdAt: 1,
  });
  await Deno.writeTextFile(`${paths.pendingDir}/abcdefabcdef.json`, draft);
  const r = await runWats(["--data-dir", dir, "agent", "approve", "abcdefabcdef", "--edit"], {
    env: { EDITOR: "false" },
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /false exited with code 1: the draft is unchanged/);
  assert.equal(await Deno.readTextFile(`${paths.pendingDir}/abcdefabcdef.json`), draft);
});

Deno.test("`wats help config` shows the config commands; `wats help frob` says it is unknown", async () => {
  const ok = await runWats(["help", "config"]);
  assert.equal(ok.code, 0);
  assert.match(ok.stdout, /^Usage: wats config get KEY \| set KEY VALUE/);
  const other = await runWats(["help", "mcp"]);
  assert.equal(other.code, 0);
  assert.match(other.stdout, /See `wats mcp --help`/);
  const bad = await runWats(["help", "frob"]);
  assert.equal(bad.code, 2);
  assert.equal(bad.stdout, "");
  assert.match(bad.stderr, /unknown command "frob"/);
});
