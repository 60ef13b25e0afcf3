/**
 * The one settings schema (STYLE rule 5): every key of config.toml with its type,
 * default, allowed values, safety flag, description, `WATS_*` variable and daemon
 * flags. Validation, `wats config list`, the defaults, docs/configuration.md and
 * the safety notices all come from this table, and so do the value codecs below:
 * text (env, flags, `config set`) and TOML values in, display text and TOML out.
 *
 * @module
 */

import { decode as decodeNip19 } from "nostr-tools/nip19";
import { formatDuration } from "../duration.ts";

/** The kinds of value a setting can hold. */
export type SettingType =
  | "string"
  | "bool"
  | "int"
  | "number"
  | "duration"
  | "enum"
  | "list"
  | "address"
  | "relay-list"
  | "path";

/** The agent runtimes `agent.runtime` accepts. */
export type AgentRuntime = "none" | "claude" | "codex" | "acp";
/** The access levels of ADR 0011. */
export type AgentAccess = "locked" | "workspace" | "inherit";

/**
 * Every setting's resolved value, keyed by the dotted key. Durations are in
 * milliseconds, lists are arrays, author keys are lowercase hex, and `profile`
 * and `agent.profile` are already resolved from the OS user when left empty.
 */
export interface Settings {
  "profile": string;
  "infra": string[];
  "listen": string;
  "net.max_skew": number;
  "agent.runtime": AgentRuntime;
  "agent.profile": string;
  "agent.every": number;
  "agent.heartbeat": number;
  "agent.max_runs_per_hour": number;
  "agent.timeout": number;
  "agent.max_turns": number;
  "agent.max_usd_per_day": number;
  "agent.max_usd_per_month": number;
  "agent.max_runs_per_day": number;
  "agent.ignore_local": boolean;
  "agent.allow": string[];
  "agent.access": AgentAccess;
  "agent.workdir": string;
  "agent.tools": string[];
  "agent.review": boolean;
  "agent.review_ttl": number;
  "agent.notify": boolean;
  "agent.about": string;
  "agent.caps": string[];
  "agent.loop_max_exchanges": number;
  "agent.wakes_per_author_per_hour": number;
  "agent.codex_model": string;
  "agent.codex_base_url": string;
  "agent.codex_env_key": string;
  "agent.checkouts": string[];
  "agent.sweep": number;
  "policy.allow": string[];
  "policy.deny": string[];
  "halt.accept": string[];
}

/** A dotted setting key such as `agent.max_turns`. */
export type SettingKey = keyof Settings;

/** One value of any setting. */
export type SettingValue = Settings[SettingKey];

/** One row of the schema. */
export interface SettingSpec<K extends SettingKey = SettingKey> {
  key: K;
  type: SettingType;
  /** The value when nothing sets it (before `profile`/`agent.profile` resolve from the OS user). */
  default: Settings[K];
  /** Enum: the allowed values. */
  allowed?: readonly string[];
  /** int/number: the smallest allowed value; duration: the smallest in ms. */
  min?: number;
  /** string: a pattern the text must match, and what it means (`must be …`). */
  match?: { re: RegExp; requirement: string };
  /** list: what each item must be. */
  item?: "author-key" | "name" | "rule";
  /** A safety setting: a change is flagged until `wats config ack` (ADR 0011). */
  safety: boolean;
  /** One line for `config list --help` and docs/configuration.md. */
  description: string;
  /** What an empty default means, for the reference ("the OS user"). */
  defaultNote?: string;
  /** The `WATS_*` variable. */
  env: string;
  /** The daemon flags that set it, with dashes (`--every`). */
  flags: readonly string[];
}

/** `agent.max_turns` → `WATS_AGENT_MAX_TURNS`. */
export function envName(key: string): string {
  return "WATS_" + key.toUpperCase().replaceAll(".", "_");
}

