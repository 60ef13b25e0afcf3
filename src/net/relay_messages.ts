/**
 * What a client's message to the relay endpoint means, as NIP-01 reads it: a
 * message becomes an EVENT, a REQ or a CLOSE, or the NOTICE that says why it is
 * unreadable; a REQ is checked against the caps before anything is read for it; an
 * ingest result becomes its `OK` line. Kept apart from the connection
 * (`relay_connection.ts`), which holds the state these rules are asked about, so the
 * wire rules read in one place.
 *
 * @module
 */

import type { Filter } from "nostr-tools/filter";
import { StoreError } from "../errors.ts";
import { MAX_FILTER_VALUES } from "../store/limits.ts";
import type { Store } from "../store/store.ts";
import type { IngestResult } from "./ingest.ts";
import { type Limits, MAX_ANSWERS, MAX_MESSAGE_CHARS, MAX_SUB_ID_CHARS } from "./relay_caps.ts";

/** A client's message, read. */
export type ClientMessage =
  | { type: "EVENT"; event: unknown }
  | { type: "REQ"; subId: unknown; filters: unknown[] }
  | { type: "CLOSE"; subId: unknown }
  /** NIP-42: the answer to the endpoint's challenge (relay_auth_gate.ts judges it). */
  | { type: "AUTH"; event: unknown }
  /** Not a message this endpoint reads: `notice` says why. */
  | { type: "unreadable"; notice: string };

/** Reads one incoming WebSocket message. */
export function readMessage(data: unknown): ClientMessage {
  const unreadable = (notice: string): ClientMessage => ({ type: "unreadable", notice });
  if (typeof data !== "string") {
    return unreadable("invalid: binary messages are not supported; send JSON text");
  }
  if (data.length > MAX_MESSAGE_CHARS) {
    return unreadable(`invalid: message too large (over ${MAX_MESSAGE_CHARS} characters)`);
  }
  let msg: unknown;
  try {
    msg = JSON.parse(data);
  } catch {
    return unreadable("invalid: could not parse the message as JSON");
  }
  if (!Array.isArray(msg) || typeof msg[0] !== "string") {
    return unreadable('invalid: a message is a JSON array such as ["REQ", id, filter]');
  }
  switch (msg[0]) {
    case "EVENT":
      return { type: "EVENT", event: msg[1] };
    case "REQ":
      return { type: "REQ", subId: msg[1], filters: msg.slice(2) };
    case "CLOSE":
      return { type: "CLOSE", subId: msg[1] };
    case "AUTH":
      return { type: "AUTH", event: msg[1] };
    default:
      return unreadable(`unsupported: ${String(msg[0]).slice(0, 20)} messages`);
  }
}

/** What the connection that got a REQ holds now, as far as the caps ask. */
export interface ReqState {
  /** Whether `subId` is open already (a REQ with its id replaces it). */
  has(subId: string): boolean;
  /** Open subscriptions. */
  subscriptions: number;
  /** Stored answers not yet fully written. */
  answers: number;
  /** Bytes held for the client (see `Connection.buffered`). */
  buffered: number;
}

/** A REQ as the client sent it: its fields not yet checked. */
export interface ReqMessage {
  subId: unknown;
  filters: unknown[];
}

/** A REQ as the endpoint answers it. */
export type Req =
  /** No usable subscription id: answered with this NOTICE. */
  | { notice: string }
  /** Refused: answered with `CLOSED` and this reason (an open one of its id closes). */
  | { subId: string; closed: string }
  | {
    subId: string;
    /** The filters the stored answer runs, one per filter of the REQ. */
    queried: Filter[];
    /** Whether each of `queried` can match anything stored (long tag names are not indexed). */
    indexed: boolean[];
    /** The filters new events are matched against: those that can match. */
    live: Filter[];
  };

/**
 * Checks a REQ against the caps and the store's filter rules, in the order its
 * refusals are reported: the id, the number of filters, open subscriptions, answers
 * waiting, then each filter.
 */
