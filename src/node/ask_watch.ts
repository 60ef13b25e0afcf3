/**
 * Watches the asks of this node's profiles and reports the two turns their sender should hear of
 * without asking (docs/asks.md): an answer arrived (`ask_answered`, the dashboard's activity),
 * and nobody answered or claimed it within `agent.ask_timeout` (`ask_no_taker`: a `[notify]`
 * event and, with agent.notify, a desktop notice). The state itself is computed where it is read
 * (src/node/ask_states.ts); this only keeps one timer, for the first ask due, and reads the state
 * then: a claim that still holds moves the ask's check to the claim's lapse.
 *
 * An ask already due when the daemon starts is not reported again: the watch looks back one
 * timeout, so an ask that came due while the daemon was down is reported at start, once.
 *
 * @module
 */

import { npubEncode } from "nostr-tools/nip19";
import type { EventSink } from "../contracts/node_events.ts";
import type { AskState } from "../contracts/views.ts";
import { nostrKindOf } from "../posts/kinds.ts";
import type { Clock, Timers } from "../runner/ports.ts";
import type { Store } from "../store/store.ts";
import { nextChange } from "./ask_state.ts";

/** How many asks are watched at once; past it the oldest is dropped (it is never reported). */
export const WATCHED_MAX = 1000;

/** What the watch needs. */
export interface AskWatchOptions {
  store: Pick<Store, "onInsert" | "localAuthors" | "query" | "get">;
  /** The state of an ask (src/node/ask_states.ts `AskStates.of`). */
  stateOf: (id: string) => AskState | undefined;
  /** `agent.ask_timeout`, ms; 0: no `ask_no_taker`. */
  timeoutMs: number;
  clock: Clock;
  timers: Timers;
  events: EventSink;
}

/** A running watch; `stop` ends it. */
export interface AskWatch {
  stop(): void;
}

const ASK_KIND = nostrKindOf("ask");

/** Starts watching; asks of the last timeout are picked up from the store. */
export function watchAsks(o: AskWatchOptions): AskWatch {
  /** Ask id → when to read its state next (ms). */
  const due = new Map<string, number>();
  let timer: unknown;
  let stopped = false;

  const track = (id: string, createdAt: number) => {
    if (o.timeoutMs <= 0) return;
    due.set(id, createdAt * 1000 + o.timeoutMs);
    if (due.size > WATCHED_MAX) due.delete(due.keys().next().value!);
  };
  const arm = () => {
    if (timer !== undefined) o.timers.clearTimer(timer);
    timer = undefined;
    if (stopped || due.size === 0) return;
    const first = Math.min(...due.values());
    timer = o.timers.setTimer(Math.max(0, first - o.clock.now()), check);
  };
  const check = () => {
    timer = undefined;
    const now = o.clock.now();
    for (const [id, at] of [...due]) {
      if (at > now) continue;
      due.delete(id);
      const s = o.stateOf(id);
      if (s === undefined) continue;
      if (s.phase === "no_taker") {
        o.events({ event: "ask_no_taker", ask: id, title: s.title ?? "", since: s.noTakerAt! });
        continue;
      }
      const next = nextChange(s, now);
      if (next !== undefined) due.set(id, next);
    }
    arm();
  };

  if (o.timeoutMs > 0) {
    const since = Math.floor((o.clock.now() - o.timeoutMs) / 1000);
    const local = [...o.store.localAuthors()];
    if (local.length > 0) {
      const asks = o.store.query({ kinds: [ASK_KIND], authors: local, since }, {
        maxLimit: WATCHED_MAX,
      });
      for (const e of asks.reverse()) track(e.id, e.created_at);
    }
  }
  const unlisten = o.store.onInsert((posts) => {
    let added = false;
    const local = o.store.localAuthors();
    for (const p of posts) {
      if (p.kind === "ask" && local.has(p.author)) {
        track(p.id, p.createdAt);
        added = true;
      } else if (p.kind === "answer" && p.root !== undefined) {
        const ask = o.store.get(p.root);
        if (ask?.kind !== "ask" || !local.has(ask.author) || ask.author === p.author) continue;
        o.events({ event: "ask_answered", ask: ask.id, answer: p.id, by: npubEncode(p.author) });
      }
    }
    if (added) arm();
  });
  arm();
  return {
    stop() {
      stopped = true;
      unlisten();
      if (timer !== undefined) o.timers.clearTimer(timer);
      timer = undefined;
    },
  };
}
