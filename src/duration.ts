/**
 * Durations as people read them: `10m`, `1h30m`, `2d4h`, `1s200ms`. The one
 * home of duration formatting in wats: config values, ages of drafts and the
 * length of runs all come through here, so one reading holds everywhere.
 *
 * @module
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** One hour in milliseconds: the window of the hourly caps. */
export const HOUR_MS = HOUR;
const DAY = 24 * HOUR;

/** How much of a duration to show. */
export interface DurationStyle {
  /**
   * How many units to consider, from the largest one that is not zero
   * (`2`: `3h5m` for 3 h 5 min 12 s). Default: all, which is exact.
   */
  units?: number;
  /** Count whole days as `d` (default: hours go on, `48h`). */
  days?: boolean;
}

/**
 * Writes milliseconds as a duration of `d`/`h`/`m`/`s`/`ms` parts, leaving out
 * the parts that are zero: `600000` → `10m`, `5400000` → `1h30m`, `0` → `0`.
 * The default style is exact, so the config parser reads back the same value.
 */
export function formatDuration(ms: number, style: DurationStyle = {}): string {
  let rest = Math.max(0, Math.floor(ms));
  const sizes: Array<[string, number]> = [
    ...(style.days ? [["d", DAY] as [string, number]] : []),
    ["h", HOUR],
    ["m", MINUTE],
    ["s", SECOND],
    ["ms", 1],
  ];
  let out = "";
  let left = style.units ?? Infinity;
  for (const [unit, size] of sizes) {
    if (left <= 0) break;
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) out += `${n}${unit}`;
    if (out !== "") left--;
  }
  return out === "" ? "0" : out;
}

/** An age in whole seconds, as lists show it: `0s`, `45s`, `12m30s`, `3h5m`, `2d4h`. */
export function formatAge(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  // A bare `0` reads as a number, not an age ("halted 0 ago"): under a second is `0s`.
  if (whole === 0) return "0s";
  return formatDuration(whole * SECOND, { units: 2, days: true });
}

/**
 * How long something took, as run lists show it: `850ms`, `12.3s`, `4m5s`,
 * `2h3m`. Tenths of a second matter for short runs; seconds stop mattering
 * past an hour.
 */
export function formatElapsed(ms: number): string {
  if (ms < SECOND) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < MINUTE) return `${(ms / SECOND).toFixed(1)}s`;
  return formatDuration(Math.round(ms / SECOND) * SECOND, { units: 2 });
}

const UNIT_MS: Record<string, number> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: DAY };

/**
 * Parses a duration such as `0`, `500ms`, `90s`, `10m`, `1h30m` or `7d` into
 * milliseconds; `undefined` when the text is not one.
 */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (t === "0") return 0;
  if (!/^(\d+(ms|s|m|h|d))+$/.test(t)) return undefined;
  let total = 0;
  for (const [, count, unit] of t.matchAll(/(\d+)(ms|s|m|h|d)/g)) {
    const ms = unit === undefined ? undefined : UNIT_MS[unit];
    if (ms === undefined) return undefined;
    total += Number(count) * ms;
  }
  return Number.isSafeInteger(total) ? total : undefined;
}

/** Midnight UTC at the start of the day of `ms`. */
export function utcDayStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

/** Midnight UTC of the first day of the month of `ms`. */
export function utcMonthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The next UTC midnight after `ms`. */
export function nextUtcDay(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

/** Midnight UTC of the first day of the next month after `ms`. */
export function nextUtcMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
