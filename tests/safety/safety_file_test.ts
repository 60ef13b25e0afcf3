import assert from "node:assert/strict";
import { ConfigError } from "../../src/errors.ts";
import { defaultSettings } from "../../src/config/schema.ts";
import { dataPaths } from "../../src/config/paths.ts";
import type { CommandContext } from "../../src/cli/context.ts";
import { safetyInitCommand } from "../../src/cli/safety_init.ts";
import {
  acknowledge,
  diffSafety,
  formatSafetyNotice,
  readAcknowledged,
  safetyValues,
} from "../../src/safety/safety_file.ts";

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("safetyValues holds only the safety keys, durations as text", () => {
  const v = safetyValues(defaultSettings());
  assert.equal(v["agent.timeout"], "10m");
  assert.equal(v["agent.review_ttl"], "24h");
  assert.equal(v["agent.review"], false);
  assert.deepEqual(v["halt.accept"], []);
  assert.equal("agent.runtime" in v, false);
  assert.equal("agent.about" in v, false);
  assert.equal(Object.keys(v).length, 19);
});

Deno.test("diffSafety lists what changed, in schema order, and nothing when equal", () => {
  const before = safetyValues(defaultSettings());
  assert.deepEqual(diffSafety(before, before), []);
  const s = defaultSettings();
  s["agent.review"] = true;
  s["agent.timeout"] = 300_000;
  s["agent.allow"] = ["ab"];
  assert.deepEqual(diffSafety(before, safetyValues(s)), [
    { key: "agent.timeout", acknowledged: "10m", current: "5m" },
    { key: "agent.allow", acknowledged: [], current: ["ab"] },
    { key: "agent.review", acknowledged: false, current: true },
  ]);
});

Deno.test("a safety key safety.json does not record counts as a change", () => {
  const current = safetyValues(defaultSettings());
  const older = { ...current };
  delete older["halt.accept"];
  assert.deepEqual(diffSafety(older, current), [
    { key: "halt.accept", acknowledged: undefined, current: [] },
  ]);
});

Deno.test("the notice says the key, both values and how to acknowledge", () => {
  assert.deepEqual(
    formatSafetyNotice([
      { key: "agent.review", acknowledged: true, current: false },
      { key: "agent.allow", acknowledged: [], current: ["ab", "cd"] },
      { key: "agent.workdir", acknowledged: "", current: "/w" },
    ]),
    [
      "agent.review changed from true to false (not acknowledged: run `wats config ack`)",
      "agent.allow changed from [] to [ab, cd] (not acknowledged: run `wats config ack`)",
      'agent.workdir changed from "" to /w (not acknowledged: run `wats config ack`)',
    ],
  );
});

Deno.test("acknowledge writes what readAcknowledged reads back", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/safety.json`;
    assert.equal(await readAcknowledged(path), null);
    const values = safetyValues(defaultSettings());
    const now = new Date("2026-10-18T12:00:00Z");
    await acknowledge(path, values, { createNew: true, now });
    const back = await readAcknowledged(path);
    assert.deepEqual(back, { version: 1, acknowledged_at: now.toISOString(), values });
  });
});

Deno.test("acknowledge with createNew leaves an existing file alone", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/safety.json`;
    await acknowledge(path, { "agent.review": true }, { createNew: true });
    await assert.rejects(
      acknowledge(path, { "agent.review": false }, { createNew: true }),
      Deno.errors.AlreadyExists,
    );
    assert.equal((await readAcknowledged(path))!.values["agent.review"], true);
    await acknowledge(path, { "agent.review": false }, { createNew: false });
    assert.equal((await readAcknowledged(path))!.values["agent.review"], false);
  });
});

Deno.test("a truncated safety.json is reported, says how to fix it, and is not deleted", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/safety.json`;
    await Deno.writeTextFile(path, '{"version":1,"acknowledged_at":"x","val');
    await assert.rejects(readAcknowledged(path), (err) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /safety\.json is unreadable \(not valid JSON\)/);
      assert.match(err.message, /run `wats config ack` to record the current values/);
      return true;
    });
    await Deno.writeTextFile(path, '{"version":2,"acknowledged_at":"x","values":{}}');
    await assert.rejects(readAcknowledged(path), /unknown version 2/);
    assert.ok((await Deno.stat(path)).isFile);
  });
});

Deno.test("the daemon's first start records safety.json once and never overwrites it", async () => {
  await withDir(async (dir) => {
    const paths = dataPaths(dir);
    const ctx: CommandContext = {
      argv: [],
      words: ["safety-init"],
      paths,
      env: { WATS_AGENT_REVIEW: "true" },
      cwd: dir,
      os: "linux",
      user: "al",
      self: [],
      stdinIsTerminal: false,
      stdoutIsTerminal: false,
      verbose: false,
      signal: new AbortController().signal,
    };
    await Deno.writeTextFile(paths.config, "[agent]\nmax_turns = 4\n");
    assert.equal(await safetyInitCommand(ctx), 0);
    const first = await readAcknowledged(paths.safety);
    assert.equal(first!.values["agent.max_turns"], 4);
    assert.equal(first!.values["agent.review"], true);

    await Deno.writeTextFile(paths.config, "[agent]\nmax_turns = 9\n");
    assert.equal(await safetyInitCommand(ctx), 0);
    assert.deepEqual(await readAcknowledged(paths.safety), first);
  });
});
