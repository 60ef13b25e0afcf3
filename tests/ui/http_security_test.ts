/**
 * The dashboard's gate at the HTTP level: a real server on 127.0.0.1, raw
 * requests (so Host and Origin say what a hostile page would make them say),
 * and a source that records every operation. Each refused request must get
 * 403 and reach no operation.
 */

import assert from "node:assert/strict";
import { Gate, type GateOptions } from "../../src/ui/security.ts";
import { uiHandler } from "../../src/ui/server.ts";
import { WatsError } from "../../src/errors.ts";
import { serveUi, type UiHttpLimits } from "../../src/ui/http.ts";
import { recordingSource } from "../support/fake_ui_source.ts";

/** The POST routes of a work's operations (src/ui/server.ts). */
const WORK_OPS = ["/works/w1/merge", "/works/w1/push", "/works/w1/send", "/works/w1/discard"];

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One HTTP/1.1 request over a fresh TCP connection, headers exactly as given. */
async function raw(port: number, lines: string[], body = ""): Promise<Raw> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const head = [...lines, `content-length: ${new TextEncoder().encode(body).length}`];
    const text = `${head.join("\r\n")}\r\nconnection: close\r\n\r\n${body}`;
    await conn.write(new TextEncoder().encode(text));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(65536);
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    const all = new TextDecoder().decode(
      chunks.reduce((a, b) => new Uint8Array([...a, ...b]), new Uint8Array()),
    );
    const [headPart, ...rest] = all.split("\r\n\r\n");
    const [statusLine, ...headerLines] = headPart!.split("\r\n");
    const headers: Record<string, string> = {};
    for (const h of headerLines) {
      const i = h.indexOf(":");
      headers[h.slice(0, i).toLowerCase()] = h.slice(i + 1).trim();
    }
    return { status: Number(statusLine!.split(" ")[1]), headers, body: rest.join("\r\n\r\n") };
  } finally {
    try {
      conn.close();
    } catch { /* closed by the server */ }
  }
}

async function withServer(
  fn: (s: {
    port: number;
    host: string;
    gate: Gate;
    source: ReturnType<typeof recordingSource>;
    errors: string[];
  }) => Promise<void>,
  opts: { limits?: Partial<UiHttpLimits>; gate?: GateOptions } = {},
) {
  const source = recordingSource();
  const errors: string[] = [];
  // The Host the gate expects names the port, known once the server listens.
  const handlers: Array<(r: Request) => Promise<Response>> = [];
  const server = serveUi(
    {
      hostname: "127.0.0.1",
      port: 0,
      ...(opts.limits ? { limits: opts.limits } : {}),
      report: (line) => errors.push(line),
    },
    (r) => handlers[0]!(r),
  );
  const port = server.addr.port;
  const host = `127.0.0.1:${port}`;
  const gate = new Gate(host, opts.gate);
  handlers.push(uiHandler({ gate, source }));
  try {
    await fn({ port, host, gate, source, errors });
  } finally {
    await server.shutdown();
  }
}

/** Logs in with the token; returns the cookie, the session's path and the page's CSRF token. */
async function login(port: number, host: string, gate: Gate) {
  const r = await raw(port, [`GET /login?token=${gate.token} HTTP/1.1`, `host: ${host}`]);
  assert.equal(r.status, 303);
  const base = r.headers["location"]!.replace(/\/$/, "");
  assert.match(base, /^\/[0-9a-f]{32}$/);
  const cookie = r.headers["set-cookie"]!.split(";")[0]!;
  const page = await raw(port, [`GET ${base}/halt HTTP/1.1`, `host: ${host}`, `cookie: ${cookie}`]);
  assert.equal(page.status, 200);
  const csrf = page.body.match(/name="csrf" value="([0-9a-f]+)"/)![1];
  return { cookie, csrf, base };
}

function post(host: string, path: string, extra: string[]): string[] {
  return [
    `POST ${path} HTTP/1.1`,
    `host: ${host}`,
    "content-type: application/x-www-form-urlencoded",
    ...extra,
  ];
}

