/** The e2e rig itself: what it starts, what its waits return, and what its end removes. */

import assert from "node:assert/strict";
import { git } from "../../src/acp/worktrees.ts";
import { call, idIn } from "./swarm.ts";
import { closing, gitRepo, nodeRig, tempDir } from "./rig.ts";
import { startMockAnthropic, text } from "./mock_anthropic.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  ...opts,
  name: "nodeRig starts a node, its waits return typed events in order, and its end stops " +
    "the node and removes its data dir and HOME",
  async fn() {
    let dirs: string[];
    let pid: number;
    {
      await using rig = await nodeRig();
      dirs = [rig.dataDir, rig.home];
      pid = rig.node.process.pid;
      assert.equal(rig.started.event, "started");
      assert.equal(rig.started.dataDir, rig.dataDir);
      assert.match(rig.started.profiles["user-agent"] ?? "", /^npub1/);
      const alice = await rig.mcp("alice");
      const first = idIn(await call(alice, "ask", { title: "One", text: "first" }));
      const second = idIn(await call(alice, "ask", { title: "Two", text: "second" }));
      // Two waits for the same event return two events: each reads on from the last.
      assert.equal((await rig.waitEvent("post_stored")).id, first);
      const next = await rig.waitEvent("post_stored", { where: (e) => e.kind === "ask" });
      assert.equal(next.id, second);
      assert.deepEqual(rig.events("post_stored").map((e) => e.id), [first, second]);
      const st = await rig.wats(["status"]);
      assert.equal(st.code, 0, st.stderr);
      assert.ok(st.stdout.includes(rig.dataDir), st.stdout);
    }
    for (const d of dirs) assert.throws(() => Deno.statSync(d), Deno.errors.NotFound);
    assert.throws(() => Deno.kill(pid, "SIGCONT"), "the node is gone");
  },
});

Deno.test({
  ...opts,
  name: "a wait for an event that never comes fails with the node's output, when the node ends",
  async fn() {
    await using rig = await nodeRig();
    // The handler is attached before the stop: the wait may fail while the stop is awaited.
    const failed = assert.rejects(
      rig.waitEvent("run_ended"),
      /stdout closed before a matching line/,
    );
    await rig.stop();
    await failed;
  },
});

Deno.test({
  ...opts,
  name: "nodeRig on a data dir another node holds fails at once, or, retried, with the " +
    "refused node's stderr once the window passes; it keeps a data dir it was given",
  async fn() {
    await using first = await nodeRig();
    await assert.rejects(nodeRig({ dataDir: first.dataDir }), /stdout closed/);
    await assert.rejects(
      nodeRig({ dataDir: first.dataDir, retryRefusedMs: 300 }),
      /the node exited before it started: .*already runs/s,
    );
    Deno.statSync(first.dataDir);
  },
});

Deno.test("gitRepo makes one commit on main with the files and symlinks given", async () => {
  await using tmp = tempDir("wats-rig-test-");
  const plain = await gitRepo(`${tmp.path}/plain`);
  assert.equal((await git(["branch", "--show-current"], plain)).trim(), "main");
  assert.equal((await git(["log", "--format=%s|%ae"], plain)).trim(), "first|t@example.org");
  assert.equal(Deno.readTextFileSync(`${plain}/README.md`), "the app\n");
  await assert.rejects(git(["config", "--local", "user.email"], plain));

  const linked = await gitRepo(`${tmp.path}/linked`, {
    files: { "a.txt": "a\n" },
    symlinks: { out: tmp.path },
    identity: true,
  });
  assert.equal((await git(["ls-files"], linked)).trim().split("\n").join(","), "a.txt,out");
  assert.equal(Deno.readLinkSync(`${linked}/out`), tmp.path);
  assert.equal((await git(["config", "--local", "user.email"], linked)).trim(), "t@example.org");
});

Deno.test("tempDir is removed when its scope ends; closing() closes when its scope ends", async () => {
  let path: string;
  let closed = 0;
  {
    await using dir = tempDir("wats-rig-test-");
    path = dir.path;
    Deno.writeTextFileSync(`${path}/f`, "x");
    await using _thing = closing({ close: () => Promise.resolve(closed++) });
  }
  assert.throws(() => Deno.statSync(path), Deno.errors.NotFound);
  assert.equal(closed, 1);
});

Deno.test("a mock ends with its scope, and a reply it holds ends when it closes", async () => {
  let url: string;
  let held: Promise<Response>;
  {
    await using mock = startMockAnthropic({
      rules: [{ when: () => true, reply: { ...text("late"), delayMs: 600_000 } }],
    });
    url = mock.url;
    held = fetch(`${url}/v1/messages`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    });
    while (mock.messages().length === 0) await new Promise((r) => setTimeout(r, 10));
  }
  const r = await held;
  assert.equal(r.status, 200);
  assert.equal((await r.json()).content[0].text, "late");
  await assert.rejects(fetch(`${url}/v1/messages`));
});
