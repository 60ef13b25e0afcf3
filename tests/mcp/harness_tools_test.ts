import assert from "node:assert/strict";
import type { CallArgs, CallOrigin, CallResult } from "../../src/contracts/coding_agents.ts";
import { CallError } from "../../src/acp/calls.ts";
import type { CodingAgents } from "../../src/contracts/coding_agents.ts";
import { call, connect, interactive, runner } from "./connect.ts";
import { FakeService } from "./fake_service.ts";

const RESULT: CallResult = {
  message: "Fixed it.",
  stop_reason: "end_turn",
  branch: "wats/alice-agent/_/fix",
  worktree: "/d/worktrees/claude/app/alice-agent/_/fix",
  head: "9c1e2f0",
  commits: [{ sha: "9c1e2f0", subject: "Fix" }],
  refused: [{ id: "c:t1", request: "claude/execute", reason: "gated" }],
  labels: [],
  usd: 0.01,
};

type Seen = { harness: string; origin: CallOrigin; args: CallArgs; signal?: AbortSignal };

function agents(seen: Seen[]): CodingAgents {
  return {
    harnessNames: () => ["claude"],
    checkoutNames: () => ["app"],
    call: (harness, origin, args, control) => {
      seen.push({ harness, origin, args, ...(control?.signal ? { signal: control.signal } : {}) });
      if (args.checkout !== "app") {
        return Promise.reject(
          new CallError("acp.no_checkout", `checkout "${args.checkout}" is not one`),
        );
      }
      return Promise.resolve(args.work === "web" ? { ...RESULT, labels: ["outside"] } : RESULT);
    },
  };
}

Deno.test("the harness tool passes task, checkout and work, and returns the call's result", async () => {
  const seen: Seen[] = [];
  const svc = Object.assign(new FakeService(), { codingAgents: agents(seen) });
  const c = await connect(svc, runner("run-7"));
  const r = await call(c, "claude", { task: "fix the login", checkout: "app", work: "fix" });
  assert.equal(r.isError, false, r.text);
  const [note, ...json] = r.text.split("\n");
  assert.match(note!, /Result of the coding agent claude/);
  assert.deepEqual(JSON.parse(json.join("\n")), RESULT);
  assert.equal(seen[0]!.harness, "claude");
  assert.deepEqual(seen[0]!.args, { task: "fix the login", checkout: "app", work: "fix" });
  assert.equal(seen[0]!.origin.agent, "alice-agent");
  assert.equal(seen[0]!.origin.thread, "_");
  assert.match(seen[0]!.origin.callId, /^run-7\.acp_[0-9a-f]{12}$/);
  // The run is carried as itself, not read back out of the call id.
  assert.equal(seen[0]!.origin.run, "run-7");
  // The MCP request's signal reaches the layer: a cancelled call cancels the prompt.
  assert.ok(seen[0]!.signal instanceof AbortSignal);

  // After a fetch the result says it is from outside.
  const web = await call(c, "claude", { task: "read the docs", checkout: "app", work: "web" });
  assert.match(web.text, /^The coding agent claude fetched from the network .*label: outside/);
  await c.close();
});

Deno.test("a call that cannot start is an error result the model can act on", async () => {
  const svc = Object.assign(new FakeService(), { codingAgents: agents([]) });
  const c = await connect(svc, interactive());
  const r = await call(c, "claude", { task: "x", checkout: "nope", work: "w" });
  assert.equal(r.isError, true);
  assert.equal(r.text, 'checkout "nope" is not one');
  const missing = await call(c, "claude", { task: "x" });
  assert.equal(missing.isError, true);
  assert.match(missing.text, /checkout is required: one of app/);
  await c.close();
});