Deno.test("the login token opens a session once, under a random path its HttpOnly SameSite=Strict cookie is scoped to, and pages carry a strict CSP and no CORS", async () => {
  await withServer(async ({ port, host, gate }) => {
    const r = await raw(port, [`GET /login?token=${gate.token} HTTP/1.1`, `host: ${host}`]);
    assert.equal(r.status, 303);
    const scope = r.headers["location"]!.match(/^\/([0-9a-f]{32})\/$/)![1];
    assert.equal(
      r.headers["set-cookie"]!.replace(/=[0-9a-f]{64};/, "=ID;"),
      `wats_${scope}=ID; Path=/${scope}/; HttpOnly; SameSite=Strict`,
    );
    const cookie = r.headers["set-cookie"]!.split(";")[0]!;
    const page = await raw(port, [
      `GET /${scope}/ HTTP/1.1`,
      `host: ${host}`,
      `cookie: ${cookie}`,
      "origin: http://evil.example",
    ]);
    assert.equal(page.status, 200);
    assert.match(page.headers["content-security-policy"]!, /default-src 'none'; script-src 'self'/);
    assert.equal(page.headers["x-frame-options"], "DENY");
    assert.ok(
      !Object.keys(page.headers).some((h) => h.startsWith("access-control-")),
      "no CORS header",
    );
    assert.ok(!page.body.includes(gate.token), "the token is not in the page");
    // Every link of the page stays in the session's path; assets are public.
    const links = [...page.body.matchAll(/(?:href|action|src)="([^"]*)"/g)].map((m) => m[1]!);
    assert.ok(links.length > 5, page.body);
    for (const l of links) {
      assert.ok(l.startsWith(`/${scope}/`) || l.startsWith("/assets/"), `link ${l}`);
    }
    const again = await raw(port, [`GET /login?token=${gate.token} HTTP/1.1`, `host: ${host}`]);
    assert.equal(again.status, 403, "the token works once");
    assert.equal(again.headers["set-cookie"], undefined);
  });
});

Deno.test("no session, a wrong token or a foreign Host get 403 and no page", async () => {
  await withServer(async ({ port, host, gate }) => {
    const none = await raw(port, ["GET / HTTP/1.1", `host: ${host}`]);
    assert.equal(none.status, 403);
    assert.doesNotMatch(none.body, /n1|alice/);
    const wrongToken = await raw(port, [
      `GET /login?token=${"0".repeat(64)} HTTP/1.1`,
      `host: ${host}`,
    ]);
    assert.equal(wrongToken.status, 403);
    assert.equal(wrongToken.headers["set-cookie"], undefined);
    const { cookie, base } = await login(port, host, gate);
    const wrongCookie = await raw(port, [
      `GET ${base}/ HTTP/1.1`,
      `host: ${host}`,
      `cookie: ${cookie.split("=")[0]}=${"1".repeat(64)}`,
    ]);
    assert.equal(wrongCookie.status, 403);
    // The right cookie outside the session's path is no session either.
    const outside = await raw(port, ["GET / HTTP/1.1", `host: ${host}`, `cookie: ${cookie}`]);
    assert.equal(outside.status, 403);
    assert.doesNotMatch(outside.body, /n1|alice/);
    // DNS rebinding: evil.example resolved to 127.0.0.1 sends its own name.
    const rebound = await raw(port, [
      `GET /login?token=${gate.token} HTTP/1.1`,
      `host: evil.example:${port}`,
    ]);
    assert.equal(rebound.status, 403);
    assert.equal(rebound.headers["set-cookie"], undefined);
    const foreignHost = await raw(port, [
      `GET ${base}/ HTTP/1.1`,
      `host: evil.example`,
      `cookie: ${cookie}`,
    ]);
    assert.equal(foreignHost.status, 403);
    assert.doesNotMatch(foreignHost.body, /n1|alice/);
  });
});

