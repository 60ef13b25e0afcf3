/**
 * The catch-up with one relay as a pure reducer: {@linkcode stepCatchUp} takes the
 * state and one input (a connection starting or ending, filters added, an `EVENT`
 * of a page handed to the ingest and its answer, an `EOSE`, a `CLOSED`, a page's
 * time limit) and returns the next state and what to do (send a `REQ` or a
 * `CLOSE`, start or stop the page's timer, warn about a skipped second, mark the
 * relay caught up). relay_sync.ts runs the effects; nothing here reads a clock,
 * sets a timer or touches the network, so every paging decision is tested on its
 * own (tests/net/catch_up_test.ts).
 *
 * The rules (docs/network.md, "Syncing with a relay"): one filter per REQ, paged
 * backwards from the newest event, each next page `until` the oldest `created_at`
 * of the previous one, inclusive (one-second resolution: the boundary second is
 * asked again and its ids remembered, never every id seen). A page ends at its
 * EOSE, at `limit` counted events, or at its time limit; only events the ingest
 * found valid and that lie inside the page's window count. Paging stops when a
 * page brings nothing new; a second the relay cannot return whole is skipped, as
 * is a second that keeps bringing new events after a second look.
 *
 * @module
 */

import type { Filter } from "nostr-tools/filter";
import { filterKey } from "./interest.ts";

/** Filters added while running still to catch up on, at most (the oldest are dropped). */
export const MAX_ADDED = 64;

/** One filter to catch up on; `since` undefined: its whole history. */
export interface CatchUp {
  readonly filter: Filter;
  readonly since: number | undefined;
  /** One of the filters a live change added: forgotten once caught up. */
  readonly added: boolean;
}

/** One page of a catch-up in flight. */
export interface Page {
  readonly subId: string;
  readonly catchUp: CatchUp;
  readonly since: number | undefined;
  readonly until: number | undefined;
  /** Valid events inside the filter so far. */
  readonly received: number;
  /** Of those, events this catch-up had not seen. */
  readonly fresh: number;
  readonly oldest: number;
  /** The ids of `oldest`'s second, the next page's boundary. */
  readonly oldestIds: readonly string[];
  /** Events of this page handed to the ingest whose answer has not come. */
  readonly ingesting: number;
  /** Its EOSE, limit or time limit came: it ends once `ingesting` is 0. */
  readonly ended: boolean;
}

/** A new page of `catchUp` between `since` and `until` (inclusive). */
export function newPage(
  subId: string,
  catchUp: CatchUp,
  since: number | undefined,
  until: number | undefined,
): Page {
  return {
    subId,
    catchUp,
    since,
    until,
    received: 0,
    fresh: 0,
    oldest: Infinity,
    oldestIds: [],
    ingesting: 0,
    ended: false,
  };
}

/**
 * `page` with a stored event counted (`seen`: the boundary second's ids the
 * catch-up already had). Events outside the page's window are not counted.
 */
export function countInPage(
  page: Page,
  event: { id: string; created_at: number },
  seen: ReadonlySet<string>,
): Page {
  const at = event.created_at;
  if (page.since !== undefined && at < page.since) return page;
  if (page.until !== undefined && at > page.until) return page;
  const fresh = at !== page.until || !seen.has(event.id) ? page.fresh + 1 : page.fresh;
  const oldestIds = at < page.oldest
    ? [event.id]
    : at === page.oldest
    ? [...page.oldestIds, event.id]
    : page.oldestIds;
  return {
    ...page,
    received: page.received + 1,
    fresh,
    oldest: Math.min(at, page.oldest),
    oldestIds,
  };
}

/** What follows an ended page, and the catch-up's state for it. */
export interface AfterPage {
  /** The next page's `until`; undefined: this filter is caught up. */
  until?: number;
  /** Set when a full second was skipped (more events share it than the relay returns). */
  skipped?: number;
  /** How many times in a row the boundary second was asked again (0 or 1). */
  stuck: number;
  seen: ReadonlySet<string>;
}

