/**
 * The `[notify.NAME]` tables of config.toml: where the node sends word of what
 * waits for a person (a held draft, a parked request, a halt…) when nobody
 * watches the dashboard. Validated when config.toml loads, with the file and
 * line of the bad value, like `[harnesses.NAME]` (docs/notifications.md).
 * Secrets are never values here, only the names of the variables that hold them.
 *
 * @module
 */

import { ConfigError } from "../errors.ts";
import { parseDuration } from "../duration.ts";
import { type Bad, checkName, show, strings, table, unknownKeys } from "./acp_tables.ts";

/** The kinds of target: a signed JSON POST, an ntfy topic, a Slack incoming webhook. */
export const NOTIFY_TYPES = ["webhook", "ntfy", "slack"] as const;
export type NotifyType = typeof NOTIFY_TYPES[number];

/**
 * What a target can be told about, each something that waits for a person
 * (docs/decisions/notify.md says why these and no others).
 */
export const NOTIFY_EVENTS = [
  "draft",
  "permission",
  "in_doubt",
  "budget_paused",
  "halted",
  "run_failed",
  "no_taker",
  // A coding agent's call ended with commits on its work that the base lacks.
  "work_ready",
] as const;
export type NotifyEvent = typeof NOTIFY_EVENTS[number];

/** One `[notify.NAME]` table, validated. */
export interface NotifyTarget {
  name: string;
  type: NotifyType;
  /** Where to POST (http or https, no user:password part); unset with `urlEnv`. */
  url?: string;
  /** The variable holding the URL instead, for a URL that is itself a secret (Slack's). */
  urlEnv?: string;
  /** The events it is sent; all of them when the table names none. */
  events: NotifyEvent[];
  /** webhook: the variable holding the HMAC secret (required). */
  secretEnv?: string;
  /** ntfy: the variable holding a bearer token (optional). */
  tokenEnv?: string;
  /** How long one attempt may take, in ms. */
  timeoutMs: number;
}

/** One attempt's time when the table sets none. */
export const DEFAULT_NOTIFY_TIMEOUT_MS = 10_000;
/** The longest attempt allowed: a slow target only delays its own queue, but not for minutes. */
const MAX_TIMEOUT_MS = 60_000;

const KEYS = ["type", "url", "url_env", "events", "secret_env", "token_env", "timeout"];
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Validates the parsed `notify` table. Throws `ConfigError` naming
 * `filePath:line`, the key, the value and what to write instead.
 *
 * `where` turns a dotted key into `file:line` for messages.
 */
export function parseNotifyTables(
  sections: Record<string, Record<string, unknown>>,
  where: (key: string) => string,
): Record<string, NotifyTarget> {
  const bad: Bad = (key, shown, what) =>
    new ConfigError(
      "config.bad_value",
      `${where(key)}: ${key} = ${show(shown)} is not allowed; ${what}; ` +
        "fix the line (docs/notifications.md lists these keys)",
    );
  const out: Record<string, NotifyTarget> = {};
  for (const [name, raw] of Object.entries(sections.notify ?? {})) {
    const at = `notify.${name}`;
    const t = table(raw, at, bad);
    checkName(name, at, bad);
    unknownKeys(t, at, KEYS, where);
    const type = t.type;
    if (!NOTIFY_TYPES.includes(type as NotifyType)) {
      throw bad(`${at}.type`, type, `write type = "webhook", "ntfy" or "slack"`);
    }
    const urlEnv = envName(t.url_env, `${at}.url_env`, bad);
    if ((t.url === undefined) === (urlEnv === undefined)) {
      throw bad(
        `${at}.url`,
        t.url,
        'write either url = "https://…" or url_env = "NAME" of the variable holding it',
      );
    }
    const url = t.url === undefined ? undefined : targetUrl(t.url, `${at}.url`, bad);
    const events = strings(t.events, `${at}.events`, bad);
    for (const e of events) {
      if (!NOTIFY_EVENTS.includes(e as NotifyEvent)) {
        throw bad(`${at}.events`, e, `the events are ${NOTIFY_EVENTS.join(", ")}`);
      }
    }
    const secretEnv = envName(t.secret_env, `${at}.secret_env`, bad);
    const tokenEnv = envName(t.token_env, `${at}.token_env`, bad);
    if (type === "webhook" && secretEnv === undefined) {
      throw bad(
        `${at}.secret_env`,
        undefined,
        'a webhook is signed: write secret_env = "NAME" of the variable that holds the secret',
      );
    }
    if (type !== "webhook" && secretEnv !== undefined) {
      throw bad(`${at}.secret_env`, t.secret_env, `only a webhook is signed; remove it`);
    }
    if (type !== "ntfy" && tokenEnv !== undefined) {
      throw bad(`${at}.token_env`, t.token_env, `only an ntfy target takes a token; remove it`);
    }
    const timeoutMs = t.timeout === undefined
      ? DEFAULT_NOTIFY_TIMEOUT_MS
      : typeof t.timeout === "string"
      ? parseDuration(t.timeout)
      : undefined;
    if (timeoutMs === undefined || timeoutMs < 1000 || timeoutMs > MAX_TIMEOUT_MS) {
      throw bad(`${at}.timeout`, t.timeout, 'must be a duration from 1s to 60s, such as "10s"');
    }
    out[name] = {
      name,
      type: type as NotifyType,
      ...(url ? { url } : {}),
      ...(urlEnv ? { urlEnv } : {}),
      events: events.length === 0 ? [...NOTIFY_EVENTS] : [...new Set(events)] as NotifyEvent[],
      ...(secretEnv ? { secretEnv } : {}),
      ...(tokenEnv ? { tokenEnv } : {}),
      timeoutMs,
    };
  }
  return out;
}

