import assert from "node:assert/strict";
import { ConfigError } from "../../src/errors.ts";
import { hasKey, setKey, unsetKey } from "../../src/config/edit.ts";
import { resolveSettings } from "../../src/config/settings.ts";

const TABLES = `# wats settings, kept by hand
profile = "alice"   # me

infra = ["wss://a.example"]

# the runner
[agent]
# budget: keep it low
max_usd_per_day = 2
every = "30s" # debounce
thread_backoff = "1m"

[halt]
accept = []
`;

const DOTTED = `# dotted style
profile = "alice"
agent.max_turns = 3 # few
agent.every = "1m"

[harnesses.coder]
command = "claude-agent-acp"
`;

function load(text: string) {
  return resolveSettings({
    fileText: text,
    filePath: "config.toml",
    env: {},
    flags: {},
    user: "al",
  });
}

Deno.test("set changes one value in its table and keeps every comment and the key order", () => {
  const out = setKey(TABLES, "agent.max_usd_per_day", 5);
  assert.equal(out, TABLES.replace("max_usd_per_day = 2", "max_usd_per_day = 5"));
});

Deno.test("set adds a new key to its existing table, after the table's keys", () => {
  const out = setKey(TABLES, "agent.review", true);
  assert.equal(
    out,
    TABLES.replace('thread_backoff = "1m"\n', 'thread_backoff = "1m"\nreview = true\n'),
  );
  assert.equal(load(out).values["agent.review"], true);
});

Deno.test("set creates a missing table at the end", () => {
  const out = setKey(TABLES, "net.max_skew", "5m");
  assert.ok(out.startsWith(TABLES.trimEnd()), out);
  assert.match(out, /\n\[net\]\nmax_skew = "5m"\n$/);
  assert.equal(load(out).values["net.max_skew"], 300_000);
});

Deno.test("set puts a top-level key before the first table, never inside it", () => {
  const out = setKey("# hi\n[agent]\nmax_turns = 3\n", "listen", "127.0.0.1:7447");
  const r = load(out);
  assert.equal(r.values["listen"], "127.0.0.1:7447");
  assert.equal(r.values["agent.max_turns"], 3);
  assert.ok(out.startsWith("# hi\n"));
});

Deno.test("set in a file of top-level dotted keys keeps the dotted style and the comments", () => {
  const out = setKey(DOTTED, "agent.max_turns", 8);
  assert.equal(out, DOTTED.replace("agent.max_turns = 3 # few", "agent.max_turns = 8 # few"));
  const added = setKey(DOTTED, "agent.review", false);
  assert.match(added, /agent\.every = "1m"\nagent\.review = false\n/);
  assert.ok(added.includes("agent.max_turns = 3 # few"));
  assert.ok(added.includes('[harnesses.coder]\ncommand = "claude-agent-acp"'));
});

Deno.test("set writes lists as TOML arrays, and an empty file gets a table and a final newline", () => {
  const out = setKey("", "agent.allow", ["npub1x", "npub1y"]);
  assert.equal(out, '[agent]\nallow = ["npub1x", "npub1y"]\n');
});

Deno.test("unset removes only that key and keeps the rest of the file as it was", () => {
  const out = unsetKey(TABLES, "agent.every");
  assert.equal(out, TABLES.replace('every = "30s" # debounce\n', ""));
});

Deno.test("unset removes a removed key and a dotted key", () => {
  assert.ok(!unsetKey(TABLES, "agent.thread_backoff").includes("thread_backoff"));
  const out = unsetKey(DOTTED, "agent.max_turns");
  assert.ok(!out.includes("max_turns"));
  assert.ok(out.includes('agent.every = "1m"'));
  assert.ok(out.startsWith("# dotted style\n"));
});

Deno.test("unset of a key the file does not set returns the text unchanged", () => {
  assert.equal(unsetKey(TABLES, "agent.review"), TABLES);
  assert.equal(hasKey(TABLES, "agent.review"), false);
  assert.equal(hasKey(TABLES, "agent.every"), true);
});

Deno.test("editing malformed TOML is refused with the file and line", () => {
  assert.throws(
    () => setKey("[agent\nmax_turns = 3\n", "agent.review", true, "/d/config.toml"),
    (err) => err instanceof ConfigError && /^\/d\/config\.toml:1: not valid TOML/.test(err.message),
  );
});

Deno.test("set refuses to put a key under a plain value", () => {
  assert.throws(() => setKey("agent = 3\n", "agent.review", true), ConfigError);
});
