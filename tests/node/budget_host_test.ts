import assert from "node:assert/strict";
import { budgetOnlyHost } from "../../src/node/budget_host.ts";
import { defaultSettings } from "../../src/config/schema.ts";

Deno.test("with no runner the budget still admits and holds coding agent calls, and status shows what they hold", () => {
  const { host, view, close } = budgetOnlyHost({
    ...defaultSettings(),
    "agent.max_usd_per_day": 1,
    "agent.reserve_usd": 0.6,
  });
  try {
    const a = host.budget.admitCall("a");
    assert.ok(a.admitted);
    assert.deepEqual(view().reserved, { usd: 0.6, count: 1, spentUsd: 0 });
    const b = host.budget.admitCall("b");
    assert.ok(!b.admitted);
    assert.match(b.reason, /^\$0\.60 of the \$1\.00 left is held by 1 run\(s\)/);
    a.hold.settle(0.25);
    assert.equal(view().usdToday, 0.25);
    assert.equal(view().reserved?.count, 0);
  } finally {
    close();
  }
});
