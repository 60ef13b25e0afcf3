/**
 * Gathers what the node observes about an ask — its thread from the store, the outbox's
 * acknowledgements, the known agents' presence, the review queue — and hands it to the pure
 * {@linkcode askState} (src/node/ask_state.ts). The `ask` and `thread` tools, `status`, the
 * dashboard and the no-taker watch (src/node/ask_watch.ts) all read an ask's state through here.
 *
 * @module
 */

import type { AskState } from "../contracts/views.ts";
import { nostrKindOf } from "../posts/kinds.ts";
import { CLAIM_LOOKBACK, TrustedClaimers } from "../runner/claims.ts";
import type { Store, StoredPost } from "../store/store.ts";
import { askState } from "./ask_state.ts";
import type { KnownAgents } from "./presence.ts";
import type { ReviewQueue } from "./review_queue.ts";

/** What the states are computed with. */
export interface AskStatesOptions {
  store: Store;
  knownAgents: Pick<KnownAgents, "reach">;
  review: Pick<ReviewQueue, "list">;
  /** The relays local posts are queued for (`infra`). */
  relays: readonly string[];
  /** `agent.claim_ttl`, ms. */
  claimTtlMs: number;
  /** `agent.ask_timeout`, ms (0: off). */
  askTimeoutMs: number;
  /** `agent.allow`, as hex: whose claims this node's runner trusts. */
  allow: ReadonlySet<string>;
  now: () => number;
  /** The relays that refused a local post (`restricted: …`) while it waits for them. */
  refusals?: (id: string) => Array<{ relay: string; reason: string }>;
}

const ASK_KIND = nostrKindOf("ask");

/** The most asks `mine` lists. */
export const MY_ASKS_MAX = 10;

/** Reads asks' states from the node's parts. */
export class AskStates {
  readonly #options: AskStatesOptions;

  constructor(opts: AskStatesOptions) {
    this.#options = opts;
  }

  /** The state of the ask `id`; undefined when the node has no ask with that id. */
  of(id: string): AskState | undefined {
    const ask = this.#options.store.get(id);
    if (ask === undefined || ask.kind !== "ask") return undefined;
    return this.#state(ask, this.#options.store.localAuthors());
  }

  /** The newest asks of `author` (hex), newest first, at most `limit`. */
  mine(author: string, limit = MY_ASKS_MAX): AskState[] {
    const local = this.#options.store.localAuthors();
    return this.#options.store.query({ kinds: [ASK_KIND], authors: [author], limit })
      .flatMap((e) => {
        const p = this.#options.store.get(e.id);
        return p ? [this.#state(p, local)] : [];
      });
  }

  /** Relays in `infra` that have not acknowledged the local post `id`. */
  waiting(id: string): string[] {
    const relays = new Set(this.#options.relays);
    return this.#options.store.outbox.waiting(id).filter((r) => relays.has(r));
  }

  #state(ask: StoredPost, localAuthors: ReadonlySet<string>): AskState {
    const o = this.#options;
    const local = localAuthors.has(ask.author);
    // Whose signs of life extend a claim, as the runner judges them (src/runner/claims.ts).
    const accepted = new TrustedClaimers(o.store);
    return askState({
      ask,
      local,
      ...(local
        ? {
          relays: {
            of: o.relays.length,
            waiting: this.waiting(ask.id).length,
            refused: o.refusals?.(ask.id) ?? [],
          },
        }
        : {}),
      reach: o.knownAgents.reach(ask.author, ask.caps, ask.to),
      thread: o.store.threadNewest(ask.id, CLAIM_LOOKBACK),
      heldDrafts: o.review.list()
        .filter((d) => d.kind === "answer" && (d.parent === ask.id || d.thread === ask.id))
        .map((d) => d.id),
      claimTtlMs: o.claimTtlMs,
      trusted: (a) => o.allow.has(a) || localAuthors.has(a) || accepted.has(a),
      askTimeoutMs: o.askTimeoutMs,
      now: o.now(),
    });
  }
}
