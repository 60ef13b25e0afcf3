/**
 * `wats config get|list|set|unset|ack`: reading and editing config.toml, and
 * acknowledging the safety settings in safety.json. Each subcommand runs in a
 * Worker with its own grants (docs/architecture.md §2): get/list read config.toml and
 * safety.json; set/unset also write config.toml; ack writes safety.json only.
 *
 * @module
 */

import { acpLines } from "../config/acp_tables.ts";
import { ConfigError, UsageError } from "../errors.ts";
import { parseDocument, readConfigText, showToml, writeConfigText } from "../config/config_file.ts";
import { hasKey, setKey, unsetKey } from "../config/edit.ts";
import { describeNotifyTarget } from "../config/notify_tables.ts";
import {
  isSettingKey,
  REMOVED_KEYS,
  SCHEMA,
  SETTING_KEYS,
  type SettingKey,
} from "../config/schema.ts";
import { formatValue, InvalidValue, suggestKeys, textToToml } from "../config/codecs.ts";
import {
  DAEMON_FLAGS,
  flagsToKeys,
  type FlagValue,
  type ResolvedSettings,
  resolveSettings,
} from "../config/settings.ts";
import {
  acknowledge,
  type Acknowledged,
  diffSafety,
  formatSafetyNotice,
  readAcknowledged,
  safetyValues,
  showSafetyValue,
} from "../safety/safety_file.ts";
import type { Command, CommandContext } from "./context.ts";
import { parseCommandArgs } from "./usage.ts";
import { consoleOutput, type Output } from "./output.ts";

/** The subcommands. */
export type ConfigSub = "get" | "list" | "set" | "unset" | "ack";

/** A parsed `wats config …` command line. */
export type ConfigArgs =
  | { sub: ConfigSub; help: true }
  | { sub: "get"; help: false; key: string; flags: Record<string, FlagValue> }
  | { sub: "list"; help: false; flags: Record<string, FlagValue> }
  | { sub: "set"; help: false; key: string; value: string }
  | { sub: "unset"; help: false; key: string }
  | { sub: "ack"; help: false };

const FLAGS_NOTE = `
Daemon flags (--agent, --every, --allow, …) may follow, to show what a daemon
started with them would use: wats config list --agent claude
`;

/** Each subcommand's help text (`-h`/`--help`: stdout, exit 0). */
export const CONFIG_HELP: Readonly<Record<ConfigSub, string>> = {
  get: `Usage: wats config get KEY [daemon flags]

Prints the value of KEY in effect: flags, then WATS_* variables, then
config.toml, then the default. Lists print comma-separated, durations as 10m.
${FLAGS_NOTE}
Keys: wats config list; docs/configuration.md.`,
  list: `Usage: wats config list [daemon flags]

Prints every setting: its value in effect and where it comes from (flag, env,
file, default). Safety settings are marked *: a change to one is flagged by
\`wats status\` until \`wats config ack\`.
${FLAGS_NOTE.trimEnd()}`,
  set: `Usage: wats config set KEY VALUE

Writes KEY to config.toml, keeping its comments and the order of its keys.
Lists are comma-separated (agent.allow npub1…,npub1…); an empty VALUE is the
empty list. Durations: 0, 500ms, 90s, 10m, 1h30m.

A running daemon keeps the values it started with: restart it to apply.`,
  unset: `Usage: wats config unset KEY

Removes KEY from config.toml, so its default applies again. Also removes keys
that are no longer settings (agent.thread_backoff) or were mistyped.

A running daemon keeps the values it started with: restart it to apply.`,
  ack: `Usage: wats config ack

Acknowledges the current values of the safety settings (config.toml, WATS_*
variables and defaults; never flags) by recording them in safety.json, and
prints what changed since the last acknowledgement. Until then, \`wats status\`
and the daemon's banner flag every change.`,
};