export function readReq(msg: ReqMessage, state: ReqState, store: Store, limits: Limits): Req {
  const { subId, filters: rawFilters } = msg;
  if (typeof subId !== "string" || subId === "" || subId.length > MAX_SUB_ID_CHARS) {
    return { notice: `invalid: a subscription id is a string of 1–${MAX_SUB_ID_CHARS} characters` };
  }
  const closed = (reason: string): Req => ({ subId, closed: reason });
  if (rawFilters.length === 0 || rawFilters.length > limits.maxFilters) {
    return closed(`invalid: give 1–${limits.maxFilters} filters`);
  }
  if (!state.has(subId) && state.subscriptions >= limits.maxSubscriptions) {
    return closed(
      `rate-limited: at most ${limits.maxSubscriptions} subscriptions; CLOSE one first`,
    );
  }
  if (state.answers >= MAX_ANSWERS || state.buffered > limits.maxQueue) {
    return closed("rate-limited: too many answers waiting to be read; read them first");
  }
  const queried: Filter[] = [];
  const indexed: boolean[] = [];
  const live: Filter[] = [];
  // Each value of a list is an index walk of its own (src/store/filter_sql.ts): the
  // store's cap per list holds for the whole REQ, so one REQ stays a few ms of work.
  let values = 0;
  for (const f of rawFilters) {
    if (typeof f !== "object" || f === null || Array.isArray(f)) {
      return closed("invalid: a filter is a JSON object");
    }
    const filter = f as Filter;
    for (const [key, v] of Object.entries(filter)) {
      if (Array.isArray(v) && key !== "kinds") values += v.length;
    }
    if (values > MAX_FILTER_VALUES) {
      return closed(
        `invalid: at most ${MAX_FILTER_VALUES} ids, authors and tag values in one REQ, all filters together; split it over several REQs`,
      );
    }
    if (filter.search !== undefined) return closed("unsupported: search (NIP-50)");
    const limit = filter.limit;
    if (limit !== undefined && (typeof limit !== "number" || !(limit >= 0))) {
      return closed("invalid: Filter field limit must be a number ≥ 0");
    }
    try {
      // Checks the filter's shape without reading anything.
      store.query({ ...filter, limit: 0 });
    } catch (err) {
      if (err instanceof StoreError && err.code === "store.bad_filter") {
        return closed(`invalid: ${err.message}`);
      }
      throw err;
    }
    queried.push(filter);
    // Tags with longer names are not indexed: such a filter matches nothing.
    const matches = !Object.keys(filter).some((k) => k.startsWith("#") && k.length !== 2);
    indexed.push(matches);
    if (matches) live.push(filter);
  }
  return { subId, queried, indexed, live };
}

/** The id an `OK` answers for an EVENT's `input`; undefined when it has none to echo. */
export function okIdOf(input: unknown): string | undefined {
  const rawId = (input as { id?: unknown } | null)?.id;
  return typeof rawId === "string" ? rawId.slice(0, 64) : undefined;
}

/** The answer to an EVENT once ingest has judged it: `OK`, or a NOTICE when it had no id. */
export function ingestAnswer(okId: string | undefined, r: IngestResult): unknown[] {
  const reason = r.ok
    ? (r.duplicate ? "duplicate: already have this event" : "")
    : r.code === "store"
    ? "error: could not store the event; try again later"
    // NIP-01 prefixes a sender acts on: try the presence later; drop it, a newer one is here.
    : r.code === "too_frequent" || r.code === "too_many_authors"
    ? `rate-limited: ${r.reason} (${r.code})`
    : r.code === "superseded"
    ? `duplicate: ${r.reason} (${r.code})`
    : `invalid: ${r.reason} (${r.code})`;
  return okId === undefined ? ["NOTICE", reason] : ["OK", okId, r.ok, reason];
}