type Row<K extends SettingKey> = Omit<SettingSpec<K>, "key" | "env" | "flags"> & {
  flags?: readonly string[];
};

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const ROWS: { readonly [K in SettingKey]: Row<K> } = {
  "profile": {
    type: "string",
    default: "",
    defaultNote: "the OS user",
    safety: false,
    description: "The person's profile, used by `wats mcp` (empty: the OS user name).",
    flags: ["--profile"],
  },
  "infra": {
    type: "relay-list",
    default: [],
    safety: false,
    description: "Relays to sync with (ws:// or wss:// URLs); empty: a local-only node.",
    flags: ["--infra"],
  },
  "listen": {
    type: "address",
    default: "",
    safety: false,
    description: 'Serve a relay endpoint on host:port (e.g. "127.0.0.1:7447"); empty: off.',
    flags: ["--listen"],
  },
  "net.max_skew": {
    type: "duration",
    default: 10 * MINUTE,
    safety: false,
    description: "Reject posts dated further than this in the future.",
  },
  "agent.runtime": {
    type: "enum",
    default: "none",
    allowed: ["none", "claude", "codex", "acp"],
    safety: false,
    description: "Which agent the runner wakes; none: no runner.",
    flags: ["--agent"],
  },
  "agent.profile": {
    type: "string",
    default: "",
    defaultNote: "the OS user and `-agent`",
    safety: false,
    description: "The profile the agent posts as (empty: the OS user name and `-agent`).",
    flags: ["--agent-profile"],
  },
  "agent.every": {
    type: "duration",
    default: 30_000,
    safety: false,
    description: "Debounce: wait this long after an actionable post before a run.",
    flags: ["--every", "--agent-every"],
  },
  "agent.heartbeat": {
    type: "duration",
    default: HOUR,
    safety: false,
    description: "A run this often even with nothing new; 0: off.",
    flags: ["--heartbeat", "--agent-heartbeat"],
  },
  "agent.max_runs_per_hour": {
    type: "int",
    default: 6,
    min: 0,
    safety: true,
    description: "Cap on runs per hour.",
    flags: ["--max-runs-per-hour", "--agent-max-runs-per-hour"],
  },
  "agent.timeout": {
    type: "duration",
    default: 10 * MINUTE,
    min: 1000,
    safety: true,
    description: "Stop a run after this long.",
    flags: ["--run-timeout", "--agent-run-timeout"],
  },
  "agent.max_turns": {
    type: "int",
    default: 10,
    min: 1,
    safety: true,
    description: "Turns per run (passed as --max-turns).",
  },
  "agent.max_usd_per_day": {
    type: "number",
    default: 2,
    min: 0,
    safety: true,
    description: "Spend budget per UTC day, in USD; the runner pauses when it is reached.",
  },
  "agent.max_usd_per_month": {
    type: "number",
    default: 20,
    min: 0,
    safety: true,
    description: "Spend budget per UTC month, in USD.",
  },
  "agent.max_runs_per_day": {
    type: "int",
    default: 48,
    min: 0,
    safety: true,
    description: "Runs per UTC day that report no cost.",
  },
  "agent.ignore_local": {
    type: "bool",
    default: true,
    safety: true,
    description: "Never wake the agent for posts by this node's other profiles.",
  },
  "agent.allow": {
    type: "list",
    item: "author-key",
    default: [],
    safety: true,
    description: "Only these authors (npub or 64-hex) wake the agent; empty: anyone.",
    flags: ["--allow", "--agent-allow"],
  },
  "agent.access": {
    type: "enum",
    default: "locked",
    allowed: ["locked", "workspace", "inherit"],
    safety: true,
    description: "locked: wats tools only; workspace: agent.workdir and agent.tools; " +
      "inherit: the user's own environment.",
  },
  "agent.workdir": {
    type: "path",
    default: "",
    safety: true,
    description: "The workspace of workspace access (absolute; not the data dir or above it).",
  },
  "agent.tools": {
    type: "list",
    item: "name",
    default: [],
    safety: true,
    description: "Built-in tools opened in workspace access.",
  },
  "agent.review": {
    type: "bool",
    default: false,
    safety: true,
    description: "Hold the agent's posts in agent/pending/ until `wats agent approve`.",
  },
  "agent.review_ttl": {
    type: "duration",
    default: 24 * HOUR,
    min: 1000,
    safety: true,
    description: "Held drafts expire after this long.",
  },
  "agent.notify": {
    type: "bool",
    default: false,
    safety: false,
    description: "Send a desktop notification when a draft waits for review.",
  },
  "agent.about": {
    type: "string",
    default: "",
    safety: false,
    description: "What the agent does; the first line is its announce title.",
  },
  "agent.caps": {
    type: "list",
    item: "name",
    default: [],
    safety: false,
    description: "Capabilities announced as `cap:NAME` tags.",
  },
  "agent.loop_max_exchanges": {
    type: "int",
    default: 30,
    min: 0,
    safety: true,
    description:
      "Pause a thread after this many alternating turns of the agent and one other author; 0: off.",
  },
  "agent.wakes_per_author_per_hour": {
    type: "int",
    default: 0,
    min: 0,
    safety: true,
    description: "Cap on wakes caused by one author per hour; 0: unlimited.",
  },
  "agent.codex_model": {
    type: "string",
    default: "",
    defaultNote: "Codex's own default",
    match: {
      re: /^([A-Za-z0-9][A-Za-z0-9._:/-]*)?$/,
      requirement: "must be a model slug or empty",
    },
    safety: false,
    description: 'The Codex model (`-m`), e.g. "gpt-5.5"; empty: Codex\'s default.',
  },
  "agent.codex_base_url": {
    type: "string",
    default: "",
    match: {
      re: /^(https?:\/\/[^\s"\\]+)?$/,
      requirement: "must be an http:// or https:// URL (e.g. https://host/v1) or empty",
    },
    safety: false,
    description: "A Responses API URL for Codex instead of its default, e.g. https://host/v1.",
  },
  "agent.codex_env_key": {
    type: "string",
    default: "",
    match: { re: /^([A-Za-z_][A-Za-z0-9_]*)?$/, requirement: "must be a variable name or empty" },
    safety: false,
    description: "The variable that holds the key for agent.codex_base_url (a name, not the key).",
  },
  "agent.checkouts": {
    type: "list",
    item: "name",
    default: [],
    safety: true,
    description: "The [checkouts.NAME] the agent's coding agents may work in; empty: all of them.",
  },
  "agent.sweep": {
    type: "duration",
    default: 24 * HOUR,
    safety: false,
    description: "Remove coding agents' worktrees whose work is in their base, at start and " +
      "this often (docs/acp.md); 0: off.",
  },
  "policy.allow": {
    type: "list",
    item: "rule",
    default: [],
    safety: true,
    description: "Coding agents' permission requests to allow, as `HARNESS/KIND(PATH GLOB)` " +
      "(docs/acp.md).",
  },
  "policy.deny": {
    type: "list",
    item: "rule",
    default: [],
    safety: true,
    description: "Coding agents' permission requests to refuse; deny beats allow.",
  },
  "halt.accept": {
    type: "list",
    item: "author-key",
    default: [],
    safety: true,
    description: "Authors (npub or 64-hex) whose halt posts stop this node's agents.",
  },
};

/** The schema, keyed by setting, in the order `config list` and the docs show. */
export const SCHEMA: { readonly [K in SettingKey]: SettingSpec<K> } = Object.fromEntries(
  Object.entries(ROWS).map(([key, row]) => [
    key,
    { ...row, key, env: envName(key), flags: row.flags ?? [] },
  ]),
) as unknown as { readonly [K in SettingKey]: SettingSpec<K> };

/** Every setting key, in schema order. */
export const SETTING_KEYS: readonly SettingKey[] = Object.keys(ROWS) as SettingKey[];

/** The safety keys, in schema order. */
export const SAFETY_KEYS: readonly SettingKey[] = SETTING_KEYS.filter((k) => SCHEMA[k].safety);

/** Keys that were settings once; a file that sets them loads with one warning each. */
export const REMOVED_KEYS: Readonly<Record<string, string>> = {
  "agent.thread_backoff": "loop detector, ADR 0011",
  "agent.thread_backoff_max": "loop detector, ADR 0011",
};

/** The warning for a removed key found in config.toml (ADR 0011, to the letter). */
export function removedKeyWarning(key: string): string {
  return `${key} is no longer used (${REMOVED_KEYS[key]}); remove it`;
}

/** True when `key` is a setting. */
export function isSettingKey(key: string): key is SettingKey {
  return Object.hasOwn(ROWS, key);
}

/**
 * A policy rule: `HARNESS/KIND` or `HARNESS/KIND(GLOB)`, `*` for any harness or
 * kind (src/acp/policy.ts reads it).
 */
export const POLICY_RULE = /^([a-z][a-z0-9_-]*|\*)\/([a-z_]+|\*)(\([^,()]+\))?$/;

/** Tables of config.toml owned by other modules (DESIGN §9), passed through unvalidated. */
export const PASSTHROUGH_TABLES: readonly string[] = ["harnesses", "checkouts"];

/** The default values, before the OS user fills the empty profiles. */
export function defaultSettings(): Settings {
  const out: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) out[key] = cloneValue(SCHEMA[key].default);
  return out as unknown as Settings;
}

function cloneValue<V>(v: V): V {
  return (Array.isArray(v) ? [...v] : v) as V;
}

// ---------------------------------------------------------------- durations

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: MINUTE, h: HOUR, d: 24 * HOUR };

