/**
 * The value codecs of the settings schema (src/config/schema.ts): text (env,
 * flags, `config set`) and TOML values in, checked against a setting's rule;
 * display text and TOML out; and the "did you mean" of an unknown key.
 *
 * @module
 */

import { authorKeyHex } from "../author_key.ts";
import { CAP_NAME_RULE, capName } from "../cap_name.ts";
import { formatDuration, parseDuration } from "../duration.ts";
import {
  POLICY_RULE,
  REMOVED_KEYS,
  SCHEMA,
  SETTING_KEYS,
  type SettingKey,
  type SettingSpec,
  type SettingValue,
} from "./schema.ts";

/** A value failed its setting's rule; `requirement` says what is allowed. */
export class InvalidValue extends Error {
  /** E.g. `must be a whole number ≥ 1`. */
  readonly requirement: string;
  constructor(requirement: string) {
    super(requirement);
    this.requirement = requirement;
  }
}

/** What a setting accepts, as the end of a sentence that starts with its key. */
export function requirement(spec: SettingSpec): string {
  switch (spec.type) {
    case "string":
      return spec.match?.requirement ?? "must be text";
    case "bool":
      return "must be true or false";
    case "int":
      return `must be a whole number ≥ ${spec.min ?? 0}`;
    case "number":
      return `must be a number ≥ ${spec.min ?? 0}`;
    case "duration":
      return spec.min
        ? `must be a duration of at least ${formatDuration(spec.min)}, such as 90s, 10m or 1h30m`
        : spec.off
        ? `must be a duration such as 500ms, 90s, 10m or 1h30m, or ${spec.off} (or 0) for off`
        : "must be a duration such as 0, 500ms, 90s, 10m or 1h30m";
    case "enum":
      return `must be one of ${spec.allowed!.join(", ")}`;
    case "list":
      return spec.item === "author-key"
        ? "must be a list of author keys (npub1… or 64 hex characters)"
        : spec.item === "cap"
        ? `must be a list of capability names (each ${CAP_NAME_RULE})`
        : spec.item === "rule"
        ? "must be a list of rules such as claude/edit(src/**) (HARNESS/KIND, an optional " +
          "(PATH GLOB), * for any; no commas)"
        : "must be a list of names (no commas or spaces)";
    case "address":
      return 'must be host:port, such as "127.0.0.1:7447", or empty for off';
    case "relay-list":
      return "must be a list of relay URLs starting with ws:// or wss://";
    case "path":
      return "must be an absolute path, or empty";
  }
}

/** The same requirement, phrased for a config.toml line (`use one of …` for enums). */
export function fileHint(spec: SettingSpec): string {
  return spec.type === "enum"
    ? `use one of ${spec.allowed!.join(", ")}`
    : `${spec.key} ${requirement(spec)}`;
}

/**
 * Parses text from a `WATS_*` variable, a flag or `wats config set`. Lists are
 * comma-separated (empty text: the empty list). Throws `InvalidValue`.
 *
 * `home` expands a leading `~/` of a path.
 */
export function parseText(spec: SettingSpec, text: string, home?: string): SettingValue {
  switch (spec.type) {
    case "string":
      return checkString(spec, text);
    case "bool": {
      const t = text.trim().toLowerCase();
      if (["true", "1", "yes", "on"].includes(t)) return true;
      if (["false", "0", "no", "off"].includes(t)) return false;
      throw new InvalidValue(requirement(spec));
    }
    case "int":
    case "number": {
      const t = text.trim();
      const re = spec.type === "int" ? /^[+]?\d+$/ : /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
      if (!re.test(t)) throw new InvalidValue(requirement(spec));
      return checkNumber(spec, Number(t));
    }
    case "duration":
      return checkDuration(spec, text);
    case "enum":
      return checkEnum(spec, text.trim());
    case "list":
    case "relay-list":
      return checkList(spec, listItems(spec, text));
    case "address":
      return checkAddress(spec, text.trim());
    case "path":
      return checkPath(spec, text.trim(), home);
  }
}

/**
 * Validates a value read from config.toml (already parsed by the TOML reader)
 * and returns it resolved. Throws `InvalidValue`.
 */
export function parseToml(spec: SettingSpec, value: unknown, home?: string): SettingValue {
  const quoted = typeof value === "string" && ["int", "number", "bool"].includes(spec.type);
  const wrong = () =>
    new InvalidValue(
      requirement(spec) + (quoted ? " (write it without quotes)" : ""),
    );
  switch (spec.type) {
    case "string":
      if (typeof value !== "string") throw wrong();
      return checkString(spec, value);
    case "bool":
      if (typeof value !== "boolean") throw wrong();
      return value;
    case "int":
    case "number":
      if (typeof value !== "number" && typeof value !== "bigint") throw wrong();
      return checkNumber(spec, Number(value));
    case "duration":
      // TOML's own `inf` reads as the off word too.
      if (value === 0 || (spec.off !== undefined && value === Infinity)) return 0;
      if (typeof value !== "string") throw wrong();
      return checkDuration(spec, value);
    case "enum":
      if (typeof value !== "string") throw wrong();
      return checkEnum(spec, value);
    case "list":
    case "relay-list":
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) throw wrong();
      return checkList(spec, value.map((v) => v.trim()));
    case "address":
      if (typeof value !== "string") throw wrong();
      return checkAddress(spec, value.trim());
    case "path":
      if (typeof value !== "string") throw wrong();
      return checkPath(spec, value.trim(), home);
  }
}

function checkString(spec: SettingSpec, text: string): string {
  if (spec.match && !spec.match.re.test(text)) throw new InvalidValue(requirement(spec));
  return text;
}

