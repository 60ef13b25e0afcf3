import assert from "node:assert/strict";
import { usd, usdOf } from "../src/money.ts";

Deno.test("amounts keep the precision that matters at a run's size", () => {
  assert.equal(usd(0.018), "$0.018");
  assert.equal(usd(0.0184), "$0.018");
  assert.equal(usd(0.0012), "$0.0012");
  assert.equal(usd(0.05), "$0.05");
  assert.equal(usd(0.5), "$0.50");
  assert.equal(usd(0.123), "$0.12");
  assert.equal(usd(2), "$2.00");
  assert.equal(usd(12.345), "$12.35");
  assert.equal(usd(0), "$0.00");
});

Deno.test("spend over its limit reads as over, and two different amounts never read the same", () => {
  assert.equal(usdOf(0.051, 0.05), "$0.051 of $0.05");
  assert.equal(usdOf(0.0499, 0.05), "$0.0499 of $0.05");
  assert.equal(usdOf(0.05, 0.05), "$0.05 of $0.05");
  assert.equal(usdOf(0.5, 2), "$0.50 of $2.00");
  assert.equal(usdOf(2.004, 2), "$2.004 of $2.00");
  assert.equal(usdOf(0, 2), "$0.00 of $2.00");
});
