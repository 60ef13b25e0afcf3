/**
 * Precedence, in one function: flags, then `WATS_*` variables, then config.toml,
 * then the defaults (docs/decisions/runner.md). Every command that needs settings goes through
 * `resolveSettings`, so `wats config list`, the daemon and `wats status` can
 * never disagree on what is in effect.
 *
 * @module
 */

import { ConfigError } from "../errors.ts";
import { type AcpTables, noAcpTables } from "./acp_tables.ts";
import type { NotifyTarget } from "./notify_tables.ts";
import { isWithin } from "./paths.ts";
import type { DataPaths } from "./paths.ts";
import { findKeyLine, parseConfigText, readConfigText } from "./config_file.ts";
import {
  defaultSettings,
  envName,
  isSettingKey,
  SCHEMA,
  SETTING_KEYS,
  type SettingKey,
  type Settings,
} from "./schema.ts";
import { InvalidValue, parseText } from "./codecs.ts";

/** Where a value in effect comes from. */
export type SettingSource = "flag" | "env" | "file" | "default";

/** A flag given for a setting, kept with its spelling for messages. */
export interface FlagValue {
  /** As typed, with dashes: `--every`. */
  flag: string;
  value: string;
}

/** Everything precedence depends on; pure data, so tests need no disk. */
export interface ResolveInput {
  /** config.toml's text; `null` when the file does not exist. */
  fileText: string | null;
  /** config.toml's path, for messages; its folder is the data directory. */
  filePath: string;
  /** The environment (only `WATS_*` names and `HOME` are read). */
  env: Record<string, string>;
  /** Flags by setting key. */
  flags: Record<string, FlagValue>;
  /** The OS user: the default of `profile`, and of `agent.profile` as `<user>-agent`. */
  user: string;
}

/** The settings in effect, where each comes from, and what the file says. */
export interface ResolvedSettings {
  values: Settings;
  sources: Record<SettingKey, SettingSource>;
  /** Removed keys the file still sets, one warning each. */
  warnings: string[];
  /** The values config.toml sets (resolved: ms, hex keys), whatever overrides them. */
  fileValues: Partial<Settings>;
  /** config.toml's tables owned by other modules (`harnesses`, `checkouts`), as parsed. */
  sections: Record<string, Record<string, unknown>>;
  /** `[harnesses.NAME]` and `[checkouts.NAME]`, validated. */
  acp: AcpTables;
  /** `[notify.NAME]`, validated. */
  notify: Record<string, NotifyTarget>;
}

/**
 * Flag name (without dashes) → setting key, for the daemon's argument parser.
 * Runner flags have a plain and an `--agent-` form (docs/decisions/runner.md).
 */
export const DAEMON_FLAGS: Readonly<Record<string, SettingKey>> = Object.fromEntries(
  SETTING_KEYS.flatMap((key) => SCHEMA[key].flags.map((f) => [f.replace(/^--/, ""), key])),
);

/**
 * Turns parsed flags (name → value; names with or without dashes) into the
 * `flags` input of `resolveSettings`. Names not in `table` are left out; two
 * spellings of one setting are an error.
 */
export function flagsToKeys(
  parsed: Record<string, string>,
  table: Readonly<Record<string, SettingKey>> = DAEMON_FLAGS,
): Record<string, FlagValue> {
  const out: Record<string, FlagValue> = {};
  for (const [name, value] of Object.entries(parsed)) {
    const bare = name.replace(/^--/, "");
    const key = table[bare];
    if (key === undefined) continue;
    const flag = `--${bare}`;
    const before = out[key];
    if (before !== undefined && before.flag !== flag) {
      throw new ConfigError(
        "config.flag_twice",
        `${before.flag} and ${flag} both set ${key}; give only one of them`,
      );
    }
    out[key] = { flag, value };
  }
  return out;
}

/**
 * Resolves every setting: flags, then `WATS_*` variables, then config.toml,
 * then the defaults. Empty `profile` and `agent.profile` resolve from the OS
 * user. `WATS_*` variables that name no setting are ignored (`WATS_DATA_DIR` is
 * the launcher's); an empty variable counts as unset.
 *
 * Throws `ConfigError` naming the file and line, the variable or the flag, the
 * bad value and what is allowed.
 */