Deno.test("a POST without the session, from a foreign Origin or without the CSRF token gets 403 and changes nothing", async () => {
  await withServer(async ({ port, host, gate, source }) => {
    const { cookie, csrf, base } = await login(port, host, gate);
    const origin = `origin: http://${host}`;
    const cases: Array<[string, string[], string]> = [
      ["no session", [origin], `csrf=${csrf}&reason=x`],
      [
        "foreign origin",
        [`cookie: ${cookie}`, "origin: http://evil.example"],
        `csrf=${csrf}&reason=x`,
      ],
      ["no origin", [`cookie: ${cookie}`], `csrf=${csrf}&reason=x`],
      ["no csrf", [`cookie: ${cookie}`, origin], "reason=x"],
      ["wrong csrf", [`cookie: ${cookie}`, origin], `csrf=${"2".repeat(64)}&reason=x`],
    ];
    const reply = `/posts/${"a".repeat(64)}/reply`;
    for (
      const op of [
        "/halt",
        "/resume",
        "/review/d1/approve",
        "/review/d1/reject",
        "/ask",
        reply,
        ...WORK_OPS,
      ]
    ) {
      const path = base + op;
      for (const [what, extra, body] of cases) {
        const r = await raw(port, post(host, path, extra), body);
        assert.equal(r.status, 403, `${what} on ${path}`);
      }
      const foreignHost = await raw(
        port,
        post(`evil.example:${port}`, path, [
          `cookie: ${cookie}`,
          `origin: http://evil.example:${port}`,
        ]),
        `csrf=${csrf}`,
      );
      assert.equal(foreignHost.status, 403, `foreign host on ${path}`);
    }
    assert.deepEqual(source.calls, [], "no operation reached the daemon");
    // The same request with everything right goes through.
    const ok = await raw(
      port,
      post(host, `${base}/halt`, [`cookie: ${cookie}`, origin]),
      `csrf=${csrf}&reason=stop`,
    );
    assert.equal(ok.status, 303);
    assert.equal(ok.headers["location"], `${base}/halt`);
    assert.deepEqual(source.calls, ['halt ["stop"]']);
  });
});

Deno.test("approve sends the edited text only when it was changed; reject sends its reason", async () => {
  await withServer(async ({ port, host, gate, source }) => {
    const { cookie, csrf, base } = await login(port, host, gate);
    const h = [`cookie: ${cookie}`, `origin: http://${host}`];
    await raw(port, post(host, `${base}/review/d1/approve`, h), `csrf=${csrf}&text=held+text`);
    await raw(port, post(host, `${base}/review/d1/approve`, h), `csrf=${csrf}&text=better+text`);
    await raw(port, post(host, `${base}/review/d1/reject`, h), `csrf=${csrf}&reason=too+long`);
    assert.deepEqual(source.calls, [
      'approve ["d1",null]',
      'approve ["d1","better text"]',
      'reject ["d1","too long"]',
    ]);
  });
});

Deno.test("the person's ask and reply go to the posting tools as typed, and an empty field posts nothing", async () => {
  await withServer(async ({ port, host, gate, source }) => {
    const { cookie, csrf, base } = await login(port, host, gate);
    const h = [`cookie: ${cookie}`, `origin: http://${host}`];
    const asked = await raw(
      port,
      post(host, `${base}/ask`, h),
      `csrf=${csrf}&title=Which+sqlite&text=line+1%0D%0Aline+2&caps=sqlite%2C+rust&to=`,
    );
    assert.equal(asked.status, 303);
    assert.equal(asked.headers["location"], `${base}/posts/thread/${"c".repeat(64)}`);
    const parent = "a".repeat(64);
    const replied = await raw(
      port,
      post(host, `${base}/posts/${parent}/reply`, h),
      `csrf=${csrf}&kind=answer&text=use+3.45`,
    );
    assert.equal(replied.status, 303);
    assert.equal(replied.headers["location"], `${base}/posts/thread/${parent}`);
    const empty = await raw(port, post(host, `${base}/ask`, h), `csrf=${csrf}&title=t&text=+`);
    assert.equal(empty.status, 303);
    const badKind = await raw(
      port,
      post(host, `${base}/posts/${parent}/reply`, h),
      `csrf=${csrf}&kind=halt&text=x`,
    );
    assert.equal(badKind.status, 303);
    assert.deepEqual(source.calls, [
      'post ask {"title":"Which sqlite","text":"line 1\\nline 2","caps":["sqlite","rust"]}',
      `post answer {"parent":"${parent}","text":"use 3.45"}`,
    ]);
    const flash = await raw(port, [
      `GET ${base}/posts HTTP/1.1`,
      `host: ${host}`,
      `cookie: ${cookie}`,
    ]);
    assert.match(flash.body, /error: reply as one of: answer, clarify, note, react, offer/);
  });
});

