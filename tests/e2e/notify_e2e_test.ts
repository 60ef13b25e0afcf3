/**
 * Notifications away from the desk, end to end (docs/notifications.md): a real
 * daemon with `[notify.NAME]` targets, local HTTP receivers on 127.0.0.1, and a
 * halt issued with `wats guardian halt`.
 */

import assert from "node:assert/strict";
import { signature } from "../../src/node/notify_payloads.ts";
import { CLIS_DIR, requireCli } from "../support/clis.ts";
import { nodeRig } from "../support/rig.ts";
import { answeringMock, call, idIn } from "../support/swarm.ts";

/** One request a receiver got. */
interface Got {
  headers: Headers;
  body: string;
}

/** An HTTP receiver on 127.0.0.1 answering `statuses` in turn (the last repeats). */
function receiver(statuses: number[]) {
  const got: Got[] = [];
  let wake: (() => void) | undefined;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    got.push({ headers: req.headers, body: await req.text() });
    wake?.();
    return new Response(null, { status: statuses[Math.min(got.length - 1, statuses.length - 1)] });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    got,
    /**
     * Resolves once `n` requests have arrived. The 120 s is a safety net like
     * the rig's `waitEvent`, so a node that never sends fails instead of hanging.
     */
    async requests(n: number): Promise<Got[]> {
      const give = Date.now() + 120_000;
      while (got.length < n) {
        if (Date.now() > give) throw new Error(`${got.length} of ${n} requests arrived`);
        let timer: ReturnType<typeof setTimeout> | undefined;
        await new Promise<void>((r) => {
          wake = r;
          timer = setTimeout(r, 1000);
        });
        clearTimeout(timer);
      }
      return got;
    },
    close: () => server.shutdown(),
  };
}

Deno.test("a halt notifies a webhook with a valid signature, on the third attempt after two 500s, while a dead target blocks nothing", async () => {
  const hook = receiver([500, 500, 200]);
  // Accepts connections and never answers: every attempt hangs until its timeout.
  const dead = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    await using rig = await nodeRig({
      config: `[notify.hook]
type = "webhook"
url = "${hook.url}"
secret_env = "HOOK_SECRET"
events = ["halted"]

[notify.dead]
type = "ntfy"
url = "http://127.0.0.1:${dead.addr.port}/topic"
timeout = "60s"
`,
      env: { HOOK_SECRET: "s3cret-for-test" },
    });
    const halt = await rig.wats(["guardian", "halt", "--reason", "going out"]);
    assert.equal(halt.code, 0, halt.stderr);
    await rig.waitEvent("halted");

    const [first, second, third] = await hook.requests(3);
    assert.ok(first && second && third);
    const body = JSON.parse(third.body);
    assert.equal(body.event, "halted");
    assert.equal(body.text, "halted: going out");
    assert.equal(body.command, "wats resume");
    assert.equal(body.path, "/go/halt");
    assert.equal(body.node, rig.started.node);
    // The receiver's check: HMAC-SHA256 of "<timestamp>.<body>" with the shared secret.
    for (const g of [first, second, third]) {
      const t = g.headers.get("X-Wats-Timestamp") ?? "";
      assert.match(t, /^\d+$/);
      assert.equal(
        g.headers.get("X-Wats-Signature"),
        `sha256=${signature("s3cret-for-test", t, g.body)}`,
      );
      assert.notEqual(
        g.headers.get("X-Wats-Signature"),
        `sha256=${signature("another-secret", t, g.body)}`,
      );
      // One notice, three attempts: a receiver drops repeats by this id.
      assert.equal(g.headers.get("X-Wats-Delivery"), body.id);
      assert.equal(g.body, third.body);
      // Nothing of the node's files goes out (the login token lives there).
      assert.ok(!g.body.includes(rig.dataDir));
    }

    // The dead target holds its attempt open; the node still answers.
    const status = await rig.wats(["status"]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^halted: yes, by .+: going out$/m);
    // And stops cleanly, the hanging attempt aborted.
    const stopped = await rig.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(hook.got.length, 3, "no fourth attempt after a 200");
  } finally {
    dead.close();
    await hook.close();
  }
});

Deno.test("a target whose secret variable is not set is off with a startup warning, and the node runs", async () => {
  const hook = receiver([200]);
  try {
    await using rig = await nodeRig({
      config: `[notify.hook]
type = "webhook"
url = "${hook.url}"
secret_env = "HOOK_SECRET_UNSET"
`,
    });
    assert.match(
      rig.node.stderr(),
      /notify\.hook is off: the variable HOOK_SECRET_UNSET is not set/,
    );
    const halt = await rig.wats(["guardian", "halt"]);
    assert.equal(halt.code, 0, halt.stderr);
    await rig.waitEvent("halted");
    const status = await rig.wats(["status"]);
    assert.equal(status.code, 0, status.stderr);
    assert.equal(hook.got.length, 0);
  } finally {
    await hook.close();
  }
});

const claude = requireCli("claude");

Deno.test({
  name:
    "with agent.review, the agent's held answer notifies the webhook, and the command it names publishes it",
  ignore: claude === null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const hook = receiver([200]);
    try {
      await using mock = answeringMock();
      await using rig = await nodeRig({
        config: `[notify.hook]
type = "webhook"
url = "${hook.url}"
secret_env = "HOOK_SECRET"
events = ["draft"]
`,
        env: { HOOK_SECRET: "s3cret" },
        agent: {
          mock,
          settings: {
            WATS_AGENT_REVIEW: "true",
            PATH: `${CLIS_DIR}/node_modules/.bin:${Deno.env.get("PATH")}`,
          },
        },
      });
      const alice = await rig.mcp("alice");
      const ask = idIn(await call(alice, "ask", { title: "Logs", text: "Where do logs go?" }));
      const held = await rig.waitEvent("held");
      assert.equal(held.what, "draft");
      const [got] = await hook.requests(1);
      assert.ok(got);
      const t = got.headers.get("X-Wats-Timestamp") ?? "";
      assert.equal(
        got.headers.get("X-Wats-Signature"),
        `sha256=${signature("s3cret", t, got.body)}`,
      );
      const body = JSON.parse(got.body);
      assert.equal(body.event, "draft");
      assert.equal(body.path, "/go/review");
      assert.match(body.text, /Use journald/);
      assert.equal(body.command, `wats agent approve ${held.id}`);
      // The command as the notice says it answers the draft.
      const approved = await rig.wats(body.command.split(" ").slice(1));
      assert.equal(approved.code, 0, approved.stderr);
      assert.match(await call(alice, "thread", { id: ask }), /Use journald/);
    } finally {
      await hook.close();
    }
  },
});