/**
 * Parses a duration such as `0`, `500ms`, `90s`, `10m`, `1h30m` or `7d` into
 * milliseconds; `undefined` when the text is not one.
 */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (t === "0") return 0;
  if (!/^(\d+(ms|s|m|h|d))+$/.test(t)) return undefined;
  let total = 0;
  for (const m of t.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(m[1]) * UNIT_MS[m[2]];
  return Number.isSafeInteger(total) ? total : undefined;
}

// ------------------------------------------------------------------ codecs

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
        : "must be a duration such as 0, 500ms, 90s, 10m or 1h30m";
    case "enum":
      return `must be one of ${spec.allowed!.join(", ")}`;
    case "list":
      return spec.item === "author-key"
        ? "must be a list of author keys (npub1… or 64 hex characters)"
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
      return checkList(spec, splitList(text));
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
      if (value === 0) return 0;
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
  const ms = parseDuration(text);
  if (ms === undefined || ms < (spec.min ?? 0)) throw new InvalidValue(requirement(spec));
  return ms;
}

function checkEnum(spec: SettingSpec, text: string): string {
  if (!spec.allowed!.includes(text)) throw new InvalidValue(requirement(spec));
  return text;
}

function splitList(text: string): string[] {
  return text.split(",").map((s) => s.trim()).filter((s) => s !== "");
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

/** An author key as lowercase hex: `npub1…` or 64 hex characters; `undefined` otherwise. */
export function authorKeyHex(text: string): string | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return text.toLowerCase();
  if (!text.startsWith("npub1")) return undefined;
  try {
    const decoded = decodeNip19(text);
    return decoded.type === "npub" ? decoded.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A value as `wats config get` prints it: durations as `10m`, lists
 * comma-separated, the rest as text.
 */
export function formatValue(key: SettingKey, value: SettingValue): string {
  const spec = SCHEMA[key];
  if (spec.type === "duration") return formatDuration(value as number);
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
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}
