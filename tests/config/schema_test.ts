import assert from "node:assert/strict";
import { formatDuration } from "../../src/duration.ts";
import {
  defaultSettings,
  envName,
  SAFETY_KEYS,
  SCHEMA,
  SETTING_KEYS,
} from "../../src/config/schema.ts";
import {
  formatValue,
  InvalidValue,
  parseText,
  parseToml,
  textToToml,
} from "../../src/config/codecs.ts";
import { authorKeyHex } from "../../src/author_key.ts";
import { parseDuration } from "../../src/duration.ts";

const HEX = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e";
const NPUB = "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg";

function requirementOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof InvalidValue, `expected InvalidValue, got ${err}`);
    return err.requirement;
  }
  assert.fail("expected the value to be refused");
}

Deno.test("defaults are the ones docs/decisions/runner.md decided", () => {
  const d = defaultSettings();
  assert.equal(d["agent.runtime"], "none");
  assert.equal(d["agent.every"], 30_000);
  assert.equal(d["agent.heartbeat"], 3_600_000);
  assert.equal(d["agent.max_runs_per_hour"], 6);
  assert.equal(d["agent.timeout"], 600_000);
  assert.equal(d["agent.max_turns"], 10);
  assert.equal(d["agent.max_usd_per_day"], 2);
  assert.equal(d["agent.max_usd_per_month"], 20);
  assert.equal(d["agent.max_runs_per_day"], 48);
  assert.equal(d["agent.ignore_local"], true);
  assert.deepEqual(d["agent.allow"], []);
  assert.equal(d["agent.access"], "locked");
  assert.equal(d["agent.review"], false);
  assert.equal(d["agent.review_ttl"], 86_400_000);
  assert.equal(d["agent.loop_max_exchanges"], 30);
  assert.equal(d["agent.wakes_per_author_per_hour"], 0);
  assert.equal(d["net.max_skew"], 600_000);
  assert.deepEqual(d["infra"], []);
  assert.equal(d["listen"], "");
  assert.deepEqual(d["halt.accept"], []);
});

Deno.test("defaultSettings returns fresh lists, so callers cannot change the schema", () => {
  defaultSettings()["agent.allow"].push("x");
  assert.deepEqual(defaultSettings()["agent.allow"], []);
});

Deno.test("each setting's variable is WATS_ and the key in capitals with underscores", () => {
  assert.equal(envName("agent.max_usd_per_day"), "WATS_AGENT_MAX_USD_PER_DAY");
  for (const key of SETTING_KEYS) {
    assert.equal(SCHEMA[key].env, "WATS_" + key.toUpperCase().replaceAll(".", "_"));
  }
});

Deno.test("the safety keys are exactly the ones the brief marks", () => {
  assert.deepEqual([...SAFETY_KEYS].sort(), [
    "agent.access",
    "agent.allow",
    // Issue 18: which asks wake the agent, like agent.allow.
    "agent.caps_match",
    // Issue 10 (ACP): which checkouts and which permission requests coding agents get.
    "agent.checkouts",
    "agent.ignore_local",
    "agent.loop_max_exchanges",
    "agent.max_runs_per_day",
    "agent.max_runs_per_hour",
    "agent.max_turns",
    "agent.max_usd_per_day",
    "agent.max_usd_per_month",
    "agent.open_asks",
    // Issue 30: what a run or a coding agent call may hold of the budget.
    "agent.reserve_usd",
    "agent.review",
    "agent.review_ttl",
    "agent.timeout",
    "agent.tools",
    "agent.wakes_per_author_per_hour",
    "agent.workdir",
    "halt.accept",
    // Issue 32: MCP over HTTP is a new way in, and beyond loopback a wider one.
    "mcp.listen",
    "mcp.remote",
    // Issue 31: who the relay endpoint serves (NIP-42 members).
    "net.auth",
    "net.members",
    "policy.allow",
    "policy.deny",
    // Issue 21: the OS sandbox of agents that run commands.
    "sandbox.hide",
    "sandbox.mode",
    "sandbox.network",
  ]);
});

Deno.test("daemon flags: runner options have a plain and an --agent- form", () => {
  assert.deepEqual(SCHEMA["agent.every"].flags, ["--every", "--agent-every"]);
  assert.deepEqual(SCHEMA["agent.timeout"].flags, ["--run-timeout", "--agent-run-timeout"]);
  assert.deepEqual(SCHEMA["agent.runtime"].flags, ["--agent"]);
  assert.deepEqual(SCHEMA["agent.max_turns"].flags, []);
});

