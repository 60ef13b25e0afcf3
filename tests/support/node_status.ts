/**
 * A quiet node's status (no agent, nothing held, halted or paused) with the
 * fields a test is about put over it.
 */

import type { NodeStatus } from "../../src/contracts/views.ts";

export function nodeStatus(over: Partial<NodeStatus> = {}): NodeStatus {
  return {
    node: "n",
    profile: { name: "me", npub: "npub1me" },
    relays: [],
    agent: null,
    pendingDrafts: 0,
    safetyNotices: [],
    halted: null,
    budget: null,
    storedPosts: 0,
    ...over,
  };
}
