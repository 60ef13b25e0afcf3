/**
 * The dashboard's route table (src/ui/routes.ts) through the real handler and
 * gate, in process, with a recording source: every page is one row, an
 * unknown path is a 404, and the operations added by issue 29 (New work,
 * allow always) reach the source only as the person's confirmed form.
 */

import assert from "node:assert/strict";
import { Gate } from "../../src/ui/security.ts";
import { uiHandler } from "../../src/ui/server.ts";
import { ROUTES } from "../../src/ui/routes.ts";
import { recordingSource } from "../support/fake_ui_source.ts";
import type { HeldDraft } from "../../src/node/review_queue.ts";

const HOST = "127.0.0.1:9";

const REQUEST: HeldDraft = {
  id: "p1",
  kind: "permission",
  text: "",
  profile: "helper",
  createdAt: 0,
  permission: {
    request_id: "c1:t1",
    harness: "claude",
    kind: "execute",
    arguments: { command: "npm test" },
    locations: [],
    worktree: "/w/x",
    checkout: "app",
    work: "x",
    agent: "helper",
    thread: "_",
    task: "t",
    reason: "gated",
  },
};

async function session() {
  const gate = new Gate(HOST);
  const source = recordingSource();
  source.drafts = () => [REQUEST];
  const handler = uiHandler({ gate, source });
  const login = await handler(
    new Request(`http://${HOST}/login?token=${gate.token}`, { headers: { host: HOST } }),
  );
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const base = login.headers.get("location")!.replace(/\/$/, "");
  const get = (path: string) =>
    handler(new Request(`http://${HOST}${base}${path}`, { headers: { host: HOST, cookie } }));
  const page = await (await get("/")).text();
  const csrf = page.match(/name="csrf" value="([0-9a-f]+)"/)![1]!;
  const post = async (path: string, fields: Record<string, string>) => {
    const r = await handler(
      new Request(`http://${HOST}${base}${path}`, {
        method: "POST",
        headers: {
          host: HOST,
          cookie,
          origin: `http://${HOST}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ csrf, ...fields }).toString(),
      }),
    );
    assert.equal(r.status, 303, path);
    const back = r.headers.get("location")!;
    const next = await (await handler(
      new Request(`http://${HOST}${back}`, { headers: { host: HOST, cookie } }),
    )).text();
    return {
      back: back.slice(base.length),
      flash: next.match(/id="flash">([^<]*)</)?.[1],
      kind: next.match(/data-kind="(\w+)" id="flash"/)?.[1],
    };
  };
  return { source, get, post };
}

Deno.test("every page of the table answers in a session, and a path no row matches is a 404", async () => {
  const { get } = await session();
  for (
    const path of [
      "/",
      "/posts",
      "/runs",
      "/works",
      "/works/w1",
      "/works/w1/discard",
      "/review",
      "/review/p1/rule",
      "/halt",
    ]
  ) {
    const r = await get(path);
    assert.equal(r.status, 200, path);
    assert.equal(r.headers.get("x-frame-options"), "DENY", "the security headers on every page");
    await r.body?.cancel();
  }
  const none = await get("/nowhere");
  assert.equal(none.status, 404);
  assert.match(await none.text(), /no page \/nowhere/);
  assert.ok(ROUTES.length >= 18, "a page or an operation is one row");
});

Deno.test("allow always writes nothing without the person's confirmation, then sends the rule they confirmed", async () => {
  const { source, get, post } = await session();
  const page = await (await get("/review/p1/rule")).text();
  assert.match(page, /id="rule" size="60" value="claude\/execute\(npm test\)"/);
  const unconfirmed = await post("/review/p1/rule", { rule: "claude/execute(npm test)" });
  assert.equal(unconfirmed.back, "/review/p1/rule");
  assert.match(unconfirmed.flash!, /^error: nothing was written: tick the box/);
  assert.equal(unconfirmed.kind, "error");
  assert.deepEqual(source.calls, []);
  const confirmed = await post("/review/p1/rule", {
    rule: "claude/execute(npm test *)",
    confirm: "on",
  });
  assert.equal(confirmed.back, "/review");
  assert.equal(confirmed.flash, "allowRule done");
  assert.equal(confirmed.kind, "done");
  assert.deepEqual(source.calls, ['allowRule ["claude/execute(npm test *)"]']);
  const gone = await post("/review/nope/rule", { rule: "x", confirm: "on" });
  assert.match(gone.flash!, /^error: nothing was written: that request no longer waits/);
});

Deno.test("New work sends checkout, name and task to the source; an empty field starts nothing", async () => {
  const { source, post } = await session();
  const empty = await post("/works/new", { checkout: "app", work: "", task: "x" });
  assert.match(empty.flash!, /^error: nothing was started: name the checkout and the work/);
  assert.deepEqual(source.calls, []);
  const started = await post("/works/new", {
    harness: "claude",
    checkout: "app",
    work: "fix-login",
    task: "Fix it\r\nplease",
  });
  assert.equal(started.back, "/works");
  assert.deepEqual(source.calls, [
    'workNew [{"harness":"claude","checkout":"app","work":"fix-login","task":"Fix it\\nplease"}]',
  ]);
});
