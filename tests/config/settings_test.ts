import assert from "node:assert/strict";
import { ConfigError } from "../../src/errors.ts";
import { dataPaths } from "../../src/config/paths.ts";
import {
  DAEMON_FLAGS,
  flagsToKeys,
  loadSettings,
  type ResolveInput,
  resolveSettings,
} from "../../src/config/settings.ts";

const FILE = "/data/wats/config.toml";

function resolve(over: Partial<ResolveInput> = {}) {
  return resolveSettings({
    fileText: null,
    filePath: FILE,
    env: {},
    flags: {},
    user: "alice",
    ...over,
  });
}

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${err}`);
    return err.message;
  }
  assert.fail("expected a ConfigError");
}

Deno.test("with nothing set, every value is its default and the profiles come from the OS user", () => {
  const r = resolve();
  assert.equal(r.values["profile"], "alice");
  assert.equal(r.values["agent.profile"], "alice-agent");
  assert.equal(r.values["agent.max_turns"], 10);
  assert.equal(r.sources["profile"], "default");
  assert.ok(Object.values(r.sources).every((s) => s === "default"));
  assert.deepEqual(r.warnings, []);
  assert.deepEqual(r.fileValues, {});
});

Deno.test("precedence: a flag beats WATS_*, which beats the file, which beats the default", () => {
  const fileText = '[agent]\nmax_turns = 4\nevery = "1m"\nheartbeat = "2h"\n';
  const r = resolve({
    fileText,
    env: { WATS_AGENT_EVERY: "45s", WATS_AGENT_HEARTBEAT: "3h" },
    flags: { "agent.heartbeat": { flag: "--heartbeat", value: "0" } },
  });
  assert.equal(r.values["agent.max_turns"], 4);
  assert.equal(r.sources["agent.max_turns"], "file");
  assert.equal(r.values["agent.every"], 45_000);
  assert.equal(r.sources["agent.every"], "env");
  assert.equal(r.values["agent.heartbeat"], 0);
  assert.equal(r.sources["agent.heartbeat"], "flag");
  assert.equal(r.values["agent.timeout"], 600_000);
  assert.equal(r.sources["agent.timeout"], "default");
  // fileValues keep what the file says even where something overrides it.
  assert.equal(r.fileValues["agent.heartbeat"], 7_200_000);
  assert.equal(r.fileValues["agent.every"], 60_000);
});

Deno.test("profiles set in the file are used as they are", () => {
  const r = resolve({ fileText: 'profile = "bob"\n[agent]\nprofile = "bob-bot"\n' });
  assert.equal(r.values["profile"], "bob");
  assert.equal(r.values["agent.profile"], "bob-bot");
  assert.equal(r.sources["agent.profile"], "file");
});

Deno.test("top-level dotted keys load like keys in a table", () => {
  const r = resolve({ fileText: 'agent.max_turns = 3\nagent.access = "workspace"\n' });
  assert.equal(r.values["agent.max_turns"], 3);
  assert.equal(r.values["agent.access"], "workspace");
});

Deno.test("lists come from TOML arrays in the file and comma-separated text in env and flags", () => {
  const r = resolve({
    fileText: 'infra = ["wss://a.example", "ws://127.0.0.1:7000"]\n',
    env: { WATS_AGENT_TOOLS: "Read,Grep" },
    flags: { "agent.caps": { flag: "--caps", value: "code, review" } },
  });
  assert.deepEqual(r.values["infra"], ["wss://a.example", "ws://127.0.0.1:7000"]);
  assert.deepEqual(r.values["agent.tools"], ["Read", "Grep"]);
  assert.deepEqual(r.values["agent.caps"], ["code", "review"]);
});

Deno.test("a bad value in the file names the file, line, key, value and what is allowed", () => {
  const text = '# me\nprofile = "x"\n\n[agent]\n# comment\nmax_turns = 4\naccess = "open"\n';
  assert.equal(
    configError(() => resolve({ fileText: text })),
    `${FILE}:7: agent.access = "open" is not allowed; use one of locked, workspace, inherit`,
  );
  assert.equal(
    configError(() => resolve({ fileText: "[agent]\nmax_turns = 0\n" })),
    `${FILE}:2: agent.max_turns = 0 is not allowed; agent.max_turns must be a whole number ≥ 1`,
  );
  assert.equal(
    configError(() => resolve({ fileText: 'agent.every = "soon"\n' })),
    `${FILE}:1: agent.every = "soon" is not allowed; agent.every must be a duration such as 0, 500ms, 90s, 10m or 1h30m`,
  );
});

Deno.test("a bad value in an inline table points at the table's line", () => {
  const msg = configError(() =>
    resolve({ fileText: 'profile = "x"\nagent = { max_turns = "many" }\n' })
  );
  assert.match(msg, /config\.toml:2: agent\.max_turns = "many" is not allowed/);
});

Deno.test("an unknown key is an error with the line and the nearest key", () => {
  const msg = configError(() => resolve({ fileText: "\n[agent]\nmax_turn = 3\n" }));
  assert.equal(
    msg,
    `${FILE}:3: unknown key agent.max_turn (did you mean agent.max_turns?); ` +
      "fix or remove the line in an editor, then run the command again",
  );
  assert.match(
    configError(() => resolve({ fileText: "colour = 1\n" })),
    /config\.toml:1: unknown key colour;/,
  );
});

Deno.test("an unknown table is an error naming the table and its line", () => {
  const msg = configError(() => resolve({ fileText: 'profile = "x"\n\n[agnet]\nmax_turns = 3\n' }));
  assert.match(msg, /config\.toml:3: unknown table \[agnet\]; the tables are/);
});

Deno.test("malformed TOML says file:line and how to recover", () => {
  const msg = configError(() => resolve({ fileText: '[agent]\nmax_turns = 3\nabout = "x\n' }));
  assert.match(msg, /^\/data\/wats\/config\.toml:3: not valid TOML \(.+\); /);
  assert.match(msg, /fix or remove the line in an editor, then run the command again$/);
});

Deno.test("harnesses and checkouts tables pass through to their owners", () => {
  const r = resolve({
    fileText:
      '[harnesses.coder]\ncommand = "claude-agent-acp"\n[checkouts.web]\npath = "/src/web"\n',
  });
  assert.deepEqual(r.sections, {
    harnesses: { coder: { command: "claude-agent-acp" } },
    checkouts: { web: { path: "/src/web" } },
  });
});

Deno.test("removed thread_backoff keys load with exactly one warning each, in the runner contract's wording", () => {
  const r = resolve({
    fileText: '[agent]\nthread_backoff = "1m"\nthread_backoff_max = "1h"\nmax_turns = 3\n',
  });
  assert.deepEqual(r.warnings, [
    "agent.thread_backoff is no longer used (loop detector, ADR 0011); remove it",
    "agent.thread_backoff_max is no longer used (loop detector, ADR 0011); remove it",
  ]);
  assert.equal(r.values["agent.max_turns"], 3);
});

Deno.test("a bad WATS_ variable names the variable, its value and the rule", () => {
  assert.equal(
    configError(() => resolve({ env: { WATS_AGENT_MAX_TURNS: "abc" } })),
    "WATS_AGENT_MAX_TURNS=abc: agent.max_turns must be a whole number ≥ 1",
  );
  assert.equal(
    configError(() => resolve({ env: { WATS_AGENT_ACCESS: "open" } })),
    "WATS_AGENT_ACCESS=open: agent.access must be one of locked, workspace, inherit",
  );
});

Deno.test("a bad flag value names the flag", () => {
  assert.equal(
    configError(() => resolve({ flags: { "agent.every": { flag: "--every", value: "soon" } } })),
    "--every soon: agent.every must be a duration such as 0, 500ms, 90s, 10m or 1h30m",
  );
});

Deno.test("WATS_ variables that are no setting, and empty ones, are ignored", () => {
  const r = resolve({
    env: { WATS_DATA_DIR: "/x", WATS_AGENT_MAX_TURN: "abc", WATS_AGENT_MAX_TURNS: "" },
  });
  assert.equal(r.values["agent.max_turns"], 10);
  assert.equal(r.sources["agent.max_turns"], "default");
});

Deno.test("agent.workdir may not be the data directory or contain it", () => {
  assert.match(
    configError(() => resolve({ fileText: 'agent.workdir = "/data"\n' })),
    /config\.toml:1: agent\.workdir = "\/data" is or contains the data directory \/data\/wats/,
  );
  assert.match(
    configError(() => resolve({ env: { WATS_AGENT_WORKDIR: "/data/wats" } })),
    /^WATS_AGENT_WORKDIR: agent\.workdir/,
  );
  // Inside the data dir or beside it is allowed.
  assert.equal(
    resolve({ env: { WATS_AGENT_WORKDIR: "/data/wats/worktrees/x" } }).values["agent.workdir"],
    "/data/wats/worktrees/x",
  );
  assert.equal(
    resolve({ env: { WATS_AGENT_WORKDIR: "/data/wats-work" } }).values["agent.workdir"],
    "/data/wats-work",
  );
});

Deno.test("flagsToKeys maps daemon flags to keys and refuses two spellings of one", () => {
  assert.equal(DAEMON_FLAGS["every"], "agent.every");
  assert.equal(DAEMON_FLAGS["agent-every"], "agent.every");
  assert.equal(DAEMON_FLAGS["agent"], "agent.runtime");
  assert.deepEqual(flagsToKeys({ every: "1m", "--agent": "claude", "log-level": "debug" }), {
    "agent.every": { flag: "--every", value: "1m" },
    "agent.runtime": { flag: "--agent", value: "claude" },
  });
  assert.match(
    configError(() => flagsToKeys({ every: "1m", "agent-every": "2m" })),
    /--every and --agent-every both set agent\.every/,
  );
});

Deno.test("loadSettings reads config.toml and treats a missing file as empty", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const paths = dataPaths(dir);
    const none = await loadSettings(paths, {}, {}, "al");
    assert.equal(none.values["agent.max_turns"], 10);
    await Deno.writeTextFile(paths.config, "[agent]\nmax_turns = 7\n");
    const some = await loadSettings(paths, {}, {}, "al");
    assert.equal(some.values["agent.max_turns"], 7);
    assert.equal(some.sources["agent.max_turns"], "file");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("agent.sweep: infinity (the seed's word) and 0 both turn it off, in the file and in WATS_AGENT_SWEEP", () => {
  assert.equal(resolve({}).values["agent.sweep"], 86_400_000);
  assert.equal(resolve({ fileText: '[agent]\nsweep = "infinity"\n' }).values["agent.sweep"], 0);
  assert.equal(resolve({ fileText: "[agent]\nsweep = 0\n" }).values["agent.sweep"], 0);
  assert.equal(resolve({ fileText: "[agent]\nsweep = inf\n" }).values["agent.sweep"], 0);
  assert.equal(resolve({ fileText: '[agent]\nsweep = "12h"\n' }).values["agent.sweep"], 43_200_000);
  assert.equal(resolve({ env: { WATS_AGENT_SWEEP: "infinity" } }).values["agent.sweep"], 0);
  assert.equal(resolve({ env: { WATS_AGENT_SWEEP: "0" } }).values["agent.sweep"], 0);
  const accepted = "agent.sweep must be a duration such as 500ms, 90s, 10m or 1h30m, " +
    "or infinity (or 0) for off";
  assert.equal(
    configError(() => resolve({ fileText: '[agent]\nsweep = "never"\n' })),
    `${FILE}:2: agent.sweep = "never" is not allowed; ${accepted}`,
  );
  assert.equal(
    configError(() => resolve({ env: { WATS_AGENT_SWEEP: "forever" } })),
    `WATS_AGENT_SWEEP=forever: ${accepted}`,
  );
  // Only agent.sweep has the word: the heartbeat turns off with 0 alone.
  assert.match(
    configError(() => resolve({ fileText: '[agent]\nheartbeat = "infinity"\n' })),
    /agent\.heartbeat must be a duration such as 0, 500ms/,
  );
});
