/**
 * The overview's chart series: spend and runs per UTC day for the last 30 days
 * and per hour for the last 24 hours, from the spend items every surface reads
 * (src/runner/spend_figures.ts): heartbeat runs and coding agents' calls. Pure.
 *
 * @module
 */

import type { SpendItem } from "../runner/spend_figures.ts";
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

/**
 * Buckets what ended in the last 30 days (by day) and 24 hours (by hour)
 * before `now`: every item's cost, and the heartbeat runs (a call is no run;
 * a day's carried sum is the cost of runs already counted by their number).
 */
export function chartData(items: readonly SpendItem[], now: number): ChartData {
  const dayStart = utcDayStart(now) - 29 * DAY_MS;
  const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS - 23 * HOUR_MS;
  const days = empty(dayStart, DAY_MS, 30);
  const hours = empty(hourStart, HOUR_MS, 24);
  for (const i of items) {
    if (i.at > now) continue;
    const run = i.kind === "run" || (i.kind === "carried" && i.usd === undefined);
    add(days, { start: dayStart, step: DAY_MS, at: i.at }, i.usd, run);
    add(hours, { start: hourStart, step: HOUR_MS, at: i.at }, i.usd, run);
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

function add(
  s: Series,
  where: { start: number; step: number; at: number },
  cost: number | undefined,
  run: boolean,
) {
  const i = Math.floor((where.at - where.start) / where.step);
  if (i < 0 || i >= s.t.length) return;
  if (run) s.runs[i] = (s.runs[i] ?? 0) + 1;
  // Rounded to a millionth of a dollar, so sums of floats print as money.
  if (cost !== undefined) s.usd[i] = Math.round(((s.usd[i] ?? 0) + cost) * 1e6) / 1e6;
}
