import assert from "node:assert/strict";
import { heldCounts } from "../../src/node/review_queue.ts";
import type { PendingDraft } from "../../src/contracts/views.ts";
import { formatStatus } from "../../src/mcp/format.ts";
import { nodeStatus } from "../support/node_status.ts";

Deno.test("a coding agent's permission request is counted as a request, never as a held draft, and wats status says both", () => {
  const draft: PendingDraft = {
    id: "d",
    kind: "answer",
    text: "t",
    profile: "helper",
    createdAt: 0,
  };
  const request: PendingDraft = {
    ...draft,
    id: "p",
    kind: "permission",
    permission: {
      request_id: "c:t",
      harness: "claude",
      kind: "execute",
      locations: [],
      worktree: "/w",
      checkout: "app",
      work: "x",
      agent: "helper",
      thread: "_",
      task: "t",
      reason: "gated",
    },
  };
  const counts = heldCounts([draft, request, { ...request, id: "p2" }]);
  assert.deepEqual(counts, { pendingDrafts: 1, pendingRequests: 2 });
  const text = formatStatus({ ...nodeStatus(), ...counts });
  assert.match(text, /drafts held for review: 1; permission requests waiting: 2/);
});