/** Parses the words after `wats config SUB`. Throws `UsageError`. */
export function parseConfigArgs(sub: string, argv: string[]): ConfigArgs {
  if (!isSub(sub)) throw new UsageError(`unknown command "wats config ${sub}"`);
  const dashDash = argv.indexOf("--");
  const before = dashDash === -1 ? argv : argv.slice(0, dashDash);
  if (before.includes("-h") || before.includes("--help")) return { sub, help: true };
  const words = argv.filter((_, i) => i !== dashDash);
  switch (sub) {
    case "get":
    case "list": {
      const { positionals, flags } = parseFlags(`wats config ${sub}`, words);
      if (sub === "list") {
        if (positionals.length > 0) {
          throw new UsageError(`wats config list takes no KEY (got "${positionals[0]}")`);
        }
        return { sub, help: false, flags };
      }
      const [key] = positionals;
      if (key === undefined || positionals.length > 1) {
        throw new UsageError(
          positionals.length === 0
            ? "wats config get needs a KEY, e.g. wats config get agent.runtime"
            : `wats config get takes one KEY (got ${positionals.length})`,
        );
      }
      return { sub, help: false, key, flags };
    }
    case "set": {
      const [key, value] = words;
      if (key === undefined || value === undefined || words.length > 2) {
        throw new UsageError(
          words.length < 2
            ? "wats config set needs KEY and VALUE, e.g. wats config set agent.max_turns 5"
            : `wats config set takes KEY and one VALUE (got ${words.length - 1} values); ` +
              'quote a value with spaces, and separate list items with commas: "a,b"',
        );
      }
      return { sub, help: false, key, value };
    }
    case "unset": {
      const [key] = words;
      if (key === undefined || words.length > 1) {
        throw new UsageError(`wats config unset takes one KEY (got ${words.length})`);
      }
      return { sub, help: false, key };
    }
    case "ack":
      if (words.length !== 0) throw new UsageError(`wats config ack takes no arguments`);
      return { sub, help: false };
  }
}

function isSub(s: string): s is ConfigSub {
  return ["get", "list", "set", "unset", "ack"].includes(s);
}

function parseFlags(
  command: string,
  argv: string[],
): { positionals: string[]; flags: Record<string, FlagValue> } {
  const options: Record<string, { type: "string" }> = {};
  for (const name of Object.keys(DAEMON_FLAGS)) options[name] = { type: "string" };
  const parsed = parseCommandArgs(command, { args: argv, options, allowPositionals: true });
  const given: Record<string, string> = {};
  for (const [name, v] of Object.entries(parsed.values)) {
    if (typeof v === "string") given[name] = v;
  }
  return { positionals: parsed.positionals, flags: flagsToKeys(given) };
}

/** Where a subcommand writes its output; the console in the Worker, arrays in tests. */
export type ConfigIO = Output;

/** `wats config …`, as the launcher's Worker runs it. */
export const configCommand: Command = (ctx) => runConfig(ctx, consoleOutput);

/** Runs `wats config …` with `io` for output; returns the exit code or throws a `WatsError`. */
export async function runConfig(ctx: CommandContext, io: ConfigIO): Promise<number> {
  const args = parseConfigArgs(ctx.words[1] ?? "", ctx.argv);
  if (args.help) {
    io.out(CONFIG_HELP[args.sub]);
    return 0;
  }
  switch (args.sub) {
    case "get":
      return await get(ctx, io, args.key, args.flags);
    case "list":
      return await list(ctx, io, args.flags);
    case "set":
      return await set(ctx, io, args.key, args.value);
    case "unset":
      return await unset(ctx, io, args.key);
    case "ack":
      return await ack(ctx, io);
  }
}

// ------------------------------------------------------------- get / list

async function load(
  ctx: CommandContext,
  io: ConfigIO,
  flags: Record<string, FlagValue>,
): Promise<ResolvedSettings> {
  const fileText = await readConfigText(ctx.paths.config);
  const r = resolveSettings({
    fileText,
    filePath: ctx.paths.config,
    env: ctx.env,
    flags,
    user: ctx.user,
  });
  for (const w of r.warnings) io.err(`warning: ${w}`);
  return r;
}

async function get(
  ctx: CommandContext,
  io: ConfigIO,
  key: string,
  flags: Record<string, FlagValue>,
): Promise<number> {
  const k = knownKey(key, "get");
  const r = await load(ctx, io, flags);
  io.out(formatValue(k, r.values[k]));
  return 0;
}