/**
 * Decides what to ask for after `page` ended: the next older page (its boundary
 * second again, once), skipping a second the relay cannot return whole, or
 * nothing more for this filter.
 */
export function afterPage(
  page: Page,
  state: { stuck: number; seen: ReadonlySet<string> },
  limit: number,
): AfterPage {
  const sameSecond = page.oldest === page.until;
  // New events all dated `until`: that second is asked once more, not forever.
  if (page.fresh > 0 && (!sameSecond || state.stuck === 0)) {
    return {
      until: page.oldest,
      stuck: sameSecond ? 1 : 0,
      seen: new Set(sameSecond ? [...state.seen, ...page.oldestIds] : page.oldestIds),
    };
  }
  if ((page.fresh > 0 || page.received >= limit) && page.until !== undefined) {
    // A full page of one second, all seen (or still new ones after a second look):
    // skip the second rather than loop on it.
    return { until: page.until - 1, skipped: page.until, stuck: 0, seen: new Set() };
  }
  return { stuck: 0, seen: new Set() };
}

/** The catch-up with one relay: one connection's paging, and the added filters. */
export interface CatchUpState {
  /** `limit` of each page. */
  readonly limit: number;
  /** Pages asked for so far, all connections together: page ids never repeat. */
  readonly pages: number;
  /** Filters added by a live change not caught up on yet, kept across connections. */
  readonly added: readonly Filter[];
  /** This connection's filters still to catch up on; the first is being paged. */
  readonly queue: readonly CatchUp[];
  readonly page: Page | undefined;
  /** Ids of the boundary second (the previous page's oldest), already counted. */
  readonly seen: ReadonlySet<string>;
  /** Pages in a row whose events all shared their `until` second. */
  readonly stuck: number;
  /** True once this connection's catch-up finished. */
  readonly caughtUp: boolean;
}

/** What happened, for {@linkcode stepCatchUp}. */
export type CatchUpInput =
  /** A connection opened: catch up on `filters` from `since`, and on the added ones. */
  | { type: "start"; filters: readonly Filter[]; since: number | undefined }
  /** The connection ended: nothing is being paged any more. */
  | { type: "stop" }
  /** The interest grew by `filters`; `now`: catch up on them on this connection. */
  | { type: "add"; filters: readonly Filter[]; now: boolean }
  /** An `EVENT` of the page `subId` was handed to the ingest. */
  | { type: "event"; subId: string }
  /** The ingest answered for an event of page `subId`: `event` when it was valid. */
  | { type: "stored"; subId: string; event?: { id: string; created_at: number } }
  | { type: "eose"; subId: string }
  | { type: "closed"; subId: string }
  /** The page `subId` reached its time limit. */
  | { type: "timeout"; subId: string };

/** What {@linkcode stepCatchUp} asks the connection to do, in order. */
export type CatchUpEffect =
  | { type: "req"; subId: string; filter: Filter }
  | { type: "close"; subId: string }
  /** Start the time limit of page `subId` (replacing any other). */
  | { type: "arm"; subId: string }
  /** Stop the page's time limit. */
  | { type: "disarm" }
  /** A second was skipped: more events share it than the relay returns at once. */
  | { type: "skipped"; second: number }
  /** The last filter of this connection is caught up (once per connection). */
  | { type: "caughtUp" };

/** The state and effects after one input. */
export interface CatchUpStep {
  state: CatchUpState;
  effects: CatchUpEffect[];
}

/** A catch-up before any connection, with pages of `limit` events. */
export function initialCatchUp(limit: number): CatchUpState {
  return {
    limit,
    pages: 0,
    added: [],
    queue: [],
    page: undefined,
    seen: new Set(),
    stuck: 0,
    caughtUp: false,
  };
}

/** The page `subId` when it is open (events for it are wanted), else undefined. */
export function openPage(state: CatchUpState, subId: unknown): Page | undefined {
  const page = state.page;
  return page && !page.ended && page.subId === subId ? page : undefined;
}

/** The next state after `input`, and the effects to run (see the module doc). */
export function stepCatchUp(state: CatchUpState, input: CatchUpInput): CatchUpStep {
  const effects: CatchUpEffect[] = [];
  const next = reduce(state, input, effects);
  return { state: next, effects };
}

