/**
 * The agent's presence (docs/decisions/presence.md): a replaceable event with the
 * agent's caps, title and state, posted at start, again every `agent.presence_every`
 * so other nodes can tell a live agent from a gone one, and at once when the state
 * changes (a budget pause starts or ends, a halt, a resume). The node tells it
 * "something may have changed" (`check`); it compares with what it last posted, so
 * a check that changes nothing posts nothing. Idle, it holds one timer: the next
 * refresh, or the end of a budget pause when that comes first.
 *
 * @module
 */

import type { PresenceState } from "../posts/presence.ts";
import type { Clock, RunnerLog, Timers } from "./ports.ts";
import { errorMessage } from "../error_message.ts";

/** How long after a budget pause's end the presence checks that it ended. */
export const PAUSE_END_SLACK_MS = 1000;

/** One presence to sign and publish as the agent. */
export interface PresenceDraft extends PresenceState {
  /** The announce title (first line of `agent.about`), when there is one. */
  title?: string;
  caps: string[];
  /** Seconds since the epoch; always later than the previous presence's. */
  createdAt: number;
}

/** What the announcer needs. */
export interface PresenceAnnouncerOptions {
  clock: Clock;
  timers: Timers;
  log: RunnerLog;
  /** `agent.presence_every`, in ms. */
  everyMs: number;
  title?: string;
  caps: readonly string[];
  /** The agent's state now. */
  state: () => PresenceState;
  /** Signs and stores the presence (the store queues it for the relays). */
  publish: (draft: PresenceDraft) => Promise<unknown>;
}

/** Posts the agent's presence on start, on every refresh and on each change of state. */
export class PresenceAnnouncer {
  readonly #options: PresenceAnnouncerOptions;
  #timer: unknown;
  #last: { state: PresenceState; at: number; createdAt: number } | undefined;
  #busy: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  constructor(opts: PresenceAnnouncerOptions) {
    this.#options = opts;
  }

  /** Posts the first presence. */
  start(): Promise<void> {
    return this.check();
  }

  /**
   * Posts a presence when the state differs from the last one posted or the refresh
   * is due; otherwise only sets the next timer. Resolves once that post is stored.
   */
  check(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#busy) {
      // A change seen while a post is being signed gets its own post right after.
      this.#again = true;
      return this.#busy;
    }
    this.#busy = this.#run().finally(() => {
      this.#busy = undefined;
      if (this.#again) {
        this.#again = false;
        void this.check();
      }
    });
    return this.#busy;
  }

  /** Clears the timer; nothing is posted after. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#options.timers.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  async #run(): Promise<void> {
    const o = this.#options;
    const now = o.clock.now();
    const state = o.state();
    const last = this.#last;
    const due = last === undefined || now >= last.at + o.everyMs || !sameState(last.state, state);
    if (due) {
      const createdAt = Math.max(Math.floor(now / 1000), (last?.createdAt ?? 0) + 1);
      try {
        await o.publish({
          ...state,
          ...(o.title ? { title: o.title } : {}),
          caps: [...new Set(o.caps)],
          createdAt,
        });
        this.#last = { state, at: now, createdAt };
        o.log.debug("presence posted: {state}", { state: state.state });
      } catch (err) {
        // Tried again at the next refresh; the previous presence stays until it is stale.
        o.log.warn("cannot post the agent's presence: {error}", { error: errorMessage(err) });
        this.#last = last && { ...last, at: now };
      }
    }
    this.#schedule(state);
  }

  #schedule(state: PresenceState): void {
    if (this.#stopped) return;
    const o = this.#options;
    if (this.#timer !== undefined) o.timers.clearTimer(this.#timer);
    const now = o.clock.now();
    let at = (this.#last?.at ?? now) + o.everyMs;
    // A second after the pause ends: the runner's own timer ends it first.
    if (
      state.state === "paused" && state.until !== undefined &&
      state.until + PAUSE_END_SLACK_MS > now
    ) {
      at = Math.min(at, state.until + PAUSE_END_SLACK_MS);
    }
    this.#timer = o.timers.setTimer(Math.max(0, at - now), () => {
      this.#timer = undefined;
      void this.check();
    });
  }
}

function sameState(a: PresenceState, b: PresenceState): boolean {
  return a.state === b.state && a.until === b.until;
}
