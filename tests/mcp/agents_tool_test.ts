/**
 * The `agents` tool and the reach line of `ask` (docs/mcp.md), through the real SDK
 * client against the in-memory node.
 *
 * @module
 */

import assert from "node:assert/strict";
import { npubEncode } from "nostr-tools/nip19";
import type { KnownAgent } from "../../src/contracts/views.ts";
import { call, connect, interactive, runner } from "./connect.ts";
import { FakeService } from "./fake_service.ts";

const T = 1_800_000_000_000;

function agent(over: Partial<KnownAgent> & { key: string }): KnownAgent {
  const { key, ...rest } = over;
  return {
    npub: npubEncode(key),
    caps: [],
    state: "running",
    lastSeen: T,
    stale: false,
    reachable: true,
    local: false,
    ...rest,
  };
}

const RUSTY = "1".repeat(64);
const GOPHER = "2".repeat(64);
const HALTED = "3".repeat(64);

function service(): FakeService {
  const svc = new FakeService();
  svc.knownAgents = [
    agent({ key: RUSTY, caps: ["rust"], title: "Rust reviewer" }),
    agent({ key: GOPHER, caps: ["go"], stale: true, reachable: false }),
    agent({ key: HALTED, caps: ["rust", "go"], state: "halted", reachable: false }),
  ];
  return svc;
}

Deno.test("ask's result says how many known agents match its caps and how many are reachable", async () => {
  const svc = service();
  const c = await connect(svc, runner());
  const r = await call(c, "ask", { title: "Review?", text: "A borrow question", caps: ["Rust"] });
  assert.equal(r.isError, false, r.text);
  assert.match(
    r.text,
    /\n2 known agents match caps \[rust\]; 1 is reachable \(fresh presence, running\)\.$/,
  );
  assert.deepEqual(svc.reaches, [{ caps: ["rust"], to: [] }]);
  const open = await call(c, "ask", { title: "Anyone?", text: "An open question" });
  assert.match(open.text, /3 known agents could take an open ask; 1 is reachable/);
  await c.close();
});

Deno.test("the agents tool lists known agents by caps or key, with state, last seen and staleness", async () => {
  const svc = service();
  const c = await connect(svc, interactive());
  const all = await call(c, "agents");
  assert.equal(all.isError, false, all.text);
  const lines = all.text.split("\n");
  assert.equal(
    lines[0],
    "3 known agents could take an open ask; 1 is reachable (fresh presence, running).",
  );
  assert.equal(
    lines[1],
    `- ${
      npubEncode(RUSTY)
    } · "Rust reviewer" · caps: rust · running · last seen 2027-01-15T08:00:00Z`,
  );
  assert.match(lines[2]!, /caps: go · running · last seen .* \(stale\)$/);
  assert.match(lines[3]!, /caps: rust, go · halted ·/);

  const rust = await call(c, "agents", { caps: ["rust"] });
  assert.equal(rust.text.split("\n").length, 3);
  assert.doesNotMatch(rust.text, new RegExp(npubEncode(GOPHER)));

  const byKey = await call(c, "agents", { to: [npubEncode(GOPHER)] });
  assert.equal(byKey.text.split("\n").filter((l) => l.startsWith("- ")).length, 1);
  assert.match(byKey.text, new RegExp(npubEncode(GOPHER)));

  const none = await call(c, "agents", { caps: ["cobol"] });
  assert.match(
    none.text,
    /^No known agent fits\. 0 known agents match caps \[cobol\]; 0 are reachable/,
  );
  await c.close();
});

Deno.test("the agents tool refuses a key or cap it cannot read, saying what to give", async () => {
  const c = await connect(service(), interactive());
  const badKey = await call(c, "agents", { to: ["bob"] });
  assert.equal(badKey.isError, true);
  assert.match(
    badKey.text,
    /"bob" is not an agent key: give an npub \(npub1…\) or 64 hex characters/,
  );
  const badCap = await call(c, "agents", { caps: ["no spaces"] });
  assert.equal(badCap.isError, true);
  assert.match(badCap.text, /cap "no spaces" is not a capability name/);
  const tooMany = await call(c, "agents", { caps: Array.from({ length: 17 }, (_, i) => `c${i}`) });
  assert.equal(tooMany.isError, true);
  assert.match(tooMany.text, /17 caps given: name at most 16/);
  await c.close();
});
