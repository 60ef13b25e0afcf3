/**
 * src/contracts imports no package, so it spells out the ACP SDK's
 * `StopReason`. This file only type-checks: `deno test` (and `deno check`)
 * fails on it when the two lists differ in either direction.
 */

import type { StopReason } from "@agentclientprotocol/sdk";
import type { AgentStopReason } from "../../src/contracts/coding_agents.ts";

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const sameStopReasons: Same<AgentStopReason, StopReason> = true;

Deno.test("the contracts' stop reasons are the ACP SDK's", () => {
  if (!sameStopReasons) throw new Error("unreachable: the type check above decides");
});