/** The variables the targets name: the daemon may read these and no others. */
export function notifyEnvNames(targets: Record<string, NotifyTarget>): string[] {
  return [
    ...new Set(
      Object.values(targets).flatMap((t) =>
        [t.urlEnv ?? [], t.secretEnv ?? [], t.tokenEnv ?? []].flat()
      ),
    ),
  ];
}

/**
 * One line about `t` for `wats config list`: its type, host (never the path,
 * which may be a secret: an ntfy topic, a Slack hook), events and variables.
 */
export function describeNotifyTarget(t: NotifyTarget): string {
  const where = t.url ? new URL(t.url).host : `the URL in $${t.urlEnv}`;
  const events = t.events.length === NOTIFY_EVENTS.length ? "every event" : t.events.join(", ");
  const vars = [
    ...(t.secretEnv ? [`secret in $${t.secretEnv}`] : []),
    ...(t.tokenEnv ? [`token in $${t.tokenEnv}`] : []),
  ];
  return `notify.${t.name}: ${t.type} to ${where}, ${events}${
    vars.length ? `; ${vars.join(", ")}` : ""
  }`;
}

/**
 * The URL `t` posts to: its `url`, or the value of its `url_env` variable when
 * that is an http(s) URL without a password. Undefined otherwise (the target
 * is then off; the daemon says why at start).
 */
export function targetUrlOf(
  t: NotifyTarget,
  readEnv: (name: string) => string | undefined,
): string | undefined {
  if (t.url !== undefined) return t.url;
  const v = readEnv(t.urlEnv ?? "") ?? "";
  return urlProblem(v) === undefined ? new URL(v).href : undefined;
}

/** What is wrong with `v` as a target's URL, or undefined when nothing is. */
function urlProblem(v: unknown): string | undefined {
  let u: URL | undefined;
  try {
    if (typeof v === "string") u = new URL(v);
  } catch {
    // Said below.
  }
  if (u === undefined || (u.protocol !== "http:" && u.protocol !== "https:")) {
    return 'must be an http or https URL such as "https://ntfy.sh/my-topic"';
  }
  if (u.username !== "" || u.password !== "") {
    return "a password in the URL is a secret in config.toml: drop it and use secret_env or token_env";
  }
  return undefined;
}

function targetUrl(v: unknown, key: string, bad: Bad): string {
  const problem = urlProblem(v);
  if (problem === undefined) return new URL(v as string).href;
  // config.toml is no place for a credential: it is not echoed either.
  const shown = typeof v === "string" && URL.canParse(v) && new URL(v).password !== ""
    ? `${new URL(v).protocol}//…@${new URL(v).host}`
    : v;
  throw bad(key, shown, problem);
}

function envName(v: unknown, key: string, bad: Bad): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string" || !ENV_NAME.test(v)) {
    throw bad(key, v, 'must be the name of an environment variable, such as "HOOK_SECRET"');
  }
  return v;
}
