/** The overview's chart script: how its axes read, run against a recording stand-in for uPlot. */

import assert from "node:assert/strict";
import { chartData } from "../../src/ui/charts.ts";

interface Axis {
  scale?: string;
  values?: unknown;
}

/** Runs dashboard.js as the page would, and returns the options it gave each chart. */
function chartOptions(): Array<{ axes: Axis[] }> {
  const script = Deno.readTextFileSync(
    new URL("../../src/ui/assets/dashboard.js", import.meta.url),
  );
  const made: Array<{ axes: Axis[] }> = [];
  const elements: Record<string, unknown> = {
    "chart-data": { textContent: JSON.stringify(chartData([], 0)) },
    "chart-days": { clientWidth: 720, dataset: {} },
    "chart-hours": { clientWidth: 720, dataset: {} },
  };
  const document = { getElementById: (id: string) => elements[id] ?? null };
  function uPlot(opts: { axes: Axis[] }) {
    made.push(opts);
  }
  uPlot.paths = { bars: () => null };
  new Function("document", "uPlot", script)(document, uPlot);
  return made;
}

Deno.test("the spend axis reads as money: $0, $0.002, $0.008, $0.25, $1.50", () => {
  const charts = chartOptions();
  assert.equal(charts.length, 2);
  for (const c of charts) {
    const usd = c.axes.find((a) => a.scale === "usd");
    const values = usd?.values as (u: unknown, v: number[]) => string[];
    assert.deepEqual(
      values(null, [0, 0.002, 0.008, 0.01, 0.25, 1.5, 12]),
      ["$0", "$0.002", "$0.008", "$0.01", "$0.25", "$1.50", "$12.00"],
    );
  }
});