function reduce(s: CatchUpState, input: CatchUpInput, fx: CatchUpEffect[]): CatchUpState {
  switch (input.type) {
    case "start": {
      const queue = [
        ...input.filters.map((filter) => ({ filter, since: input.since, added: false })),
        ...s.added.map((filter) => ({ filter, since: undefined, added: true })),
      ];
      const fresh = { ...s, queue, page: undefined, seen: new Set<string>(), stuck: 0 };
      return request({ ...fresh, caughtUp: false }, undefined, fx);
    }
    case "stop":
      if (s.page) fx.push({ type: "disarm" });
      return { ...s, queue: [], page: undefined, seen: new Set(), caughtUp: false };
    case "add": {
      const known = new Set(s.added.map(filterKey));
      const fresh = input.filters.filter((f) => !known.has(filterKey(f)));
      const added = [...s.added, ...fresh].slice(-MAX_ADDED);
      if (!input.now || fresh.length === 0) return { ...s, added };
      const queued = fresh.map((filter) => ({ filter, since: undefined, added: true }));
      const next = { ...s, added, queue: [...s.queue, ...queued] };
      return s.queue.length === 0 ? request(next, undefined, fx) : next;
    }
    case "event": {
      const page = openPage(s, input.subId);
      return page ? { ...s, page: { ...page, ingesting: page.ingesting + 1 } } : s;
    }
    case "stored": {
      let page = s.page;
      if (!page || page.subId !== input.subId) return s;
      if (input.event) page = countInPage(page, input.event, s.seen);
      if (!page.ended && page.received >= s.limit) page = end(page, fx);
      page = { ...page, ingesting: page.ingesting - 1 };
      const next = { ...s, page };
      return page.ended && page.ingesting === 0 ? finish(next, page, fx) : next;
    }
    case "eose":
    case "timeout": {
      const open = openPage(s, input.subId);
      if (!open) return s;
      const page = end(open, fx);
      const next = { ...s, page };
      return page.ingesting === 0 ? finish(next, page, fx) : next;
    }
    case "closed":
      if (s.page?.subId !== input.subId) return s;
      fx.push({ type: "disarm" });
      return { ...s, page: undefined };
  }
}

function end(page: Page, fx: CatchUpEffect[]): Page {
  fx.push({ type: "disarm" }, { type: "close", subId: page.subId });
  return { ...page, ended: true };
}

/** Once the ended `page`'s events are all stored: the next page, filter, or done. */
function finish(s: CatchUpState, page: Page, fx: CatchUpEffect[]): CatchUpState {
  const next = afterPage(page, s, s.limit);
  if (next.skipped !== undefined) fx.push({ type: "skipped", second: next.skipped });
  const paged = { ...s, stuck: next.stuck, seen: next.seen };
  if (next.until !== undefined) return request(paged, next.until, fx);
  // This filter is done: the next one starts from the newest event.
  const added = page.catchUp.added ? s.added.filter((f) => f !== page.catchUp.filter) : s.added;
  const rest = { ...paged, page: undefined, queue: s.queue.slice(1), added };
  if (rest.queue.length > 0) return request(rest, undefined, fx);
  if (rest.caughtUp) return rest;
  fx.push({ type: "caughtUp" });
  return { ...rest, caughtUp: true };
}

/** Asks for a page of the first filter of the queue, `until` (inclusive). */
function request(s: CatchUpState, until: number | undefined, fx: CatchUpEffect[]): CatchUpState {
  const catchUp = s.queue[0];
  if (!catchUp) return s;
  const pages = s.pages + 1;
  const subId = `wats-page-${pages}`;
  const filter: Filter = { ...catchUp.filter, limit: s.limit };
  if (catchUp.since !== undefined) filter.since = catchUp.since;
  if (until !== undefined) filter.until = until;
  fx.push({ type: "arm", subId }, { type: "req", subId, filter });
  return { ...s, pages, page: newPage(subId, catchUp, catchUp.since, until) };
}
