/**
 * Worker: checks event ids and signatures for the verify pool (src/net/verify_pool.ts).
 * It holds no permission at all: it gets plain copies of events and answers only
 * verdicts, in order. @module
 */
import { verifyEvent, type VerifyResult } from "../posts/verify.ts";
import type { NostrEvent } from "../posts/post.ts";

/** A batch to check. */
export interface VerifyRequest {
  batch: number;
  events: NostrEvent[];
}

/** The verdicts of one batch, in the order of its events. */
export interface VerifyAnswer {
  batch: number;
  results: VerifyResult[];
}

const self = globalThis as unknown as {
  onmessage: (e: MessageEvent<VerifyRequest>) => void;
  postMessage: (a: VerifyAnswer) => void;
};

self.onmessage = async (e) => {
  const results: VerifyResult[] = [];
  for (const event of e.data.events) results.push(await verifyEvent(event));
  self.postMessage({ batch: e.data.batch, results });
};
