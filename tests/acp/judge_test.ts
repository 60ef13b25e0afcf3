import assert from "node:assert/strict";
import {
  answerPermission,
  decidedByPerson,
  type JudgedRequest,
  judgePermission,
} from "../../src/acp/judge.ts";
import { makePolicy } from "../../src/acp/policy.ts";

const POLICY = makePolicy(["claude/execute(npm test)"], [], "/data", { foldCase: false });
const WT = "/work/trees/app";

function request(kind: string, locations: string[], rawInput?: unknown): JudgedRequest {
  return { harness: "claude", kind, locations, worktree: WT, rawInput };
}

Deno.test("what the policy decides is answered now, whatever is held", () => {
  const grant = { kind: "delete", locations: [`${WT}/a`], approved: true };
  assert.deepEqual(judgePermission(POLICY, request("read", [`${WT}/a`]), { canPark: true }), {
    then: "answer",
    verdict: "allow",
    reason: "claude/read is read-only inside the worktree",
    grantUsed: false,
  });
  const del = judgePermission(POLICY, request("delete", [`${WT}/a`]), { grant, canPark: true });
  assert.equal(del.then, "answer");
  assert.equal(del.then === "answer" && del.verdict, "deny");
  assert.equal(del.then === "answer" && del.grantUsed, false);
});

Deno.test("an ask parks when review is on, and is refused when it is off", () => {
  const edit = request("edit", [`${WT}/src/a.ts`]);
  const reason = "claude/edit is gated: it needs a rule or a person's approval";
  assert.deepEqual(judgePermission(POLICY, edit, { canPark: true }), { then: "park", reason });
  assert.deepEqual(judgePermission(POLICY, edit, { canPark: false }), {
    then: "answer",
    verdict: "ask",
    reason: `${reason}; agent.review is off, so it was refused`,
    grantUsed: false,
  });
});

Deno.test("a person's carried decision answers the same request once, and no other", () => {
  const edit = request("edit", [`${WT}/src/a.ts`], { path: "src/a.ts" });
  const approved = { kind: "edit", locations: [`${WT}/src/a.ts`], rawInput: { path: "src/a.ts" } };
  const yes = judgePermission(POLICY, edit, {
    grant: { ...approved, approved: true },
    canPark: false,
  });
  assert.deepEqual(yes, {
    then: "answer",
    verdict: "allow",
    reason: "claude/edit is gated: it needs a rule or a person's approval; " +
      "a person approved it while it waited",
    grantUsed: true,
  });
  const no = judgePermission(POLICY, edit, {
    grant: { ...approved, approved: false },
    canPark: true,
  });
  assert.equal(no.then === "answer" && no.verdict, "deny");
  assert.equal(no.then === "answer" && no.grantUsed, true);
  // Another file: the grant is not this request's, so it parks as usual.
  const other = request("edit", [`${WT}/src/b.ts`], { path: "src/b.ts" });
  assert.equal(
    judgePermission(POLICY, other, { grant: { ...approved, approved: true }, canPark: true }).then,
    "park",
  );
});

Deno.test("a person's decision on a parked request becomes its verdict", () => {
  assert.deepEqual(decidedByPerson("gated", true), {
    verdict: "allow",
    reason: "gated; a person approved it",
  });
  assert.deepEqual(decidedByPerson("gated", false), {
    verdict: "deny",
    reason: "gated; a person rejected it",
  });
});

Deno.test("only allow_once allows; anything else is listed as refused", () => {
  const all = [
    { optionId: "a1", kind: "allow_once" },
    { optionId: "aa", kind: "allow_always" },
    { optionId: "r1", kind: "reject_once" },
  ];
  assert.deepEqual(answerPermission("allow", "ok", all), {
    optionId: "a1",
    answer: "allow_once",
    reason: "ok",
    refused: false,
  });
  assert.deepEqual(answerPermission("deny", "no", all), {
    optionId: "r1",
    answer: "reject_once",
    reason: "no",
    refused: true,
  });
  assert.deepEqual(answerPermission("ask", "refused", all).answer, "reject_once");
  // An agent that offers only "always": never chosen; nothing fits, so cancelled.
  assert.deepEqual(answerPermission("allow", "ok", [{ optionId: "aa", kind: "allow_always" }]), {
    answer: "cancelled",
    reason: "ok, but the agent offered no allow_once option",
    refused: true,
  });
});
