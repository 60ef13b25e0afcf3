// The overview's charts: spend (bars, left axis) and runs (line, right axis)
// per day for 30 days and per hour for the last day, drawn with uPlot from the
// JSON block the page carries (the CSP allows no inline script).
"use strict";
(function () {
  const block = document.getElementById("chart-data");
  if (!block || typeof uPlot === "undefined") return;
  const data = JSON.parse(block.textContent);
  // Money as people write it: $0, $0.008, $0.25, $1.50. Not toPrecision alone,
  // which gives "$0.0" for zero and "$0.0080" for a tick.
  const money = (v) => {
    if (v == null) return "";
    if (v <= 0) return "$0";
    if (v >= 1) return "$" + v.toFixed(2);
    const digits = Math.min(6, 1 - Math.floor(Math.log10(v)));
    return "$" + v.toFixed(digits).replace(/0+$/, "").replace(/\.$/, "");
  };
  function draw(id, series, dayly) {
    const el = document.getElementById(id);
    if (!el) return;
    const width = Math.max(320, Math.min(960, el.clientWidth || 720));
    new uPlot(
      {
        width,
        height: 220,
        scales: {
          x: { time: true },
          usd: { range: (_u, _min, max) => [0, Math.max(max, 0.01)] },
          runs: { range: (_u, _min, max) => [0, Math.max(max, 1)] },
        },
        axes: [
          { values: dayly ? "{M}/{D}" : "{HH}:00" },
          { scale: "usd", values: (_u, vals) => vals.map(money) },
          { scale: "runs", side: 1, grid: { show: false } },
        ],
        series: [
          {},
          {
            label: "spend",
            scale: "usd",
            value: (_u, v) => money(v),
            stroke: "#b45309",
            fill: "rgba(180,83,9,0.25)",
            paths: uPlot.paths.bars({ size: [0.7, 40] }),
          },
          { label: "runs", scale: "runs", stroke: "#1d4ed8", width: 2 },
        ],
      },
      [series.t, series.usd, series.runs],
      el,
    );
    el.dataset.rendered = "true";
  }
  draw("chart-days", data.days, true);
  draw("chart-hours", data.hours, false);
})();