Deno.test("durations parse to milliseconds and print back as written", () => {
  const cases: [string, number][] = [
    ["0", 0],
    ["500ms", 500],
    ["90s", 90_000],
    ["10m", 600_000],
    ["1h", 3_600_000],
    ["24h", 86_400_000],
    ["1h30m", 5_400_000],
    ["7d", 604_800_000],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
  for (const bad of ["", "10", "1.5h", "-1m", "10 m", "m", "1x", "0s0"]) {
    assert.equal(parseDuration(bad), undefined, bad);
  }
  assert.equal(formatDuration(0), "0");
  assert.equal(formatDuration(600_000), "10m");
  assert.equal(formatDuration(5_400_000), "1h30m");
  assert.equal(formatDuration(500), "500ms");
  assert.equal(formatDuration(86_400_000), "24h");
  assert.equal(formatDuration(90_000), "1m30s");
});

Deno.test("text values: each type parses, and a bad one says what is allowed", () => {
  assert.equal(parseText(SCHEMA["agent.max_turns"], "5"), 5);
  assert.equal(
    requirementOf(() => parseText(SCHEMA["agent.max_turns"], "abc")),
    "must be a whole number ≥ 1",
  );
  assert.equal(
    requirementOf(() => parseText(SCHEMA["agent.max_turns"], "0")),
    "must be a whole number ≥ 1",
  );
  assert.equal(
    requirementOf(() => parseText(SCHEMA["agent.max_runs_per_hour"], "2.5")),
    "must be a whole number ≥ 0",
  );
  assert.equal(parseText(SCHEMA["agent.max_usd_per_day"], "2.5"), 2.5);
  assert.equal(
    requirementOf(() => parseText(SCHEMA["agent.max_usd_per_day"], "-1")),
    "must be a number ≥ 0",
  );
  assert.equal(parseText(SCHEMA["agent.review"], "true"), true);
  assert.equal(parseText(SCHEMA["agent.review"], "0"), false);
  assert.equal(
    requirementOf(() => parseText(SCHEMA["agent.review"], "maybe")),
    "must be true or false",
  );
  assert.equal(parseText(SCHEMA["agent.every"], "90s"), 90_000);
  assert.match(requirementOf(() => parseText(SCHEMA["agent.every"], "soon")), /duration/);
  assert.match(
    requirementOf(() => parseText(SCHEMA["agent.timeout"], "0")),
    /at least 1s/,
  );
  assert.equal(parseText(SCHEMA["agent.access"], "workspace"), "workspace");
  assert.equal(
    requirementOf(() => parseText(SCHEMA["agent.access"], "open")),
    "must be one of locked, workspace, inherit",
  );
  assert.deepEqual(parseText(SCHEMA["agent.tools"], "Read, Grep,,"), ["Read", "Grep"]);
  assert.deepEqual(parseText(SCHEMA["agent.tools"], ""), []);
  assert.equal(parseText(SCHEMA["listen"], "127.0.0.1:7447"), "127.0.0.1:7447");
  assert.equal(parseText(SCHEMA["listen"], "[::1]:7447"), "[::1]:7447");
  assert.equal(parseText(SCHEMA["listen"], ""), "");
  for (const bad of ["7447", "host:", "host:70000", "a b:1"]) {
    assert.match(requirementOf(() => parseText(SCHEMA["listen"], bad)), /host:port/, bad);
  }
  assert.deepEqual(parseText(SCHEMA["infra"], "wss://a.example,ws://127.0.0.1:7000"), [
    "wss://a.example",
    "ws://127.0.0.1:7000",
  ]);
  assert.match(
    requirementOf(() => parseText(SCHEMA["infra"], "https://a.example")),
    /ws:\/\/ or wss:\/\/; "https:\/\/a.example" is not one/,
  );
  assert.equal(parseText(SCHEMA["agent.workdir"], "/srv/work"), "/srv/work");
  assert.equal(parseText(SCHEMA["agent.workdir"], "~/work", "/home/al"), "/home/al/work");
  assert.match(requirementOf(() => parseText(SCHEMA["agent.workdir"], "work")), /absolute/);
});

Deno.test("a list set in config.toml's spelling is parsed as a list, never kept as one odd item", () => {
  const caps = SCHEMA["agent.caps"];
  assert.deepEqual(parseText(caps, '["rust"]'), ["rust"]);
  assert.deepEqual(parseText(caps, '["rust", "review"]'), ["rust", "review"]);
  assert.deepEqual(parseText(caps, "[]"), []);
  assert.deepEqual(parseText(caps, "rust, review"), ["rust", "review"]);
  for (const bad of ["[rust]", "['rust']", "[1, 2]", '["rust"', 'rust"]']) {
    assert.match(
      requirementOf(() => parseText(caps, bad)),
      /write it comma-separated \(a, b\) or as config\.toml does \(\["a", "b"\]\)$/,
      bad,
    );
  }
});

Deno.test("author keys: npub and hex both resolve to lowercase hex; anything else is refused", () => {
  assert.equal(authorKeyHex(NPUB), HEX);
  assert.equal(authorKeyHex(HEX.toUpperCase()), HEX);
  assert.equal(authorKeyHex("npub1abc"), undefined);
  assert.equal(authorKeyHex("alice"), undefined);
  assert.deepEqual(parseText(SCHEMA["agent.allow"], `${NPUB},${HEX}`), [HEX, HEX]);
  assert.match(
    requirementOf(() => parseText(SCHEMA["halt.accept"], "bob")),
    /author keys.*"bob" is not one/,
  );
});

Deno.test("TOML values must have the TOML type; a quoted number is refused with a hint", () => {
  assert.equal(parseToml(SCHEMA["agent.max_turns"], 5), 5);
  assert.equal(
    requirementOf(() => parseToml(SCHEMA["agent.max_turns"], "5")),
    "must be a whole number ≥ 1 (write it without quotes)",
  );
  assert.equal(parseToml(SCHEMA["agent.heartbeat"], 0), 0);
  assert.equal(parseToml(SCHEMA["agent.heartbeat"], "2h"), 7_200_000);
  assert.match(requirementOf(() => parseToml(SCHEMA["agent.heartbeat"], 60)), /duration/);
  assert.deepEqual(parseToml(SCHEMA["agent.caps"], ["code", "review"]), ["code", "review"]);
  assert.match(requirementOf(() => parseToml(SCHEMA["agent.caps"], "code")), /list/);
  assert.match(requirementOf(() => parseToml(SCHEMA["agent.caps"], ["two words"])), /list/);
  assert.match(requirementOf(() => parseToml(SCHEMA["agent.review"], "yes")), /true or false/);
});

Deno.test("config set writes values typed, and durations and author keys as the user wrote them", () => {
  assert.equal(textToToml(SCHEMA["agent.max_turns"], "5"), 5);
  assert.equal(textToToml(SCHEMA["agent.review"], "true"), true);
  assert.equal(textToToml(SCHEMA["agent.every"], "90s"), "90s");
  assert.deepEqual(textToToml(SCHEMA["agent.allow"], NPUB), [NPUB]);
  assert.deepEqual(textToToml(SCHEMA["agent.allow"], ""), []);
  assert.throws(() => textToToml(SCHEMA["agent.max_turns"], "x"), InvalidValue);
});

Deno.test("get prints lists comma-separated and durations with units", () => {
  assert.equal(formatValue("agent.tools", ["Read", "Grep"]), "Read,Grep");
  assert.equal(formatValue("agent.timeout", 600_000), "10m");
  assert.equal(formatValue("agent.max_usd_per_day", 2.5), "2.5");
  assert.equal(formatValue("agent.review", false), "false");
});

Deno.test("agent.sweep reads infinity as off, writes it as typed and prints off as infinity", () => {
  const spec = SCHEMA["agent.sweep"];
  assert.equal(parseText(spec, "infinity"), 0);
  assert.equal(parseText(spec, " Infinity "), 0);
  assert.equal(parseText(spec, "0"), 0);
  assert.equal(parseText(spec, "6h"), 21_600_000);
  assert.equal(parseToml(spec, "infinity"), 0);
  assert.equal(parseToml(spec, 0), 0);
  assert.equal(parseToml(spec, Infinity), 0);
  assert.equal(textToToml(spec, "infinity"), "infinity");
  assert.equal(formatValue("agent.sweep", 0), "infinity");
  assert.equal(formatValue("agent.sweep", 86_400_000), "24h");
  const accepted =
    "must be a duration such as 500ms, 90s, 10m or 1h30m, or infinity (or 0) for off";
  for (const bad of ["never", "inf", "-1h", ""]) {
    assert.equal(requirementOf(() => parseText(spec, bad)), accepted, bad);
  }
  assert.equal(requirementOf(() => parseToml(spec, 60)), accepted);
  assert.equal(requirementOf(() => parseToml(spec, -Infinity)), accepted);
  // Other durations keep 0 as their only off.
  assert.match(requirementOf(() => parseText(SCHEMA["agent.heartbeat"], "infinity")), /duration/);
  assert.match(requirementOf(() => parseToml(SCHEMA["agent.heartbeat"], Infinity)), /duration/);
  assert.equal(formatValue("agent.heartbeat", 0), "0");
});