Deno.test("a work's operations reach the source with their fields, and come back to a page with the outcome as a flash line", async () => {
  await withServer(async ({ port, host, gate, source }) => {
    const { cookie, csrf, base } = await login(port, host, gate);
    const h = [`cookie: ${cookie}`, `origin: http://${host}`];
    const go = async (op: string, body = "") => {
      const r = await raw(port, post(host, `${base}${op}`, h), `csrf=${csrf}${body}`);
      assert.equal(r.status, 303, op);
      const next = await raw(port, [
        `GET ${r.headers["location"]} HTTP/1.1`,
        `host: ${host}`,
        `cookie: ${cookie}`,
      ]);
      return {
        location: r.headers["location"],
        flash: next.body.match(/id="flash">([^<]*)</)?.[1],
      };
    };
    const head = `&head=${"a".repeat(40)}`;
    assert.deepEqual(await go("/works/w1/merge", head), {
      location: `${base}/works`,
      flash: "workMerge done",
    });
    await go("/works/w1/push", head);
    await go("/works/w1/push", `&draft_pr=on${head}`);
    await go("/works/w1/send", "&text=use+UTC%0D%0Aplease&file=src%2Flogs.ts&line=2");
    await go("/works/w1/send", "&text=only+text&file=&line=");
    assert.deepEqual(await go("/works/w1/discard", "&head="), {
      location: `${base}/works`,
      flash: "workDiscard done",
    });
    const a40 = JSON.stringify("a".repeat(40));
    assert.deepEqual(source.calls, [
      `workMerge ["w1",${a40}]`,
      `workPush ["w1",false,${a40}]`,
      `workPush ["w1",true,${a40}]`,
      'workSend ["w1","use UTC\\nplease","src/logs.ts",2]',
      'workSend ["w1","only text",null,null]',
      'workDiscard ["w1",null]',
    ]);
    // Merge, push and discard without the head the page showed do nothing, and say so.
    source.calls.length = 0;
    const unbound = await go("/works/w1/merge");
    assert.match(
      unbound.flash!,
      /^error: nothing was done: the form did not say which head you saw/,
    );
    assert.equal(unbound.location, `${base}/works/w1`);
    assert.deepEqual(source.calls, []);
    // A send back without a comment, or with a line but no file, is refused before the daemon.
    source.calls.length = 0;
    const empty = await go("/works/w1/send", "&text=+&file=a.ts");
    assert.match(empty.flash!, /^error: nothing was sent back: write a comment first/);
    const lineOnly = await go("/works/w1/send", "&text=x&line=3");
    assert.match(lineOnly.flash!, /^error: a line needs its file/);
    const badLine = await go("/works/w1/send", "&text=x&file=a.ts&line=0");
    assert.match(badLine.flash!, /^error: the line must be a line number/);
    assert.deepEqual(source.calls, []);
    // The daemon's refusal (an op it does not know yet, a dirty checkout) is the flash line.
    source.workMerge = () =>
      Promise.reject(new WatsError("daemon.refused", "the daemon refused: the checkout is dirty"));
    const refused = await go("/works/w1/merge", head);
    assert.equal(refused.flash, "error: the daemon refused: the checkout is dirty");
    // A refused merge comes back to the work, told what arrived since the head it carried.
    assert.equal(refused.location, `${base}/works/w1?since=${"a".repeat(40)}`);
    // An id outside the contract's characters is no route.
    const bad = await raw(port, post(host, `${base}/works/a%2Fb/merge`, h), `csrf=${csrf}`);
    assert.equal(bad.status, 404);
  });
});

