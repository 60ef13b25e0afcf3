/**
 * The routing table of the wake rules (docs/decisions/runner.md, "Routing"): which asks wake
 * the agent by `to`, caps and `agent.open_asks`, with the author settings on top. The named
 * tests are each one rule, the case that woke the agent before routing existed; the last test
 * walks every combination against the table as docs/runner.md states it.
 */

import assert from "node:assert/strict";
import { classifyPost, normalizeCaps, type WakeContext } from "../../src/runner/wake_rules.ts";
import { reloadPending, savePending } from "../../src/runner/pending.ts";
import { AGENT, BOB, CAROL, FakeStore, MemoryLog, PERSON } from "./fakes.ts";

function ctx(store: FakeStore, over: Partial<WakeContext> = {}): WakeContext {
  return {
    agentKey: AGENT,
    localAuthors: () => new Set([AGENT, PERSON]),
    ignoreLocal: false,
    allow: new Set(),
    caps: new Set(["rust", "sql"]),
    capsMatch: "any",
    openAsks: true,
    get: (id) => store.get(id),
    ...over,
  };
}

Deno.test("an ask addressed to another agent does not wake this one, and is not a skip", () => {
  const s = new FakeStore();
  const d = classifyPost(s.add({ author: BOB, kind: "ask", to: [CAROL] }), ctx(s));
  assert.equal(d.action, "ignore");
  assert.match(d.reason, /addressed to other agents/);
  assert.equal("setting" in d, false);
});

Deno.test("an ask addressed to the agent wakes it, whatever its caps and agent.open_asks", () => {
  const s = new FakeStore();
  const ask = s.add({ author: BOB, kind: "ask", to: [CAROL, AGENT], caps: ["cobol"] });
  const d = classifyPost(ask, ctx(s, { caps: new Set(), openAsks: false }));
  assert.equal(d.action, "wake");
  assert.match(d.reason, /addressed to the agent/);
});

Deno.test("to beats caps: an ask to another agent with the agent's caps does not wake it", () => {
  const s = new FakeStore();
  const d = classifyPost(s.add({ author: BOB, kind: "ask", to: [CAROL], caps: ["rust"] }), ctx(s));
  assert.equal(d.action, "ignore");
});

Deno.test("an ask with caps the agent does not hold does not wake it", () => {
  const s = new FakeStore();
  const d = classifyPost(s.add({ author: BOB, kind: "ask", caps: ["cobol"] }), ctx(s));
  assert.equal(d.action, "ignore");
  assert.match(d.reason, /agent\.caps holds none of them \(agent\.caps_match = any\)/);
  // A remote author's ask is routine in a network: not a skip to report.
  assert.equal("setting" in d, false);
});

Deno.test("caps_match any: one held cap wakes the agent; all: every cap must be held", () => {
  const s = new FakeStore();
  const ask = s.add({ author: BOB, kind: "ask", caps: ["rust", "go"] });
  const any = classifyPost(ask, ctx(s));
  assert.equal(any.action, "wake");
  assert.match(any.reason, /for caps rust$/);
  const all = classifyPost(ask, ctx(s, { capsMatch: "all" }));
  assert.equal(all.action, "ignore");
  assert.match(all.reason, /holds not all of them \(agent\.caps_match = all\)/);
  const held = classifyPost(s.add({ author: BOB, kind: "ask", caps: ["sql", "rust"] }), {
    ...ctx(s, { capsMatch: "all" }),
  });
  assert.equal(held.action, "wake");
});

Deno.test("an agent with no caps never wakes for a cap ask", () => {
  const s = new FakeStore();
  for (const capsMatch of ["any", "all"] as const) {
    const d = classifyPost(
      s.add({ author: BOB, kind: "ask", caps: ["rust"] }),
      ctx(s, { caps: new Set(), capsMatch }),
    );
    assert.equal(d.action, "ignore", capsMatch);
    assert.match(d.reason, /agent\.caps is empty/);
  }
});

Deno.test("agent.open_asks = false: an open ask does not wake the agent; a local author's is a skip", () => {
  const s = new FakeStore();
  const remote = classifyPost(s.add({ author: BOB, kind: "ask" }), ctx(s, { openAsks: false }));
  assert.equal(remote.action, "ignore");
  assert.equal("setting" in remote, false);
  const local = classifyPost(s.add({ author: PERSON, kind: "ask" }), ctx(s, { openAsks: false }));
  assert.equal(local.action, "ignore");
  assert.equal(local.action === "ignore" && local.setting, "agent.open_asks");
  assert.match(local.reason, /agent\.open_asks = false/);
});

Deno.test("a local author's cap ask that agent.caps keeps out is a skip naming agent.caps", () => {
  const s = new FakeStore();
  const d = classifyPost(s.add({ author: PERSON, kind: "ask", caps: ["cobol"] }), ctx(s));
  assert.equal(d.action === "ignore" && d.setting, "agent.caps");
  // An ask addressed elsewhere is the person's choice: never a skip.
  const to = classifyPost(s.add({ author: PERSON, kind: "ask", to: [BOB] }), ctx(s));
  assert.equal(to.action, "ignore");
  assert.equal("setting" in to, false);
});