export function resolveSettings(input: ResolveInput): ResolvedSettings {
  const home = input.env.HOME || undefined;
  const file = input.fileText === null
    ? { values: {}, warnings: [], sections: {}, acp: noAcpTables(), notify: {} }
    : parseConfigText(input.fileText, input.filePath, home);
  const values = defaultSettings() as unknown as Record<string, unknown>;
  const sources = {} as Record<SettingKey, SettingSource>;
  const fileValues = file.values as Record<string, unknown>;

  for (const key of SETTING_KEYS) {
    const spec = SCHEMA[key];
    sources[key] = "default";
    if (Object.hasOwn(fileValues, key)) {
      values[key] = fileValues[key];
      sources[key] = "file";
    }
    const envValue = input.env[spec.env];
    if (envValue !== undefined && envValue !== "") {
      values[key] = fromText(key, envValue, home, `${spec.env}=${envValue}`);
      sources[key] = "env";
    }
  }
  for (const [key, f] of Object.entries(input.flags)) {
    if (!isSettingKey(key)) {
      throw new ConfigError("config.unknown_key", `${f.flag}: unknown setting ${key}`);
    }
    values[key] = fromText(key, f.value, home, `${f.flag} ${f.value}`);
    sources[key] = "flag";
  }

  if (values["profile"] === "") values["profile"] = input.user;
  if (values["agent.profile"] === "") values["agent.profile"] = `${input.user}-agent`;
  checkWorkdir(values["agent.workdir"] as string, sources["agent.workdir"], input);
  checkBudgets(values, sources, input);

  return {
    values: values as unknown as Settings,
    sources,
    warnings: file.warnings,
    fileValues: file.values,
    sections: file.sections,
    acp: file.acp,
    notify: file.notify,
  };
}

/**
 * Reads config.toml (a missing file is an empty one) and resolves the settings.
 *
 * Requires `--allow-read` on `paths.config`.
 */
export async function loadSettings(
  paths: DataPaths,
  env: Record<string, string>,
  flags: Record<string, FlagValue>,
  user: string,
): Promise<ResolvedSettings> {
  const fileText = await readConfigText(paths.config);
  return resolveSettings({ fileText, filePath: paths.config, env, flags, user });
}

/** The `WATS_*` variable names of every setting, for docs and env filtering. */
export function settingEnvNames(): string[] {
  return SETTING_KEYS.map(envName);
}

function fromText(key: SettingKey, text: string, home: string | undefined, said: string) {
  try {
    return parseText(SCHEMA[key], text, home);
  } catch (err) {
    if (!(err instanceof InvalidValue)) throw err;
    throw new ConfigError("config.bad_value", `${said}: ${key} ${err.requirement}`);
  }
}

/** `agent.workdir` may not be the data directory or contain it (docs/decisions/runner.md, prevention). */
function checkWorkdir(workdir: string, source: SettingSource, input: ResolveInput): void {
  if (workdir === "") return;
  const dataDir = input.filePath.replace(/\/[^/]*$/, "") || "/";
  const dir = workdir.replace(/\/+$/, "") || "/";
  if (!isWithin(dataDir, dir)) return;
  const line = source === "file" ? findKeyLine(input.fileText ?? "", "agent.workdir") : undefined;
  const from = source === "file"
    ? `${input.filePath}${line === undefined ? "" : `:${line}`}`
    : source === "env"
    ? SCHEMA["agent.workdir"].env
    : "the flag";
  throw new ConfigError(
    "config.bad_value",
    `${from}: agent.workdir = "${workdir}" is or contains the data directory ${dataDir}, ` +
      "which would let the agent rewrite its own settings; choose a folder outside it",
  );
}

/**
 * A daily budget above the monthly one can never be spent: the month stops the runs first,
 * so the setting says something false (docs/configuration.md, "Budgets").
 */
function checkBudgets(
  values: Record<string, unknown>,
  sources: Record<SettingKey, SettingSource>,
  input: ResolveInput,
): void {
  const day = values["agent.max_usd_per_day"] as number;
  const month = values["agent.max_usd_per_month"] as number;
  if (day <= month) return;
  const from = (key: SettingKey) =>
    sources[key] === "file"
      ? `${input.filePath}${lineOf(input, key)}`
      : sources[key] === "env"
      ? SCHEMA[key].env
      : sources[key] === "flag"
      ? "the flag"
      : "the default";
  throw new ConfigError(
    "config.bad_value",
    `agent.max_usd_per_day = ${day} (${from("agent.max_usd_per_day")}) is above ` +
      `agent.max_usd_per_month = ${month} (${from("agent.max_usd_per_month")}): a day could ` +
      `never spend it. Raise the month first (wats config set agent.max_usd_per_month ${day}), ` +
      `or set a daily budget of at most ${month}`,
  );
}

function lineOf(input: ResolveInput, key: SettingKey): string {
  const line = findKeyLine(input.fileText ?? "", key);
  return line === undefined ? "" : `:${line}`;
}