Deno.test("a work's pages are served in the session: the list, the work, its discard confirmation; a daemon's refusal is the page's message", async () => {
  await withServer(async ({ port, host, gate, source }) => {
    const { cookie, base } = await login(port, host, gate);
    const get = (path: string) =>
      raw(port, [`GET ${base}${path} HTTP/1.1`, `host: ${host}`, `cookie: ${cookie}`]);
    const list = await get("/works");
    assert.equal(list.status, 200);
    assert.ok(list.body.includes(`href="${base}/works/w1"`), "links stay in the session's path");
    const work = await get("/works/w1?file=src%2Flogs.ts&line=2");
    assert.equal(work.status, 200);
    const links = [...work.body.matchAll(/(?:href|action|src)="([^"]*)"/g)].map((m) => m[1]!);
    assert.ok(links.length > 10, work.body);
    for (const l of links) {
      assert.ok(l.startsWith(`${base}/`) || l.startsWith("/assets/"), `link ${l}`);
    }
    assert.match(work.body, /<input name="line" value="2"/);
    const file = await get("/works/w1/diff?file=src%2Flogs.ts");
    assert.equal(file.status, 200);
    assert.match(file.body, /rotate: &#34;daily&#34;/);
    const discard = await get("/works/w1/discard");
    assert.match(discard.body, /Discard work/);
    assert.deepEqual(source.calls, [], "showing changes nothing");
    source.work = () =>
      Promise.reject(new WatsError("daemon.refused", "the daemon refused: unknown op work_show"));
    const refused = await get("/works/w1");
    assert.equal(refused.status, 400);
    assert.match(refused.body, /the daemon refused: unknown op work_show/);
    assert.equal((await get("/works/w1/nothing")).status, 404);
  });
});

Deno.test("a second cookie of the session's name is a refusal, whichever comes first", async () => {
  await withServer(async ({ port, host, gate }) => {
    const { cookie, base } = await login(port, host, gate);
    const name = cookie.split("=")[0];
    for (const cookies of [`${cookie}; ${name}=0`, `${name}=0; ${cookie}`]) {
      const r = await raw(port, [
        `GET ${base}/halt HTTP/1.1`,
        `host: ${host}`,
        `cookie: ${cookies}`,
      ]);
      assert.equal(r.status, 403, cookies);
    }
    const alone = await raw(port, [
      `GET ${base}/halt HTTP/1.1`,
      `host: ${host}`,
      `cookie: ${cookie}`,
    ]);
    assert.equal(alone.status, 200, "the session itself still works");
  });
});

Deno.test("a session ends after 30 idle minutes, and requests keep it alive", async () => {
  let now = 1_000_000;
  await withServer(async ({ port, host, gate }) => {
    const { cookie, base } = await login(port, host, gate);
    const get = () => raw(port, [`GET ${base}/ HTTP/1.1`, `host: ${host}`, `cookie: ${cookie}`]);
    now += 29 * 60_000;
    assert.equal((await get()).status, 200);
    now += 29 * 60_000;
    assert.equal((await get()).status, 200, "the last request kept it alive");
    now += 30 * 60_000 + 1;
    const r = await get();
    assert.equal(r.status, 403);
    assert.match(r.body, /idle for 30 minutes/);
    now += 1;
    assert.equal((await get()).status, 403, "and it stays ended");
  }, { gate: { now: () => now } });
});

Deno.test("logout ends the session and clears its cookie", async () => {
  await withServer(async ({ port, host, gate, source }) => {
    const { cookie, csrf, base } = await login(port, host, gate);
    const h = [`cookie: ${cookie}`, `origin: http://${host}`];
    const foreign = await raw(
      port,
      post(host, `${base}/logout`, [`cookie: ${cookie}`, "origin: http://evil.example"]),
      `csrf=${csrf}`,
    );
    assert.equal(foreign.status, 403, "a foreign page cannot log the person out");
    const out = await raw(port, post(host, `${base}/logout`, h), `csrf=${csrf}`);
    assert.equal(out.status, 200);
    assert.match(out.body, /Logged out/);
    assert.match(
      out.headers["set-cookie"]!,
      new RegExp(`^${cookie.split("=")[0]}=; Path=${base}/; Max-Age=0`),
    );
    const after = await raw(port, [`GET ${base}/ HTTP/1.1`, `host: ${host}`, `cookie: ${cookie}`]);
    assert.equal(after.status, 403);
    const halt = await raw(port, post(host, `${base}/halt`, h), `csrf=${csrf}&reason=x`);
    assert.equal(halt.status, 403);
    assert.deepEqual(source.calls, []);
    const again = await raw(port, [`GET /login?token=${gate.token} HTTP/1.1`, `host: ${host}`]);
    assert.equal(again.status, 403, "the token stays spent");
  });
});

Deno.test("a Host the URL parser refuses gets 403 from the gate, and no error is reported", async () => {
  await withServer(async ({ port, host, gate, errors }) => {
    for (const h of [`${host}.`, `${host}/x`, `127.0.0.1:${port}@evil`, "[::1", ""]) {
      const r = await raw(port, [`GET /login?token=${gate.token} HTTP/1.1`, `host: ${h}`]);
      assert.equal(r.status, 403, `host ${h}`);
      assert.ok(!r.body.includes(gate.token));
    }
    assert.deepEqual(errors, []);
    // The token was not spent by any of them.
    await login(port, host, gate);
  });
});

Deno.test("a body over 1 MiB gets 413 before it is read, in a session or not, and reaches no operation", async () => {
  await withServer(async ({ port, host, gate, source }) => {
    const { cookie, csrf, base } = await login(port, host, gate);
    // Only the head is sent (a body left unread would make the close a reset): the answer must come without the 64 MB.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const head = [
      ...post(host, `${base}/halt`, [`cookie: ${cookie}`, `origin: http://${host}`]),
      `content-length: ${64 * 1024 * 1024}`,
      "",
      "",
    ].join("\r\n");
    await conn.write(new TextEncoder().encode(head));
    const answer = await new Response(conn.readable).text();
    assert.match(answer, /^HTTP\/1\.1 413 /);
    const chunked = await raw(
      port,
      [
        ...post(host, `${base}/halt`, [`cookie: ${cookie}`, `origin: http://${host}`]),
        "transfer-encoding: chunked",
      ],
    );
    assert.equal(chunked.status, 411);
    // Just under the cap is read and served.
    const big = `csrf=${csrf}&reason=${"a".repeat(1024 * 1024 - 100)}`;
    const ok = await raw(
      port,
      post(host, `${base}/halt`, [`cookie: ${cookie}`, `origin: http://${host}`]),
      big,
    );
    assert.equal(ok.status, 303);
    assert.equal(source.calls.length, 1);
  });
});

