/**
 * The catch-up's paging arithmetic (relay_sync.ts runs it; its module doc says
 * why it pages backwards, one filter per REQ, with an inclusive `until`): what a
 * page counts, and what to ask for once it ended. Pure, so the subtle part —
 * one-second resolution, relays that cap a page below the limit — is decided in
 * one place.
 *
 * @module
 */

import type { Filter } from "nostr-tools/filter";

/** One filter to catch up on; `since` undefined: its whole history. */
export interface CatchUp {
  filter: Filter;
  since: number | undefined;
  /** One of the filters a live change added: forgotten once caught up. */
  added: boolean;
}

/** One page of a catch-up in flight. */
export interface Page {
  subId: string;
  catchUp: CatchUp;
  since?: number;
  until?: number;
  /** Valid events inside the filter so far. */
  received: number;
  /** Of those, events this catch-up had not seen. */
  fresh: number;
  oldest: number;
  /** The ids of `oldest`'s second, the next page's boundary. */
  oldestIds: Set<string>;
  /** Ingests of this page still running, and who waits for them to end. */
  ingesting: number;
  drained: (() => void) | undefined;
  ended: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
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
    oldestIds: new Set(),
    ingesting: 0,
    drained: undefined,
    ended: false,
    timer: undefined,
  };
}

/**
 * Counts a stored event of `page` (`seen`: the boundary second's ids the
 * catch-up already had). Events outside the page's window are not counted.
 */
export function countInPage(
  page: Page,
  event: { id: string; created_at: number },
  seen: ReadonlySet<string>,
): void {
  const at = event.created_at;
  if (page.since !== undefined && at < page.since) return;
  if (page.until !== undefined && at > page.until) return;
  page.received++;
  if (at !== page.until || !seen.has(event.id)) page.fresh++;
  if (at < page.oldest) {
    page.oldest = at;
    page.oldestIds = new Set();
  }
  if (at === page.oldest) page.oldestIds.add(event.id);
}

/** What follows an ended page, and the catch-up's state for it. */
export interface AfterPage {
  /** The next page's `until`; undefined: this filter is caught up. */
  until?: number;
  /** Set when a full second was skipped (more events share it than the relay returns). */
  skipped?: number;
  /** How many times in a row the boundary second was asked again (0 or 1). */
  stuck: number;
  seen: Set<string>;
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
      seen: sameSecond ? new Set([...state.seen, ...page.oldestIds]) : page.oldestIds,
    };
  }
  if ((page.fresh > 0 || page.received >= limit) && page.until !== undefined) {
    // A full page of one second, all seen (or still new ones after a second look):
    // skip the second rather than loop on it.
    return { until: page.until - 1, skipped: page.until, stuck: 0, seen: new Set() };
  }
  return { stuck: 0, seen: new Set() };
}
