/**
 * The node's network as one part with a life of its own: built with the other parts, so the
 * service holds it from the start, and started last, once the socket serves and the runner is
 * ready (daemon.ts). It follows what the node's interest says (docs/network.md): the interest is
 * watched from the build on, so posts stored before the start count. Before the start, status
 * shows no network and a fetch reaches no relay.
 *
 * @module
 */

import type { Filter } from "nostr-tools/filter";
import { type InterestSettings, watchInterest } from "../net/interest_source.ts";
import {
  type Network,
  type NetworkOptions,
  type NetworkStatus,
  startNetwork,
} from "../net/network.ts";

/** The network of a node, from its build until it is closed. */
export class NodeNetwork implements AsyncDisposable {
  readonly #options: Omit<NetworkOptions, "interest">;
  readonly #interest: ReturnType<typeof watchInterest>;
  #network: Network | undefined;

  constructor(options: Omit<NetworkOptions, "interest">, interest: InterestSettings) {
    this.#options = options;
    this.#interest = watchInterest(options.store, interest, (next) => {
      this.#network?.setInterest(next);
    });
  }

  /** Starts syncing and serving. Resolves once the endpoint listens. */
  async start(): Promise<void> {
    if (this.#network !== undefined) return;
    const network = await startNetwork({ ...this.#options, interest: this.#interest.current() });
    this.#network = network;
    // Posts stored while the network started changed nothing yet.
    network.setInterest(this.#interest.current());
  }

  /** The relays' state, or undefined before the start. */
  status(): NetworkStatus | undefined {
    return this.#network?.status();
  }

  /** The relays that refused post `id` and why (NIP-42 `restricted:`…); none before the start. */
  refusals(id: string): ReturnType<Network["refusals"]> {
    return this.#network?.refusals(id) ?? [];
  }

  /** Asks each connected relay once for `filter`; before the start, none answers. */
  fetchOnce(filter: Filter): Promise<{ relays: number; events: number }> {
    return this.#network?.fetchOnce(filter) ?? Promise.resolve({ relays: 0, events: 0 });
  }

  /** Stops watching the interest, the endpoint and every sync; waits for events being stored. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.#interest.stop();
    const network = this.#network;
    this.#network = undefined;
    await network?.close();
  }
}
