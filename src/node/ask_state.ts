/**
 * What became of an ask, as its sender sees it (docs/asks.md): a pure function of what this node
 * observes — the outbox's relay acknowledgements, the known agents' presence, the thread's claims
 * and answers, its own review queue, the clock. Nothing is posted for it: a receipt is computed
 * where it is read, so the runner posts no more than its announce and presence
 * (docs/decisions/asks.md).
 *
 * The phase is the furthest step reached, in this order: `answered` (an answer by anyone but the
 * asker), `held` (an answer to it waits in this node's review queue), `claimed` (another author's
 * live claim, as src/runner/claims.ts decides it), `no_taker` (none of these by
 * `agent.ask_timeout` after it was posted), `unroutable` (no known agent is among its addressees
 * or has one of its caps), `waiting`.
 *
 * @module
 */

import { npubEncode } from "nostr-tools/nip19";
import type { AgentReach, AskPhase, AskState } from "../contracts/views.ts";
import { type ClaimPost, claimState } from "../runner/claims.ts";

/** The ask itself, as stored. */
export interface AskPost {
  id: string;
  /** The asker's key (hex). */
  author: string;
  title?: string;
  caps: readonly string[];
  /** Addressees (hex keys); empty or absent: anyone. */
  to?: readonly string[];
  /** Seconds since the epoch (its `created_at`). */
  createdAt: number;
}

/** Everything the state is computed from. */
export interface AskObservations {
  ask: AskPost;
  /** Signed by one of this node's profiles. */
  local: boolean;
  /** Local asks: the relays the store queued it for, and how many have not acknowledged it. */
  relays?: {
    of: number;
    waiting: number;
    /** Of those waiting, the ones that refused it (`restricted: …`), with their reason. */
    refused?: ReadonlyArray<{ relay: string; reason: string }>;
  };
  /** The known agents it is for (src/node/presence.ts `reach`). */
  reach: AgentReach;
  /** The posts of its thread (any order; the ask itself may be among them). */
  thread: readonly ClaimPost[];
  /** Draft ids of answers to it held in this node's review queue. */
  heldDrafts: readonly string[];
  /** `agent.claim_ttl`, ms. */
  claimTtlMs: number;
  /** Whose signs of life extend a claim, as this node's runner trusts them. */
  trusted?: (author: string) => boolean;
  /** `agent.ask_timeout`, ms; 0: never `no_taker`. */
  askTimeoutMs: number;
  /** Milliseconds since the epoch. */
  now: number;
}

/** What became of the ask. Pure. */
export function askState(o: AskObservations): AskState {
  const { ask } = o;
  const answers = o.thread
    .filter((p) => p.kind === "answer" && p.author !== ask.author && p.id !== ask.id)
    .sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq)
    .map((p) => ({ id: p.id, by: npubEncode(p.author), at: p.createdAt * 1000 }));
  const claimed = claimState(ask.id, o.thread, {
    agentKey: ask.author,
    ttlMs: o.claimTtlMs,
    now: o.now,
    ...(o.trusted ? { trusted: o.trusted } : {}),
  });
  const claim = claimed.state === "open" ? undefined : {
    by: npubEncode(claimed.claim.by),
    at: claimed.claim.at,
    ...(claimed.state === "released"
      ? { until: claimed.releasedAt, ended: "released" as const }
      : claimed.claim.lapsesAt !== undefined
      ? { until: claimed.claim.lapsesAt }
      : {}),
    ...(claimed.state === "lapsed" ? { ended: "lapsed" as const } : {}),
  };
  const noTakerAt = o.askTimeoutMs > 0 ? ask.createdAt * 1000 + o.askTimeoutMs : undefined;
  const phase: AskPhase = answers.length > 0
    ? "answered"
    : o.heldDrafts.length > 0
    ? "held"
    : claimed.state === "held"
    ? "claimed"
    : noTakerAt !== undefined && o.now >= noTakerAt
    ? "no_taker"
    : o.reach.matching === 0
    ? "unroutable"
    : "waiting";
  return {
    ask: ask.id,
    ...(ask.title !== undefined && ask.title !== "" ? { title: ask.title } : {}),
    by: npubEncode(ask.author),
    local: o.local,
    phase,
    ...(o.local && o.relays !== undefined
      ? {
        sent: {
          acked: o.relays.of - o.relays.waiting,
          of: o.relays.of,
          ...(o.relays.refused?.length ? { refused: [...o.relays.refused] } : {}),
        },
      }
      : {}),
    routing: {
      caps: [...ask.caps],
      to: (ask.to ?? []).map((k) => npubEncode(k)),
      matching: o.reach.matching,
      reachable: o.reach.reachable,
    },
    ...(claim !== undefined ? { claim } : {}),
    answers,
    heldDrafts: [...o.heldDrafts],
    ...(noTakerAt !== undefined ? { noTakerAt } : {}),
  };
}

/**
 * When the state of an ask not yet answered, held or past its timeout may next change by the
 * clock alone: its claim lapsing, or `noTakerAt`. Undefined when only a new post can change it.
 */
export function nextChange(s: AskState, now: number): number | undefined {
  if (s.phase === "answered" || s.phase === "held" || s.phase === "no_taker") return undefined;
  const times = [
    ...(s.phase === "claimed" && s.claim?.until !== undefined ? [s.claim.until] : []),
    ...(s.noTakerAt !== undefined ? [s.noTakerAt] : []),
  ].filter((t) => t > now);
  return times.length > 0 ? Math.min(...times) : undefined;
}
