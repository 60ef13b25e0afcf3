/**
 * Signature checks in parallel, off the daemon's thread: a pool of permission-less
 * workers (`src/net/verify_worker.ts`, `deno: { permissions: "none" }`), one per
 * core by default. The ingest of relay catch-ups and of the relay endpoint uses it.
 *
 * Batching keeps the cost per event low: an event goes at once to an idle worker;
 * while every worker is busy, events wait and leave together (up to
 * {@linkcode MAX_BATCH} in one message) as soon as a worker answers. A worker gets
 * plain copies (structured clone) and answers only verdicts, by position: nothing
 * it returns is an event, and nothing is cached on any object.
 *
 * If a worker cannot start or fails, its events and the ones after it are checked
 * on this thread instead (slower, never wrong).
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import type { NostrEvent } from "../posts/post.ts";
import { verifyEvent, type VerifyResult } from "../posts/verify.ts";
import type { VerifyAnswer, VerifyRequest } from "./verify_worker.ts";
import { VERIFY_WORKER_URL } from "./verify_worker_url.ts";

/** Events per message to a worker, at most. */
const MAX_BATCH = 256;

/** Checks one event's id and signature; see {@linkcode createVerifyPool}. */
export type Verifier = (event: NostrEvent) => Promise<VerifyResult>;

/** A running pool. */
export interface VerifyPool {
  /** Checks an event (a plain copy the caller owns and does not change after). */
  verify: Verifier;
  /** How many workers it runs. */
  readonly size: number;
  /** Ends the workers; events still waiting are checked on this thread. */
  close(): void;
}

interface Waiting {
  event: NostrEvent;
  resolve: (r: VerifyResult) => void;
}

interface Slot {
  worker: Worker;
  /** The batch it is checking, if any. */
  busy: Waiting[] | undefined;
}

/**
 * Starts `size` verify workers (default: the number of cores).
 *
 * Requires the `worker-options` unstable feature (deno.json) for the permission-less
 * workers, and `--allow-read` on their module (`VERIFY_WORKER_URL`; the daemon's
 * permission set grants it).
 */
export function createVerifyPool(
  size: number = navigator.hardwareConcurrency || 1,
  onFailure: (message: string) => void = () => {},
): VerifyPool {
  const slots: Slot[] = [];
  let waiting: Waiting[] = [];
  let batches = 0;
  let closed = false;

  const inline = (batch: Waiting[]) => {
    for (const w of batch) verifyEvent(w.event).then(w.resolve, () => w.resolve("bad_sig"));
  };

  const dispatch = (slot: Slot) => {
    if (waiting.length === 0 || closed) return;
    const batch = waiting.slice(0, MAX_BATCH);
    waiting = waiting.slice(batch.length);
    slot.busy = batch;
    const request: VerifyRequest = { batch: ++batches, events: batch.map((w) => w.event) };
    slot.worker.postMessage(request);
  };

  const drop = (slot: Slot, why: string) => {
    const i = slots.indexOf(slot);
    if (i < 0) return;
    onFailure(why);
    slots.splice(i, 1);
    slot.worker.terminate();
    if (slot.busy) inline(slot.busy);
    slot.busy = undefined;
    if (slots.length === 0) {
      inline(waiting);
      waiting = [];
    }
  };

  for (let i = 0; i < Math.max(1, size); i++) {
    let worker: Worker;
    try {
      worker = new Worker(VERIFY_WORKER_URL, {
        type: "module",
        name: "verify",
        deno: { permissions: "none" },
      });
    } catch (err) {
      onFailure(`cannot start a verify worker: ${errorMessage(err)}`);
      break;
    }
    const slot: Slot = { worker, busy: undefined };
    worker.onmessage = (e: MessageEvent<VerifyAnswer>) => {
      const batch = slot.busy;
      slot.busy = undefined;
      if (batch) batch.forEach((w, j) => w.resolve(e.data.results[j] ?? "bad_sig"));
      dispatch(slot);
    };
    worker.onerror = (e) => {
      e.preventDefault();
      drop(slot, `a verify worker failed: ${e.message}`);
    };
    worker.onmessageerror = () => drop(slot, "a verify worker sent an unreadable answer");
    slots.push(slot);
  }

  return {
    size: slots.length,
    verify(event) {
      if (closed || slots.length === 0) return verifyEvent(event);
      return new Promise((resolve) => {
        waiting.push({ event, resolve });
        const idle = slots.find((s) => !s.busy);
        if (idle) dispatch(idle);
      });
    },
    close() {
      closed = true;
      for (const s of slots.splice(0)) {
        s.worker.terminate();
        if (s.busy) inline(s.busy);
      }
      inline(waiting);
      waiting = [];
    },
  };
}
