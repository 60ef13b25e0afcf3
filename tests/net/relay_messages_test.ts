import assert from "node:assert/strict";
import { MAX_MESSAGE_CHARS, resolveLimits } from "../../src/net/relay_caps.ts";
import {
  ingestAnswer,
  okIdOf,
  readMessage,
  readReq,
  type ReqState,
} from "../../src/net/relay_messages.ts";
import { tempStore } from "./net_support.ts";

const limits = resolveLimits({});
const fresh: ReqState = { has: () => false, subscriptions: 0, answers: 0, buffered: 0 };

Deno.test("each unreadable message gets the NOTICE that says why; EVENT, REQ, CLOSE and AUTH are read", () => {
  const notice = (data: unknown) => {
    const m = readMessage(data);
    assert.equal(m.type, "unreadable", `unreadable: ${String(data).slice(0, 30)}`);
    return m.type === "unreadable" ? m.notice : "";
  };
  assert.match(notice(new Uint8Array([1])), /^invalid: binary messages/);
  assert.match(notice("x".repeat(MAX_MESSAGE_CHARS + 1)), /^invalid: message too large/);
  assert.match(notice("[not json"), /^invalid: could not parse/);
  assert.match(notice('{"REQ":1}'), /^invalid: a message is a JSON array/);
  assert.equal(notice('["COUNT","x",{}]'), "unsupported: COUNT messages");
  // NIP-42: read here, judged by the connection's AuthGate.
  assert.deepEqual(readMessage('["AUTH",{"id":"a"}]'), { type: "AUTH", event: { id: "a" } });
  assert.deepEqual(readMessage('["EVENT",{"id":"a"}]'), { type: "EVENT", event: { id: "a" } });
  assert.deepEqual(readMessage('["REQ","s",{},{"kinds":[1]}]'), {
    type: "REQ",
    subId: "s",
    filters: [{}, { kinds: [1] }],
  });
  assert.deepEqual(readMessage('["CLOSE","s"]'), { type: "CLOSE", subId: "s" });
});

Deno.test("a REQ's refusals come in order: id, filter count, subscriptions, answers waiting, each filter", () => {
  const t = tempStore();
  try {
    const req = (subId: unknown, filters: unknown[], state: ReqState = fresh) =>
      readReq({ subId, filters }, state, t.store, limits);
    assert.deepEqual(req("", [{}]), {
      notice: "invalid: a subscription id is a string of 1–64 characters",
    });
    assert.ok("notice" in req("x".repeat(65), [{}]));
    const full: ReqState = { ...fresh, subscriptions: limits.maxSubscriptions };
    // Too many filters is reported before the full subscription table.
    assert.deepEqual(req("s", [], full), { subId: "s", closed: "invalid: give 1–10 filters" });
    assert.deepEqual(req("s", [{}], full), {
      subId: "s",
      closed: "rate-limited: at most 20 subscriptions; CLOSE one first",
    });
    // A REQ that replaces an open subscription does not count against the cap.
    assert.ok("queried" in req("s", [{}], { ...full, has: (id) => id === "s" }));
    const waiting = "rate-limited: too many answers waiting to be read; read them first";
    assert.deepEqual(req("s", [{}], { ...fresh, answers: 4 }), { subId: "s", closed: waiting });
    assert.deepEqual(req("s", [{}], { ...fresh, buffered: limits.maxQueue + 1 }), {
      subId: "s",
      closed: waiting,
    });
    assert.deepEqual(req("s", [{}, 3]), {
      subId: "s",
      closed: "invalid: a filter is a JSON object",
    });
    assert.deepEqual(req("s", [{ search: "x" }]), {
      subId: "s",
      closed: "unsupported: search (NIP-50)",
    });
    assert.deepEqual(req("s", [{ limit: -1 }]), {
      subId: "s",
      closed: "invalid: Filter field limit must be a number ≥ 0",
    });
    assert.deepEqual(req("s", [{ kinds: ["x"] }]), {
      subId: "s",
      closed: "invalid: Filter field kinds must be a list of numbers",
    });
  } finally {
    t.cleanup();
  }
});

Deno.test("a REQ of more than 1,000 ids, authors and tag values, all filters together, is refused", () => {
  const t = tempStore();
  try {
    const keys = (n: number, c: string) =>
      Array.from({ length: n }, (_, i) => i.toString(16).padStart(64, c));
    const ok = readReq(
      { subId: "s", filters: [{ authors: keys(600, "a") }, { "#e": keys(400, "b") }] },
      fresh,
      t.store,
      limits,
    );
    assert.ok("queried" in ok);
    const many = readReq(
      {
        subId: "s",
        filters: [{ authors: keys(600, "a") }, { "#e": keys(400, "b"), ids: [keys(1, "c")[0]!] }],
      },
      fresh,
      t.store,
      limits,
    );
    assert.ok("closed" in many);
    assert.match(many.closed, /^invalid: at most 1000 .*split it/);
  } finally {
    t.cleanup();
  }
});

Deno.test("a REQ filter on a long tag name is queried but matches nothing live", () => {
  const t = tempStore();
  try {
    const plain = { kinds: [4470] };
    const long = { "#long": ["x"] };
    const r = readReq({ subId: "s", filters: [plain, long] }, fresh, t.store, limits);
    assert.ok("queried" in r);
    assert.deepEqual(r.queried, [plain, long]);
    assert.deepEqual(r.indexed, [true, false]);
    assert.deepEqual(r.live, [plain]);
  } finally {
    t.cleanup();
  }
});

Deno.test("an EVENT's ingest result becomes its OK line, or a NOTICE when it had no id", () => {
  assert.equal(okIdOf({ id: "a".repeat(70) }), "a".repeat(64));
  assert.equal(okIdOf({ id: 5 }), undefined);
  assert.equal(okIdOf(null), undefined);
  assert.deepEqual(ingestAnswer("e1", { ok: true }), ["OK", "e1", true, ""]);
  assert.deepEqual(ingestAnswer("e1", { ok: true, duplicate: true }), [
    "OK",
    "e1",
    true,
    "duplicate: already have this event",
  ]);
  assert.deepEqual(ingestAnswer("e1", { ok: false, code: "store", reason: "disk full" }), [
    "OK",
    "e1",
    false,
    "error: could not store the event; try again later",
  ]);
  assert.deepEqual(ingestAnswer("e1", { ok: false, code: "bad_sig", reason: "bad signature" }), [
    "OK",
    "e1",
    false,
    "invalid: bad signature (bad_sig)",
  ]);
  assert.deepEqual(ingestAnswer(undefined, { ok: false, code: "malformed", reason: "no id" }), [
    "NOTICE",
    "invalid: no id (malformed)",
  ]);
});
