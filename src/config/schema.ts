/**
 * The one settings schema (docs/architecture.md §8): every key of config.toml with its type,
 * default, allowed values, safety flag, description, `WATS_*` variable and daemon
 * flags. Validation, `wats config list`, the defaults, docs/configuration.md and
 * the safety notices all come from this table; src/config/codecs.ts reads and
 * writes values by its rules.
 *
 * @module
 */

import { RUNTIME_NAMES, type RuntimeName } from "../contracts/runtime_names.ts";

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

/** The agent runtimes `agent.runtime` accepts: none, or one of the runner's. */
export type AgentRuntime = "none" | RuntimeName;
/** `net.auth`: who the relay endpoint serves (docs/decisions/relay_auth.md). */
export type NetAuth = "open" | "required";
/** The access levels of docs/decisions/runner.md. */
export type AgentAccess = "locked" | "workspace" | "inherit";
/** `sandbox.mode`: what happens when an agent cannot run in the OS sandbox (docs/decisions/sandbox.md). */
export type SandboxMode = "required" | "auto" | "off";
/** `sandbox.network`: what an agent's sandbox reaches (docs/decisions/sandbox.md, "The network"). */
export type SandboxNetworkMode = "model-only" | "open";

/**
 * Every setting's resolved value, keyed by the dotted key. Durations are in
 * milliseconds, lists are arrays, author keys are lowercase hex, and `profile`
 * and `agent.profile` are already resolved from the OS user when left empty.
 */
