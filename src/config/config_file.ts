/**
 * config.toml on disk: reading and writing the text, and turning the text into
 * validated setting values. Every error names the file, the line, the key, the
 * bad value and what is allowed, because the person reading it has to fix it by
 * hand.
 *
 * @module
 */

import { parse as parseTomlText, TomlError } from "smol-toml";
import { ConfigError } from "../errors.ts";
import { type AcpTables, noAcpTables, parseAcpTables } from "./acp_tables.ts";
import { type NotifyTarget, parseNotifyTables } from "./notify_tables.ts";
import {
  isSettingKey,
  PASSTHROUGH_TABLES,
  REMOVED_KEYS,
  removedKeyWarning,
  SCHEMA,
  type Settings,
} from "./schema.ts";
import { fileHint, InvalidValue, parseToml, suggestKeys } from "./codecs.ts";

/** What config.toml holds once validated. */
export interface ConfigFile {
  /** The settings the file sets, resolved (durations in ms, author keys as hex). */
  values: Partial<Settings>;
  /** One warning per removed key the file still sets. */
  warnings: string[];
  /** Tables owned by other modules (`[harnesses.*]`, `[checkouts.*]`), as parsed. */
  sections: Record<string, Record<string, unknown>>;
  /** The `sections` above, validated (src/acp reads these). */
  acp: AcpTables;
  /** `[notify.NAME]`, validated (src/node/notify_targets.ts sends to these). */
  notify: Record<string, NotifyTarget>;
}

/**
 * What a config error says to do. Not `wats config list`: every command reads the file, so that
 * one fails the same way until the line is fixed.
 */
const FIX_HINT = "fix or remove the line in an editor, then run the command again";

/**
 * Reads config.toml; `null` when it does not exist.
 *
 * Requires `--allow-read` on the file.
 */
export async function readConfigText(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/**
 * Writes config.toml in place. The config-write Worker may write exactly this
 * one path, so there is no temp file and rename: callers validate the whole new
 * text first, which is what keeps a bad edit from reaching the disk.
 *
 * Requires `--allow-write` on the file.
 */
export async function writeConfigText(path: string, text: string): Promise<void> {
  // Created private: it may hold API keys (the mode applies only to a new file).
  await Deno.writeTextFile(path, text, { mode: 0o600 });
}

/**
 * Parses and validates config.toml's text. Throws `ConfigError` naming the
 * file and line on malformed TOML, an unknown key or table, or a bad value.
 *
 * `home` expands `~/` in path settings.
 */
export function parseConfigText(text: string, filePath: string, home?: string): ConfigFile {
  const doc = parseDocument(text, filePath);
  const out: ConfigFile = {
    values: {},
    warnings: [],
    sections: {},
    acp: noAcpTables(),
    notify: {},
  };
  const values = out.values as Record<string, unknown>;
  const file: ReadFile = { text, filePath, ...(home !== undefined ? { home } : {}) };
  for (const [top, topValue] of Object.entries(doc)) {
    if (PASSTHROUGH_TABLES.includes(top) && isTable(topValue)) {
      out.sections[top] = plain(topValue) as Record<string, unknown>;
      continue;
    }
    if (isSettingKey(top)) {
      values[top] = checkValue(file, top, topValue);
      continue;
    }
    if (!isTable(topValue) || !isTablePrefix(top)) {
      throw unknownKey(text, filePath, top, topValue);
    }
    for (const [sub, subValue] of Object.entries(topValue)) {
      const key = `${top}.${sub}`;
      if (Object.hasOwn(REMOVED_KEYS, key)) {
        out.warnings.push(removedKeyWarning(key));
      } else if (isSettingKey(key)) {
        values[key] = checkValue(file, key, subValue);
      } else {
        throw unknownKey(text, filePath, key, subValue);
      }
    }
  }
  out.acp = parseAcpTables(out.sections, (key) => whereInTable(text, filePath, key), home);
  out.notify = parseNotifyTables(out.sections, (key) => whereInTable(text, filePath, key));
  return out;
}

/** Parses TOML text into a plain object; malformed text is a `ConfigError` with file:line. */
export function parseDocument(text: string, filePath: string): Record<string, unknown> {
  try {
    return parseTomlText(text) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof TomlError) {
      const reason = err.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "");
      throw new ConfigError(
        "config.malformed",
        `${filePath}:${err.line}: not valid TOML (${reason}); ${FIX_HINT}`,
        { cause: err },
      );
    }
    throw err;
  }
}

/** The file being read: its text and path (for `file:line`), and the home `~` stands for. */
interface ReadFile {
  text: string;
  filePath: string;
  home?: string;
}

function checkValue(file: ReadFile, key: keyof Settings, value: unknown): Settings[keyof Settings] {
  const { text, filePath, home } = file;
  const spec = SCHEMA[key];
  try {
    return parseToml(spec, value, home);
  } catch (err) {
    if (!(err instanceof InvalidValue)) throw err;
    throw new ConfigError(
      "config.bad_value",
      `${where(text, filePath, key)}: ${key} = ${showToml(value)} is not allowed; ${
        spec.type === "enum" ? fileHint(spec) : `${key} ${err.requirement}`
      }`,
    );
  }
}

