/**
 * What a call does with one permission request of its coding agent: pure
 * decisions on plain data (issue 17, item 5), so that every branch is
 * unit-tested without an agent. src/acp/calls.ts carries them out: it resolves
 * the request's locations, parks the request when told to, and answers the agent.
 *
 * The steps: {@linkcode judgePermission} (the policy, then a person's earlier
 * decision or the review queue for an `ask`), {@linkcode decidedByPerson} once
 * a parked request is decided, then {@linkcode answerPermission} (the option
 * that carries the verdict to the agent).
 *
 * @module
 */

import { type RequestShape, sameRequest } from "./carried.ts";
import {
  chooseOption,
  decide,
  type PermissionAsk,
  type PermissionOptionLike,
  type Policy,
  type Verdict,
} from "./policy.ts";

/**
 * A person's decision on a request that waited while its coding agent was
 * stopped, with the request it answers.
 */
export interface Grant extends RequestShape {
  approved: boolean;
}

/** One permission request, its locations already resolved. */
export interface JudgedRequest extends PermissionAsk, RequestShape {
  locations: string[];
}

/** What the call holds when the request comes. */
export interface JudgeState {
  /** A person's decision carried to this call, not yet used (src/acp/carried.ts). */
  grant?: Grant;
  /** agent.review is on: an `ask` may wait in the review queue for a person. */
  canPark: boolean;
}

/** What to do with the request. */
export type Judgement =
  /** Answer the agent now. `grantUsed`: the carried decision answered it, and is spent. */
  | { then: "answer"; verdict: Verdict; reason: string; grantUsed: boolean }
  /** Hold it for a person; `reason` is the policy's. */
  | { then: "park"; reason: string };

/** Judges a request by the policy, then, for an `ask`, by a carried decision or the review queue. */
export function judgePermission(
  policy: Policy,
  request: JudgedRequest,
  state: JudgeState,
): Judgement {
  const { verdict, reason } = decide(policy, request);
  if (verdict !== "ask") return { then: "answer", verdict, reason, grantUsed: false };
  const grant = state.grant;
  if (grant !== undefined && sameRequest(grant, request)) {
    // The person's decision on the request that waited while the agent was stopped.
    const word = grant.approved ? "approved" : "rejected";
    return {
      then: "answer",
      verdict: grant.approved ? "allow" : "deny",
      reason: `${reason}; a person ${word} it while it waited`,
      grantUsed: true,
    };
  }
  if (state.canPark) return { then: "park", reason };
  return {
    then: "answer",
    verdict,
    reason: `${reason}; agent.review is off, so it was refused`,
    grantUsed: false,
  };
}

/** The verdict on a parked request once a person decided it. */
export function decidedByPerson(
  reason: string,
  approved: boolean,
): { verdict: Verdict; reason: string } {
  return {
    verdict: approved ? "allow" : "deny",
    reason: `${reason}; a person ${approved ? "approved" : "rejected"} it`,
  };
}

/** The answer to the agent: the option chosen, if any, and whether the request counts as refused. */
export interface Answer {
  /** The option to select; undefined: answer `cancelled`. */
  optionId?: string;
  /** The chosen option's kind, or `cancelled`. */
  answer: string;
  reason: string;
  /** Anything but `allow_once`: listed in the call's `refused`. */
  refused: boolean;
}

/** Picks the option that carries `verdict` (only `allow` allows; once, never always). */
export function answerPermission(
  verdict: Verdict,
  reason: string,
  options: readonly PermissionOptionLike[],
): Answer {
  const allow = verdict === "allow";
  const chosen = chooseOption(options, allow);
  const once = chosen?.kind === "allow_once";
  return {
    ...(chosen !== undefined ? { optionId: chosen.optionId } : {}),
    answer: chosen?.kind ?? "cancelled",
    reason: allow && !once ? `${reason}, but the agent offered no allow_once option` : reason,
    refused: !once,
  };
}
