/**
 * The ACP layer's host when no agent runs (`agent.runtime = "none"`): calls
 * started from interactive sessions, the dashboard or `wats work send` are
 * still admitted, held and stopped by the day's and month's budget (issue 30,
 * item 4: no budget can be overshot, whatever runs). It is the runner's desk
 * (src/runner/reservations.ts) without a runner: no run threads, no
 * transcripts, no wakes; `wats status` shows its spend and what calls hold.
 *
 * @module
 */

import type { Settings } from "../config/schema.ts";
import type { AgentHost } from "../contracts/agent_host.ts";
import type { NodeStatus } from "../contracts/views.ts";
import { systemClock, systemTimers } from "../runner/ports.ts";
import { BudgetDesk } from "../runner/reservations.ts";

/** A host that is only the budget, and how to drop its timers when the node stops. */
export function budgetOnlyHost(
  s: Settings,
): { host: AgentHost; view(): NonNullable<NodeStatus["budget"]>; close(): void } {
  const desk = new BudgetDesk({
    limits: {
      usdPerDay: s["agent.max_usd_per_day"],
      usdPerMonth: s["agent.max_usd_per_month"],
      runsPerDay: s["agent.max_runs_per_day"],
    },
    reserveUsd: s["agent.reserve_usd"],
    clock: systemClock,
    timers: systemTimers,
  });
  return {
    host: {
      budget: desk,
      threadOfRun: () => undefined,
      noteAcp: () => {},
      permissionDecided: () => {},
    },
    view: () => {
      const b = desk.state();
      return {
        usdToday: b.usdToday,
        usdPerDay: b.limits.usdPerDay,
        usdMonth: b.usdMonth,
        usdPerMonth: b.limits.usdPerMonth,
        runsToday: b.runsWithoutCostToday,
        runsPerDay: b.limits.runsPerDay,
        reserved: {
          usd: b.inFlight.reservedUsd,
          count: b.inFlight.count,
          spentUsd: b.inFlight.spentUsd,
          ...(b.inFlight.parked ? { parked: b.inFlight.parked } : {}),
        },
      };
    },
    close: () => desk.close(),
  };
}
