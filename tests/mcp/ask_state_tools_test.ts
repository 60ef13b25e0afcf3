/**
 * The sender's view of an ask through the MCP tools (docs/asks.md): the `ask` tool's result says
 * what became of it so far, the `thread` tool shows the ask's state above its posts, and `status`
 * lists the session's newest asks with theirs. The node computes the state
 * (src/node/ask_states.ts); here a fake service hands a fixed one to the real tools and formats.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { AskState, NodeStatus } from "../../src/contracts/views.ts";
import type { SessionIdentity } from "../../src/contracts/session.ts";
import { call, connect, interactive, runner } from "./connect.ts";
import { FakeService } from "./fake_service.ts";

const NPUB_X = "npub1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
const T = Date.UTC(2027, 0, 15, 10, 0, 0);

/** A fake node that knows each ask's state, as the test sets it. */
class StatefulService extends FakeService {
  /** The state `askState` answers for an ask, made from its id. */
  shape: (id: string) => Omit<AskState, "ask" | "by"> = () => waiting;
  readonly settles: Array<number | undefined> = [];

  askState(id: string, opts: { settleMs?: number } = {}): Promise<AskState | undefined> {
    this.settles.push(opts.settleMs);
    const p = this.get(id);
    if (p?.kind !== "ask") return Promise.resolve(undefined);
    return Promise.resolve({ ask: id, by: p.authorNpub, ...this.shape(id) });
  }

  override async status(session: SessionIdentity): Promise<NodeStatus> {
    const s = await super.status(session);
    const mine = this.posts.filter((p) => p.kind === "ask" && p.author === session.pubkey);
    const asks = await Promise.all(mine.map((p) => this.askState(p.id)));
    return { ...s, asks: asks.filter((a): a is AskState => a !== undefined) };
  }
}

const waiting: Omit<AskState, "ask" | "by"> = {
  local: true,
  title: "Logs",
  phase: "waiting",
  sent: { acked: 1, of: 2 },
  routing: { caps: ["rust"], to: [], matching: 2, reachable: 1 },
  answers: [],
  heldDrafts: [],
  noTakerAt: T + 3_600_000,
};

Deno.test("the ask tool's result says how many relays acknowledged it and how many agents it reaches, and waits for acknowledgements first", async () => {
  const svc = new StatefulService();
  const c = await connect(svc, interactive());
  const r = await call(c, "ask", { title: "Logs", text: "logrotate or journald?", caps: ["rust"] });
  assert.equal(r.isError, false, r.text);
  const id = svc.posts[0]!.id;
  assert.match(r.text, new RegExp(`^Posted ask ${id}\\. It starts a new thread`));
  assert.match(r.text, new RegExp(`State of ask ${id}: waiting for a taker\\.`));
  assert.match(
    r.text,
    /- sent: acknowledged by 1 of 2 relay\(s\) \(the others get it when they connect\)/,
  );
  assert.match(r.text, /- routing: 2 known agents match caps \[rust\]; 1 is reachable/);
  assert.match(r.text, /- no taker at 2027-01-15T11:00:00Z if nobody answers or claims it by then/);
  assert.match(r.text, /thread tool/);
  assert.ok((svc.settles[0] ?? 0) > 0, "the tool let the relays acknowledge it first");
  await c.close();
});

Deno.test("an ask no known agent fits says none will wake, naming the caps", async () => {
  const svc = new StatefulService();
  svc.shape = () => ({
    ...waiting,
    phase: "unroutable",
    routing: { caps: ["cobol"], to: [], matching: 0, reachable: 0 },
  });
  const c = await connect(svc, interactive());
  const r = await call(c, "ask", { title: "Old code", text: "COMP-3?", caps: ["cobol"] });
  assert.match(r.text, /: none will wake: no known agent has caps \[cobol\]\./);
  await c.close();
});

Deno.test("a held ask is a draft: its result says held, with no state", async () => {
  const svc = new StatefulService({ review: true });
  const c = await connect(svc, runner());
  const r = await call(c, "ask", { title: "Logs", text: "logrotate or journald?" });
  assert.match(r.text, /^Held for review: your ask is draft draft-1/);
  assert.doesNotMatch(r.text, /State of ask/);
  assert.deepEqual(svc.settles, [], "no state was asked for a draft");
  await c.close();
});

Deno.test("the thread tool shows an ask's state above its posts: claimed, answered, held for review, no taker", async () => {
  const svc = new StatefulService();
  const c = await connect(svc, interactive());
  await call(c, "ask", { title: "Logs", text: "logrotate or journald?" });
  const ask = svc.posts[0]!.id;
  const answer = svc.add("bob", { kind: "answer", parent: ask, text: "journald" }, false);
  const states: Array<[Omit<AskState, "ask" | "by">, RegExp]> = [
    [
      { ...waiting, phase: "claimed", claim: { by: NPUB_X, at: T, until: T + 1_800_000 } },
      new RegExp(`: claimed by ${NPUB_X} until 2027-01-15T10:30:00Z unless they post again\\.`),
    ],
    [
      { ...waiting, phase: "answered", answers: [{ id: answer.id, by: NPUB_X, at: T }] },
      new RegExp(
        `: answered by ${NPUB_X} at 2027-01-15T10:00:00Z\\.\\n[^]*- answer ${answer.id} by`,
      ),
    ],
    [
      { ...waiting, phase: "held", heldDrafts: ["d-7"] },
      /: an answer to it is held for review on this node \(draft d-7\)/,
    ],
    [
      { ...waiting, phase: "no_taker", noTakerAt: T },
      /: no taker: nobody answered or claimed it by 2027-01-15T10:00:00Z \(agent\.ask_timeout\)\./,
    ],
  ];
  for (const [shape, want] of states) {
    svc.shape = () => shape;
    // From a reply's id too: the state is the thread's ask's.
    const r = await call(c, "thread", { id: answer.id });
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, new RegExp(`^Thread ${ask}: 2 post\\(s\\)\\.\\nState of ask ${ask}`));
    assert.match(r.text, want);
    assert.ok(
      r.text.indexOf("State of ask") < r.text.indexOf("journald"),
      "the state comes before the posts",
    );
  }
  await c.close();
});

Deno.test("a thread that is no ask shows no state", async () => {
  const svc = new StatefulService();
  const c = await connect(svc, interactive());
  await call(c, "post", { kind: "note", title: "FYI", text: "moved to journald" });
  const r = await call(c, "thread", { id: svc.posts[0]!.id });
  assert.doesNotMatch(r.text, /State of ask/);
  await c.close();
});

Deno.test("status lists the session's newest asks, each with its phase", async () => {
  const svc = new StatefulService();
  const c = await connect(svc, interactive());
  await call(c, "ask", { title: "Logs", text: "logrotate or journald?" });
  const r = await call(c, "status");
  assert.match(r.text, /your newest asks \(1\):\n {2}- [0-9a-f]{64} "Logs": waiting for a taker/);
  await c.close();
});
