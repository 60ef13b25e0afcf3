import assert from "node:assert/strict";
import { ConfigError } from "../../src/errors.ts";
import { defaultSettings, SAFETY_KEYS } from "../../src/config/schema.ts";
import { type AcpTables, noAcpTables } from "../../src/config/acp_tables.ts";
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
  const v = safetyValues(defaultSettings(), noAcpTables());
  assert.equal(v["agent.timeout"], "10m");
  assert.equal(v["agent.review_ttl"], "24h");
  assert.equal(v["agent.review"], false);
  assert.deepEqual(v["halt.accept"], []);
  assert.equal("agent.runtime" in v, false);
  assert.equal("agent.about" in v, false);
  // Exactly the safety keys (tests/config/schema_test.ts lists them): routing's included.
  assert.deepEqual(Object.keys(v).sort(), [...SAFETY_KEYS].sort());
  assert.equal(v["agent.open_asks"], true);
  assert.equal(v["agent.caps_match"], "any");
});

Deno.test("diffSafety lists what changed, in schema order, and nothing when equal", () => {
  const before = safetyValues(defaultSettings(), noAcpTables());
  assert.deepEqual(diffSafety(before, before), []);
  const s = defaultSettings();
  s["agent.review"] = true;
  s["agent.timeout"] = 300_000;
  s["agent.allow"] = ["ab"];
  assert.deepEqual(diffSafety(before, safetyValues(s, noAcpTables())), [
    { key: "agent.timeout", acknowledged: "10m", current: "5m" },
    { key: "agent.allow", acknowledged: [], current: ["ab"] },
    { key: "agent.review", acknowledged: false, current: true },
  ]);
});

Deno.test("a safety key safety.json does not record counts as a change", () => {
  const current = safetyValues(defaultSettings(), noAcpTables());
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

const SECRET = "sk-ant-SECRET-2f9d";

/** A harness and a checkout, as config.toml's tables load. */
function tables(): AcpTables {
  return {
    harnesses: {
      claude: {
        name: "claude",
        command: "node",
        args: ["/opt/acp/dist/index.js"],
        env: { ANTHROPIC_API_KEY: SECRET },
        meta: { claudeCode: { options: { model: "sonnet", maxTurns: 3 } } },
        context: ["CLAUDE.md"],
        idle: 600_000,
        enabled: true,
      },
    },
    checkouts: { billing: { name: "billing", path: "/srv/billing", base: "main", fetch: false } },
  };
}

Deno.test("a harness's command, args, env, meta or enabled, or a checkout's path, is a safety change", () => {
  const before = safetyValues(defaultSettings(), tables());
  assert.deepEqual(diffSafety(before, safetyValues(defaultSettings(), tables())), []);
  // Not copied: only a hash of the variable's value is recorded.
  assert.ok(!JSON.stringify(before).includes(SECRET));
  assert.match(String(before["harnesses.claude.env.ANTHROPIC_API_KEY"]), /^sha256:[0-9a-f]{64}$/);

  const changed = (edit: (t: AcpTables) => void) => {
    const t = tables();
    edit(t);
    return diffSafety(before, safetyValues(defaultSettings(), t));
  };
  const claude = (t: AcpTables) => t.harnesses.claude!;
  assert.deepEqual(changed((t) => claude(t).command = "/tmp/evil"), [
    { key: "harnesses.claude.command", acknowledged: "node", current: "/tmp/evil" },
  ]);
  assert.deepEqual(changed((t) => claude(t).args.push("--yolo")).map((c) => c.key), [
    "harnesses.claude.args",
  ]);
  assert.deepEqual(changed((t) => claude(t).env.ANTHROPIC_API_KEY = "other").map((c) => c.key), [
    "harnesses.claude.env.ANTHROPIC_API_KEY",
  ]);
  assert.deepEqual(changed((t) => claude(t).env.NODE_OPTIONS = "--require /x").map((c) => c.key), [
    "harnesses.claude.env.NODE_OPTIONS",
  ]);
  assert.deepEqual(
    changed((t) => claude(t).meta = { claudeCode: { options: { model: "opus", maxTurns: 3 } } }),
    [{
      key: "harnesses.claude.meta",
      acknowledged: '{"claudeCode":{"options":{"maxTurns":3,"model":"sonnet"}}}',
      current: '{"claudeCode":{"options":{"maxTurns":3,"model":"opus"}}}',
    }],
  );
  assert.deepEqual(changed((t) => claude(t).enabled = false).map((c) => c.key), [
    "harnesses.claude.enabled",
  ]);
  // Declaring which agent it runs decides whose login its sandbox gets: a safety change.
  assert.deepEqual(changed((t) => claude(t).agent = "codex"), [
    { key: "harnesses.claude.agent", acknowledged: undefined, current: "codex" },
  ]);
  assert.deepEqual(changed((t) => t.checkouts.billing!.path = "/home/me"), [
    { key: "checkouts.billing.path", acknowledged: "/srv/billing", current: "/home/me" },
  ]);
  // A new harness, and one gone, count too.
  assert.deepEqual(
    changed((t) => t.harnesses.codex = { ...claude(t), name: "codex", env: {} }).map((c) => c.key),
    [
      "harnesses.codex.args",
      "harnesses.codex.command",
      "harnesses.codex.enabled",
      "harnesses.codex.meta",
    ],
  );
  assert.equal(changed((t) => delete t.harnesses.claude).length, 5);
  // What only tunes the coding agent is no safety change.
  assert.deepEqual(
    changed((t) => {
      claude(t).context = [];
      claude(t).idle = 0;
      t.checkouts.billing!.base = "origin/main";
      t.checkouts.billing!.fetch = true;
      // The same meta, its keys in another order.
      claude(t).meta = { claudeCode: { options: { maxTurns: 3, model: "sonnet" } } };
    }),
    [],
  );
});

Deno.test("a changed env value is named, never shown: not in the notice, not as its hash", () => {
  const before = safetyValues(defaultSettings(), tables());
  const t = tables();
  t.harnesses.claude!.env.ANTHROPIC_API_KEY = "sk-ant-NEW-77aa";
  t.harnesses.claude!.env.EXTRA_TOKEN = "tok-NEW-1234";
  delete t.checkouts.billing;
  const lines = formatSafetyNotice(diffSafety(before, safetyValues(defaultSettings(), t)));
  assert.deepEqual(lines, [
    "checkouts.billing.path changed from /srv/billing to (none) (not acknowledged: run `wats config ack`)",
    "harnesses.claude.env.ANTHROPIC_API_KEY changed (the value is not shown) (not acknowledged: run `wats config ack`)",
    "harnesses.claude.env.EXTRA_TOKEN changed from (none) to (not shown) (not acknowledged: run `wats config ack`)",
  ]);
  for (const secret of [SECRET, "sk-ant-NEW-77aa", "tok-NEW-1234", "sha256"]) {
    assert.ok(!lines.join("\n").includes(secret), secret);
  }
});

Deno.test("acknowledge writes what readAcknowledged reads back", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/safety.json`;
    assert.equal(await readAcknowledged(path), null);
    const values = safetyValues(defaultSettings(), noAcpTables());
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