Deno.test("slowloris: connections that never finish their head are closed, and over the cap the oldest make room", async () => {
  const limits = { headerMs: 500, maxConnections: 16 };
  await withServer(async ({ port, host, gate }) => {
    const slow: Deno.Conn[] = [];
    for (let i = 0; i < 300; i++) {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      await c.write(new TextEncoder().encode(`GET / HTTP/1.1\r\nhost: ${host}\r\nx-slow: `));
      slow.push(c);
    }
    // A real request is still answered while they hang.
    const r = await raw(port, [`GET /login?token=${gate.token} HTTP/1.1`, `host: ${host}`]);
    assert.equal(r.status, 303);
    // Every slow connection is closed by the server, with no answer.
    for (const c of slow) {
      const buf = new Uint8Array(64);
      const n = await c.read(buf).catch(() => null);
      assert.equal(n, null);
      c.close();
    }
  }, { limits });
});

Deno.test("a page that throws gets a 500, and the terminal one error line with nothing of the request", async () => {
  const printed: string[] = [];
  const server = serveUi(
    { hostname: "127.0.0.1", port: 0, report: (line) => printed.push(line) },
    (req) => {
      throw new TypeError(`cannot read ${req.url}`);
    },
  );
  try {
    const r = await raw(server.addr.port, [
      "GET /login?token=SECRET123 HTTP/1.1",
      `host: 127.0.0.1:${server.addr.port}`,
    ]);
    assert.equal(r.status, 500);
    assert.doesNotMatch(r.body, /SECRET123/);
  } finally {
    await server.shutdown();
  }
  assert.equal(printed.length, 1);
  assert.match(printed[0]!, /^error: the dashboard could not answer a request \(TypeError\)/);
  assert.doesNotMatch(JSON.stringify(printed), /SECRET123/);
});