async function list(
  ctx: CommandContext,
  io: ConfigIO,
  flags: Record<string, FlagValue>,
): Promise<number> {
  const r = await load(ctx, io, flags);
  const rows = SETTING_KEYS.map((k): ListRow => [
    SCHEMA[k].safety ? "*" : " ",
    k,
    listValue(k, formatValue(k, r.values[k])),
    r.sources[k],
  ]);
  const keyWidth = Math.max(3, ...rows.map(([, key]) => key.length));
  const valueWidth = Math.min(40, Math.max(5, ...rows.map(([, , value]) => value.length)));
  const line = ([mark, key, value, source]: ListRow) =>
    `${mark} ${key.padEnd(keyWidth)}  ${value.padEnd(valueWidth)}  ${source}`.trimEnd();
  io.out(line([" ", "KEY", "VALUE", "SOURCE"]));
  for (const row of rows) io.out(line(row));
  io.out("");
  io.out("* safety setting: `wats status` flags a change until `wats config ack`");
  io.out(`config file: ${ctx.paths.config}`);
  for (const t of Object.values(r.notify)) io.out(describeNotifyTarget(t));
  for (const l of acpLines(r.acp)) io.out(l);

  // The acknowledged state compares file, env and defaults: flags last one run.
  const noFlags = Object.keys(flags).length === 0
    ? r
    : await load(ctx, { out: () => {}, err: () => {} }, {});
  try {
    const acked = await readAcknowledged(ctx.paths.safety);
    if (acked !== null) {
      const notice = formatSafetyNotice(
        diffSafety(acked.values, safetyValues(noFlags.values, noFlags.acp)),
      );
      if (notice.length > 0) {
        io.out("");
        for (const n of notice) io.out(n);
      }
    }
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.err(`warning: ${err.message}`);
  }
  return 0;
}

/** A row of `wats config list`: safety mark, key, value, source. */
type ListRow = [mark: string, key: string, value: string, source: string];

function listValue(key: SettingKey, v: string): string {
  if (v === "") return Array.isArray(SCHEMA[key].default) ? "[]" : '""';
  const nl = v.indexOf("\n");
  const first = nl < 0 ? v : v.slice(0, nl);
  return first.length > 40 || first !== v ? first.slice(0, 39) + "…" : v;
}

// ------------------------------------------------------------ set / unset

async function set(ctx: CommandContext, io: ConfigIO, key: string, text: string): Promise<number> {
  if (Object.hasOwn(REMOVED_KEYS, key)) {
    throw new ConfigError(
      "config.removed_key",
      `${key} was removed: the loop detector (agent.loop_max_exchanges, ADR 0011) ` +
        `replaced the per-thread backoff; it cannot be set. Remove it with \`wats config unset ${key}\``,
    );
  }
  const k = knownKey(key, "set");
  const spec = SCHEMA[k];
  const home = ctx.env.HOME || undefined;
  let value;
  try {
    value = textToToml(spec, text, home);
  } catch (err) {
    if (!(err instanceof InvalidValue)) throw err;
    const hint = spec.type === "enum"
      ? `use one of ${spec.allowed!.join(", ")}`
      : `${k} ${err.requirement}`;
    throw new ConfigError(
      "config.bad_value",
      `${k} = ${JSON.stringify(text)} is not allowed; ${hint}`,
    );
  }
  const before = (await readConfigText(ctx.paths.config)) ?? "";
  const after = setKey(before, k, value, ctx.paths.config);
  // The whole new file must load, or nothing is written.
  const next = fileOnly(ctx, after);
  const shown = shownValue(k, next.fileValues[k] ?? next.values[k]);
  if (after === before) {
    io.out(`${k} is already ${shown} in ${ctx.paths.config}; nothing changed`);
    return 0;
  }
  const was = previous(ctx, before, k);
  await writeConfigText(ctx.paths.config, after);
  io.out(`set ${k} = ${shown} in ${ctx.paths.config} (was ${was})`);
  for (const w of next.warnings) io.err(`warning: ${w}`);
  notes(ctx, io, k);
  return 0;
}

async function unset(ctx: CommandContext, io: ConfigIO, key: string): Promise<number> {
  const before = await readConfigText(ctx.paths.config);
  const removed = Object.hasOwn(REMOVED_KEYS, key);
  const inFile = before !== null && hasKey(before, key, ctx.paths.config);
  if (!isSettingKey(key) && !removed) {
    if (!inFile) knownKey(key, "unset");
    if (isTableIn(before!, key, ctx.paths.config)) {
      throw new ConfigError(
        "config.is_table",
        `${key} is a table in ${ctx.paths.config}; unset its keys one by one, or edit the file`,
      );
    }
  }
  if (!inFile) {
    io.out(`${key} is not set in ${ctx.paths.config}; nothing changed`);
    return 0;
  }
  const after = unsetKey(before!, key, ctx.paths.config);
  parseDocument(after, ctx.paths.config);
  await writeConfigText(ctx.paths.config, after);
  let now = "";
  try {
    const next = fileOnly(ctx, after);
    if (isSettingKey(key)) now = ` (now ${shownValue(key, next.values[key])}, the default)`;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.err(`warning: config.toml still does not load: ${err.message}`);
  }
  const why = isSettingKey(key) ? "" : removed ? " (it is no longer used)" : " (not a setting)";
  io.out(`removed ${key} from ${ctx.paths.config}${why}${now}`);
  if (isSettingKey(key)) notes(ctx, io, key);
  return 0;
}

