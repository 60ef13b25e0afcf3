/**
 * safety.json: the acknowledged values of the safety settings (docs/decisions/runner.md,
 * detection). It holds values, not a hash, so a notice can say what changed.
 * `acknowledge` is the only function in wats that writes the file; it runs in
 * `wats config ack` and, once, at the daemon's first start (create-new), each in
 * a Worker whose only write grant is this file.
 *
 * @module
 */

import { formatDuration } from "../duration.ts";
import { ConfigError } from "../errors.ts";
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
 * text (`"10m"`), lists as arrays, the rest as is; in schema order.
 */
export function safetyValues(settings: Settings): SafetyValues {
  const out: SafetyValues = {};
  for (const key of SAFETY_KEYS) {
    const v = settings[key];
    out[key] = SCHEMA[key].type === "duration"
      ? formatDuration(v as number)
      : Array.isArray(v)
      ? [...v]
      : v;
  }
  return out;
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
 * schema order. Keys safety.json records that are no longer safety settings
 * are left out: nothing can change them any more.
 */
export function diffSafety(acked: SafetyValues, current: SafetyValues): SafetyChange[] {
  const out: SafetyChange[] = [];
  for (const key of SAFETY_KEYS) {
    if (!Object.hasOwn(current, key)) continue;
    const a = Object.hasOwn(acked, key) ? acked[key] : undefined;
    if (JSON.stringify(a) !== JSON.stringify(current[key])) {
      out.push({ key, acknowledged: a, current: current[key] });
    }
  }
  return out;
}

/**
 * One line per change, for the banner, `wats status` and the MCP status tool:
 * `agent.review changed from true to false (not acknowledged: run \`wats config ack\`)`.
 */
export function formatSafetyNotice(changes: SafetyChange[]): string[] {
  return changes.map((c) =>
    `${c.key} changed from ${showSafetyValue(c.acknowledged)} to ${
      showSafetyValue(c.current)
    } (not acknowledged: run \`wats config ack\`)`
  );
}

/** A safety value for people: lists bracketed, empty text quoted. */
export function showSafetyValue(v: unknown): string {
  if (v === undefined) return "(not recorded)";
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
