/**
 * safety.json: the acknowledged values of the safety settings (docs/decisions/runner.md,
 * detection), and of what in config.toml's `[harnesses.*]` and `[checkouts.*]`
 * decides what a coding agent is and where it works (docs/acp.md). It holds
 * values, not a hash, so a notice can say what changed; only a harness's `env`
 * values are kept as hashes, so that no notice, and no copy, shows a secret.
 * `acknowledge` is the only function in wats that writes the file; it runs in
 * `wats config ack` and, once, at the daemon's first start (create-new), each in
 * a Worker whose only write grant is this file.
 *
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { canonicalJson } from "../canonical_json.ts";
import { formatDuration } from "../duration.ts";
import { ConfigError } from "../errors.ts";
import type { AcpTables } from "../config/acp_tables.ts";
import { SAFETY_KEYS, SCHEMA, type SettingKey, type Settings } from "../config/schema.ts";

/** The safety keys' values in the JSON form safety.json stores (durations as `10m`). */
export type SafetyValues = Record<string, unknown>;

/** What safety.json holds. */
export interface Acknowledged {
  version: 1;
  /** ISO 8601 time of the acknowledgement. */
  acknowledged_at: string;
  values: SafetyValues;
}

/** One safety setting whose value differs from the acknowledged one. */
export interface SafetyChange {
  key: string;
  /** `undefined` when safety.json does not record the key (a newer wats added it). */
  acknowledged: unknown;
  current: unknown;
}

/**
 * The safety settings of `settings`, as safety.json stores them: durations as
 * text (`"10m"`), lists as arrays, the rest as is; in schema order. Then, from
 * `acp`, each harness's `command`, `args`, `meta` (as JSON text, keys sorted),
 * `enabled`, its declared `agent`, `state` and `login`, and each of its `env` variables (a hash of the
 * value), and each
 * checkout's `path`, as `harnesses.NAME.command`, `harnesses.NAME.env.KEY`,
 * `checkouts.NAME.path`, …: a changed program, argument, variable or
 * repository is a changed coding agent.
 */
export function safetyValues(settings: Settings, acp: AcpTables): SafetyValues {
  const out: SafetyValues = {};
  for (const key of SAFETY_KEYS) {
    const v = settings[key];
    out[key] = SCHEMA[key].type === "duration"
      ? formatDuration(v as number)
      : Array.isArray(v)
      ? [...v]
      : v;
  }
  for (const h of Object.values(acp.harnesses)) {
    const at = `harnesses.${h.name}`;
    out[`${at}.command`] = h.command;
    out[`${at}.args`] = [...h.args];
    for (const [k, v] of Object.entries(h.env)) out[`${at}.env.${k}`] = hashed(v);
    out[`${at}.meta`] = canonicalJson(h.meta) ?? "{}";
    out[`${at}.enabled`] = h.enabled;
    // Which of the person's files its sandbox gets a copy of, and which vendor it reaches.
    if (h.agent) out[`${at}.agent`] = h.agent;
    if (h.state) {
      out[`${at}.state`] = h.state.dir;
      out[`${at}.login`] = [...h.state.login];
    }
  }
  for (const c of Object.values(acp.checkouts)) out[`checkouts.${c.name}.path`] = c.path;
  return out;
}

/** True for the keys of the tables: they come and go with the tables, unlike the settings. */
function isTableKey(key: string): boolean {
  return key.startsWith("harnesses.") || key.startsWith("checkouts.");
}

/** True for a harness's `env` variable: safety.json keeps a hash of it, and nothing shows it. */
export function isSecretKey(key: string): boolean {
  return /^harnesses\.[^.]+\.env\./.test(key);
}

/**
 * A value's hash, so a change shows without the value (an API key) being
 * copied anywhere. Unsalted: whoever reads safety.json may read config.toml,
 * beside it, which holds the value itself.
 */
function hashed(value: string): string {
  return "sha256:" + bytesToHex(sha256(new TextEncoder().encode(value)));
}

/**
 * Reads safety.json; `null` when it does not exist. A malformed or truncated
 * file is a `ConfigError` that says how to replace it; it is never deleted.
 *
 * Requires `--allow-read` on the file.
 */