function isTableIn(text: string, key: string, filePath: string): boolean {
  let node: unknown = parseDocument(text, filePath);
  for (const part of key.split(".")) node = (node as Record<string, unknown>)[part];
  return typeof node === "object" && node !== null && !Array.isArray(node) &&
    !(node instanceof Date);
}

/** Resolves `text` as the only source (no env, no flags): what the file itself says. */
function fileOnly(ctx: CommandContext, text: string): ResolvedSettings {
  const home = ctx.env.HOME;
  return resolveSettings({
    fileText: text,
    filePath: ctx.paths.config,
    env: home ? { HOME: home } : {},
    flags: {},
    user: ctx.user,
  });
}

function previous(ctx: CommandContext, before: string, key: SettingKey): string {
  try {
    const r = fileOnly(ctx, before);
    return `${shownValue(key, r.values[key])}${
      r.sources[key] === "default" ? ", the default" : ""
    }`;
  } catch {
    // The old file did not load (perhaps because of this very key): show its text.
    const doc = parseDocument(before, ctx.paths.config);
    let node: unknown = doc;
    for (const part of key.split(".")) node = (node as Record<string, unknown>)?.[part];
    return node === undefined ? "unset" : showToml(node);
  }
}

function shownValue(key: SettingKey, v: Parameters<typeof formatValue>[1]): string {
  return formatValue(key, v) || '""';
}

function notes(ctx: CommandContext, io: ConfigIO, key: SettingKey): void {
  const spec = SCHEMA[key];
  const envValue = ctx.env[spec.env];
  if (envValue !== undefined && envValue !== "") {
    io.out(`note: ${spec.env}=${envValue} is set and overrides config.toml in this environment`);
  }
  if (spec.safety) {
    io.out(
      `${key} is a safety setting: \`wats status\` flags the change until you run \`wats config ack\``,
    );
  }
  io.out(
    "note: a running daemon keeps the values it started with (no live reload); restart it to apply",
  );
}

function knownKey(key: string, verb: string): SettingKey {
  if (isSettingKey(key)) return key;
  if (Object.hasOwn(REMOVED_KEYS, key)) {
    throw new ConfigError(
      "config.removed_key",
      `${key} was removed (${REMOVED_KEYS[key]}); remove it with \`wats config unset ${key}\``,
    );
  }
  const near = suggestKeys(key);
  const mean = near.length > 0 ? `did you mean ${near.join(" or ")}? ` : "";
  throw new ConfigError(
    "config.unknown_key",
    `cannot ${verb} ${key}: unknown key; ${mean}\`wats config list\` shows every key`,
  );
}

// --------------------------------------------------------------------- ack

async function ack(ctx: CommandContext, io: ConfigIO): Promise<number> {
  const r = await load(ctx, io, {});
  const current = safetyValues(r.values, r.acp);
  let before: Acknowledged | null = null;
  try {
    before = await readAcknowledged(ctx.paths.safety);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.err(`warning: ${err.message.replace(/; run .*$/, "")}; replacing it`);
  }
  const changes = before === null ? [] : diffSafety(before.values, current);
  if (before !== null && changes.length === 0) {
    io.out(
      `nothing to acknowledge: the safety settings match ${ctx.paths.safety} ` +
        `(acknowledged ${before.acknowledged_at})`,
    );
    return 0;
  }
  await acknowledge(ctx.paths.safety, current, { createNew: false });
  if (before === null) {
    io.out(`recorded the safety settings in ${ctx.paths.safety}:`);
    for (const [k, v] of Object.entries(current)) io.out(`  ${k} = ${showSafetyValue(v, k)}`);
  } else {
    io.out(`acknowledged in ${ctx.paths.safety}:`);
    for (const c of changes) {
      io.out(
        `  ${c.key}: ${showSafetyValue(c.acknowledged, c.key)} -> ${
          showSafetyValue(c.current, c.key)
        }`,
      );
    }
  }
  return 0;
}
