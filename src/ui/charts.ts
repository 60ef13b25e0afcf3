/**
 * The overview's chart series: spend and runs per UTC day for the last 30 days
 * and per hour for the last 24 hours, from the runs index. Pure.
 *
 * @module
 */

import type { RunIndexEntry } from "../contracts/runs.ts";
import { HOUR_MS, utcDayStart } from "../duration.ts";

/** One chart: bucket starts (unix seconds, as uPlot takes them), spend and runs per bucket. */
export interface Series {
  t: number[];
  usd: number[];
  runs: number[];
}

/** Both charts of the overview. */
export interface ChartData {
  days: Series;
  hours: Series;
}

const DAY_MS = 24 * HOUR_MS;

/** Buckets the runs that ended in the last 30 days (by day) and 24 hours (by hour) before `now`. */
export function chartData(entries: readonly RunIndexEntry[], now: number): ChartData {
  const dayStart = utcDayStart(now) - 29 * DAY_MS;
  const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS - 23 * HOUR_MS;
  const days = empty(dayStart, DAY_MS, 30);
  const hours = empty(hourStart, HOUR_MS, 24);
  for (const e of entries) {
    const at = Date.parse(e.ended_at);
    if (!Number.isFinite(at) || at > now) continue;
    add(days, dayStart, DAY_MS, at, e.cost_usd);
    add(hours, hourStart, HOUR_MS, at, e.cost_usd);
  }
  return { days, hours };
}

function empty(start: number, step: number, n: number): Series {
  return {
    t: Array.from({ length: n }, (_, i) => (start + i * step) / 1000),
    usd: new Array(n).fill(0),
    runs: new Array(n).fill(0),
  };
}

function add(s: Series, start: number, step: number, at: number, cost: number | undefined) {
  const i = Math.floor((at - start) / step);
  if (i < 0 || i >= s.t.length) return;
  s.runs[i] = (s.runs[i] ?? 0) + 1;
  // Rounded to a millionth of a dollar, so sums of floats print as money.
  if (cost !== undefined) s.usd[i] = Math.round(((s.usd[i] ?? 0) + cost) * 1e6) / 1e6;
}
