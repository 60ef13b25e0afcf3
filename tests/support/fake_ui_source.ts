/**
 * A dashboard source (src/ui/source.ts `UiSource`) with fixed data that
 * records every operation asked of it, for the tests that serve the real
 * handler without a daemon (HTTP security, the works pages in a browser) and
 * for the works pages of bench/ui_pages.ts.
 *
 * @module
 */

import type { UiSource } from "../../src/ui/source.ts";
import type { NodeStatus } from "../../src/contracts/views.ts";
import type { HeldDraft } from "../../src/node/review_queue.ts";
import type { WorkDetail } from "../../src/contracts/works.ts";
import { WatsError } from "../../src/errors.ts";
import { sampleWork, summaryOf } from "./works_fixtures.ts";

export const STATUS: NodeStatus = {
  node: "n1",
  profile: { name: "alice", npub: "npub1alice" },
  relays: [],
  agent: { runtime: "claude", profile: "helper" },
  pendingDrafts: 1,
  safetyNotices: [],
  halted: null,
  budget: null,
  storedPosts: 0,
};

export const DRAFT: HeldDraft = {
  id: "d1",
  kind: "answer",
  text: "held text",
  profile: "helper",
  createdAt: 0,
};

/** A source that records what was asked of it; its works are `works` (one sample work by default). */
export function recordingSource(
  works: WorkDetail[] = [sampleWork()],
): UiSource & { calls: string[] } {
  const calls: string[] = [];
  const op = (name: string) => (...args: unknown[]) => {
    calls.push(`${name} ${JSON.stringify(args)}`);
    return Promise.resolve(`${name} done`);
  };
  return {
    calls,
    status: () => Promise.resolve(STATUS),
    posts: () => Promise.resolve({ posts: [], newest: 0 }),
    search: () => Promise.resolve([]),
    thread: (id) => Promise.resolve({ root: id, posts: [], cut: false }),
    runs: () => [],
    transcriptIds: () => [],
    transcript: () => [],
    drafts: () => [DRAFT],
    approve: op("approve"),
    reject: op("reject"),
    halt: op("halt"),
    resume: op("resume"),
    works: () => Promise.resolve({ works: works.map(summaryOf) }),
    work: (id) => {
      const w = works.find((w) => w.id === id);
      return w
        ? Promise.resolve(w)
        : Promise.reject(new WatsError("daemon.refused", `the daemon refused: no work ${id}`));
    },
    workMerge: op("workMerge"),
    workPush: op("workPush"),
    workSend: op("workSend"),
    workDiscard: op("workDiscard"),
    workNew: op("workNew"),
    allowRule: op("allowRule"),
    spend: () => [],
    post: (kind, args) => {
      calls.push(`post ${kind} ${JSON.stringify(args)}`);
      return Promise.resolve(
        `Posted ${kind} ${"c".repeat(64)}. It starts a new thread with this id.`,
      );
    },
  };
}