function checkNumber(spec: SettingSpec, n: number): number {
  const ok = Number.isFinite(n) && n >= (spec.min ?? 0) &&
    (spec.type !== "int" || Number.isSafeInteger(n));
  if (!ok) throw new InvalidValue(requirement(spec));
  return n;
}

function checkDuration(spec: SettingSpec, text: string): number {
  if (spec.off !== undefined && text.trim().toLowerCase() === spec.off) return 0;
  const ms = parseDuration(text);
  if (ms === undefined || ms < (spec.min ?? 0)) throw new InvalidValue(requirement(spec));
  return ms;
}

function checkEnum(spec: SettingSpec, text: string): string {
  if (!spec.allowed!.includes(text)) throw new InvalidValue(requirement(spec));
  return text;
}

/** The items of a comma-separated list (or one split at `sep`), trimmed, empty ones left out. */
export function splitList(text: string, sep: RegExp | string = ","): string[] {
  return text.split(sep).map((s) => s.trim()).filter((s) => s !== "");
}

/**
 * A list's items from `wats config set` text: comma-separated, or config.toml's own spelling, an
 * array of strings (`["rust", "review"]`). A bracket is never part of an item: text that looks
 * like an array but is not one of strings is refused, not kept as one odd item.
 */
function listItems(spec: SettingSpec, text: string): string[] {
  const t = text.trim();
  if (!t.startsWith("[") && !t.endsWith("]")) return splitList(text);
  let v: unknown;
  try {
    v = JSON.parse(t);
  } catch {
    v = undefined;
  }
  if (!Array.isArray(v) || !v.every((i) => typeof i === "string")) {
    throw new InvalidValue(
      `${requirement(spec)}; write it comma-separated (a, b) or as config.toml does (["a", "b"])`,
    );
  }
  return v.map((i) => i.trim()).filter((i) => i !== "");
}

function checkList(spec: SettingSpec, items: string[]): string[] {
  if (spec.type === "relay-list") {
    for (const item of items) {
      if (!isRelayUrl(item)) {
        throw new InvalidValue(`${requirement(spec)}; "${item}" is not one`);
      }
    }
    return items;
  }
  if (spec.item === "author-key") {
    return items.map((item) => {
      const hex = authorKeyHex(item);
      if (hex === undefined) throw new InvalidValue(`${requirement(spec)}; "${item}" is not one`);
      return hex;
    });
  }
  if (spec.item === "cap") {
    const names = items.map((item) => {
      const name = capName(item);
      if (name === undefined) throw new InvalidValue(`${requirement(spec)}; "${item}" is not one`);
      return name;
    });
    return [...new Set(names)];
  }
  if (spec.item === "rule") {
    for (const item of items) {
      if (!POLICY_RULE.test(item)) {
        throw new InvalidValue(`${requirement(spec)}; "${item}" is not one`);
      }
    }
    return items;
  }
  for (const item of items) {
    if (item === "" || /[\s,]/.test(item)) {
      throw new InvalidValue(`${requirement(spec)}; "${item}" is not one`);
    }
  }
  return items;
}

function checkAddress(spec: SettingSpec, text: string): string {
  if (text === "") return "";
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : 0;
  if (!m || port < 1 || port > 65535) throw new InvalidValue(requirement(spec));
  return text;
}

function checkPath(spec: SettingSpec, text: string, home?: string): string {
  if (text === "") return "";
  const expanded = text === "~" || text.startsWith("~/")
    ? (home ? home.replace(/\/+$/, "") + text.slice(1) : text)
    : text;
  if (!expanded.startsWith("/")) throw new InvalidValue(requirement(spec));
  return expanded;
}

function isRelayUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === "ws:" || u.protocol === "wss:") && u.hostname !== "";
  } catch {
    return false;
  }
}

/**
 * A value as `wats config get` prints it: durations as `10m` (0 as the
 * setting's off word when it has one), lists comma-separated, the rest as text.
 */
export function formatValue(key: SettingKey, value: SettingValue): string {
  const spec = SCHEMA[key];
  if (spec.type === "duration") {
    return spec.off !== undefined && value === 0 ? spec.off : formatDuration(value as number);
  }
  if (Array.isArray(value)) return value.join(",");
  return String(value);
}

/**
 * The TOML value `wats config set KEY TEXT` writes, after validating TEXT:
 * numbers and booleans bare, durations and author keys as the user wrote them
 * (`"90s"`, `"npub1…"`), lists as arrays. Throws `InvalidValue`.
 */
export function textToToml(
  spec: SettingSpec,
  text: string,
  home?: string,
): string | number | boolean | string[] {
  const value = parseText(spec, text, home);
  switch (spec.type) {
    case "list":
    case "relay-list":
      return splitList(text);
    case "duration":
    case "enum":
    case "address":
    case "path":
      return text.trim();
    default:
      return value as string | number | boolean;
  }
}

/** The keys closest to `unknown` by edit distance, for "did you mean …". */
export function suggestKeys(unknown: string): string[] {
  const scored = [...SETTING_KEYS, ...Object.keys(REMOVED_KEYS)]
    .map((k) => ({ k, d: editDistance(unknown, k) }))
    .filter(({ k, d }) => d <= Math.max(2, Math.floor(k.length / 4)))
    .sort((a, b) => a.d - b.d);
  return scored.slice(0, 2).map(({ k }) => k);
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      // Both rows hold b.length + 1 entries, filled left to right.
      cur[j] = Math.min(
        prev[j]! + 1,
        cur[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = cur;
  }
  return prev[b.length]!;
}
