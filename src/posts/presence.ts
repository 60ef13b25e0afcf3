/**
 * The presence event's tags (docs/protocol.md, "Presence"): an agent's caps as
 * `t` tags `cap:<name>`, its title as `subject`, its state as `["state", …]`
 * and, while a budget pauses it, `["until", <seconds>]`. Written by the runner's
 * announcer, read by every node's table of known agents.
 *
 * @module
 */

import { AGENT_STATES, type AgentState } from "../contracts/views.ts";

/** The tag that names an agent's state. */
export const STATE_TAG = "state";
/** The tag that says until when (seconds since the epoch) a paused agent waits. */
export const UNTIL_TAG = "until";

/** What a presence says beyond its caps and title. */
export interface PresenceState {
  state: AgentState;
  /** For `paused`: when the pause ends, ms since the epoch. */
  until?: number;
}

/** The state tags of a presence (caps and title are the post's own tags). */
export function presenceTags(p: PresenceState): string[][] {
  return [
    [STATE_TAG, p.state],
    ...(p.state === "paused" && p.until !== undefined
      ? [[UNTIL_TAG, String(Math.ceil(p.until / 1000))]]
      : []),
  ];
}

/**
 * The state a presence's tags say. A missing or unknown state reads as `off`: an
 * agent nobody can tell is running is not counted as reachable.
 */
export function readPresence(tags: readonly string[][]): PresenceState {
  const raw = tags.find((t) => t[0] === STATE_TAG)?.[1];
  const state = AGENT_STATES.find((s) => s === raw) ?? "off";
  if (state !== "paused") return { state };
  const until = Number(tags.find((t) => t[0] === UNTIL_TAG)?.[1]);
  return Number.isSafeInteger(until) && until > 0 ? { state, until: until * 1000 } : { state };
}
