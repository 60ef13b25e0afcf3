/**
 * Settings resolved from a config.toml text alone (no environment, no flags),
 * for the tests of the tables config.toml holds beside the settings.
 */

import assert from "node:assert/strict";
import { ConfigError } from "../../src/errors.ts";
import { resolveSettings } from "../../src/config/settings.ts";

/** Where the text is said to come from: errors name it. */
const FILE = "/data/wats/config.toml";

/** Resolves the settings of `text` as config.toml. */
export function load(text: string) {
  return resolveSettings({ fileText: text, filePath: FILE, env: {}, flags: {}, user: "alice" });
}

/** The message of the ConfigError `text` is refused with; fails when it loads. */
export function errorOf(text: string): string {
  try {
    load(text);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${err}`);
    return err.message;
  }
  assert.fail("expected a ConfigError");
}
