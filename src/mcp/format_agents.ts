/**
 * Known agents as the `status` and `agents` tools (and so `wats status`) show them,
 * and the line that tells an asker how many agents its ask is for
 * (docs/decisions/presence.md).
 *
 * @module
 */

import type { AgentReach, KnownAgent } from "../contracts/views.ts";
import { isoSeconds } from "../posts/format_post.ts";

/** One line per agent: npub, title, caps, state, last seen, and `stale` when it is. */
export function formatKnownAgent(a: KnownAgent): string {
  const state = a.state === "paused" && a.until !== undefined
    ? `paused until ${isoSeconds(a.until / 1000)}`
    : a.state;
  return [
    `${a.npub}${a.local ? " (this node)" : ""}`,
    ...(a.title ? [JSON.stringify(a.title)] : []),
    `caps: ${a.caps.length > 0 ? a.caps.join(", ") : "none"}`,
    a.unseen ? `${state} (a bare presence: never seen posting)` : state,
    `last seen ${isoSeconds(a.lastSeen / 1000)}${a.stale ? " (stale)" : ""}`,
  ].join(" · ");
}

/**
 * The status section: a count, then one line per agent listed (the seen ones first);
 * `unseen` of the `total` only ever sent a presence.
 */
export function formatKnownAgents(
  agents: readonly KnownAgent[],
  total: number,
  unseen = 0,
): string[] {
  if (total === 0) return ["known agents: none (no presence received yet)"];
  const bare = unseen > 0 ? ` (${unseen} of them a bare presence, never seen posting)` : "";
  const more = total > agents.length ? `, ${agents.length} shown (seen ones first)` : "";
  return [
    `known agents: ${total}${bare}${more}`,
    ...agents.map((a) => `  - ${formatKnownAgent(a)}`),
  ];
}

/**
 * What an ask is for, in one line: "2 known agents match caps [rust]; 1 is reachable."
 * `to` are the addressees as the asker gave them.
 */
export function formatReach(
  reach: AgentReach,
  caps: readonly string[],
  to: readonly string[] = [],
): string {
  const one = reach.matching === 1;
  const which = to.length > 0
    ? `${one ? "is" : "are"} among the ${to.length} addressed`
    : caps.length > 0
    ? `${one ? "matches" : "match"} caps [${caps.join(", ")}]`
    : `could take an open ask`;
  const bare = reach.unseen
    ? ` ${reach.unseen} more ${reach.unseen === 1 ? "is" : "are"} running but never seen ` +
      `posting (a bare presence), not counted.`
    : "";
  return `${reach.matching} known agent${one ? "" : "s"} ${which}; ${reach.reachable} ` +
    `${reach.reachable === 1 ? "is" : "are"} reachable (fresh presence, running).${bare}`;
}
