import assert from "node:assert/strict";
import { formatAge, formatDuration, formatElapsed } from "../src/duration.ts";

Deno.test("an exact duration reads back as the config value it came from", () => {
  assert.equal(formatDuration(3_723_004), "1h2m3s4ms");
  assert.equal(formatDuration(2 * 86_400_000), "48h", "no days unless asked");
  assert.equal(formatDuration(-5), "0");
});

Deno.test("a duration cut to its two largest units, with days", () => {
  assert.equal(formatDuration(1_200, { units: 2 }), "1s200ms");
  assert.equal(
    formatDuration(3 * 3_600_000 + 12_000, { units: 2 }),
    "3h",
    "zero parts are left out",
  );
  assert.equal(
    formatDuration(2 * 86_400_000 + 4 * 3_600_000 + 59_000, { units: 2, days: true }),
    "2d4h",
  );
});

Deno.test("ages as the review queue shows them", () => {
  assert.equal(formatAge(0), "0s");
  assert.equal(formatAge(45.9), "45s");
  assert.equal(formatAge(750), "12m30s");
  assert.equal(formatAge(3 * 3600 + 5 * 60 + 7), "3h5m");
  assert.equal(formatAge(-3), "0s");
});

Deno.test("elapsed time shows tenths under a minute and two units above", () => {
  assert.equal(formatElapsed(850), "850ms");
  assert.equal(formatElapsed(12_345), "12.3s");
  assert.equal(formatElapsed(245_400), "4m5s");
  assert.equal(formatElapsed(600_000), "10m");
  assert.equal(formatElapsed(7_384_000), "2h3m");
});