function unknownKey(text: string, filePath: string, key: string, value: unknown): ConfigError {
  const header = findTableHeader(text, key);
  if (header !== undefined && isTable(value)) {
    return new ConfigError(
      "config.unknown_key",
      `${filePath}:${header}: unknown table [${key}]; the tables are [net], [agent], [policy], [halt], ` +
        `[harnesses.NAME] and [checkouts.NAME]; ${FIX_HINT}`,
    );
  }
  // A dotted or inline table that is unknown: name its first leaf.
  const leaf = isTable(value) && Object.keys(value).length > 0
    ? `${key}.${Object.keys(value)[0]}`
    : key;
  const near = suggestKeys(leaf);
  const mean = near.length > 0 ? ` (did you mean ${near.join(" or ")}?)` : "";
  return new ConfigError(
    "config.unknown_key",
    `${where(text, filePath, leaf)}: unknown key ${leaf}${mean}; ${FIX_HINT}`,
  );
}

function where(text: string, filePath: string, key: string): string {
  const line = findKeyLine(text, key);
  return line === undefined ? filePath : `${filePath}:${line}`;
}

/** Like `where`, but a key the file does not set points at its table's header. */
function whereInTable(text: string, filePath: string, key: string): string {
  const parts = key.split(".");
  for (let n = parts.length; n > 0; n--) {
    const line = findKeyLine(text, parts.slice(0, n).join("."));
    if (line !== undefined) return `${filePath}:${line}`;
  }
  return filePath;
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** smol-toml's tables have no prototype; other modules get ordinary objects. */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (!isTable(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
}

function isTablePrefix(top: string): boolean {
  return Object.keys(SCHEMA).some((k) => k.startsWith(top + "."));
}

/** A TOML value written back for a message: strings quoted, arrays bracketed. */
export function showToml(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(showToml).join(", ")}]`;
  if (isTable(v)) return "{ … }";
  return String(v);
}

// ------------------------------------------------------------ line finding

interface Line {
  /** 1-based. */
  number: number;
  /** `table` for a `[header]`, `key` for `a.b = …`. */
  kind: "table" | "key";
  /** The dotted path the line names, with the current table prefixed for keys. */
  path: string;
}

/**
 * Lists the table headers and key lines of a TOML text with their dotted
 * paths. A light scan, good enough to point a message at a line: it skips the
 * inside of multi-line strings and arrays.
 */
export function scanLines(text: string): Line[] {
  const out: Line[] = [];
  let table = "";
  let inString: string | null = null;
  let depth = 0;
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    if (inString !== null) {
      if (raw.includes(inString)) inString = null;
      continue;
    }
    const line = raw.trim();
    if (depth > 0) {
      depth += bracketBalance(line);
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    const header = /^\[\[?\s*([^\]]+?)\s*\]\]?/.exec(line);
    if (header) {
      table = normaliseKey(header[1]!);
      out.push({ number: i + 1, kind: "table", path: table });
      continue;
    }
    const key =
      /^((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=(.*)$/
        .exec(line);
    if (!key) continue;
    const path = (table ? table + "." : "") + normaliseKey(key[1]!);
    out.push({ number: i + 1, kind: "key", path });
    const rest = key[2]!.trim();
    for (const q of ['"""', "'''"]) {
      if (rest.startsWith(q) && rest.indexOf(q, 3) === -1) inString = q;
    }
    if (inString === null && rest.startsWith("[")) depth = Math.max(0, bracketBalance(rest));
  }
  return out;
}

/** The 1-based line that sets `key` (or the nearest enclosing key or table). */
export function findKeyLine(text: string, key: string): number | undefined {
  const lines = scanLines(text);
  const parts = key.split(".");
  for (let n = parts.length; n > 0; n--) {
    const path = parts.slice(0, n).join(".");
    const hit = lines.find((l) => l.kind === "key" && l.path === path);
    if (hit) return hit.number;
  }
  return findTableHeader(text, key);
}

function findTableHeader(text: string, key: string): number | undefined {
  return scanLines(text).find((l) =>
    l.kind === "table" && (l.path === key || l.path.startsWith(key + "."))
  )?.number;
}

function normaliseKey(k: string): string {
  return k.split(/\s*\.\s*(?=(?:[^"']|"[^"]*"|'[^']*')*$)/)
    .map((p) => p.trim().replace(/^"(.*)"$|^'(.*)'$/, "$1$2"))
    .join(".");
}

function bracketBalance(s: string): number {
  let n = 0;
  let quote: string | null = null;
  for (const ch of s) {
    if (quote !== null) {
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "#") break;
    else if (ch === "[") n++;
    else if (ch === "]") n--;
  }
  return n;
}
