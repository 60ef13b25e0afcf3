/**
 * Editing config.toml's text for `wats config set` and `unset`, keeping the
 * user's comments, blank lines and the order of the other keys. The edit is a
 * patch of the parsed document (`@decimalturn/toml-patch`), which rewrites only
 * what changed: `agent.max_turns` lands as `max_turns` under `[agent]`, or next
 * to the file's other `agent.…` keys when it writes dotted keys at the top
 * level; a missing table is created at the end.
 *
 * These functions only produce text; callers validate the whole new text with
 * `resolveSettings` before writing it, so a bad edit never reaches the disk.
 *
 * @module
 */

import { parse as parsePatchable, patch } from "@decimalturn/toml-patch";
import { ConfigError } from "../errors.ts";
import { parseDocument } from "./config_file.ts";

/** New arrays as people write them (`["a", "b"]`); the file's own style wins where it has one. */
const STYLE = { bracketSpacing: false };

/** A value config.toml can hold for a setting. */
export type TomlSettingValue = string | number | boolean | string[];

/**
 * Returns `text` with the dotted `key` set to `value`.
 *
 * Throws `ConfigError` when `text` is not valid TOML or a part of `key` is
 * already a plain value.
 */
export function setKey(
  text: string,
  key: string,
  value: TomlSettingValue,
  filePath = "config.toml",
): string {
  const doc = load(text, filePath);
  const parts = key.split(".");
  let table: Record<string, unknown> = doc;
  for (const part of parts.slice(0, -1)) {
    const next = table[part];
    if (next === undefined) {
      table[part] = {};
    } else if (!isTable(next)) {
      throw new ConfigError(
        "config.not_a_table",
        `${filePath}: ${part} is a value, so ${key} cannot be set under it; fix or remove it`,
      );
    }
    table = table[part] as Record<string, unknown>;
  }
  table[parts.at(-1)!] = Array.isArray(value) ? [...value] : value;
  return finish(text, patch(text, doc, STYLE));
}

/**
 * Returns `text` without the dotted `key` (unchanged when the file does not set
 * it). Works for any key the file holds, known or not, so a file with a
 * mistyped key can be repaired with `wats config unset`.
 */
export function unsetKey(text: string, key: string, filePath = "config.toml"): string {
  if (!hasKey(text, key, filePath)) return text;
  const doc = load(text, filePath);
  const parts = key.split(".");
  let table: Record<string, unknown> = doc;
  for (const part of parts.slice(0, -1)) table = table[part] as Record<string, unknown>;
  delete table[parts.at(-1)!];
  return finish(text, patch(text, doc, STYLE));
}

/** True when the TOML `text` sets the dotted `key`. */
export function hasKey(text: string, key: string, filePath = "config.toml"): boolean {
  let node: unknown = parseDocument(text, filePath);
  for (const part of key.split(".")) {
    if (!isTable(node) || !Object.hasOwn(node, part)) return false;
    node = node[part];
  }
  return true;
}

function load(text: string, filePath: string): Record<string, unknown> {
  // smol-toml first: its errors carry the line; the patcher's own parse follows.
  parseDocument(text, filePath);
  return parsePatchable(text) as Record<string, unknown>;
}

function finish(before: string, after: string): string {
  if (after === "" || after.endsWith("\n")) return after;
  return after + (before.includes("\r\n") ? "\r\n" : "\n");
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}
