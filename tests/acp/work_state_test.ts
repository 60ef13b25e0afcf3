import assert from "node:assert/strict";
import { AcpLayer } from "../../src/acp/calls.ts";
import { IN_DOUBT, type PermissionAsk } from "../../src/contracts/coding_agents.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import {
  declinedNotice,
  noteDeclined,
  readWorkState,
  saveSession,
  takeDeclined,
} from "../../src/acp/work_state.ts";
import { workPlace } from "../../src/acp/worktrees.ts";

/** The names of a work of `alice` outside any thread, all but its work name. */
const aliceWork = { harness: "claude", checkout: "app", agent: "alice", thread: "_" };

/** A layer whose harness cannot start: a decision that tried to start it would fail. */
function layer(root: string, decided: [PermissionAsk, boolean][]): AcpLayer {
  return new AcpLayer({
    worktrees: `${root}/worktrees`,
    harnesses: {
      claude: {
        name: "claude",
        command: `${root}/no-such-agent`,
        args: [],
        env: {},
        meta: {},
        context: [],
        idle: 0,
        enabled: true,
      },
    },
    checkouts: { app: { name: "app", path: `${root}/repo`, base: "main", fetch: false } },
    allowedCheckouts: [],
    policy: makePolicy([], [], root),
    env: {},
    park: () => "unused",
    onDecided: (ask, approved) => decided.push([ask, approved]),
  });
}

function inDoubt(root: string): PermissionAsk {
  const place = workPlace(`${root}/worktrees`, { ...aliceWork, work: "notes" });
  return {
    request_id: "run-3.acp_0123456789ab",
    harness: "claude",
    kind: IN_DOUBT,
    locations: [],
    worktree: place.dir,
    checkout: "app",
    work: "notes",
    agent: "alice",
    thread: "_",
    task: "TASK-K: write the notes",
    reason: "the node stopped during this call: its state is in doubt",
  };
}

Deno.test("rejecting a call in doubt sends nothing and notes its task, once, for the next call on the work", () => {
  const root = Deno.makeTempDirSync({ prefix: "wats-declined-" });
  try {
    const ask = inDoubt(root);
    const place = workPlace(`${root}/worktrees`, { ...aliceWork, work: "notes" });
    Deno.mkdirSync(place.dir, { recursive: true });
    Deno.writeTextFileSync(place.stateFile, '{"harness":"claude","sessionId":"s-1"}\n');
    const decided: [PermissionAsk, boolean][] = [];
    const said = layer(root, decided).answer("p-1", false, ask);
    assert.equal(
      said,
      "rejected: the call in doubt on work notes is left as it is; the next call on it tells " +
        "the coding agent not to finish that task",
    );
    assert.deepEqual(decided, [[ask, false]]);
    // The session stays, so the next call continues it; the task waits to be told.
    assert.deepEqual(readWorkState(place.stateFile), {
      harness: "claude",
      sessionId: "s-1",
      declined: [{ call: "run-3.acp_0123456789ab", task: "TASK-K: write the notes" }],
    });
    assert.deepEqual(takeDeclined(place.stateFile), [
      { call: "run-3.acp_0123456789ab", task: "TASK-K: write the notes" },
    ]);
    // Told once.
    assert.deepEqual(takeDeclined(place.stateFile), []);
    assert.deepEqual(readWorkState(place.stateFile), { harness: "claude", sessionId: "s-1" });
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("rejecting a call in doubt whose worktree is gone notes nothing: the next call starts afresh", () => {
  const root = Deno.makeTempDirSync({ prefix: "wats-declined-" });
  try {
    const ask = inDoubt(root);
    const said = layer(root, []).answer("p-1", false, ask);
    assert.match(said, /its worktree is gone, so the next call starts afresh$/);
    assert.throws(() => Deno.statSync(`${ask.worktree}.acp.json`));
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("saving the session keeps declined tasks noted meanwhile; a worktree just cut drops them", () => {
  const root = Deno.makeTempDirSync({ prefix: "wats-declined-" });
  try {
    const file = `${root}/w.acp.json`;
    assert.deepEqual(readWorkState(file), {});
    assert.equal(noteDeclined(file, root, { call: "c1", task: "one" }), true);
    assert.equal(noteDeclined(file, root, { call: "c2", task: "two" }), true);
    saveSession(file, "claude", "s-2", false);
    assert.deepEqual(readWorkState(file), {
      harness: "claude",
      sessionId: "s-2",
      declined: [{ call: "c1", task: "one" }, { call: "c2", task: "two" }],
    });
    saveSession(file, "claude", "s-3", true);
    assert.deepEqual(readWorkState(file), { harness: "claude", sessionId: "s-3" });
    // A damaged file is no state: the work starts a new session.
    Deno.writeTextFileSync(file, "{not json");
    assert.deepEqual(readWorkState(file), {});
    assert.deepEqual(takeDeclined(file), []);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("the notice tells the coding agent a person declined, names the task and says not to resume it", () => {
  const one = declinedNotice([{ call: "c1", task: "TASK-K: write the notes" }]);
  assert.match(one, /^Before your task: the node restarted while you worked on the task below/);
  assert.match(one, /a person declined to let that interrupted work finish/);
  assert.match(one, /Do not resume or finish it on your own/);
  assert.match(one, /Interrupted task:\n---\nTASK-K: write the notes\n---$/);
  const two = declinedNotice([{ call: "c1", task: "one" }, { call: "c2", task: "two" }]);
  assert.match(two, /the 2 tasks below/);
  assert.match(two, /---\none\n---\n\nInterrupted task:\n---\ntwo\n---$/);
});