export async function readAcknowledged(path: string): Promise<Acknowledged | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
  const unreadable = (why: string, cause?: unknown) =>
    new ConfigError(
      "safety.unreadable",
      `${path} is unreadable (${why}); run \`wats config ack\` to record the current values`,
      { cause },
    );
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw unreadable("not valid JSON", err);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw unreadable("not a JSON object");
  }
  const d = data as Record<string, unknown>;
  if (d.version !== 1) throw unreadable(`unknown version ${JSON.stringify(d.version)}`);
  if (typeof d.acknowledged_at !== "string") throw unreadable("no acknowledged_at");
  if (typeof d.values !== "object" || d.values === null || Array.isArray(d.values)) {
    throw unreadable("no values");
  }
  return { version: 1, acknowledged_at: d.acknowledged_at, values: d.values as SafetyValues };
}

/**
 * The safety keys whose current value differs from the acknowledged one, in
 * schema order, then the tables' keys, sorted: one that is new or gone (a
 * harness added or removed) counts too. Keys safety.json records that are no
 * longer safety settings are left out: nothing can change them any more.
 */
export function diffSafety(acked: SafetyValues, current: SafetyValues): SafetyChange[] {
  const out: SafetyChange[] = [];
  const tables = [...new Set([...Object.keys(acked), ...Object.keys(current)])]
    .filter(isTableKey).sort();
  for (const key of [...SAFETY_KEYS, ...tables]) {
    if (!isTableKey(key) && !Object.hasOwn(current, key)) continue;
    const a = Object.hasOwn(acked, key) ? acked[key] : undefined;
    const c = Object.hasOwn(current, key) ? current[key] : undefined;
    if (JSON.stringify(a) !== JSON.stringify(c)) out.push({ key, acknowledged: a, current: c });
  }
  return out;
}

/**
 * One line per change, for the banner, `wats status` and the MCP status tool:
 * `agent.review changed from true to false (not acknowledged: run \`wats config ack\`)`.
 * A harness's `env` variable is named, never shown.
 */
export function formatSafetyNotice(changes: SafetyChange[]): string[] {
  return changes.map((c) => {
    const what = isSecretKey(c.key) && c.acknowledged !== undefined && c.current !== undefined
      ? `${c.key} changed (the value is not shown)`
      : `${c.key} changed from ${showSafetyValue(c.acknowledged, c.key)} to ${
        showSafetyValue(c.current, c.key)
      }`;
    return `${what} (not acknowledged: run \`wats config ack\`)`;
  });
}

/**
 * A safety value for people: lists bracketed, empty text quoted; a harness's
 * `env` value as `(not shown)`. Missing: `(none)` for a table's key (the
 * harness or variable is not there), `(not recorded)` for a setting.
 */
export function showSafetyValue(v: unknown, key = ""): string {
  if (v === undefined) return isTableKey(key) ? "(none)" : "(not recorded)";
  if (isSecretKey(key)) return "(not shown)";
  if (Array.isArray(v)) return `[${v.join(", ")}]`;
  if (v === "") return '""';
  return String(v);
}

/** Options of `acknowledge`. */
export interface AcknowledgeOptions {
  /** Fail with `Deno.errors.AlreadyExists` instead of replacing an existing file. */
  createNew: boolean;
  /** The acknowledgement time (tests pass a fixed one). */
  now?: Date;
}

/**
 * Writes safety.json: the only writer of that file in wats. In place (the
 * Worker may write that one path only, so no temp file); a write cut short
 * leaves a file `readAcknowledged` reports as unreadable, and `wats config ack`
 * replaces it.
 *
 * Requires `--allow-write` on the file.
 */
export async function acknowledge(
  path: string,
  values: SafetyValues,
  options: AcknowledgeOptions,
): Promise<Acknowledged> {
  const record: Acknowledged = {
    version: 1,
    acknowledged_at: (options.now ?? new Date()).toISOString(),
    values: orderValues(values),
  };
  await Deno.writeTextFile(path, JSON.stringify(record, null, 2) + "\n", {
    createNew: options.createNew,
    mode: 0o600,
  });
  return record;
}

function orderValues(values: SafetyValues): SafetyValues {
  const out: SafetyValues = {};
  for (const key of SAFETY_KEYS as readonly SettingKey[]) {
    if (Object.hasOwn(values, key)) out[key] = values[key];
  }
  for (const [k, v] of Object.entries(values)) if (!Object.hasOwn(out, k)) out[k] = v;
  return out;
}