export interface Settings {
  "profile": string;
  "infra": string[];
  "listen": string;
  "ui.listen": string;
  "mcp.listen": string;
  "mcp.remote": boolean;
  "mcp.rate_limit": number;
  "net.max_skew": number;
  "net.max_connections": number;
  "net.auth": NetAuth;
  "net.members": string[];
  "net.max_connections_per_ip": number;
  "net.max_messages_per_ip": number;
  "net.trust_forwarded": boolean;
  "agent.runtime": AgentRuntime;
  "agent.harness": string;
  "agent.profile": string;
  "agent.every": number;
  "agent.heartbeat": number;
  "agent.max_runs_per_hour": number;
  "agent.timeout": number;
  "agent.max_turns": number;
  "agent.max_usd_per_day": number;
  "agent.max_usd_per_month": number;
  "agent.max_runs_per_day": number;
  "agent.reserve_usd": number;
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
  "agent.caps_match": "any" | "all";
  "agent.open_asks": boolean;
  "agent.claim_ttl": number;
  "agent.ask_timeout": number;
  "agent.presence_every": number;
  "agent.loop_max_exchanges": number;
  "agent.wakes_per_author_per_hour": number;
  "agent.codex_model": string;
  "agent.codex_base_url": string;
  "agent.codex_env_key": string;
  "agent.checkouts": string[];
  "agent.sweep": number;
  "sandbox.mode": SandboxMode;
  "sandbox.hide": string[];
  "sandbox.network": SandboxNetworkMode;
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
  /**
   * duration: a word that also means off (value 0), as `0` does; `config get`
   * shows it for 0.
   */
  off?: string;
  /** string: a pattern the text must match, and what it means (`must be …`). */
  match?: { re: RegExp; requirement: string };
  /** list: what each item must be. */
  item?: "author-key" | "name" | "rule" | "cap";
  /** A safety setting: a change is flagged until `wats config ack` (docs/decisions/runner.md). */
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
  "ui.listen": {
    type: "address",
    default: "127.0.0.1:7448",
    safety: false,
    description:
      "Where `wats ui` serves the dashboard (host:port; `wats ui --listen` overrides it).",
  },
  "mcp.listen": {
    type: "address",
    default: "",
    safety: true,
    description: 'Serve MCP over HTTP on host:port (e.g. "127.0.0.1:7449"), each request with ' +
      "a token of `wats mcp token create`; empty: off (docs/mcp.md).",
  },
  "mcp.remote": {
    type: "bool",
    default: false,
    safety: true,
    description: "Let mcp.listen be an address other than loopback: anyone who reaches it may " +
      "try a token, and TLS is yours to put in front (docs/mcp.md).",
  },
  "mcp.rate_limit": {
    type: "int",
    default: 600,
    min: 1,
    safety: false,
    description: "Most MCP over HTTP requests per minute per token; more get 429.",
  },
  "net.max_skew": {
    type: "duration",
    default: 10 * MINUTE,
    safety: false,
    description: "Reject posts dated further than this in the future.",
  },
  "net.max_connections": {
    type: "int",
    default: 256,
    min: 1,
    safety: false,
    description: "Most clients connected at once to the relay endpoint (listen); more are refused.",
  },
  "net.auth": {
    type: "enum",
    default: "open",
    allowed: ["open", "required"],
    safety: true,
    description: "The relay endpoint (listen): open serves anyone who connects; required serves " +
      "only clients that authenticate (NIP-42) as one of net.members (docs/team.md).",
  },
  "net.members": {
    type: "list",
    item: "author-key",
    default: [],
    safety: true,
    description: "With net.auth = required: the authors (npub or 64-hex) the relay endpoint " +
      "serves and stores posts of; list a person's and their agent's keys (the node's banner shows both).",
  },
  "net.max_connections_per_ip": {
    type: "int",
    default: 16,
    min: 1,
    safety: false,
    description: "Most clients connected at once to the relay endpoint from one IP address.",
  },
  "net.max_messages_per_ip": {
    type: "int",
    default: 200,
    min: 1,
    safety: false,
    description: "Messages per second the relay endpoint reads from one IP address (bursts of " +
      "twice that); past it a message is answered rate-limited: and not read.",
  },
  "net.trust_forwarded": {
    type: "bool",
    default: false,
    safety: false,
    description: "Take a client's address from X-Forwarded-For (only behind your own reverse " +
      "proxy: anyone can send the header) for the per-IP limits.",
  },
  "agent.runtime": {
    type: "enum",
    default: "none",
    allowed: ["none", ...RUNTIME_NAMES],
    safety: false,
    description: "Which agent the runner wakes; none: no runner.",
    flags: ["--agent"],
  },
  "agent.harness": {
    type: "string",
    default: "",
    safety: false,
    description: "With agent.runtime = acp: the [harnesses.NAME] the agent runs on, over ACP " +
      "(docs/acp.md).",
    flags: ["--agent-harness"],
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
  "agent.reserve_usd": {
    type: "number",
    default: 0.5,
    min: 0.001,
    safety: true,
    description:
      "What a heartbeat run or a coding agent call sets aside of the day's and month's budget as it starts: a run may spend at most this (never more than is left); a call is admitted only when this much is left beside what others hold, and holds more as it spends while the budget has it.",
  },
  "agent.ignore_local": {
    type: "bool",
    default: true,
    safety: true,
    description:
      "Never wake the agent for posts by this node's other profiles (they are you); `wats try` shows a wake on one machine.",
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
    description:
      "Hold the agent's posts, and its coding agents' `ask` requests, in agent/pending/ until `wats agent approve`.",
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
    description:
      "Send a desktop notification when a draft or a coding agent's request waits for review.",
  },
  "agent.about": {
    type: "string",
    default: "",
    safety: false,
    description: "What the agent does; the first line is its announce title.",
  },
  "agent.caps": {
    type: "list",
    item: "cap",
    default: [],
    safety: false,
    description: "Capabilities announced as `cap:NAME` tags.",
  },
  "agent.caps_match": {
    type: "enum",
    default: "any",
    allowed: ["any", "all"],
    safety: true,
    description: "An ask with caps wakes the agent when agent.caps holds any of them, " +
      "or all of them (docs/runner.md, routing).",
  },
  "agent.open_asks": {
    type: "bool",
    default: true,
    safety: true,
    description: "Wake the agent for asks addressed to nobody and naming no caps; false: " +
      "only asks to it, asks with its caps, and replies to its posts (and relays then send " +
      "only those, docs/network.md).",
  },
  "agent.claim_ttl": {
    type: "duration",
    default: 30 * MINUTE,
    min: 1000,
    safety: false,
    description: "Another agent's claim of an ask keeps this agent from waking for it until " +
      "the claimer has been silent on the thread this long (an answer by the claimer ends " +
      "the lapse), or releases it.",
  },
  "agent.ask_timeout": {
    type: "duration",
    default: HOUR,
    min: 1000,
    off: "off",
    safety: false,
    description: "An ask of this node's profiles that nobody answered or claimed this long after " +
      "it was posted has no taker: its state says so, and a `no_taker` notification goes out " +
      "([notify], agent.notify); off: never (docs/asks.md).",
  },
  "agent.presence_every": {
    type: "duration",
    default: 15 * MINUTE,
    min: 60_000,
    safety: false,
    description: "How often the agent's presence (caps and state) is announced again; " +
      "a presence older than three times this is stale.",
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
    // The seed's word for off; 0 stays off too, as for agent.heartbeat.
    off: "infinity",
    safety: false,
    description: "Remove coding agents' worktrees whose work is in their base, at start and " +
      "this often (docs/acp.md); infinity (or 0): off.",
  },
  "sandbox.mode": {
    type: "enum",
    default: "required",
    allowed: ["required", "auto", "off"],
    safety: true,
    description:
      "OS sandbox of agents that run commands: required refuses without it, auto warns, " +
      "off (docs/safety.md).",
  },
  "sandbox.hide": {
    type: "list",
    default: [],
    safety: true,
    description: "More paths (`~/` for home) the sandbox hides, beyond the data dir and the " +
      "built-in secrets.",
  },
  "sandbox.network": {
    type: "enum",
    default: "model-only",
    allowed: ["model-only", "open"],
    safety: true,
    description: "The network inside the sandbox: model-only reaches the agent's model API and " +
      "nothing else (no other host, no 127.0.0.1 service); open reaches everything.",
  },
  "policy.allow": {
    type: "list",
    item: "rule",
    default: [],
    safety: true,
    description: "Coding agents' permission requests to allow, as `HARNESS/KIND(PATH GLOB)`, " +
      "or `HARNESS/execute(COMMAND PATTERN)` (docs/acp.md).",
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

/** The warning for a removed key found in config.toml (docs/decisions/runner.md, to the letter). */
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

/** Tables of config.toml owned by other modules (docs/acp.md), passed through unvalidated. */
export const PASSTHROUGH_TABLES: readonly string[] = ["harnesses", "checkouts", "notify"];

/** The default values, before the OS user fills the empty profiles. */
export function defaultSettings(): Settings {
  const out: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) out[key] = cloneValue(SCHEMA[key].default);
  return out as unknown as Settings;
}

function cloneValue<V>(v: V): V {
  return (Array.isArray(v) ? [...v] : v) as V;
}