Deno.test("replies to the agent's posts wake it as before, whatever open_asks and caps say", () => {
  const s = new FakeStore();
  const ask = s.add({ author: AGENT, kind: "ask", caps: ["cobol"] });
  const answer = s.reply(ask, BOB, "answer");
  const d = classifyPost(answer, ctx(s, { openAsks: false, caps: new Set() }));
  assert.equal(d.action, "wake");
});

Deno.test("agent.allow and agent.ignore_local still apply to an ask addressed to the agent", () => {
  const s = new FakeStore();
  const fromBob = s.add({ author: BOB, kind: "ask", to: [AGENT] });
  const d = classifyPost(fromBob, ctx(s, { allow: new Set([CAROL]) }));
  assert.equal(d.action === "ignore" && d.setting, "agent.allow");
  const local = s.add({ author: PERSON, kind: "ask", to: [AGENT] });
  const l = classifyPost(local, ctx(s, { ignoreLocal: true }));
  assert.equal(l.action === "ignore" && l.setting, "agent.ignore_local");
});

Deno.test("agent.caps are compared in lower case and without a cap: prefix", () => {
  assert.deepEqual([...normalizeCaps([" Rust ", "cap:SQL", ""])], ["rust", "sql"]);
});

Deno.test("a saved queued ask is classified again at load: turning open_asks off drops it", () => {
  const s = new FakeStore();
  const log = new MemoryLog();
  const open = s.add({ author: BOB, kind: "ask" });
  const mine = s.add({ author: BOB, kind: "ask", to: [AGENT] });
  savePending(s, { events: [open.id, mine.id], feedback: [] }, log);
  const before = reloadPending({ store: s, log, wake: ctx(s), agentKey: AGENT });
  assert.deepEqual(before.events.map((e) => e.post.id), [open.id, mine.id]);
  const after = reloadPending({
    store: s,
    log,
    wake: ctx(s, { openAsks: false }),
    agentKey: AGENT,
  });
  assert.deepEqual(after.events.map((e) => e.post.id), [mine.id]);
});

// ---- every combination ------------------------------------------------------

type To = "me" | "other" | "none";
/** The ask's caps against the agent's `agent.caps` = {rust, sql} (or none for `agentNone`). */
type Caps = "none" | "oneOfTwo" | "allHeld" | "notHeld" | "agentNone";
const ASK_CAPS: Record<Caps, string[]> = {
  none: [],
  oneOfTwo: ["rust", "go"],
  allHeld: ["rust", "sql"],
  notHeld: ["go"],
  agentNone: ["rust"],
};
type Allow = "anyone" | "listed" | "unlisted";

/** docs/runner.md's table, written out case by case: true when the ask should wake the agent. */
function expected(
  c: { to: To; caps: Caps; match: "any" | "all"; open: boolean; allow: Allow },
): boolean {
  if (c.allow === "unlisted") return false;
  if (c.to === "me") return true;
  if (c.to === "other") return false;
  if (c.caps === "none") return c.open;
  if (c.caps === "agentNone" || c.caps === "notHeld") return false;
  if (c.caps === "oneOfTwo") return c.match === "any";
  return true; // allHeld
}

Deno.test("the routing table: every combination of to, caps, caps_match, open_asks, author and agent.allow", () => {
  let cases = 0;
  let woke = 0;
  for (const to of ["me", "other", "none"] as const) {
    for (const caps of Object.keys(ASK_CAPS) as Caps[]) {
      for (const match of ["any", "all"] as const) {
        for (const open of [true, false]) {
          for (const author of [BOB, PERSON]) {
            for (const allow of ["anyone", "listed", "unlisted"] as const) {
              const s = new FakeStore();
              const ask = s.add({
                author,
                kind: "ask",
                to: to === "me" ? [AGENT] : to === "other" ? [CAROL] : [],
                caps: ASK_CAPS[caps],
              });
              const d = classifyPost(
                ask,
                ctx(s, {
                  caps: caps === "agentNone" ? new Set() : new Set(["rust", "sql"]),
                  capsMatch: match,
                  openAsks: open,
                  allow: allow === "anyone"
                    ? new Set()
                    : new Set(allow === "listed" ? [author] : [CAROL]),
                }),
              );
              const want = expected({ to, caps, match, open, allow });
              const name = JSON.stringify({ to, caps, match, open, author, allow, d });
              assert.equal(d.action, want ? "wake" : "ignore", name);
              // A skip is reported only for a setting a person must see: never for routing elsewhere.
              if (d.action === "ignore" && "setting" in d) {
                const routedAway = to === "other" || (author === BOB && allow !== "unlisted");
                assert.equal(routedAway, false, name);
              }
              cases++;
              if (want) woke++;
            }
          }
        }
      }
    }
  }
  assert.equal(cases, 3 * 5 * 2 * 2 * 2 * 3);
  assert.ok(woke > 0 && woke < cases);
});
