/**
 * Issue 27 item 6: capability names are validated by the one validator wherever they are
 * set (here config.toml, variables and `wats config set`'s text), and a daily budget above
 * the monthly one is refused with what to do.
 */

import assert from "node:assert/strict";
import { ConfigError } from "../../src/errors.ts";
import { SCHEMA } from "../../src/config/schema.ts";
import { InvalidValue, parseText } from "../../src/config/codecs.ts";
import { resolveSettings } from "../../src/config/settings.ts";
import { CAP_NAME_RULE, capName } from "../../src/cap_name.ts";
import { errorOf, load } from "./config_text.ts";

Deno.test("cap names: read leniently (case, cap: prefix), anything outside the pattern refused", () => {
  assert.equal(capName(" Rust "), "rust");
  assert.equal(capName("cap:C++"), "c++");
  assert.equal(capName("node.js"), "node.js");
  for (const bad of ["", "-rust", "two words", "über", "a/b", "x".repeat(65), '["rust"]']) {
    assert.equal(capName(bad), undefined, bad);
  }
});

Deno.test("agent.caps takes capability names only, normalised, from every source", () => {
  const caps = SCHEMA["agent.caps"];
  assert.deepEqual(parseText(caps, "Rust, cap:review, rust"), ["rust", "review"]);
  assert.deepEqual(parseText(caps, '["SQL"]'), ["sql"]);
  assert.throws(() => parseText(caps, "rust, a/b"), (err: unknown) => {
    assert.ok(err instanceof InvalidValue);
    assert.equal(
      err.requirement,
      `must be a list of capability names (each ${CAP_NAME_RULE}); "a/b" is not one`,
    );
    return true;
  });
  assert.match(errorOf('[agent]\ncaps = ["rust", "über"]\n'), /"über" is not one/);
  assert.throws(
    () =>
      resolveSettings({
        fileText: null,
        filePath: "/d/config.toml",
        env: { WATS_AGENT_CAPS: "-x" },
        flags: {},
        user: "al",
      }),
    /WATS_AGENT_CAPS=-x: agent\.caps must be a list of capability names/,
  );
  assert.deepEqual(load('[agent]\ncaps = ["Rust"]\n').values["agent.caps"], ["rust"]);
});

Deno.test("a daily budget above the monthly one is refused, naming both and what to do", () => {
  assert.equal(
    errorOf("[agent]\nmax_usd_per_day = 30\n"),
    "agent.max_usd_per_day = 30 (/data/wats/config.toml:2) is above agent.max_usd_per_month = 20 " +
      "(the default): a day could never spend it. Raise the month first (wats config set " +
      "agent.max_usd_per_month 30), or set a daily budget of at most 20",
  );
  assert.throws(
    () =>
      resolveSettings({
        fileText: "[agent]\nmax_usd_per_month = 5\n",
        filePath: "/d/config.toml",
        env: { WATS_AGENT_MAX_USD_PER_DAY: "6" },
        flags: {},
        user: "al",
      }),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.message.startsWith(
        "agent.max_usd_per_day = 6 (WATS_AGENT_MAX_USD_PER_DAY) is above agent.max_usd_per_month = 5 (/d/config.toml:2)",
      ),
  );
  const equal = load("[agent]\nmax_usd_per_day = 20\nmax_usd_per_month = 20\n").values;
  assert.equal(equal["agent.max_usd_per_day"], 20, "equal budgets are fine");
});
